//! The frontier probe re-run end to end on the simulator: a small `lrab run` (our harness only:
//! third-party arms may not be installed), its cells exported in the published probe's format
//! and compared with the published `frontier_probe_scores.csv` by `lrab analyze`, from the
//! cells.csv and from the exported probe CSV alike.

mod common;

use common::{lrab, text};
use std::path::{Path, PathBuf};

const TASKS: [&str; 3] = ["WF-01", "WF-02", "LH-02"];

fn published() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mingbird/frontier_probe_scores.csv")
}

fn analyze(input: &Path, out: &Path, extra: &[&str]) -> String {
    let o = lrab()
        .arg("analyze")
        .arg(input)
        .arg("--out")
        .arg(out)
        .args(["--no-figures", "--resamples", "50", "--probe-compare"])
        .arg(published())
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// (task, score, failure_mode, wall) of each cells.csv row, by column name.
fn cells(path: &Path) -> Vec<(String, f64, String, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[col("task")].to_string(),
                f[col("score")].parse().unwrap(),
                f[col("failure_mode")].to_string(),
                f[col("wall_seconds")].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_simulated_run_is_exported_and_compared_with_the_published_probe() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("results");
    let o = lrab()
        .arg("run")
        .args(common::fast(100, 2000, 200))
        .args(["--arms", "harness", "--models", "sim-oracle"])
        .args(["--tasks", &TASKS.join(","), "--run-id", "probe"])
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let cells_csv = results.join("probe/cells.csv");
    let rows = cells(&cells_csv);
    assert_eq!(rows.len(), TASKS.len());

    let probe = d.path().join("probe.csv");
    let out = analyze(
        &cells_csv,
        &d.path().join("a"),
        &["--probe-out", probe.to_str().unwrap()],
    );

    // the export: the published columns, plus the simulated label; values as the paper writes them
    let round = |x: f64, f: f64| format!("{:?}", (x * f).round() / f);
    let mut want = String::from("arm,task,score,failure_mode,wall_seconds,simulated\n");
    for t in ["WF-01", "WF-02", "LH-02"] {
        let (_, s, m, w) = rows.iter().find(|r| r.0 == t).unwrap();
        let m = match m.as_str() {
            "crash" | "error" => "error",
            "timeout" => "timeout",
            _ => "completed",
        };
        want.push_str(&format!(
            "harness,{t},{},{m},{},true\n",
            round(*s, 1e3),
            round(*w, 10.0)
        ));
    }
    assert_eq!(std::fs::read_to_string(&probe).unwrap(), want);

    // the comparison, labelled simulated, means recomputed from the files
    assert!(
        out.contains("## Frontier probe: this run (simulated) vs published"),
        "{out}"
    );
    let m = rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
    let want = format!("| harness | 0 (0 timeout) | 3 (0 timeout) | — | {m:.3} | — |");
    assert!(out.contains(&want), "missing `{want}` in\n{out}");
    let published_text = std::fs::read_to_string(published()).unwrap();
    let opencode: Vec<f64> = published_text
        .lines()
        .filter(|l| l.starts_with("opencode,"))
        .filter_map(|l| l.split(',').nth(2).and_then(|s| s.parse().ok()))
        .collect();
    let pm = opencode.iter().sum::<f64>() / opencode.len() as f64;
    let want = format!("| opencode | 18 (1 timeout) | 0 (0 timeout) | {pm:.3} | — | — |");
    assert!(out.contains(&want), "missing `{want}` in\n{out}");
    assert!(
        out.contains("Missing from this run (simulated) (72): mingbird WF-01,"),
        "{out}"
    );
    assert!(
        out.contains("Missing from published (3): harness WF-01, harness WF-02, harness LH-02"),
        "{out}"
    );

    assert!(
        out.contains(
            "Model: this run `sim-oracle`, thinking `off`; published `qwen3.8-flash`, thinking \
             `off`."
        ),
        "{out}"
    );

    // the exported probe CSV compares the same (but for what it cannot record: the model and
    // thinking)
    let from_probe = analyze(&probe, &d.path().join("b"), &[]);
    let md = |dir: &str| std::fs::read_to_string(d.path().join(dir).join("probe_comparison.md"));
    let tables = |m: String| {
        m.lines()
            .filter(|l| !l.starts_with("Model:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(tables(md("a").unwrap()), tables(md("b").unwrap()));
    assert!(from_probe.contains("this run (simulated)"), "{from_probe}");
}
