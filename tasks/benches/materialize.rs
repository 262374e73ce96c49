//! Materializing every task of the built-in pack (target: < 2 s for all tasks).

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_tasks::{materialize_with, Pack};

fn bench(c: &mut Criterion) {
    let (pack, problems) = Pack::load_lenient(Pack::builtin_dir());
    if !problems.is_empty() {
        eprintln!("note: {} task(s) invalid and skipped", problems.len());
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    c.bench_function(
        &format!("materialize_all_{}_tasks", pack.tasks.len()),
        |b| {
            b.iter(|| {
                for t in &pack.tasks {
                    let wd = tmp.path().join(&t.spec.id);
                    materialize_with(&pack, t, &wd, None, true).expect("materialize");
                }
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
