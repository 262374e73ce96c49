//! Gold replay + hashing of all airline and retail base tasks, and gold replay + env
//! assertions of all 114 telecom base tasks (targets < 2 s each; figures in docs/tau2.md).
use criterion::{criterion_group, criterion_main, Criterion};
use lrab_tau2::{replay_gold, Domain, DomainKind};

fn bench(c: &mut Criterion) {
    // TAU2_DATA_DIR, else the data lookup; without the data the benchmark says why and is skipped
    let dir = match std::env::var_os("TAU2_DATA_DIR") {
        Some(p) => {
            lrab_tau2::resolve_data_dir(Some(std::path::Path::new(&p))).expect("TAU2_DATA_DIR")
        }
        None => match lrab_data::test_folder("tau2") {
            Some(d) => d,
            None => return,
        },
    };
    let mut g = c.benchmark_group("tau2");
    g.sample_size(10);
    g.bench_function("load_and_replay_all_164", |b| {
        b.iter(|| {
            let mut n = 0;
            for kind in [
                DomainKind::parse("airline").unwrap(),
                DomainKind::parse("retail").unwrap(),
            ] {
                let d = Domain::load(&dir, kind).expect("load");
                for t in &d.tasks {
                    let o = replay_gold(&d, t).expect("replay");
                    n += o.db_hash.len();
                }
            }
            n
        })
    });
    let airline = Domain::load(&dir, DomainKind::parse("airline").unwrap()).expect("load");
    let retail = Domain::load(&dir, DomainKind::parse("retail").unwrap()).expect("load");
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
    g.bench_function("load_and_replay_telecom_114", |b| {
        b.iter(|| {
            let d = Domain::load(&dir, DomainKind::parse("telecom").unwrap()).expect("load");
            let mut held = 0;
            for t in &d.tasks {
                let o = replay_gold(&d, t).expect("replay");
                held += o.assertions.iter().filter(|m| **m).count();
            }
            assert_eq!(held, 209);
            held
        })
    });
    let telecom = Domain::load(&dir, DomainKind::parse("telecom").unwrap()).expect("load");
    g.bench_function("replay_telecom_114_preloaded", |b| {
        b.iter(|| {
            telecom
                .tasks
                .iter()
                .map(|t| replay_gold(&telecom, t).expect("replay").assertions.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
