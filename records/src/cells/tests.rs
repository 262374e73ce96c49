use super::*;
use std::io::Write;

fn rec(i: u32) -> CellRow {
    CellRow {
        run_id: "r1".into(),
        tier: 2,
        repeat: i,
        milestone_score: Some(1.0),
        final_score: None,
        wall_seconds: 12.34,
        prompt_tokens: Some(10),
        model_calls: Some(3),
        tool_calls: Some(2),
        attempt_dir: "cells/x, \"quoted\"".into(),
        turns: Some(3),
        uncached_prompt_tokens: Some(4),
        backend_kind: Some(crate::BackendKind::Openai),
        think: Some(crate::ThinkSetting::On),
        peak_prompt_tokens: Some(9),
        fmt_arg_errors: Some(1),
        spin_events: Some(0),
        ctx_events: Some(2),
        provider_errors: Some(0),
        ..CellRow::example("harness", "sim-4b", "WF-04", 0.5714285)
    }
}

#[test]
fn header_rows_roundtrip_and_torn_line_repair() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("sub/cells.csv");
    rec(0).append_to(&p).unwrap();
    // Simulate a writer that crashed mid-row.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&p)
        .unwrap()
        .write_all(b"torn,row")
        .unwrap();
    rec(1).append_to(&p).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], HEADER.join(","));
    assert!(lines[1].starts_with(
        "r1,harness,sim-4b,WF-04,2,0,0,0.571,1.000,,12.3,0,completed,sim,true,10,,3,2,"
    ));
    assert!(
        lines[1].ends_with(",4,3,,4,openai,on,9,1,0,2,,0"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "torn,row");
    assert!(lines[3].starts_with("r1,harness,sim-4b,WF-04,2,1,"));
    assert_eq!(read_cell_rows_lenient(&p).unwrap().len(), 2);
}

#[test]
fn refuses_foreign_header_and_reads_back() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cells.csv");
    rec(0).append_to(&p).unwrap();
    rec(1).append_to(&p).unwrap();
    let rows = read_cell_rows(&p).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].repeat, 1);
    assert_eq!(rows[0].score, 0.571);
    assert_eq!(rows[0].final_score, None);
    assert_eq!(rows[0].attempt_dir, "cells/x, \"quoted\"");
    let q = d.path().join("other.csv");
    std::fs::write(&q, "harness,task,model\n").unwrap();
    assert!(matches!(
        rec(0).append_to(&q),
        Err(RecordError::Header { .. })
    ));
    assert_eq!(std::fs::read_to_string(&q).unwrap(), "harness,task,model\n");
    assert!(read_cell_rows_lenient(&q).is_err());
    assert!(read_cell_rows_lenient(&d.path().join("none.csv"))
        .unwrap()
        .is_empty());
}

/// `text` as a `cells.csv` in a new folder, and its rows as read.
fn old_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf, Vec<CellRow>) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cells.csv");
    std::fs::write(&p, text).unwrap();
    let rows = read_cell_rows(&p).unwrap();
    (d, p, rows)
}

/// Appends `rec(i)` to `p`; the file's last line then.
fn append_line(p: &std::path::Path, i: u32) -> String {
    rec(i).append_to(p).unwrap();
    let text = std::fs::read_to_string(p).unwrap();
    text.lines().last().unwrap().to_string()
}

/// A cells.csv exactly as the suite wrote it before rows carried `schema_version`.
const LEGACY_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir
run-20261129-101500,harness,sim-4b,WF-01,1,0,0,1.000,1.000,1.000,4.2,0,completed,sim,true,1200,80,3,2,cells/harness/sim-4b/WF-01/r0/a0
run-20261129-101500,goose,sim-2b,LH-03,4,0,1,0.000,,,600.0,,timeout,sim,true,,,,,cells/goose/sim-2b/LH-03/r0/a1
";

#[test]
fn files_in_the_legacy_layout_load_and_stay_consistent() {
    let (_d, p, rows) = old_file(LEGACY_FILE);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].schema_version, 1);
    assert_eq!(rows[0].prompt_tokens, Some(1200));
    assert_eq!(rows[1].failure_mode, FailureMode::Timeout);
    assert_eq!(rows[1].exit_code, None);
    assert_eq!(rows[1].milestone_score, None);
    // a resumed old run appends in the old layout
    let last = &append_line(&p, 5);
    let fields = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(last.as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(fields.len(), LEGACY_HEADER.len(), "{last}");
    assert_eq!(&fields[19], "cells/x, \"quoted\"");
    assert_eq!(read_cell_rows_lenient(&p).unwrap().len(), 3);
}

