//! Golden tests: our CPython `random` port against values written by real CPython, and the
//! statistics against scipy / statsmodels (both files written by `golden/gen_golden.py`).

use lrab_analysis::CpythonRandom;
use lrab_analysis::stats::{holm, mcnemar_from_counts as from_counts, signed_rank};
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
