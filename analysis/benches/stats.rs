//! Benchmarks: the statistics alone and the full report (tables, 10,000 resamples for every
//! comparison, all figures, report files) on upstream's 288-row CSV, and the analysis of a
//! 6-arm × 18-task × 10-repeat ablation (1,080 cells). Timings and the plain-Python comparison
//! (`stats_baseline.py`) are recorded in docs/statistics.md.

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_analysis::RngKind;
use lrab_analysis::{analyze, Config};
use lrab_analysis::{run, AnalyzeArgs};
use std::path::PathBuf;

/// Upstream's published cells, carried in the repository's `data/mingbird/`.
fn data() -> PathBuf {
    lrab_data::file("mingbird/lrab_scores.csv").unwrap_or_else(|e| panic!("{e}"))
}

/// A batch-matched ablation as our cells.csv: `harness` and five `harness-no-*` variants, one
/// model, 18 tasks, 10 repeats; deterministic scores with task, repeat and variant effects.
fn ablation_csv(dir: &std::path::Path) -> PathBuf {
    use std::fmt::Write as _;
    let mut s = String::from("run_id,arm,model,task,repeat,attempt,score\n");
    let arms = [
        "harness",
        "harness-no-a",
        "harness-no-b",
        "harness-no-c",
        "harness-no-d",
        "harness-no-e",
    ];
    for r in 0..10u32 {
        for t in 0..18u32 {
            for (k, arm) in arms.iter().enumerate() {
                let task = if t < 15 {
                    format!("WF-{:02}", t + 1)
                } else {
                    format!("LH-{:02}", t - 14)
                };
                let x = ((t * 37 + r * 11 + k as u32 * 5) % 23) as f64 / 23.0;
                let score = (0.55 + 0.3 * x - 0.03 * k as f64).clamp(0.0, 1.0);
                let _ = writeln!(s, "abl,{arm},sim-4b,{task},{r},0,{score:.3}");
            }
        }
    }
    let p = dir.join("ablation1080.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn ablation_bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let csv = ablation_csv(tmp.path());
    let ds = lrab_analysis::load(std::slice::from_ref(&csv)).unwrap();
    assert_eq!(ds.cells.len(), 108);
    let mut g = c.benchmark_group("ablation1080");
    g.sample_size(10);
    g.bench_function("statistics", |b| {
        b.iter(|| {
            let a = analyze(
                &ds,
                &Config {
                    power_delta: Some(0.05),
                    ..Config::default()
                },
            )
            .unwrap();
            assert_eq!(a.ablations.len(), 5);
            a
        })
    });
    g.bench_function("full_report", |b| {
        b.iter(|| {
            let args = AnalyzeArgs {
                quiet: true,
                power: Some(0.05),
                ..AnalyzeArgs::new(vec![csv.clone()], tmp.path().join("out"))
            };
            run(&args).unwrap()
        })
    });
    g.finish();
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

criterion_group!(lrab, benches, ablation_bench);
criterion_main!(lrab);
