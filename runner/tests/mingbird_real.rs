//! Opt-in: the real Mingbird (v1.5.0, the code of every published LRAB cell) through the runner —
//! installed with `lrab arms install mingbird` (a clone of Mingbird/Mingbird-agent where the
//! network allows, else the checkout or folder `MINGBIRD_SRC` names; never this repository),
//! then all 18 tasks against sim-oracle and the four sim models, confined, through the
//! recording proxy. Run it with `scripts/mingbird-real.sh` (or `LRAB_MINGBIRD=1 cargo test -p
//! lrab-runner --test mingbird_real -- --ignored --nocapture`); the arms cache is
//! LRAB_ARMS_CACHE, else ~/.cache/lrab/arms. On sim-oracle every task must score 1.0 unless
//! `LIMITS` names it with Mingbird's own reason (docs/arms.md, "Mingbird"); on the sized models
//! the per-model means are printed (simulated numbers, for docs/arms.md).

mod common;

use common::{lrab, shipped_arms, text};

use std::path::PathBuf;

/// Tasks on which Mingbird itself cannot reach 1.0 against sim-oracle, with the reason. None
/// since the simulator writes through the conventional `write_file`/`bash` when a request
/// offers neither (WF-08, where Mingbird's router offers only its MCP category).
const LIMITS: &[(&str, &str)] = &[];

fn cache() -> PathBuf {
    std::env::var_os("LRAB_ARMS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/lrab/arms")
        })
}

/// `lrab run` of mingbird on the simulator; the rows of cells.csv (task, model, score, wall).
fn run(out: &std::path::Path, id: &str, models: &str, tasks: Option<&str>) -> Vec<Vec<String>> {
    let mut c = lrab();
    c.args(["run", "--backend", "sim", "--no-progress", "--retries", "0"])
        .args([
            "--budget-minutes",
            "20",
            "--budget-minutes-lh",
            "40",
            "--jobs",
            "2",
        ])
        .args([
            "--arms",
            "mingbird",
            "--models",
            models,
            "--run-id",
            id,
            "--arms-dir",
        ])
        .arg(shipped_arms())
        .arg("--out")
        .arg(out)
        .env("LRAB_ARMS_CACHE", cache());
    if let Some(t) = tasks {
        c.args(["--tasks", t]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join(id).join("cells.csv")).unwrap();
    common::csv_lines(&csv).into_iter().skip(1).collect()
}

#[test]
#[ignore = "needs Mingbird's files: the network or MINGBIRD_SRC; run scripts/mingbird-real.sh"]
fn real_mingbird_on_all_tasks_against_the_simulator() {
    if std::env::var_os("LRAB_MINGBIRD").is_none() {
        eprintln!("skipped: set LRAB_MINGBIRD=1 (scripts/mingbird-real.sh)");
        return;
    }
    let o = lrab()
        .args(["arms", "install", "mingbird", "--arms-dir"])
        .arg(shipped_arms())
        .env("LRAB_ARMS_CACHE", cache())
        .output()
        .unwrap();
    eprintln!("{}", text(&o));
    assert!(o.status.success(), "install failed:\n{}", text(&o));
    let out = tempfile::tempdir().unwrap();
    let (task, score) = (common::col("task"), common::col("score"));
    let rows = run(out.path(), "oracle", "sim-oracle", None);
    assert_eq!(rows.len(), 18, "{rows:?}");
    let mut sum = 0.0;
    for r in &rows {
        let s: f64 = r[score].parse().unwrap_or(0.0);
        sum += s;
        eprintln!("sim-oracle {}: {}", r[task], r[score]);
        if let Some((_, why)) = LIMITS.iter().find(|(t, _)| *t == r[task]) {
            eprintln!("  known Mingbird limitation: {why}");
        } else {
            assert_eq!(r[score], "1.000", "{}: {rows:?}", r[task]);
        }
    }
    eprintln!("sim-oracle mean {:.3}", sum / rows.len() as f64);
    let models = "sim-2b,sim-4b,sim-12b,sim-35b";
    let rows = run(out.path(), "sized", models, None);
    let model = common::col("model");
    for m in models.split(',') {
        let s: Vec<f64> = rows
            .iter()
            .filter(|r| r[model] == m)
            .map(|r| r[score].parse().unwrap_or(0.0))
            .collect();
        assert_eq!(s.len(), 18, "{m}: {rows:?}");
        eprintln!("{m} mean {:.3} (simulated)", s.iter().sum::<f64>() / 18.0);
    }
}
