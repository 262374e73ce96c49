//! End-to-end runs of `cli::run` on our cells.csv format: outputs, determinism, the handling of
//! repeats/attempts, and bad input.

use lrab_analysis::{run, AnalyzeArgs};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const HEADER: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir";

fn tasks() -> Vec<(String, u8)> {
    let mut v: Vec<(String, u8)> = (1..=15)
        .map(|i| {
            (
                format!("WF-{i:02}"),
                match i {
                    1..=2 => 1,
                    3..=6 => 2,
                    _ => 3,
                },
            )
        })
        .collect();
    v.extend((1..=3).map(|i| (format!("LH-{i:02}"), 4)));
    v
}

/// A deterministic synthetic run: arms harness, opencode and an ablation arm, two simulated
/// models, two repeats, and a superseded first attempt on some cells.
fn synthetic(dir: &Path) -> PathBuf {
    let mut s = String::from(HEADER);
    s.push('\n');
    let arms = [
        ("harness", 0.85),
        ("opencode", 0.45),
        ("harness-no-finish-gate", 0.7),
    ];
    for (ai, (arm, base)) in arms.iter().enumerate() {
        for (mi, model) in ["sim-2b", "sim-4b"].iter().enumerate() {
            for (ti, (task, tier)) in tasks().iter().enumerate() {
                for rep in 0..2 {
                    let x = ((ai * 7 + mi * 5 + ti * 3 + rep) % 10) as f64 / 25.0;
                    let score = (base - 0.2 + x + mi as f64 * 0.05).clamp(0.0, 1.0);
                    let mode = if score < 0.3 {
                        "early_finish"
                    } else {
                        "completed"
                    };
                    if ti % 5 == 0 {
                        // A first attempt that timed out; the retry (attempt 1) must win.
                        let _ = writeln!(s, "run1,{arm},{model},{task},{tier},{rep},0,,,,600,,timeout,sim,true,,,,,a{rep}");
                    }
                    let attempt = u8::from(ti % 5 == 0);
                    let adir = format!("{arm}_{model}_{task}_r{rep}");
                    if *arm == "harness" && ti < 3 {
                        // Event logs for 3 tasks: two finish-gate firings and a truncated line.
                        let d = dir.join(&adir).join("workdir/.lrab");
                        std::fs::create_dir_all(&d).unwrap();
                        let fire = "{\"t_ms\":1,\"run\":0,\"kind\":\"mechanism\",\"name\":\"finish_gate\",\"action\":\"reject\"}\n";
                        std::fs::write(
                            d.join("events.jsonl"),
                            format!("{fire}{fire}{{\"t_ms\":9,\"ki"),
                        )
                        .unwrap();
                    }
                    let _ = writeln!(
                        s,
                        "run1,{arm},{model},{task},{tier},{rep},{attempt},{score:.3},1,0.5,{},0,{mode},sim,true,{},{},{},{},{adir}",
                        100 + ti * 10 + rep,
                        1000 + ti,
                        200 + ti,
                        5 + rep,
                        3 + ti % 4
                    );
                }
            }
        }
    }
    let p = dir.join("cells.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn args(inputs: Vec<PathBuf>, out: PathBuf) -> AnalyzeArgs {
    AnalyzeArgs {
        resamples: 500,
        quiet: true,
        ..AnalyzeArgs::new(inputs, out)
    }
}

#[test]
fn end_to_end_report_is_complete_and_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = synthetic(tmp.path());
    let out1 = tmp.path().join("out1");
    let out2 = tmp.path().join("out2");
    let r1 = run(&args(vec![csv.clone()], out1.clone())).unwrap();
    run(&args(vec![csv], out2.clone())).unwrap();
    for f in &r1.files {
        let rel = f.strip_prefix(&out1).unwrap();
        let (a, b) = (
            std::fs::read(f).unwrap(),
            std::fs::read(out2.join(rel)).unwrap(),
        );
        assert!(
            a == b,
            "{} differs between two identical runs",
            rel.display()
        );
    }
    for fig in [
        "by_model",
        "overall",
        "cliff",
        "ablations",
        "wall_time",
        "failure_modes",
    ] {
        let png = std::fs::read(out1.join("figures").join(format!("{fig}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{fig}.png");
        let svg = std::fs::read_to_string(out1.join("figures").join(format!("{fig}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{fig}.svg");
    }
    let md = std::fs::read_to_string(out1.join("report.md")).unwrap();
    assert!(
        md.contains("SIMULATED BACKEND"),
        "simulated backend must be flagged"
    );
    assert!(md.contains("## Methods") && md.contains("seed 42") && md.contains("lrab-analysis"));
    assert!(
        md.contains("harness-no-finish-gate"),
        "ablation arm in the ablation table"
    );
    assert!(md.contains("## Failure modes") && md.contains("## Tokens and calls"));
    assert!(md.contains("## Repeats"));
    assert!(
        md.contains("## Mechanism activations: harness (6 cells with event logs)"),
        "{md}"
    );
    assert!(md.contains("| finish_gate | 2.00 | 6/6 |"), "{md}");
    assert!(md.contains("12 unparsable event-log line(s)"), "{md}");
    let html = std::fs::read_to_string(out1.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<figure><svg").count(), 6, "figures inlined");
    assert!(
        !html.contains("src=\""),
        "self-contained: no external references"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out1.join("analysis.json")).unwrap())
            .unwrap();
    assert_eq!(json["focal"], "harness");
    // 2 arms x 2 models x 18 tasks = 72 main cells + 36 ablation cells.
    assert_eq!(json["total_cells"], 108);
}

#[test]
fn latest_attempt_wins_and_repeats_are_averaged() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("c.csv");
    let rows = [
        "r,harness,m-2b,WF-01,1,0,0,0.100,,,10,0,completed,sim,false,,,,,x",
        "r,harness,m-2b,WF-01,1,0,1,0.900,,,10,0,completed,sim,false,,,,,x",
        "r,harness,m-2b,WF-01,1,1,0,0.500,,,30,0,completed,sim,false,,,,,x",
        "r,harness,m-2b,WF-02,1,0,0,,,,600,,timeout,sim,false,,,,,x",
    ];
    std::fs::write(&p, format!("{HEADER}\n{}\n", rows.join("\n"))).unwrap();
    let ds = lrab_analysis::load(&[p]).unwrap();
    let c = &ds.cells[0];
    assert_eq!(
        (c.task.as_str(), c.repeat_scores.clone()),
        ("WF-01", vec![0.9, 0.5])
    );
    assert!((c.score - 0.7).abs() < 1e-12);
    assert_eq!(c.wall_seconds, Some(20.0));
    assert_eq!(ds.cells[1].score, 0.0, "timeout counts as 0");
    assert_eq!(ds.superseded_attempts, 1);
}

fn err_of(header: &str, rows: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("bad.csv");
    std::fs::write(&p, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
    let out = tmp.path().join("out");
    let e = run(&args(vec![p], out.clone())).unwrap_err();
    assert!(!out.exists(), "nothing written on bad input");
    format!("{e:#}")
}

#[test]
fn bad_input_gives_clear_errors() {
    let e = err_of("harness,task,model,wall_seconds", &["a,WF01,m,1"]);
    assert!(
        e.contains("bad.csv") && e.contains("missing column(s): score"),
        "{e}"
    );

    let e = err_of(
        "harness,task,model,score",
        &["a,WF01,m,0.5", "a,WF02,m,high"],
    );
    assert!(
        e.contains("bad.csv:3") && e.contains("`score`") && e.contains("`high` is not a number"),
        "{e}"
    );

    let e = err_of(
        "harness,task,model,score",
        &["a,WF01,m,0.5", "a,WF01,m,0.5"],
    );
    assert!(
        e.contains("bad.csv:3") && e.contains("duplicate row") && e.contains("bad.csv:2"),
        "{e}"
    );

    let e = err_of("harness,task,model,score", &["a,WF01,m,1.5"]);
    assert!(e.contains("outside [0, 1]"), "{e}");

    let e = err_of(
        HEADER,
        &["r,harness,m,WF-01,1,0,0,,,,10,0,completed,sim,false,,,,,x"],
    );
    assert!(
        e.contains("bad.csv:2") && e.contains("not `timeout`"),
        "{e}"
    );

    let e = err_of(
        HEADER,
        &["r,harness,m,WF-01,9,0,0,0.5,,,10,0,completed,sim,false,,,,,x"],
    );
    assert!(e.contains("`tier`"), "{e}");

    let tmp = tempfile::tempdir().unwrap();
    let e = run(&args(
        vec![tmp.path().join("nope.csv")],
        tmp.path().join("o"),
    ))
    .unwrap_err();
    assert!(format!("{e:#}").contains("nope.csv: cannot read file"));
}

#[test]
fn bad_input_leaves_an_existing_report_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = synthetic(tmp.path());
    let out = tmp.path().join("out");
    run(&AnalyzeArgs {
        no_figures: true,
        ..args(vec![csv], out.clone())
    })
    .unwrap();
    let before = std::fs::read(out.join("report.md")).unwrap();
    let bad = tmp.path().join("bad.csv");
    std::fs::write(&bad, "harness,task,model,score\na,WF01,m,x\n").unwrap();
    assert!(run(&args(vec![bad], out.clone())).is_err());
    assert_eq!(std::fs::read(out.join("report.md")).unwrap(), before);
}

#[test]
fn task_missing_for_one_arm_is_reported_not_hidden() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("u.csv");
    let mut s = String::from("harness,task,model,score,wall_seconds,latest_attempt_dir\n");
    for t in 1..=6 {
        let _ = writeln!(s, "Mingbird,WF0{t},m_4b,0.9,10,x");
        if t != 3 {
            let _ = writeln!(s, "goose,WF0{t},m_4b,0.{t},10,x");
        }
    }
    std::fs::write(&p, s).unwrap();
    let out = tmp.path().join("out");
    let r = run(&AnalyzeArgs {
        no_figures: true,
        ..args(vec![p], out)
    })
    .unwrap();
    assert!(
        r.summary.contains("| WF-03 |"),
        "unpaired task listed:\n{}",
        r.summary
    );
    let md = std::fs::read_to_string(r.files.iter().find(|f| f.ends_with("report.md")).unwrap())
        .unwrap();
    assert!(md.contains("Missing cells: 1 task(s)"), "{md}");
}

#[test]
fn tau2_results_csv_with_trials_gives_pass_k() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("tau.csv");
    let mut s = String::from("domain,task,arm,trial,reward,components,steps,termination\n");
    for t in 0..10 {
        for trial in 0..4 {
            let _ = writeln!(
                s,
                "retail,{t},harness,{trial},{},DB=1,7,agent_stop",
                u8::from(t < 8 || trial < 2)
            );
            let _ = writeln!(
                s,
                "retail,{t},llm_agent,{trial},{},DB=1,9,user_stop",
                u8::from(t < 4)
            );
        }
    }
    std::fs::write(&p, s).unwrap();
    let ds = lrab_analysis::load(&[p]).unwrap();
    let a = lrab_analysis::analyze(&ds, &Default::default()).unwrap();
    let t = a.tau.unwrap();
    assert_eq!(t.focal, "harness");
    let pk = &t.pass_k.iter().find(|p| p.0 == "harness").unwrap().1;
    // 8 tasks always pass, 2 pass 2 of 4: pass^1 = (8 + 2*0.5)/10, pass^2 = (8 + 2/6)/10.
    assert!((pk[0] - 0.9).abs() < 1e-12 && (pk[1] - (8.0 + 2.0 / 6.0) / 10.0).abs() < 1e-12);
    let (_, m, _) = &t.mcnemar[0];
    // McNemar uses trial 0: harness passes all 10, llm_agent tasks 0..4.
    assert_eq!((m.b, m.c, m.ties), (6, 0, 4));
}
