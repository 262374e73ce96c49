//! `lrab sim calibrate` (the fast analytic path on a small pack) and bad profile input for
//! `lrab sim serve` / `calibrate`: errors name the file and field, exit non-zero, and nothing is
//! half-written.

mod common;

use common::{lrab, text};
use std::path::Path;

fn pack() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pack")
}

fn calibrate(dir: &Path, models: &str) -> std::process::Output {
    lrab()
        .args([
            "sim",
            "calibrate",
            "--no-verify",
            "--models",
            models,
            "--pack",
        ])
        .arg(pack())
        .arg("--profiles-out")
        .arg(dir.join("profiles"))
        .arg("--report")
        .arg(dir.join("report.md"))
        .arg("--cache")
        .arg(dir.join("cache"))
        .output()
        .unwrap()
}

#[test]
fn the_analytic_calibration_writes_valid_profiles_and_is_reproducible() {
    let d = tempfile::tempdir().unwrap();
    let o = calibrate(d.path(), "sim-2b");
    if !o.status.success() && text(&o).contains("failure_forms_2609.csv") {
        eprintln!("skipped: the published data is not present\n{}", text(&o));
        return;
    }
    assert!(o.status.success(), "{}", text(&o));
    let file = d.path().join("profiles/sim-2b.toml");
    let p = lrab_sim::load_profile(&file).unwrap();
    assert_eq!(p.name, "sim-2b");
    assert!(p.origin.contains("fitted by lrab sim calibrate"));
    let report = std::fs::read_to_string(d.path().join("report.md")).unwrap();
    assert!(
        report.contains("| sim-2b |") && report.contains("not results of real models"),
        "{report}"
    );
    let first = std::fs::read(&file).unwrap();
    let o = calibrate(d.path(), "sim-2b");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        first,
        "same inputs, same profile bytes"
    );
}

#[test]
fn bad_profiles_and_bad_models_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let good = include_str!("../../sim/profiles/sim-2b.toml");
    let bad = d.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("sim-2b.toml"),
        good.replacen("[forms.abandon]", "[forms.vanish]", 1),
    )
    .unwrap();
    let o = lrab()
        .args(["sim", "serve", "--addr", "127.0.0.1:0", "--profiles"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("sim-2b.toml") && t.contains("forms.vanish"),
        "{t}"
    );
    std::fs::write(
        bad.join("sim-2b.toml"),
        good.replacen("persist = ", "persist = 7 #", 1),
    )
    .unwrap();
    let o = lrab()
        .args(["sim", "serve", "--addr", "127.0.0.1:0", "--profiles"])
        .arg(&bad)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(
        !o.status.success() && t.contains("reactions.persist") && t.contains("outside [0, 1]"),
        "{t}"
    );
    std::fs::write(
        bad.join("sim-2b.toml"),
        good.replace("decode_tps", "#decode_tps"),
    )
    .unwrap();
    let o = lrab()
        .args(["sim", "serve", "--addr", "127.0.0.1:0", "--profiles"])
        .arg(&bad)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!o.status.success() && t.contains("decode_tps"), "{t}");
    // an unknown model for calibrate: error, and nothing written
    let o = calibrate(d.path(), "sim-9b");
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("sim-9b"));
    assert!(!d.path().join("profiles").exists() && !d.path().join("report.md").exists());
    // bad seeds and an arm that is not fitted (our harness is held out): named, nothing written
    for (flag, value, says) in [
        ("--seeds", "0,x", "`x` is not a seed"),
        ("--seeds", "3,3", "3 appears twice"),
        ("--seeds", ",", "no seed"),
        (
            "--arms",
            "mingbird,harness",
            "`harness` is not a fitted arm",
        ),
    ] {
        let o = lrab()
            .args([
                "sim",
                "calibrate",
                "--no-verify",
                flag,
                value,
                "--profiles-out",
            ])
            .arg(d.path().join("profiles"))
            .arg("--report")
            .arg(d.path().join("report.md"))
            .output()
            .unwrap();
        let t = text(&o);
        assert!(
            !o.status.success() && t.contains(flag) && t.contains(says),
            "{t}"
        );
        assert!(!d.path().join("profiles").exists() && !d.path().join("report.md").exists());
    }
    // a residual file out of range: error naming file and entry, nothing written
    let r = d.path().join("residuals.toml");
    std::fs::write(
        &r,
        "origin = \"x\"\n[[residual]]\narm = \"opencode\"\nmodel = \"sim-2b\"\nverified = 2.0\npredicted = 0.1\n",
    )
    .unwrap();
    let o = lrab()
        .args([
            "sim",
            "calibrate",
            "--no-verify",
            "--models",
            "sim-2b",
            "--residuals",
        ])
        .arg(&r)
        .arg("--profiles-out")
        .arg(d.path().join("profiles"))
        .arg("--report")
        .arg(d.path().join("report.md"))
        .output()
        .unwrap();
    let t = text(&o);
    assert!(
        !o.status.success() && t.contains("residuals.toml") && t.contains("residual #1"),
        "{t}"
    );
    assert!(!d.path().join("profiles").exists() && !d.path().join("report.md").exists());
}

