//! sim-oracle carries out every LRAB task through a generic agent and scores 1.0 (split in
//! three tests so they run in parallel; together they cover all 18 tasks).

mod common;
use common::*;
use lrab_sim::SimConfig;

fn check(part: usize, api: Api, toolset: Toolset) {
    // an OLLAMA_CONTEXT_LENGTH-style default: the OpenAI route cannot carry num_ctx
    let sim = start(SimConfig {
        default_ctx: 32768,
        ..Default::default()
    });
    assert!(sim.notes.is_empty(), "pack problems: {:?}", sim.notes);
    let pack = pack();
    assert_eq!(pack.tasks.len(), 18);
    for t in pack.tasks.iter().skip(part).step_by(3) {
        let id = &t.spec.id;
        let (_tmp, wd, m) = fresh(&pack, id);
        let agent = Agent::new(&sim.url(), "sim-oracle", api, toolset);
        let tr = agent.run(&t.render_prompt(), &wd);
        if toolset == Toolset::Rich {
            assert!(
                tr.finished_by_tool,
                "{id}: did not finish: {:?}",
                tr.text_end
            );
        } else {
            assert!(
                tr.text_end
                    .as_deref()
                    .is_some_and(|t| t.starts_with("All steps are done")),
                "{id}"
            );
        }
        let s = score(&pack, id, &m, &wd);
        assert_eq!(s, 1.0, "{id} scored {s} ({api:?}, {toolset:?})");
    }
}

/// Native API, non-streaming, write/read/shell/finish tools.
#[test]
fn oracle_native_rich_tools_part_a() {
    check(0, Api::Native, Toolset::Rich);
}

/// Native streaming, shell only: every file goes through a heredoc, finish is a text answer.
#[test]
fn oracle_native_stream_shell_only_part_b() {
    check(1, Api::NativeStream, Toolset::ShellOnly);
}

/// OpenAI SSE with opencode-like tool names and parameters.
#[test]
fn oracle_openai_stream_opencode_like_part_c() {
    check(2, Api::OpenAiStream, Toolset::OpencodeLike);
}
