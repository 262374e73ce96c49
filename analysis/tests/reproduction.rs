//! Reproduction of upstream's published LRAB and τ² numbers from the published data
//! (`/work/shared/data/mingbird`, read in place).

use lrab_analysis::{analyze, Analysis, Config};
use lrab_analysis::load;
use lrab_analysis::RngKind;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    crate_dir.join("../../shared/data/mingbird").join(name)
}

/// `resamples` is kept small where a test does not look at resampled numbers (debug builds).
fn lrab(rng: RngKind, resamples: usize) -> Analysis {
    let ds = load(&[data("lrab_scores.csv")]).expect("load lrab_scores.csv");
    analyze(
        &ds,
        &Config {
            rng,
            resamples,
            ..Config::default()
        },
    )
    .unwrap()
}

fn r3(x: f64) -> String {
    format!("{x:.3}")
}

#[test]
fn published_means() {
    let a = lrab(RngKind::Chacha, 10);
    assert_eq!(a.focal, "Mingbird");
    assert_eq!(
        a.models,
        ["gemma4_e2b", "qwen3.5_4b", "gemma4_12b", "ornith1.5_35b"]
    );
    let row = |arm: &str| a.rows.iter().find(|r| r.arm == arm).unwrap();
    let m = row("Mingbird");
    let per: Vec<String> = m.per_model.iter().map(|x| r3(x.unwrap())).collect();
    assert_eq!(per, ["0.821", "0.876", "0.906", "0.941"]);
    assert_eq!(r3(m.overall.unwrap()), "0.886");
    assert_eq!(r3(m.per_tier[3].unwrap()), "0.827");
    assert_eq!(r3(row("goose").overall.unwrap()), "0.631");
    assert_eq!(r3(row("agent-mini").overall.unwrap()), "0.405");
    assert_eq!(r3(row("opencode").overall.unwrap()), "0.479");
    assert_eq!(r3(row("goose").per_tier[3].unwrap()), "0.394");
    assert_eq!(r3(row("agent-mini").per_tier[3].unwrap()), "0.484");
    assert_eq!(r3(row("opencode").per_tier[3].unwrap()), "0.354");
    // Competitors in upstream's order (overall mean descending).
    assert_eq!(a.arms, ["Mingbird", "goose", "opencode", "agent-mini"]);
}

#[test]
fn published_wilcoxon_and_holm() {
    let a = lrab(RngKind::Chacha, 10);
    // (model, competitor, n, W+, p rounded to 4 dp, Holm p rounded to 4 dp)
    let want = [
        ("gemma4_e2b", "goose", 16, 133.0, "0.0008", "0.0008"),
        ("gemma4_e2b", "agent-mini", 18, 171.0, "0.0002", "0.0006"),
        ("gemma4_e2b", "opencode", 18, 171.0, "0.0002", "0.0006"),
        ("qwen3.5_4b", "goose", 8, 25.0, "0.3258", "0.3258"),
        ("qwen3.5_4b", "agent-mini", 13, 71.0, "0.0743", "0.1486"),
        ("qwen3.5_4b", "opencode", 15, 108.0, "0.0060", "0.0181"),
        ("gemma4_12b", "goose", 10, 47.0, "0.0466", "0.0466"),
        ("gemma4_12b", "agent-mini", 14, 101.5, "0.0021", "0.0041"),
        ("gemma4_12b", "opencode", 14, 105.0, "0.0010", "0.0029"),
        ("ornith1.5_35b", "goose", 9, 42.0, "0.0208", "0.0415"),
        ("ornith1.5_35b", "agent-mini", 17, 153.0, "0.0002", "0.0005"),
        ("ornith1.5_35b", "opencode", 4, 7.0, "0.4652", "0.4652"),
    ];
    assert_eq!(a.comparisons.len(), want.len());
    for (model, comp, n, w, p, h) in want {
        let c = a
            .comparisons
            .iter()
            .find(|c| c.model == model && c.competitor == comp)
            .unwrap();
        assert_eq!(c.wilcoxon.n, n, "{model} {comp} n");
        assert_eq!(c.wilcoxon.w_plus, w, "{model} {comp} W+");
        assert_eq!(format!("{:.4}", c.wilcoxon.p_normal), p, "{model} {comp} p");
        assert_eq!(format!("{:.4}", c.holm_p), h, "{model} {comp} Holm p");
    }
}

