//! Reproduction of upstream's published LRAB and τ² numbers from the published data
//! (the CSVs and manifests carried in `data/mingbird/`, found through the data lookup — a copy
//! in `LRAB_DATA` or `../shared/data` comes first and must have the same bytes).

use lrab_analysis::load;
use lrab_analysis::RngKind;
use lrab_analysis::{analyze, Analysis, Config};
use std::path::PathBuf;

/// Carried figures: always there in a complete checkout, so a missing one fails the test.
fn data(name: &str) -> PathBuf {
    lrab_data::file(&format!("mingbird/{name}")).unwrap_or_else(|e| panic!("{e}"))
}

fn run_on(files: &[&str], cfg: Config) -> Analysis {
    let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
    analyze(&load(&paths).expect("load"), &cfg).expect("analyze")
}

/// `files` with few resamples, for a test that looks at no resampled number (debug builds).
fn quick(files: &[&str]) -> Analysis {
    run_on(files, quick_config())
}

fn quick_config() -> Config {
    Config {
        resamples: 10,
        ..Config::default()
    }
}

/// The published τ² manifests, read together.
const TAU2_MANIFESTS: [&str; 3] = [
    "retail_manifest_nt0.json",
    "airline_manifest.json",
    "telecom_manifest.json",
];

/// `resamples` is kept small where a test does not look at resampled numbers (debug builds).
fn lrab(rng: RngKind, resamples: usize) -> Analysis {
    let cfg = Config {
        rng,
        resamples,
        ..Config::default()
    };
    run_on(&["lrab_scores.csv"], cfg)
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
    let a = quick(&TAU2_MANIFESTS);
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
    let a = run_on(&["ablation_scores.csv"], Config::default());
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

#[test]
fn batch_matched_repeats_reproduce_the_published_deltas() {
    // ablation_reps_2609.csv (wide layout): baseline − text-only finish gate, per repeat.
    let a = run_on(
        &["ablation_reps_2609.csv"],
        Config {
            resamples: 200,
            ..Config::default()
        },
    );
    let r = &a.ablations[0];
    assert_eq!(
        (r.variant.as_str(), r.baseline.as_str()),
        ("text_only", "baseline")
    );
    assert_eq!((r.n, r.repeats), (18, 3));
    let per: Vec<String> = r
        .per_repeat
        .iter()
        .map(|d| format!("{:+.3}", d.delta))
        .collect();
    assert_eq!(per, ["+0.096", "+0.133", "+0.056"]);
    assert_eq!(format!("{:+.3}", r.effect), "+0.095");
    assert_eq!(r.consistent, 3, "3 of 3");
    // The same-batch rerun of the full arm moved its mean by up to 0.069 (r1 vs r2).
    assert_eq!(format!("{:.3}", r.noise.floor.unwrap()), "0.069");
    assert_eq!(r.noise.between, Some(("r1".into(), "r2".into())));
    let labels: Vec<Option<bool>> = r.per_repeat.iter().map(|d| d.above_noise).collect();
    assert_eq!(labels, [Some(true), Some(true), Some(false)]);
    assert_eq!(r.effect_above_noise, Some(true));
    assert_eq!(format!("{:.4}", r.perm_exact.unwrap()), "0.0623");
    assert!(r.verdict().contains("3 of 3") && r.verdict().contains("1 of 3 per-repeat Δ within"));
    // Tasks whose three repeats split into two modes; LH-01 stays low in both arms.
    let flagged: Vec<(&str, &str)> = r
        .bimodal
        .iter()
        .map(|b| (b.task.as_str(), b.arm.as_str()))
        .collect();
    assert_eq!(
        flagged,
        [
            ("LH-02", "baseline"),
            ("LH-02", "text_only"),
            ("LH-03", "baseline"),
            ("WF-04", "baseline"),
            ("WF-07", "text_only"),
            ("WF-10", "baseline"),
        ]
    );
    assert!(r.components.is_some() && r.power.tasks_needed.is_some());
}

#[test]
fn long_topup_layout_equals_the_first_wide_repeat() {
    let a = run_on(
        &["ablation_reps_2609.csv", "ablation_topup_2609.csv"],
        Config {
            resamples: 50,
            ..Config::default()
        },
    );
    let wide = a
        .ablations
        .iter()
        .find(|r| r.variant == "text_only")
        .unwrap();
    let long = a
        .ablations
        .iter()
        .find(|r| r.variant == "finish_gate_text_only")
        .unwrap();
    assert_eq!(long.baseline, "baseline_samebatch");
    assert_eq!(long.repeats, 1);
    assert_eq!(long.per_repeat[0].delta, wide.per_repeat[0].delta);
    assert!(long.noise.floor.is_none());
    assert!(long
        .noise
        .missing
        .as_deref()
        .unwrap()
        .contains("at least 2 repeats"));
    assert!(long.verdict().contains("directional only"));
}

#[test]
fn frontier_probe_means_with_and_without_the_timeout() {
    let mean = |a: &Analysis, arm: &str| {
        r3(a.rows
            .iter()
            .find(|r| r.arm == arm)
            .unwrap()
            .overall
            .unwrap())
    };
    // Published: the timed-out opencode WF-08 cell is left out of its mean.
    let paths = vec![data("frontier_probe_scores.csv")];
    let ds = lrab_analysis::load_with(
        &paths,
        &lrab_analysis::LoadOptions {
            timeouts: lrab_analysis::TimeoutPolicy::Exclude,
        },
    )
    .unwrap();
    let a = analyze(&ds, &quick_config()).unwrap();
    assert_eq!(a.focal, "mingbird");
    assert_eq!(
        ["mingbird", "goose", "opencode", "agent-mini"].map(|x| mean(&a, x)),
        ["0.997", "0.989", "0.925", "0.478"]
    );
    assert_eq!(
        a.models,
        ["frontier_probe_scores"],
        "no model column: labelled by file"
    );
    // The protocol's default counts it as 0, and the caveat gives the published figure.
    let a = quick(&["frontier_probe_scores.csv"]);
    assert_eq!(mean(&a, "opencode"), "0.874");
    assert!(
        a.caveats
            .iter()
            .any(|c| c.contains("opencode") && c.contains("0.925")),
        "{:?}",
        a.caveats
    );
    assert!(a.caveats.iter().any(|c| c.contains("no model column")));
}

#[test]
fn qwen35_2b_family_means() {
    let a = quick(&["family_qwen352b_2609.csv"]);
    let mean = |arm: &str| {
        r3(a.rows
            .iter()
            .find(|r| r.arm == arm)
            .unwrap()
            .overall
            .unwrap())
    };
    assert_eq!(
        ["Mingbird", "goose", "opencode", "agent-mini"].map(mean),
        ["0.779", "0.096", "0.017", "0.239"]
    );
    assert_eq!(a.models, ["qwen3.5:2b"]);
}

#[test]
fn failure_forms_and_turns_resource_are_extra_columns() {
    let a = quick(&[
        "lrab_scores.csv",
        "failure_forms_2609.csv",
        "turns_resource.csv",
    ]);
    // The per-cell scores are unchanged by the annotations.
    assert_eq!(r3(a.rows[0].overall.unwrap()), "0.886");
    let x = a.extras.as_ref().unwrap();
    let col = |name: &str| x.columns.iter().find(|c| c.column == name).unwrap();
    let at = |name: &str, arm: &str| {
        let i = x.arms.iter().position(|a| a == arm).unwrap();
        col(name).per_arm[i].clone().unwrap()
    };
    // Published failure-form rates and medians (per 72 cells).
    assert!(col("early_stop").flag);
    let early: Vec<u64> = ["Mingbird", "goose", "opencode", "agent-mini"]
        .iter()
        .map(|arm| at("early_stop", arm).sum as u64)
        .collect();
    assert_eq!(early, [4, 23, 32, 44]);
    let tools: Vec<f64> = ["Mingbird", "goose", "opencode", "agent-mini"]
        .iter()
        .map(|arm| at("tool_calls", arm).median)
        .collect();
    assert_eq!(tools, [33.5, 15.0, 5.0, 7.0]);
    assert!(col("ctx_peak_tokens").per_arm.iter().any(Option::is_some));
    // Failure modes now come from the annotation file.
    assert_eq!(a.failure_modes["goose"].values().sum::<usize>(), 72);
    assert!(a.failure_modes["Mingbird"].contains_key("completed"));
}

#[test]
fn annotation_with_a_different_score_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("ff.csv");
    std::fs::write(
        &p,
        "harness,task,model,score,turns\nMingbird,LH01,gemma4_12b,0.5,3\n",
    )
    .unwrap();
    let e = load(&[data("lrab_scores.csv"), p]).unwrap_err().to_string();
    assert!(e.contains("ff.csv:2") && e.contains("disagrees"), "{e}");
    let alone = tmp.path().join("only.csv");
    std::fs::write(
        &alone,
        "harness,task,model,tool_calls,turns\nX,WF01,m,3,4\n",
    )
    .unwrap();
    let e = load(&[alone]).unwrap_err().to_string();
    assert!(e.contains("matches a scored cell"), "{e}");
}

