//! Golden tests: our CPython `random` port against values written by real CPython, and the
//! statistics against scipy / statsmodels (both files written by `golden/gen_golden.py`).

use lrab_analysis::stats::{holm, mcnemar_from_counts as from_counts, signed_rank};
use lrab_analysis::CpythonRandom;
use serde_json::Value;

fn golden(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).expect("golden file")).expect("golden json")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

#[test]
fn cpython_random_port_is_bit_exact() {
    let g = golden("cpython_random.json");
    let seeds = g["seeds"].as_object().unwrap();
    assert!(seeds.len() >= 7);
    for (seed, e) in seeds {
        let seed: u64 = seed.parse().unwrap();
        let mut r = CpythonRandom::new(seed);
        for v in e["random_x2p53"].as_array().unwrap() {
            let x = r.random_f64() * 9_007_199_254_740_992.0;
            assert_eq!(x as u64, v.as_u64().unwrap(), "random() seed {seed}");
            assert_eq!(x.fract(), 0.0);
        }
        for kv in e["getrandbits"].as_array().unwrap() {
            let k = kv[0].as_u64().unwrap() as u32;
            assert_eq!(
                r.getrandbits(k),
                kv[1].as_u64().unwrap(),
                "getrandbits({k}) seed {seed}"
            );
        }
        for t in e["randrange"].as_array().unwrap() {
            let (a, b, v) = (
                t[0].as_i64().unwrap(),
                t[1].as_i64().unwrap(),
                t[2].as_i64().unwrap(),
            );
            assert_eq!(r.randrange(a, b), v, "randrange({a},{b}) seed {seed}");
        }
        let seq: Vec<u64> = (0..18).collect();
        for v in e["choice"].as_array().unwrap() {
            assert_eq!(*r.choice(&seq), v.as_u64().unwrap(), "choice seed {seed}");
        }
        let mut r = CpythonRandom::new(seed);
        let mut h: u64 = 0;
        for _ in 0..5000 {
            h = (h.wrapping_mul(31) + r.randrange(0, 18) as u64) & 0xFFFF_FFFF_FFFF;
        }
        assert_eq!(
            h,
            e["randrange18_hash_5000"].as_u64().unwrap(),
            "stream seed {seed}"
        );
    }
}

#[test]
fn wilcoxon_matches_scipy() {
    let g = golden("stats_golden.json");
    for (name, e) in g["wilcoxon"].as_object().unwrap() {
        let d: Vec<f64> = e["d"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let r = signed_rank(&d);
        assert_eq!(r.w_plus, e["w_plus"].as_f64().unwrap(), "{name} W+");
        let want = e["p_normal"].as_f64().unwrap();
        assert!(
            close(r.p_normal, want, 1e-9),
            "{name} p_normal {} vs {want}",
            r.p_normal
        );
        if let Some(p) = e.get("p_exact").and_then(Value::as_f64) {
            assert!(
                close(r.p_exact.unwrap(), p, 1e-12),
                "{name} p_exact {:?} vs {p}",
                r.p_exact
            );
        }
    }
}

#[test]
fn holm_matches_statsmodels() {
    let g = golden("stats_golden.json");
    for e in g["holm"].as_array().unwrap() {
        let p: Vec<f64> = e["p"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let want: Vec<f64> = e["adjusted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        for (a, b) in holm(&p).iter().zip(&want) {
            assert!(close(*a, *b, 1e-12), "{a} vs {b}");
        }
    }
}

#[test]
fn mcnemar_matches_statsmodels() {
    let g = golden("stats_golden.json");
    for e in g["mcnemar"].as_array().unwrap() {
        let (b, c) = (e["b"].as_u64().unwrap(), e["c"].as_u64().unwrap());
        let want = e["p"].as_f64().unwrap();
        let got = from_counts(b, c, 0).p_exact;
        assert!(close(got, want, 1e-9), "b={b} c={c}: {got} vs {want}");
    }
}

fn vecs(v: &Value) -> Vec<Vec<f64>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(exact).collect())
        .collect()
}

