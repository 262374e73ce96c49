//! Comparable output end to end (issue 28, item 4): two arms run by `lrab tau2 run` into one
//! folder give one `retail_manifest.json` in the published shape, and `lrab analyze` on it
//! beside the published `retail_manifest_nt0.json` prints McNemar for the run's two arms and
//! for each of them against each published arm, with the counts a direct count of the two
//! manifests gives.

#[path = "../../tau2/tests/common/mod.rs"]
mod tau2_common;

use lrab_records::Tau2Manifest;
use std::path::Path;
use std::process::Command;

const TASKS: &str = "0,1,2,3,4,5,6,7";

fn lrab(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "lrab {args:?}: {text}");
    text
}

/// `| a | b | retail | n | a-only | b-only | ties | p |` from the cells both manifests hold.
fn expected_row(a: (&Tau2Manifest, &str), b: (&Tau2Manifest, &str)) -> String {
    let (mut w, mut l, mut t) = (0u64, 0u64, 0u64);
    for (task, _) in &a.0.tasks {
        let pass = |m: &Tau2Manifest, arm: &str| m.get(task, arm).and_then(|c| c.reward);
        if let (Some(x), Some(y)) = (pass(a.0, a.1), pass(b.0, b.1)) {
            match (x >= 1.0, y >= 1.0) {
                (true, false) => w += 1,
                (false, true) => l += 1,
                _ => t += 1,
            }
        }
    }
    let p = lrab_analysis::stats::mcnemar_from_counts(w, l, t).p_exact;
    format!(
        "| {} | {} | retail | {} | {w} | {l} | {t} | {} |",
        a.1,
        b.1,
        w + l + t,
        lrab_analysis::tau2_tables::g4(p)
    )
}

#[test]
fn a_runs_arms_compare_with_each_other_and_the_published_arms() {
    let Some(data) = tau2_common::data() else {
        return;
    };
    let Ok(published) = lrab_data::file("mingbird/retail_manifest_nt0.json") else {
        eprintln!("skipped: mingbird/retail_manifest_nt0.json not found");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let common = ["tau2", "--tau2-data", d, "run", "--domain", "retail"];
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = common.to_vec();
        a.extend([
            "--tasks",
            TASKS,
            "--user",
            "scripted",
            "--fixed-clock",
            "--out",
            o,
        ]);
        a.extend(extra);
        lrab(&a)
    };
    run(&["--agent", "gold"]);
    let printed = run(&[
        "--agent",
        "plain",
        "--model",
        "sim-oracle",
        "--backend",
        "sim",
        "--arm-name",
        "plain-sim",
    ]);
    assert!(printed.contains("SIMULATED"), "{printed}");
    let mpath = out.join("retail_manifest.json");
    let ours = Tau2Manifest::read(&mpath).unwrap();
    assert_eq!(ours.tasks.len(), 8);
    let arms: Vec<&str> = ours.tasks[0].1.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(arms, ["gold", "plain-sim"]);
    // the gold actions graded without a judge: NL-gated tasks are ungraded, the rest pass
    assert!(ours
        .tasks
        .iter()
        .all(|(_, a)| a[0].1.reward.is_none_or(|r| r == 1.0)));

    let report = tmp.path().join("report");
    let summary = lrab(&[
        "analyze",
        mpath.to_str().unwrap(),
        published.to_str().unwrap(),
        "--focal",
        "gold",
        "--no-figures",
        "--resamples",
        "10",
        "--out",
        report.to_str().unwrap(),
    ]);
    let pubm = Tau2Manifest::read(&published).unwrap();
    for want in [
        expected_row((&ours, "gold"), (&ours, "plain-sim")),
        expected_row((&ours, "gold"), (&pubm, "llm_agent")),
        expected_row((&pubm, "mingbird"), (&ours, "plain-sim")),
        expected_row((&pubm, "opencode"), (&ours, "plain-sim")),
    ] {
        assert!(summary.contains(&want), "missing {want:?} in\n{summary}");
    }
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("McNemar for every pair of arms"), "{md}");
    assert!(Path::new(&report.join("analysis.json")).exists());
}
