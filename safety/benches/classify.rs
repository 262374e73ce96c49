//! Classifier throughput on typical and adversarial command lines (it runs before every shell
//! call, so it must stay far below a model turn's latency).

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_safety::{classify_shell, Context};

fn bench(c: &mut Criterion) {
    let d = tempfile::tempdir().expect("tempdir");
    let wd = d.path().join("w");
    std::fs::create_dir_all(&wd).expect("mkdir");
    let ctx = Context::new(&wd, &d.path().join("home"));
    let lines = [
        "python3 -m pytest -q",
        "mkdir -p out && for f in *.md; do cp \"$f\" out/; done",
        "echo cm0gLXJmIC8= | base64 -d | sh",
        "python3 -c \"import os; os.system('rm -rf ' + '/')\"",
        "cat <<'EOF' > report.md\n# Report\nline\nEOF",
    ];
    c.bench_function("classify_shell/5 lines", |b| {
        b.iter(|| {
            for l in &lines {
                std::hint::black_box(classify_shell(l, &ctx));
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
