//! Mechanism firings from a run, end to end: `lrab run` records a Mingbird-named arm's own
//! output in transcript.txt and its report (paper.md, report.md, mechanism_activation.csv)
//! counts Mingbird's printed markers there, as the paper counted them. The default test uses a
//! stand-in that prints lines in v1.5.0's formats (Mingbird's code never enters this
//! repository); the opt-in one runs the real Mingbird from the arms cache
//! (`LRAB_MINGBIRD=1 cargo test -p lrab-runner --test mechanism_markers -- --ignored`).

mod common;

use common::{fast, lrab, sh_arm, text};
use std::path::{Path, PathBuf};

const PRINTER: &str = r#"
echo '[1|+0s] ⚙ read_file {"path": "a"} -> x'
echo '[ctx: 1811/32768 = 5%]'
echo '[2] ⚠️ 重复调用拦截: read_file(1)'
echo '[3] ⚠️ 计划未同步(1/3),拒绝 finish'
echo '[4] ⚠️ 交付自查:回注任务原文(99 字符),要求自查后重新 finish'
echo '[5] ⚠️ 计划未同步(0/3),拒绝 finish' >&2
echo ok > shortlist.md
"#;

/// `lrab run` of `arm` on sim-2b; `cache`: the arms cache to use (the tests' empty one if
/// `None`).
fn run(arms: &Path, out: &Path, arm: &str, tasks: &str, cache: Option<PathBuf>) -> PathBuf {
    let mut c = lrab();
    if let Some(cache) = cache {
        c.env("LRAB_ARMS_CACHE", cache);
    }
    let o = c
        .args(["run", "--retries", "0"])
        .args(["--arms", arm, "--models", "sim-2b", "--tasks", tasks])
        .arg("--arms-dir")
        .arg(arms)
        .args(["--run-id", "m", "--out"])
        .arg(out)
        .args(fast(200, 1000, 200))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    out.join("m")
}

fn activation(run: &Path) -> Vec<String> {
    let p = run.join("report/mechanism_activation.csv");
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_mingbird_arms_printed_markers_reach_the_papers_tables() {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir_all(&arms).unwrap();
    sh_arm(&arms, "mingbird-printer", PRINTER);
    let run = run(
        &arms,
        &d.path().join("out"),
        "mingbird-printer",
        "WF-01",
        None,
    );
    let rows = activation(&run);
    assert_eq!(rows[0], "harness,model,task,marker,marker_zh,count");
    assert_eq!(rows.len(), 22, "{rows:?}");
    // stdout and stderr both count, as upstream's transcript held both
    assert!(
        rows.contains(&"mingbird-printer,sim-2b,WF-01,plan_unsynced_reject,计划未同步,2".into())
    );
    assert!(
        rows.contains(&"mingbird-printer,sim-2b,WF-01,dup_call_intercept,重复调用拦截,1".into())
    );
    let paper = std::fs::read_to_string(run.join("report/paper.md")).unwrap();
    let item8 = paper.lines().find(|l| l.starts_with("| 8 |")).unwrap();
    assert!(item8.contains("from this run"), "{item8}");
    // the failure forms read the markers: two finish rejections, one spin
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report/analysis.json")).unwrap())
            .unwrap();
    let by = &a["failure_forms"]["by_arm"][0];
    assert_eq!(by["arm"], "mingbird-printer");
    assert_eq!(by["counts"][4]["set"], 1, "spin: {by}");
    assert_eq!(by["counts"][7]["set"], 1, "false finish: {by}");
}

#[test]
#[ignore = "opt-in: needs the real Mingbird installed (lrab arms install mingbird)"]
fn the_real_mingbird_on_the_simulator_fires_its_markers() {
    if std::env::var_os("LRAB_MINGBIRD").is_none() {
        eprintln!("skipped: set LRAB_MINGBIRD=1 (and install mingbird) to run");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let run = run(
        &common::shipped_arms(),
        &d.path().join("out"),
        "mingbird",
        "WF-01,WF-04,WF-08",
        Some(
            std::env::var_os("LRAB_ARMS_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                        .join(".cache/lrab/arms")
                }),
        ),
    );
    let rows = activation(&run);
    assert_eq!(rows.len(), 1 + 3 * 21, "{rows:?}");
    let fired: u64 = rows[1..]
        .iter()
        .map(|r| r.rsplit(',').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(fired > 0, "sim-2b makes Mingbird's guards fire: {rows:?}");
}