/// The τ² tables in the paper's layout, from the published manifests: the text of upstream's
/// TAU2_SIGNIFICANCE.md, number for number.
#[test]
fn published_tau2_tables_in_the_papers_layout() {
    let a = quick(&TAU2_MANIFESTS);
    let text = lrab_analysis::tau2_tables::render(a.tau.as_ref().unwrap());
    for want in [
        "- pooled (278 tasks): 40W / 216T / 22L  \n  McNemar exact p = 0.03002 | Wilcoxon p = 0.02225",
        "- discriminating subset retail+airline (164 tasks): 32W / 110T / 22L, McNemar p = 0.2203",
        "- per-domain: retail 26/72/16, airline 6/38/6, telecom 8/106/0",
        "- pooled (278 tasks): 47W / 217T / 14L  \n  McNemar exact p = 2.719e-05 | Wilcoxon p = 2.387e-05",
        "- discriminating subset retail+airline (164 tasks): 46W / 104T / 14L, McNemar p = 4.224e-05",
        "- per-domain: retail 31/72/11, airline 15/32/3, telecom 1/113/0",
        "Holm-adjusted (k=2) McNemar p, vs llm_agent: 0.03002  <- significant at 0.05",
        "Holm-adjusted (k=2) McNemar p, vs opencode: 5.438e-05  <- significant at 0.05",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}
