//! End-to-end tests of `lrab ablate` on the simulated backend: the baseline and its variant
//! interleaved cell by cell within each repeat, the arm files kept in the run folder, a
//! kill-and-resume of an ablation run, the ablation section of its report, our harness's
//! `--ablate` variants, and bad input refused before anything is written.

mod common;

use common::{col, csv_lines, lrab, quick, sh_arm, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The baseline writes one WF-01 artifact; its variant (`x` as third argument) writes nothing.
const ARM: &str = "echo $$ > arm.pid; sleep 0.3; if [ \"$3\" = x ]; then exit 0; fi; printf 'S001 Ti aging\\n' > shortlist.md; exit 0\n";

struct World {
    _dir: tempfile::TempDir,
    arms: PathBuf,
    out: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let arms = dir.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    sh_arm(&arms, "slow", ARM);
    std::fs::write(
        arms.join("slow-no-x.toml"),
        "name = \"slow-no-x\"\nextends = \"slow\"\nextra_args = [\"x\"]\n",
    )
    .unwrap();
    World {
        out: dir.path().join("results"),
        arms,
        _dir: dir,
    }
}

impl World {
    fn ablate(&self, extra: &[&str]) -> Command {
        let mut c = quick("ablate", &self.arms, &self.out, (300, 3000, 200));
        c.args(extra);
        c
    }
}

fn csv_rows(run: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(run.join("cells.csv")).unwrap_or_default();
    csv_lines(&text).into_iter().skip(1).collect()
}

#[test]
fn ablation_run_is_interleaved_survives_sigkill_and_resumes() {
    let w = world();
    let args = [
        "--arm",
        "slow",
        "--variants",
        "slow-no-x",
        "--models",
        "sim-2b",
        "--tasks",
        "WF-01,WF-02",
        "--repeats",
        "2",
        "--run-id",
        "abl",
    ];
    let mut child = w
        .ablate(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run = w.out.join("abl");
    let t0 = Instant::now();
    while csv_rows(&run).len() < 3 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = csv_rows(&run).len();
    assert!((3..8).contains(&before), "killed mid-way: {before} rows");
    let o = lrab()
        .args(["ablate", "--resume"])
        .arg(&run)
        .arg("--no-progress")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let rows = csv_rows(&run);
    assert_eq!(rows.len(), 8, "{rows:?}");
    // Interleaved: each (task, repeat) has both arms next to each other, in plan order.
    let seq: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r[col("arm")].clone(),
                r[col("task")].clone(),
                r[col("repeat")].clone(),
            )
        })
        .collect();
    let mut keys = seq.clone();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 8, "no duplicates: {seq:?}");
    for pair in seq.chunks(2) {
        assert_eq!(
            (&pair[0].1, &pair[0].2),
            (&pair[1].1, &pair[1].2),
            "{seq:?}"
        );
        assert_ne!(pair[0].0, pair[1].0, "{seq:?}");
    }
    assert_eq!(seq[0].2, "0");
    assert_eq!(
        seq[7].2, "1",
        "repeat 1 starts after repeat 0 is complete: {seq:?}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["matrix"]["order"], "interleaved");
    assert_eq!(
        manifest["matrix"]["arms"],
        serde_json::json!(["slow", "slow-no-x"])
    );
    assert!(
        run.join("arms/slow-no-x.toml").exists(),
        "arm files kept in the run"
    );
    // The variant scores below the baseline on WF-01 in both repeats.
    let md = std::fs::read_to_string(run.join("report/report.md")).unwrap();
    assert!(
        md.contains("## Ablations (mechanism effect Δ = baseline − variant)"),
        "{md}"
    );
    assert!(
        md.contains("| model sim-2b | slow-no-x | slow | 2 | 2 |"),
        "{md}"
    );
    assert!(md.contains("### slow-no-x vs slow (model sim-2b)"), "{md}");
    assert!(md.contains("SIMULATED BACKEND"));
}

