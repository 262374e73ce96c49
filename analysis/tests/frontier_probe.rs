//! The frontier probe's format and the comparison with the published file
//! (`lrab analyze … --probe-out / --probe-compare`), against the copy carried in the repository.

use lrab_analysis::{run, AnalyzeArgs};
use std::path::{Path, PathBuf};

fn published() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mingbird/frontier_probe_scores.csv")
}

fn args(inputs: Vec<PathBuf>, out: PathBuf) -> AnalyzeArgs {
    AnalyzeArgs {
        resamples: 50,
        no_figures: true,
        quiet: true,
        ..AnalyzeArgs::new(inputs, out)
    }
}

/// Rows of a probe CSV: arm, task, score (None = timeout).
fn rows(text: &str) -> Vec<(String, String, Option<f64>)> {
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].into(), f[1].into(), f[2].parse().ok())
        })
        .collect()
}

#[test]
fn the_published_probe_round_trips_byte_identical() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("probe.csv");
    run(&AnalyzeArgs {
        probe_out: Some(out.clone()),
        ..args(vec![published()], d.path().join("o"))
    })
    .unwrap();
    let want = std::fs::read_to_string(published()).unwrap();
    assert_eq!(std::fs::read_to_string(out).unwrap(), want);
}

#[test]
fn our_cells_are_written_in_the_published_conventions() {
    let d = tempfile::tempdir().unwrap();
    let cells = d.path().join("cells.csv");
    std::fs::write(
        &cells,
        "run_id,arm,model,task,repeat,attempt,score,wall_seconds,failure_mode,simulated\n\
         r,agent-mini,m,WF-04,0,0,1.000,5.0,completed,false\n\
         r,opencode,m,WF-03,0,0,0.429,3600.0,timeout,false\n\
         r,goose,m,WF-02,0,0,0.250,60.06,crash,false\n\
         r,goose,m,WF-01,0,0,0.500,12.34,stall,false\n\
         r,goose,m,LH-01,0,0,0.000,7.0,error,false\n",
    )
    .unwrap();
    let out = d.path().join("probe.csv");
    run(&AnalyzeArgs {
        probe_out: Some(out.clone()),
        ..args(vec![cells], d.path().join("o"))
    })
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(out).unwrap(),
        "arm,task,score,failure_mode,wall_seconds\n\
         goose,WF-01,0.5,completed,12.3\n\
         goose,WF-02,0.25,error,60.1\n\
         goose,LH-01,0.0,error,7.0\n\
         opencode,WF-03,,timeout,3600.0\n\
         agent-mini,WF-04,1.0,,5.0\n"
    );
}

/// The published file with two cells dropped, one score changed and one arm added.
fn edited_run(simulated: bool) -> String {
    let text = std::fs::read_to_string(published()).unwrap();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with("mingbird,LH-03,") && !l.starts_with("goose,WF-02,"))
        .map(|l| match l.strip_prefix("opencode,WF-01,") {
            Some(rest) => format!("opencode,WF-01,0.5,{}", rest.split_once(',').unwrap().1),
            None => l.to_string(),
        })
        .collect();
    lines.push("harness,WF-01,1.0,completed,2.0".into());
    if simulated {
        for (i, l) in lines.iter_mut().enumerate() {
            l.push_str(if i == 0 { ",simulated" } else { ",true" });
        }
    }
    lines.join("\n") + "\n"
}

