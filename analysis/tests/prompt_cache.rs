//! The prompt-cache table from cells.csv files as the runner writes them now (version 2, with
//! cache counts) beside one from before the counts existed, which still loads.

use lrab_analysis::{run, AnalyzeArgs};
use lrab_records::CellRow;

fn row(arm: &str, task: &str, cached: Option<u64>, uncached: Option<u64>) -> CellRow {
    CellRow {
        wall_seconds: 3.0,
        prompt_tokens: Some(cached.unwrap_or(0) + uncached.unwrap_or(0)),
        completion_tokens: Some(10),
        model_calls: Some(3),
        tool_calls: Some(2),
        attempt_dir: format!("cells/{arm}/{task}"),
        turns: Some(3),
        cached_prompt_tokens: cached,
        uncached_prompt_tokens: uncached,
        ..CellRow::example(arm, "sim-4b", task, 1.0)
    }
}

#[test]
fn the_report_has_the_cache_table_and_old_files_still_load() {
    let tmp = tempfile::tempdir().unwrap();
    let new = tmp.path().join("new/cells.csv");
    for r in [
        row("harness", "WF-01", Some(9000), Some(1000)),
        row("harness", "WF-02", Some(7000), Some(1000)),
        row("opencode", "WF-01", Some(5000), Some(5000)),
        row("opencode", "WF-02", Some(3000), Some(7000)),
    ] {
        r.append_to(&new).unwrap();
    }
    // a run from before the counts: its cells load, and it adds no row to the cache table
    let old = tmp.path().join("old/cells.csv");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::write(
        &old,
        "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir\n\
         o,agent-mini,sim-4b,WF-01,1,0,0,0.500,1.000,0.000,4.2,0,completed,sim,true,1200,80,3,2,cells/x\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    run(&AnalyzeArgs {
        resamples: 200,
        quiet: true,
        no_figures: true,
        ..AnalyzeArgs::new(vec![new, old], out.clone())
    })
    .unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let at = md
        .find("## Prompt cache by arm and model")
        .expect("cache table");
    let section = &md[at..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    assert!(
        section.contains("| sim-4b | harness | 2 | 9000 | 88.9 % | 1000 |"),
        "{section}"
    );
    assert!(
        section.contains("| sim-4b | opencode | 2 | 10000 | 40.0 % | 6000 |"),
        "{section}"
    );
    assert!(!section.contains("agent-mini"), "{section}");
    assert!(
        md.contains("agent-mini"),
        "the old file's arm is in the report: {md}"
    );
}
