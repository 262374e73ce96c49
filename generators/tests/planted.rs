//! Planted properties hold for many seeds (the data-level guarantees the task checks rely on).

mod common;

use common::*;
use lrab_generators::generate;

#[test]
fn lh01_peaks_distinct_and_dip_visible_for_50_seeds() {
    for seed in SEEDS {
        let g = generate("lh01", seed).unwrap();
        let rows = parse_lh01(&g.files["alloy_multibatch.csv"]);
        assert_eq!(rows.len(), 5000, "seed {seed}");
        let peaks: Vec<f64> = lh01_peaks(&rows).values().copied().collect();
        for i in 0..peaks.len() {
            // No x.5 peak: `.0f` and `round()` agree.
            assert!(((peaks[i] * 10.0).round() as i64) % 10 != 5, "seed {seed}");
            for j in i + 1..peaks.len() {
                assert!(
                    (peaks[i] - peaks[j]).abs() >= 0.99,
                    "seed {seed}: {peaks:?}"
                );
            }
        }
        let (b, t, residual) = lh01_dip(&rows);
        assert_eq!(b, "B06", "seed {seed}");
        let base: i64 = g.truth["base_temperature_B06"][0].parse().unwrap();
        assert_eq!(t, base + 150, "seed {seed}");
        assert!(residual <= -60.0, "seed {seed}: residual {residual}");
    }
}

#[test]
fn lh02_top8_distinct_and_duplicates_planted_for_50_seeds() {
    for seed in SEEDS {
        let g = generate("lh02", seed).unwrap();
        let bytes = &g.files["process_corpus.txt"];
        assert!(
            (560_000..680_000).contains(&bytes.len()),
            "seed {seed}: {} bytes",
            bytes.len()
        );
        let s = lh02_stats(bytes);
        assert_eq!(s.lines, 6005, "seed {seed}");
        assert_eq!(s.repeats, vec![137, 1954, 3707, 5222, 5888], "seed {seed}");
        let r = ranked(&s.counts);
        assert_eq!(r.len(), 20);
        for k in 0..8 {
            assert!(r[k].1 > r[k + 1].1, "seed {seed}: tie at rank {}", k + 1);
        }
        assert!(
            r[7].1 >= r[8].1 + 300,
            "seed {seed}: top-8 boundary too close"
        );
    }
}

#[test]
fn lh03_modules_are_seed_independent_and_suite_varies() {
    let a = generate("lh03", 1).unwrap();
    let b = generate("lh03", 2).unwrap();
    for m in 1..=10 {
        let f = format!("m{m:02}.py");
        assert_eq!(a.files[&f], b.files[&f]);
    }
    assert_ne!(a.files["test_suite.py"], b.files["test_suite.py"]);
}