fn compare(dir: &Path, run_csv: &str) -> String {
    let input = dir.join("run_probe.csv");
    std::fs::write(&input, run_csv).unwrap();
    let out = dir.join("o");
    let o = run(&AnalyzeArgs {
        probe_compare: Some(published()),
        ..args(vec![input], out.clone())
    })
    .unwrap();
    let md = std::fs::read_to_string(out.join("probe_comparison.md")).unwrap();
    assert!(o.summary.contains(&md), "the comparison is printed too");
    md
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

#[test]
fn a_run_is_compared_with_the_published_probe() {
    let d = tempfile::tempdir().unwrap();
    let run_csv = edited_run(false);
    let md = compare(d.path(), &run_csv);
    let pubs = rows(&std::fs::read_to_string(published()).unwrap());
    let ours = rows(&run_csv);
    let label = "this run";
    assert!(
        md.contains(&format!("## Frontier probe: {label} vs published")),
        "{md}"
    );
    let f3 = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.3}"));
    for arm in ["mingbird", "goose", "opencode", "agent-mini", "harness"] {
        let side = |rs: &[(String, String, Option<f64>)]| {
            let mine: Vec<_> = rs.iter().filter(|r| r.0 == arm).collect();
            let scored: Vec<f64> = mine.iter().filter_map(|r| r.2).collect();
            (mine.len(), mine.len() - scored.len(), mean(&scored))
        };
        let (pn, pt, pm) = side(&pubs);
        let (rn, rt, rm) = side(&ours);
        let delta = match (pm, rm) {
            (Some(p), Some(r)) => format!("{:+.3}", r - p),
            _ => "—".into(),
        };
        let want = format!(
            "| {arm} | {pn} ({pt} timeout) | {rn} ({rt} timeout) | {} | {} | {delta} |",
            f3(pm),
            f3(rm)
        );
        assert!(md.contains(&want), "missing `{want}` in\n{md}");
    }
    // the published means themselves (README: 0.997, 0.989, 0.925 / 0.874 with the timeout 0)
    assert!(md.contains("| opencode | 18 (1 timeout) |"), "{md}");
    let p01 = pubs
        .iter()
        .find(|r| r.0 == "opencode" && r.1 == "WF-01")
        .unwrap()
        .2
        .unwrap();
    let want = format!(
        "| opencode | WF-01 | {p01:.3} | 0.500 | {:+.3} |",
        0.5 - p01
    );
    assert!(md.contains(&want), "missing `{want}` in\n{md}");
    assert!(
        md.contains("| opencode | WF-08 | timeout | timeout | — |"),
        "{md}"
    );
    let both = md.lines().filter(|l| l.matches(" | ").count() == 4).count();
    assert_eq!(both, 70 + 1, "70 shared cells plus the header:\n{md}");
    assert!(
        md.contains("Missing from this run (2): mingbird LH-03, goose WF-02"),
        "{md}"
    );
    assert!(
        md.contains("Missing from published (1): harness WF-01"),
        "{md}"
    );
    assert!(
        md.contains(
            "Model: this run `run_probe`, thinking not recorded in the input; published \
             `qwen3.8-flash`, thinking `off`."
        ),
        "{md}"
    );
    assert!(!md.contains("differ in thinking"), "{md}");
}

#[test]
fn a_run_with_thinking_on_is_flagged_against_the_published_probe() {
    let d = tempfile::tempdir().unwrap();
    let cells = d.path().join("cells.csv");
    std::fs::write(
        &cells,
        "run_id,arm,model,task,repeat,attempt,score,failure_mode,think\n\
         r,goose,hosted-x,WF-01,0,0,1.000,completed,on\n",
    )
    .unwrap();
    let out = d.path().join("o");
    run(&AnalyzeArgs {
        probe_compare: Some(published()),
        ..args(vec![cells], out.clone())
    })
    .unwrap();
    let md = std::fs::read_to_string(out.join("probe_comparison.md")).unwrap();
    assert!(
        md.contains("Model: this run `hosted-x`, thinking `on`; published `qwen3.8-flash`"),
        "{md}"
    );
    assert!(
        md.contains("**The runs compared differ in thinking.**"),
        "{md}"
    );
    assert!(
        md.contains("| goose | WF-01 | 1.000 | 1.000 | +0.000 |"),
        "{md}"
    );
}

#[test]
fn a_simulated_run_keeps_its_label_through_the_probe_format() {
    let d = tempfile::tempdir().unwrap();
    let md = compare(d.path(), &edited_run(true));
    assert!(
        md.contains("## Frontier probe: this run (simulated) vs published"),
        "{md}"
    );
    assert!(!md.contains("| this run |"), "{md}");
}

#[test]
fn a_run_of_two_models_is_refused_with_the_files_named() {
    let d = tempfile::tempdir().unwrap();
    let cells = d.path().join("cells.csv");
    std::fs::write(
        &cells,
        "run_id,arm,model,task,repeat,attempt,score\n\
         r,goose,a,WF-01,0,0,1.000\n\
         r,goose,b,WF-01,0,0,1.000\n",
    )
    .unwrap();
    let e = run(&AnalyzeArgs {
        probe_compare: Some(published()),
        ..args(vec![cells.clone()], d.path().join("o"))
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(&cells.display().to_string()) && e.contains("a, b"),
        "{e}"
    );
    assert!(!d.path().join("o").exists(), "nothing written: {e}");
}
