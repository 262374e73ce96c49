//! Our harness on the simulated backend through the runner's recording proxy: the attempt's
//! trajectory holds every model request, cells.csv takes its counts from it, and transcript.txt
//! tells the conversation turn by turn before the arm's own output. Needs the `lrab-harness`
//! sibling binary (`cargo test --workspace` builds it; alone: `cargo build -p lrab-harness`).

mod common;

use common::harness_on_sim;
use lrab_records::{read_cell_rows, TrajectoryEntry};

#[test]
fn harness_cells_are_counted_and_told_from_the_wire() {
    let d = tempfile::tempdir().unwrap();
    let run = harness_on_sim("sim-4b", "WF-01,WF-04", "t", d.path());
    let rows = read_cell_rows(&run.join("cells.csv")).unwrap();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let dir = run.join(&row.attempt_dir);
        let t = TrajectoryEntry::load(&dir.join("proxy.jsonl")).unwrap();
        assert!(t.len() >= 2, "{}: {} requests", row.task, t.len());
        assert!(t
            .iter()
            .all(|e| e.schema_version == TrajectoryEntry::SCHEMA_VERSION));
        // one conversation that grows: later requests extend the earlier ones
        assert!(t[1..].iter().any(|e| e.prefix_messages > 0), "{t:?}");
        let sum = |f: fn(&TrajectoryEntry) -> Option<u64>| t.iter().filter_map(f).sum::<u64>();
        assert_eq!(row.model_calls, Some(t.len() as u64));
        assert_eq!(row.prompt_tokens, Some(sum(|e| e.prompt_tokens)));
        assert_eq!(row.completion_tokens, Some(sum(|e| e.completion_tokens)));
        assert_eq!(
            row.tool_calls,
            Some(t.iter().map(|e| e.reply_tool_calls() as u64).sum())
        );
        assert!(row.tool_calls.unwrap() > 0);
        // the sim reports cache hits: they are counted, and the cache served part of the prompt
        let (c, u) = (
            row.cached_prompt_tokens.unwrap(),
            row.uncached_prompt_tokens.unwrap(),
        );
        assert_eq!(c + u, row.prompt_tokens.unwrap());
        assert!(c > 0, "{row:?}");
        assert_eq!(
            row.turns,
            Some(t.iter().filter(|e| e.is_turn()).count() as u64)
        );

        let tr = std::fs::read_to_string(dir.join("transcript.txt")).unwrap();
        assert!(tr.starts_with("=== request 1 · /api/chat"), "{tr}");
        assert!(tr.contains("[user]\n"), "the task is shown: {tr}");
        assert!(tr.contains("[tool call] "), "{tr}");
        assert!(tr.contains("[tool result"), "{tr}");
        assert_eq!(
            tr.matches("=== request ").count(),
            t.len(),
            "one block per request"
        );
        assert!(tr.contains("=== ARM OUTPUT ==="), "{tr}");
        // the separator's size cuts out exactly the arm's own output
        let out = lrab_analysis::markers::arm_output(&tr);
        assert!(tr.ends_with(out) && !out.contains("=== request "), "{out}");
        assert!(tr[..tr.len() - out.len()]
            .ends_with(&format!("=== ARM OUTPUT === ({} bytes)\n", out.len())));
        // cells.csv version 4: the peak prompt and the failure-form counters of the trajectory
        let c = lrab_analysis::trajectory_counts::from_trajectory(&t);
        assert_eq!(
            row.peak_prompt_tokens,
            t.iter().filter_map(|e| e.prompt_tokens).max()
        );
        assert!(row.peak_prompt_tokens.unwrap() > 0);
        assert_eq!(
            (
                row.fmt_arg_errors,
                row.spin_events,
                row.ctx_events,
                row.provider_errors
            ),
            (
                Some(c.fmt_arg_errors),
                Some(c.spin_events),
                Some(c.ctx_events),
                Some(c.provider_errors)
            )
        );
        // our harness offers `finish`: its rejections are counted, not n/a
        assert_eq!(row.finish_rejections, c.finish_rejections);
        assert!(row.finish_rejections.is_some());
    }
}
