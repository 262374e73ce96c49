//! Repeated, paired ablation designs from our cells.csv and the published layouts: the
//! ablation section of the report, the noise band on its figure, `--power`, and bad designs.

use lrab_analysis::{run, AnalyzeArgs};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const HEADER: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir";

/// A batch-matched ablation: `harness` and `harness-no-x` on 6 tasks × `repeats` repeats in
/// run `abl`; the variant loses `effect` on every task, and repeat r adds `wobble·r` to both.
fn cells(dir: &Path, repeats: u32, effect: f64, skip: Option<(&str, &str, u32)>) -> PathBuf {
    let mut s = format!("{HEADER}\n");
    for arm in ["harness", "harness-no-x"] {
        for t in 1..=6 {
            for r in 0..repeats {
                if skip == Some((arm, &format!("WF-0{t}"), r)) {
                    continue;
                }
                let base = 0.3
                    + 0.1 * t as f64
                    + 0.02 * r as f64
                    + if t == 6 && r % 2 == 1 { -0.5 } else { 0.0 };
                let score = if arm == "harness" {
                    base
                } else {
                    base - effect - 0.01 * ((t + r as usize) % 3) as f64
                };
                let _ = writeln!(
                    s,
                    "abl,{arm},sim-2b,WF-0{t},,{r},0,{:.3},,,10,0,completed,sim,true,,,,,",
                    score.clamp(0.0, 1.0)
                );
            }
        }
    }
    let p = dir.join("cells.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn args(inputs: Vec<PathBuf>, out: PathBuf) -> AnalyzeArgs {
    AnalyzeArgs {
        resamples: 300,
        quiet: true,
        ..AnalyzeArgs::new(inputs, out)
    }
}

fn report(dir: &Path, csv: PathBuf, power: Option<f64>) -> String {
    let out = dir.join("out");
    run(&AnalyzeArgs {
        power,
        ..args(vec![csv], out.clone())
    })
    .unwrap();
    std::fs::read_to_string(out.join("report.md")).unwrap()
}

#[test]
fn cells_ablation_gives_per_repeat_deltas_noise_band_and_power() {
    let tmp = tempfile::tempdir().unwrap();
    let md = report(tmp.path(), cells(tmp.path(), 4, 0.15, None), Some(0.05));
    assert!(
        md.contains("## Ablations (mechanism effect Δ = baseline − variant)"),
        "{md}"
    );
    assert!(
        md.contains("| model sim-2b | harness-no-x | harness | 6 | 4 |"),
        "{md}"
    );
    assert!(
        md.contains("### harness-no-x vs harness (model sim-2b)"),
        "{md}"
    );
    for r in 0..4 {
        assert!(md.contains(&format!("| abl/r{r} |")), "{md}");
    }
    assert!(md.contains("4 of 4"), "{md}");
    assert!(md.contains("## Power for Δ = 0.050 (`--power`)"), "{md}");
    assert!(md.contains("Bimodal tasks") && md.contains("WF-06"), "{md}");
    // The noise band is drawn on the ablation figure (a grey rectangle in the SVG).
    let svg = std::fs::read_to_string(tmp.path().join("out/figures/ablations.svg")).unwrap();
    assert!(
        svg.contains("#C8C8C8") || svg.contains("rgb(200,200,200)"),
        "noise band"
    );
    assert!(md.contains("grey band = noise floor"));
    // The caveat is built from the numbers: another effect, another sentence.
    let other = tempfile::tempdir().unwrap();
    let md2 = report(other.path(), cells(other.path(), 4, 0.0, None), None);
    let cav = |m: &str| {
        m.lines()
            .find(|l| l.starts_with("- Ablation harness-no-x"))
            .unwrap()
            .to_string()
    };
    assert_ne!(cav(&md), cav(&md2));
    assert!(
        cav(&md).contains("Δ +0.16") || cav(&md).contains("Δ +0.15"),
        "{}",
        cav(&md)
    );
}

#[test]
fn missing_repeat_for_one_task_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = cells(tmp.path(), 3, 0.1, Some(("harness", "WF-03", 2)));
    let e = run(&args(vec![csv], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("harness WF-03 in abl/r2") && e.contains("missing"),
        "{e}"
    );
    assert!(!tmp.path().join("o").exists(), "nothing written");
}

#[test]
fn variant_without_its_baseline_in_the_batch_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("c.csv");
    let mut s = format!("{HEADER}\n");
    for t in 1..=3 {
        let _ = writeln!(
            s,
            "main,harness,sim-2b,WF-0{t},,0,0,0.8,,,10,0,completed,sim,true,,,,,"
        );
        let _ = writeln!(
            s,
            "other,harness-no-x,sim-2b,WF-0{t},,0,0,0.6,,,10,0,completed,sim,true,,,,,"
        );
    }
    std::fs::write(&p, &s).unwrap();
    let e = run(&args(vec![p.clone()], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("harness-no-x") && e.contains("other/r0") && e.contains("same batch"),
        "{e}"
    );
    // No baseline at all for the model.
    let mut s2 = format!("{HEADER}\n");
    s2.push_str("r,harness,sim-4b,WF-01,,0,0,0.8,,,10,0,completed,sim,true,,,,,\n");
    s2.push_str("r,harness-no-x,sim-2b,WF-01,,0,0,0.8,,,10,0,completed,sim,true,,,,,\n");
    std::fs::write(&p, s2).unwrap();
    let e = run(&args(vec![p], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("model `sim-2b`") && e.contains("no cells of its baseline `harness`"),
        "{e}"
    );
}

#[test]
fn published_layouts_with_holes_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let wide = tmp.path().join("wide.csv");
    std::fs::write(
        &wide,
        "task,baseline_r1,baseline_r2,text_only_r1,text_only_r2\nWF01,1,1,0.5,0.5\nWF02,1,,0.5,0.5\n",
    )
    .unwrap();
    let e = run(&args(vec![wide], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("wide.csv:3") && e.contains("WF-02") && e.contains("baseline_r2"),
        "{e}"
    );
    let long = tmp.path().join("long.csv");
    std::fs::write(
        &long,
        "variant,task_id,total,repeat\nbaseline,WF01,1,1\nbaseline,WF01,1,2\nbaseline,WF02,1,1\nbaseline,WF02,1,2\nx,WF01,0.5,1\nx,WF01,0.5,2\nx,WF02,0.5,1\n",
    )
    .unwrap();
    let e = run(&args(vec![long.clone()], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("long.csv") && e.contains("x WF-02 in r2"), "{e}");
    std::fs::write(
        &long,
        "variant,task_id,total,repeat\nbaseline,WF01,1,1\nx,WF01,0.5,1\nx,WF01,0.5,2\n",
    )
    .unwrap();
    let e = run(&args(vec![long.clone()], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("variant `x` ran in batch r2") && e.contains("baseline"),
        "{e}"
    );
    std::fs::write(&long, "variant,task_id,total\nfull,WF01,1\nx,WF01,0.5\n").unwrap();
    let e = run(&args(vec![long], tmp.path().join("o")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no baseline variant") && e.contains("full, x"),
        "{e}"
    );
}

#[test]
fn single_repeat_says_what_cannot_be_computed() {
    let tmp = tempfile::tempdir().unwrap();
    let md = report(tmp.path(), cells(tmp.path(), 1, 0.1, None), Some(0.1));
    assert!(
        md.contains("not measured: needs at least 2 repeats of `harness`"),
        "{md}"
    );
    assert!(md.contains("not computed (needs ≥ 2 repeats)"), "{md}");
    assert!(md.contains("directional only"), "{md}");
    // --power with no ablation in the inputs is an error naming what is missing.
    let p = tmp.path().join("plain.csv");
    std::fs::write(&p, "harness,task,model,score\nA,WF01,m,0.5\n").unwrap();
    let e = run(&AnalyzeArgs {
        power: Some(0.05),
        ..args(vec![p], tmp.path().join("o2"))
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("--power needs an ablation"), "{e}");
}

/// A report on upstream's ablation file alone has no arms to compare: its methods paragraph
/// must not describe a comparison of an unnamed arm ("Per model,  is compared …"), and a
/// report with arms still names the focal one.
#[test]
fn methods_of_an_ablation_only_report_name_no_empty_focal_arm() {
    let dir = tempfile::tempdir().unwrap();
    let published =
        lrab_data::file("mingbird/ablation_scores.csv").unwrap_or_else(|e| panic!("{e}"));
    let md = report(dir.path(), published, None);
    let methods = md
        .split("## Methods")
        .nth(1)
        .and_then(|m| m.split("\n## ").next())
        .unwrap()
        .to_string();
    assert!(!methods.contains("Per model,"), "{methods}");
    assert!(!methods.contains(",  is"), "{methods}");
    assert!(methods.contains("no arms are compared"), "{methods}");
    assert!(methods.contains("ablation_scores.csv"), "{methods}");
    let dir2 = tempfile::tempdir().unwrap();
    let csv = cells(dir2.path(), 2, 0.1, None);
    let md = report(dir2.path(), csv, None);
    assert!(md.contains("Per model, harness is compared"), "{md}");
}