#[test]
fn a_corrected_round_moves_the_targets_by_the_residuals() {
    // the same fit as a first round and with a residual file: the corrected round's report
    // names its residuals and the targets it fitted, the first round's does not
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("residuals.toml");
    std::fs::write(
        &res,
        "origin = \"a test verification\"\n[[residual]]\narm = \"opencode\"\nmodel = \"sim-4b\"\nverified = 0.349\npredicted = 0.472\n\n[[residual]]\narm = \"mingbird\"\nmodel = \"sim-4b\"\nverified = 0.9\npredicted = 0.8\n",
    )
    .unwrap();
    let run = |extra: &[&str], name: &str| {
        lrab()
            .args(["sim", "calibrate", "--no-verify", "--models", "sim-4b"])
            .args(extra)
            .arg("--profiles-out")
            .arg(d.path().join(name))
            .arg("--report")
            .arg(d.path().join(format!("{name}.md")))
            .arg("--cache")
            .arg(d.path().join("cache"))
            .output()
            .unwrap()
    };
    let o = run(&["--no-residuals"], "first");
    if !o.status.success() && text(&o).contains("failure_forms_2609.csv") {
        eprintln!("skipped: the published data is not present\n{}", text(&o));
        return;
    }
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&["--residuals", res.to_str().unwrap()], "corrected");
    assert!(o.status.success(), "{}", text(&o));
    let first = std::fs::read_to_string(d.path().join("first.md")).unwrap();
    let corrected = std::fs::read_to_string(d.path().join("corrected.md")).unwrap();
    assert!(!first.contains("## Corrected round"), "{first}");
    let sec = section(&corrected, "## Corrected round");
    // published 0.465, gap 0.349 - 0.472 = -0.123 -> target 0.588; Mingbird 0.876 - 0.1
    assert!(
        sec.contains("| opencode | sim-4b | 0.465 | -0.123 | 0.588 |")
            && sec.contains("| mingbird | sim-4b | 0.876 | +0.100 | 0.776 |")
            && sec.contains("a test verification"),
        "{sec}"
    );
    assert_ne!(
        std::fs::read(d.path().join("first/sim-4b.toml")).unwrap(),
        std::fs::read(d.path().join("corrected/sim-4b.toml")).unwrap(),
        "the residuals change the fitted profile"
    );
}