#[test]
fn published_pooled_intervals_with_cpython_rng() {
    let a = lrab(RngKind::Cpython, 10_000);
    let want = [
        ("goose", "+0.255", "+0.188", "+0.322"),
        ("opencode", "+0.407", "+0.328", "+0.491"),
        ("agent-mini", "+0.481", "+0.410", "+0.555"),
    ];
    assert_eq!(a.pooled.len(), 3);
    for (p, (comp, est, lo, hi)) in a.pooled.iter().zip(want) {
        let ci = p.ci.as_ref().unwrap();
        assert_eq!(p.competitor, comp);
        assert_eq!(p.n_tasks, 18);
        let got = (
            format!("{:+.3}", ci.estimate),
            format!("{:+.3}", ci.lo),
            format!("{:+.3}", ci.hi),
        );
        assert_eq!(
            got,
            (est.to_string(), lo.to_string(), hi.to_string()),
            "{comp}"
        );
    }
}

#[test]
fn chacha_default_gives_different_but_close_intervals() {
    let a = lrab(RngKind::Chacha, 4000);
    let b = lrab(RngKind::Cpython, 4000);
    for (x, y) in a.pooled.iter().zip(&b.pooled) {
        let (x, y) = (x.ci.as_ref().unwrap(), y.ci.as_ref().unwrap());
        assert_eq!(x.estimate, y.estimate);
        assert!((x.lo - y.lo).abs() < 0.02 && (x.hi - y.hi).abs() < 0.02);
    }
}

#[test]
fn published_tau2_mcnemar() {
    let ds = load(&[
        data("retail_manifest_nt0.json"),
        data("airline_manifest.json"),
        data("telecom_manifest.json"),
    ])
    .unwrap();
    let a = analyze(
        &ds,
        &Config {
            resamples: 10,
            ..Config::default()
        },
    )
    .unwrap();
    let t = a.tau.unwrap();
    assert_eq!(t.focal, "mingbird");
    let mean = |arm: &str| t.means.iter().find(|m| m.0 == arm).unwrap().clone();
    let m = mean("mingbird");
    assert_eq!(
        m.1.iter().map(|x| r3(x.unwrap())).collect::<Vec<_>>(),
        ["0.740", "0.763", "1.000"]
    );
    assert_eq!(r3(m.2.unwrap()), "0.856");
    let (_, native, _) = t.mcnemar.iter().find(|m| m.0 == "llm_agent").unwrap();
    assert_eq!((native.b, native.ties, native.c), (40, 216, 22));
    assert_eq!(format!("{:.3}", native.p_exact), "0.030");
    let (_, oc, _) = t.mcnemar.iter().find(|m| m.0 == "opencode").unwrap();
    assert_eq!((oc.b, oc.ties, oc.c), (47, 217, 14));
    assert_eq!(format!("{:.1e}", oc.p_exact), "2.7e-5");
}

#[test]
fn published_ablation_means() {
    let ds = load(&[data("ablation_scores.csv")]).unwrap();
    let a = analyze(&ds, &Config::default()).unwrap();
    let got: Vec<(String, String)> = a
        .ablations
        .iter()
        .map(|r| (r.variant.clone(), r3(r.variant_mean)))
        .collect();
    let want = [
        ("anti_loop", "0.805"),
        ("finish_gate", "0.723"),
        ("flat_prefill", "0.818"),
        ("verify_feedback", "0.772"),
    ];
    assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
    assert!(a.ablations.iter().all(|r| r3(r.baseline_mean) == "0.821"));
}

#[test]
fn rounding_differences_before_ranking_would_break_a_published_p() {
    // Why ties are exact float equality: rounding the differences (here to 9 dp) merges
    // near-equal |d| into tie groups and moves at least one published p-value.
    let ds = load(&[data("lrab_scores.csv")]).unwrap();
    let score = |arm: &str, model: &str, task: &str| {
        ds.cells
            .iter()
            .find(|c| c.arm == arm && c.model == model && c.task == task)
            .unwrap()
            .score
    };
    let a = lrab(RngKind::Chacha, 10);
    let mut changed = 0;
    for c in &a.comparisons {
        let tasks: Vec<String> = ds
            .cells
            .iter()
            .filter(|x| x.arm == "Mingbird" && x.model == c.model)
            .map(|x| x.task.clone())
            .collect();
        let d: Vec<f64> = tasks
            .iter()
            .map(|t| {
                ((score("Mingbird", &c.model, t) - score(&c.competitor, &c.model, t)) * 1e9).round()
                    / 1e9
            })
            .collect();
        let p = lrab_analysis::stats::signed_rank(&d).p_normal;
        if format!("{p:.4}") != format!("{:.4}", c.wilcoxon.p_normal) {
            changed += 1;
        }
    }
    assert!(changed >= 1, "rounding changed no p-value");
}