/// A cells.csv as version 1 wrote it (with `schema_version`, without the trajectory counts).
const V1_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version
run-20261130-090000,opencode,sim-4b,WF-02,1,0,0,0.500,1.000,0.000,30.0,0,completed,sim,true,5000,300,6,,cells/opencode/sim-4b/WF-02/r0/a0,1
";

#[test]
fn files_of_version_1_load_and_stay_consistent() {
    let (d, p, rows) = old_file(V1_FILE);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].schema_version, 1);
    assert_eq!(rows[0].prompt_tokens, Some(5000));
    assert_eq!(rows[0].tool_calls, None);
    assert_eq!(
        (
            rows[0].turns,
            rows[0].cached_prompt_tokens,
            rows[0].uncached_prompt_tokens
        ),
        (None, None, None)
    );
    let last = &append_line(&p, 7);
    assert!(last.ends_with("\"cells/x, \"\"quoted\"\"\",1"), "{last}");
    let rows = read_cell_rows_lenient(&p).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].schema_version, 1);
    assert_eq!(rows[1].uncached_prompt_tokens, None);
    // a fresh file gets the current layout, whose counts read back
    let q = d.path().join("new.csv");
    rec(8).append_to(&q).unwrap();
    let r = &read_cell_rows(&q).unwrap()[0];
    assert_eq!(r.schema_version, CellRow::SCHEMA_VERSION);
    assert_eq!((r.turns, r.uncached_prompt_tokens), (Some(3), Some(4)));
    assert_eq!(
        (r.backend_kind, r.think),
        (
            Some(crate::BackendKind::Openai),
            Some(crate::ThinkSetting::On)
        )
    );
}

/// A cells.csv as version 2 wrote it (trajectory counts, without backend kind and think).
const V2_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version,turns,cached_prompt_tokens,uncached_prompt_tokens
run-20261201-090000,harness,sim-4b,WF-02,1,0,0,0.500,1.000,0.000,30.0,0,completed,sim,true,5000,300,6,,cells/harness/sim-4b/WF-02/r0/a0,2,6,4000,1000
";

#[test]
fn files_of_version_2_load_and_stay_consistent() {
    let (_d, p, rows) = old_file(V2_FILE);
    assert_eq!((rows[0].schema_version, rows[0].turns), (2, Some(6)));
    assert_eq!((rows[0].backend_kind, rows[0].think), (None, None));
    let last = &append_line(&p, 9);
    assert!(last.ends_with(",2,3,,4"), "{last}");
    let rows = read_cell_rows_lenient(&p).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[1].schema_version, rows[1].think), (2, None));
}

/// A cells.csv as version 3 wrote it (backend kind and think, without the peak prompt and
/// the failure-form counters).
const V3_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version,turns,cached_prompt_tokens,uncached_prompt_tokens,backend_kind,think
run-20261205-090000,mingbird,sim-2b,WF-04,2,0,0,1.000,1.000,1.000,3.0,0,completed,sim,true,5000,300,6,5,cells/mingbird/sim-2b/WF-04/r0/a0,3,6,,,sim,off
";

#[test]
fn files_of_version_3_load_and_stay_consistent() {
    let (d, p, rows) = old_file(V3_FILE);
    assert_eq!((rows[0].schema_version, rows[0].tool_calls), (3, Some(5)));
    // not recorded in version 3: unknown, never 0
    assert_eq!(
        (rows[0].peak_prompt_tokens, rows[0].spin_events),
        (None, None)
    );
    let last = &append_line(&p, 9);
    assert!(last.ends_with(",3,3,,4,openai,on"), "{last}");
    let rows = read_cell_rows_lenient(&p).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[1].schema_version, rows[1].ctx_events), (3, None));
    // a fresh file: version 4, the counters read back (an empty finish counter stays empty)
    let q = d.path().join("new.csv");
    rec(1).append_to(&q).unwrap();
    let r = &read_cell_rows(&q).unwrap()[0];
    assert_eq!(
        (
            r.peak_prompt_tokens,
            r.fmt_arg_errors,
            r.ctx_events,
            r.finish_rejections
        ),
        (Some(9), Some(1), Some(2), None)
    );
}

#[test]
fn rows_from_a_newer_suite_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cells.csv");
    let mut r = rec(0);
    r.schema_version = CellRow::SCHEMA_VERSION + 1;
    r.append_to(&p).unwrap();
    let e = read_cell_rows(&p).unwrap_err().to_string();
    assert!(
        e.contains("cells.csv:2") && e.contains("schema_version"),
        "{e}"
    );
}

#[test]
fn concurrent_appends_never_interleave() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cells.csv");
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let p = p.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    rec(t * 100 + i).append_to(&p).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(read_cell_rows(&p).unwrap().len(), 100);
}
