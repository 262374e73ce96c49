//! Benchmarks: the statistics alone and the full report (tables, 10,000 resamples for every
//! comparison, all figures, report files) on upstream's 288-row CSV. Timings and the plain-Python
//! comparison (`stats_baseline.py`) are recorded in docs/statistics.md.

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_analysis::analysis::{analyze, Config};
use lrab_analysis::{run, AnalyzeArgs};
use lrab_analysis::RngKind;
use std::path::PathBuf;

fn data() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    dir.join("../../shared/data/mingbird/lrab_scores.csv")
}

fn benches(c: &mut Criterion) {
    let ds = lrab_analysis::load(&[data()]).unwrap();
    let mut g = c.benchmark_group("lrab288");
    g.sample_size(10);
    for rng in [RngKind::Chacha, RngKind::Cpython] {
        g.bench_function(format!("statistics_{}", rng.name()), |b| {
            b.iter(|| {
                analyze(
                    &ds,
                    &Config {
                        rng,
                        ..Config::default()
                    },
                )
                .unwrap()
            })
        });
    }
    let tmp = tempfile::tempdir().unwrap();
    g.bench_function("full_report", |b| {
        b.iter(|| {
            let args = AnalyzeArgs {
                quiet: true,
                ..AnalyzeArgs::new(vec![data()], tmp.path().join("out"))
            };
            run(&args).unwrap()
        })
    });
    g.finish();
}

criterion_group!(lrab, benches);
criterion_main!(lrab);