#[test]
fn bad_ablation_input_is_refused_before_anything_is_written() {
    let w = world();
    let base = ["--models", "sim-2b", "--tasks", "WF-01", "--run-id", "bad"];
    let cases: [(&[&str], &str); 6] = [
        (
            &["--arm", "slow", "--variants", "slow-no-x", "--repeats", "1"],
            "noise floor",
        ),
        (
            &["--arm", "slow", "--ablate", "finish_gate"],
            "has no mechanism switch",
        ),
        (
            &["--arm", "slow", "--variants", "slow-no-y"],
            "unknown arm 'slow-no-y'",
        ),
        (
            &["--arm", "slow", "--variants", "other"],
            "must be named 'slow-no-<mechanism>'",
        ),
        (&["--arm", "slow"], "nothing to compare"),
        (
            &["--arm", "slow", "--variants", "slow-no-x", "--arms", "slow"],
            "not --arms",
        ),
    ];
    for (extra, want) in cases {
        let o = w.ablate(&base).args(extra).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{extra:?}: {}", text(&o));
        assert!(!w.out.join("bad").exists(), "{extra:?}: nothing written");
    }
}

/// Our harness's mechanism switch: `--ablate` reuses the shipped `harness-no-finish-gate` arm
/// file and writes `harness-no-clock` into the run (needs the `lrab-harness` sibling binary:
/// `cargo test --workspace` builds it; alone: `cargo build -p lrab-harness` first).
#[test]
fn harness_ablate_builds_variants_by_mechanism() {
    let w = world();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../arms");
    let o = lrab()
        .args([
            "ablate",
            "--arm",
            "harness",
            "--ablate",
            "nonsense",
            "--backend",
            "sim",
        ])
        .arg("--arms-dir")
        .arg(&shipped)
        .arg("--out")
        .arg(&w.out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("unknown mechanism") && text(&o).contains("finish_gate"),
        "{}",
        text(&o)
    );
    let o = lrab()
        .args([
            "ablate",
            "--arm",
            "harness",
            "--ablate",
            "finish_gate,clock",
            "--models",
            "sim-oracle",
            "--tasks",
            "WF-01",
            "--repeats",
            "2",
            "--backend",
            "sim",
            "--no-progress",
            "--run-id",
            "h",
        ])
        .arg("--arms-dir")
        .arg(&shipped)
        .arg("--out")
        .arg(&w.out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let run = w.out.join("h");
    let generated = std::fs::read_to_string(run.join("arms/harness-no-clock.toml")).unwrap();
    assert!(
        generated.contains("extra_args = [\"--ablate\", \"clock\"]"),
        "{generated}"
    );
    assert_eq!(
        std::fs::read(run.join("arms/harness-no-finish-gate.toml")).unwrap(),
        std::fs::read(shipped.join("harness-no-finish-gate.toml")).unwrap(),
        "the shipped variant is reused"
    );
    let rows = csv_rows(&run);
    assert_eq!(rows.len(), 6);
    let attempts = std::fs::read_to_string(run.join("attempts.jsonl")).unwrap();
    assert!(
        attempts.contains("--ablate") && attempts.contains("clock"),
        "{attempts}"
    );
    let md = std::fs::read_to_string(run.join("report/report.md")).unwrap();
    assert!(
        md.contains("harness-no-clock") && md.contains("harness-no-finish-gate"),
        "{md}"
    );
}

/// `lrab analyze` on broken ablation files: a non-zero exit, a message naming the file, line
/// and column (or the missing repeat), and no output folder.
#[test]
fn analyze_rejects_broken_ablation_files_with_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad_value = dir.path().join("reps.csv");
    std::fs::write(
        &bad_value,
        "task,baseline_r1,baseline_r2,text_only_r1,text_only_r2\n\
         WF01,0.5,0.6,0.4,0.5\n\
         WF02,0.7,abc,0.6,0.6\n",
    )
    .unwrap();
    let hole = dir.path().join("hole.csv");
    std::fs::write(
        &hole,
        "variant,task_id,total,repeat\n\
         baseline,WF01,0.5,1\nbaseline,WF01,0.6,2\n\
         text_only,WF01,0.4,1\n",
    )
    .unwrap();
    for (file, want) in [
        (&bad_value, vec!["reps.csv:3", "baseline_r2", "abc"]),
        (&hole, vec!["hole.csv", "text_only", "missing"]),
    ] {
        let out = dir.path().join("out");
        let o = lrab()
            .arg("analyze")
            .arg(file)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        for w in want {
            assert!(text(&o).contains(w), "{w}: {}", text(&o));
        }
        assert!(!out.exists(), "nothing written");
    }
}
