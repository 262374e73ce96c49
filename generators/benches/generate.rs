//! Generation time of each generator at its default seed (materialization calls these once
//! per cell, so they should stay far below a second).

use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    for name in lrab_generators::names() {
        let seed = lrab_generators::default_seed(name).unwrap_or(1);
        c.bench_function(&format!("generate_{name}"), |b| {
            b.iter(|| lrab_generators::generate(black_box(name), black_box(seed)).unwrap())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