/// The section of a report that starts with `heading`, up to the next `## `.
fn section<'a>(report: &'a str, heading: &str) -> &'a str {
    let start = report
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading}"));
    let rest = &report[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

#[test]
fn the_committed_profiles_and_report_are_the_fit_of_the_published_cells() {
    // the fast half of the calibration on the built-in pack: the committed profiles must be
    // byte for byte what the fit writes, and the committed report must show the same fit (a
    // hand-edited profile or a changed fit without a new calibration fails here)
    let d = tempfile::tempdir().unwrap();
    let o = lrab()
        .args(["sim", "calibrate", "--no-verify", "--profiles-out"])
        .arg(d.path().join("profiles"))
        .arg("--report")
        .arg(d.path().join("report.md"))
        .arg("--cache")
        .arg(d.path().join("cache"))
        .output()
        .unwrap();
    if !o.status.success() && text(&o).contains("failure_forms_2609.csv") {
        eprintln!("skipped: the published data is not present\n{}", text(&o));
        return;
    }
    assert!(o.status.success(), "{}", text(&o));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for m in ["sim-2b", "sim-4b", "sim-12b", "sim-35b"] {
        let fitted = std::fs::read_to_string(d.path().join(format!("profiles/{m}.toml"))).unwrap();
        let committed =
            std::fs::read_to_string(root.join(format!("sim/profiles/{m}.toml"))).unwrap();
        assert_eq!(
            fitted, committed,
            "sim/profiles/{m}.toml is not what the fit writes"
        );
    }
    let fresh = std::fs::read_to_string(d.path().join("report.md")).unwrap();
    let committed = std::fs::read_to_string(root.join("docs/sim-calibration.md")).unwrap();
    for h in ["## Fitted parameters", "## Cross-check"] {
        let table = |r: &str| {
            section(r, h)
                .lines()
                .filter(|l| l.starts_with("| sim-"))
                .map(|l| {
                    // the analytic columns only (the real-binary columns need a verification)
                    let c: Vec<&str> = l.split('|').collect();
                    c[..c.len().min(7)].join("|")
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            table(&fresh),
            table(&committed),
            "{h} of docs/sim-calibration.md"
        );
    }
    // the committed report is a verification over all 18 tasks and at least five seeds, and
    // its counts are its own table's
    assert!(
        !committed.contains("The verification ran on"),
        "a task subset"
    );
    let means = section(&committed, "## Means");
    let rows: Vec<Vec<&str>> = means
        .lines()
        .filter(|l| {
            ["| opencode", "| agent-mini", "| mingbird"]
                .iter()
                .any(|a| l.starts_with(a))
        })
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 12, "{means}");
    let seeds = |cell: &str| -> bool {
        // `mean ± sd (lo–hi)`: five or more seeds make a spread, one draw does not
        cell.contains(" ± ") && cell.contains('–')
    };
    let lead = |c: &str| {
        c.split_whitespace()
            .next()
            .and_then(|x| x.parse::<f64>().ok())
    };
    // rows with a sim mean (an interrupted verification reports the cells it got through)
    let measured: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| lead(r[4]).is_some())
        .map(|r| {
            assert!(seeds(r[4]), "no seed spread in {r:?}");
            let d = |c: &str| lead(c).unwrap_or_else(|| panic!("a difference in {r:?}"));
            (d(r[5]), d(r[7]))
        })
        .collect();
    assert!(
        measured.len() == 12,
        "the committed report verifies all 12 (arm, model): {means}"
    );
    let within_mean = measured.iter().filter(|d| d.0 <= 0.10).count();
    let within_first = measured.iter().filter(|d| d.1 <= 0.10).count();
    assert!(
        means.contains(&format!(
            "{within_first} of 12 (arm, model) means are within 0.10 of the published value at seed 0, {within_mean} of 12 on the mean over seeds"
        )),
        "the counts must match the table: {means}"
    );
    let header = committed.lines().nth(2).unwrap_or_default();
    let n_seeds = header
        .split("seeds ")
        .nth(1)
        .and_then(|x| x.split(')').next())
        .map(|x| {
            x.split(['-', ','])
                .filter_map(|n| n.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert!(
        n_seeds.first() == Some(&0) && n_seeds.last().is_some_and(|l| *l >= 4),
        "at least seeds 0-4: {header}"
    );
}
