//! Gold replay + hashing of all airline and retail base tasks (the issue's < 2 s target).
use criterion::{criterion_group, criterion_main, Criterion};
use lrab_tau2::{replay_gold, Domain, DomainKind};
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    std::env::var_os("TAU2_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/tau2"))
}

fn bench(c: &mut Criterion) {
    let dir = lrab_tau2::resolve_data_dir(Some(&data_dir())).expect("tau2 data");
    let mut g = c.benchmark_group("tau2");
    g.sample_size(10);
    g.bench_function("load_and_replay_all_164", |b| {
        b.iter(|| {
            let mut n = 0;
            for kind in [DomainKind::Airline, DomainKind::Retail] {
                let d = Domain::load(&dir, kind).expect("load");
                for t in &d.tasks {
                    let o = replay_gold(&d, t).expect("replay");
                    n += o.db_hash.len();
                }
            }
            n
        })
    });
    let airline = Domain::load(&dir, DomainKind::Airline).expect("load");
    let retail = Domain::load(&dir, DomainKind::Retail).expect("load");
    g.bench_function("replay_all_164_preloaded", |b| {
        b.iter(|| {
            let mut n = 0;
            for d in [&airline, &retail] {
                for t in &d.tasks {
                    n += replay_gold(d, t).expect("replay").db_hash.len();
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