/// A float written by Python's `repr` (parsed correctly rounded, unlike JSON numbers).
fn exact(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn noncentral_t_and_power_match_scipy_and_statsmodels() {
    use lrab_analysis::stats::{nct_cdf, solve_nobs, t_test_power};
    let g = golden("paired_golden.json");
    for e in g["nct_cdf"].as_array().unwrap() {
        let (t, df, nc) = (
            e["t"].as_f64().unwrap(),
            e["df"].as_f64().unwrap(),
            e["nc"].as_f64().unwrap(),
        );
        let want = e["cdf"].as_f64().unwrap();
        let got = nct_cdf(t, df, nc);
        assert!(
            (got - want).abs() < 1e-8,
            "nct({t}, {df}, {nc}) {got} vs {want}"
        );
    }
    for e in g["power"].as_array().unwrap() {
        let (es, n) = (e["es"].as_f64().unwrap(), e["nobs"].as_f64().unwrap());
        let want = e["power"].as_f64().unwrap();
        let got = t_test_power(es, n, 0.05);
        assert!(
            (got - want).abs() < 1e-7,
            "power({es}, {n}) {got} vs {want}"
        );
    }
    for e in g["solve_nobs"].as_array().unwrap() {
        let es = e["es"].as_f64().unwrap();
        let want = e["nobs"].as_f64().unwrap();
        let got = solve_nobs(es, 0.8, 0.05).unwrap();
        assert!(
            (got - want).abs() < 1e-4 * want,
            "solve({es}) {got} vs {want}"
        );
    }
}

#[test]
fn paired_design_statistics_match_scipy_statsmodels_and_cpython() {
    use lrab_analysis::stats::{cluster_ci, components, mean, sign_flip, sign_flip_exact};
    let g = golden("paired_golden.json");
    let designs = g["designs"].as_object().unwrap();
    assert!(designs.contains_key("published_reps_2609"));
    for (name, e) in designs {
        let d = vecs(&e["d"]);
        let task_means: Vec<f64> = d.iter().map(|x| mean(x)).collect();
        let p = sign_flip_exact(&task_means).unwrap();
        let want = e["sign_flip_exact_p"].as_f64().unwrap();
        assert!(
            (p - want).abs() < 1e-12,
            "{name}: exact sign-flip {p} vs scipy {want}"
        );
        let c = components(&d).unwrap();
        let (tv, rv) = (
            e["mixedlm_task_var"].as_f64().unwrap(),
            e["mixedlm_repeat_var"].as_f64().unwrap(),
        );
        assert!(
            (c.task - tv).abs() < 2e-5,
            "{name}: task var {} vs MixedLM {tv}",
            c.task
        );
        assert!(
            (c.repeat - rv).abs() < 2e-5,
            "{name}: repeat var {} vs MixedLM {rv}",
            c.repeat
        );
        let mut r = CpythonRandom::new(42);
        let ci = cluster_ci(&d, 2000, 0.95, &mut r).unwrap();
        let want = e["cluster_ci_cpython_seed42_b2000"].as_array().unwrap();
        assert_eq!(
            (ci.lo, ci.hi),
            (exact(&want[0]), exact(&want[1])),
            "{name}: task-cluster bootstrap"
        );
        let mut r = CpythonRandom::new(7);
        let mc = sign_flip(&task_means, 2000, &mut r).p;
        assert_eq!(mc, exact(&e["sign_flip_cpython_seed7_b2000"]), "{name}");
    }
}

#[test]
fn tau2_binary_tests_match_scipy() {
    let g = golden("tau2_binary_golden.json");
    let cases = g["cases"].as_array().unwrap();
    assert!(cases.len() >= 5);
    for e in cases {
        let (w, t, l) = (
            e["wins"].as_u64().unwrap(),
            e["ties"].as_u64().unwrap(),
            e["losses"].as_u64().unwrap(),
        );
        let p = lrab_analysis::tau2_tables::binary_wilcoxon_p(w, t, l);
        let want = e["wilcoxon_p"].as_f64().unwrap();
        assert!(close(p, want, 1e-9), "{w}/{t}/{l} wilcoxon {p} vs {want}");
        let m = from_counts(w, l, t).p_exact;
        let want = e["mcnemar_p"].as_f64().unwrap();
        assert!(close(m, want, 1e-9), "{w}/{t}/{l} mcnemar {m} vs {want}");
    }
}
