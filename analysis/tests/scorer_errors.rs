//! A `scorer_error` attempt (the scoring machine lacked a program a check runs) has no score:
//! it is left out of the arm's means, never averaged in as 0, and the report counts it apart.

use lrab_analysis::{analyze, load, Config};

const HEADER: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir";

#[test]
fn scorer_errors_are_excluded_from_means_and_counted_apart() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cells.csv");
    let mut s = format!("{HEADER}\n");
    for (arm, task, score, mode) in [
        ("harness", "WF-01", "0.800", "completed"),
        ("harness", "WF-02", "0.600", "completed"),
        // attempt 0 timed out, attempt 1 could not be scored: the latest attempt wins, and
        // it counts for nothing — neither the timeout's 0 nor a 0 of its own.
        ("harness", "WF-04", "0.000", "timeout"),
        ("other", "WF-01", "0.500", "completed"),
        ("other", "WF-02", "0.500", "completed"),
        ("other", "WF-04", "0.500", "completed"),
    ] {
        s.push_str(&format!(
            "r,{arm},m,{task},,0,0,{score},{},,10,0,{mode},sim,true,,,,,\n",
            if mode == "timeout" { "" } else { score }
        ));
    }
    s.push_str("r,harness,m,WF-04,,0,1,0.000,,,10,0,scorer_error,sim,true,,,,,a/WF-04\n");
    std::fs::write(&p, s).unwrap();
    let att = d.path().join("a/WF-04");
    std::fs::create_dir_all(att.join("workdir")).unwrap();
    std::fs::write(
        att.join("score.json"),
        r#"{"task_id":"WF-04","domain":"d","tier":2,"failure_mode":"scorer_error","arm":"harness","model":"m","run_id":"r","repeat":0,"attempt":1,"wall_seconds":10.0,"exit_code":0,"backend":"sim","simulated":true,"score_error":"scorer error (tried twice): Python module `pytest` is missing"}"#,
    )
    .unwrap();
    let ds = load(std::slice::from_ref(&p)).unwrap();
    let labels: Vec<String> = ds.scorer_errors.iter().map(|e| e.label()).collect();
    assert_eq!(labels, vec!["harness / m / WF-04 (r/r0)".to_string()]);
    assert!(!ds
        .cells
        .iter()
        .any(|c| c.arm == "harness" && c.task == "WF-04"));
    let a = analyze(
        &ds,
        &Config {
            resamples: 50,
            ..Config::default()
        },
    )
    .unwrap();
    let h = a.rows.iter().find(|r| r.arm == "harness").unwrap();
    assert!((h.overall.unwrap() - 0.7).abs() < 1e-9, "{:?}", h.overall);
    assert_eq!(h.n_per_model, vec![2]);
    assert!(
        a.caveats
            .iter()
            .any(|c| c.starts_with("1 attempt(s) are scorer errors") && c.contains("WF-04")),
        "{:?}",
        a.caveats
    );
    // The report lists it apart, with a page saying why it has no score.
    let out = d.path().join("out");
    lrab_analysis::run(&lrab_analysis::AnalyzeArgs {
        resamples: 50,
        quiet: true,
        no_figures: true,
        ..lrab_analysis::AnalyzeArgs::new(vec![p.clone()], out.clone())
    })
    .unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let href = html
        .split("Scorer errors (")
        .nth(1)
        .and_then(|s| s.split("href=\"").nth(1))
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no scorer-error link: {html}"));
    let page = std::fs::read_to_string(out.join(href)).unwrap();
    assert!(page.contains("failure mode <b>scorer_error</b>"), "{page}");
    assert!(
        page.contains("scoring failed: scorer error (tried twice)"),
        "{page}"
    );
}
