//! Runner overhead per cell: a whole `lrab run` of one cell whose arm does nothing (`true`), on
//! the simulated backend. Everything measured is runner time (process start, sim start,
//! validation, materialize, scoring, records) — an upper bound of the per-cell overhead, which
//! must stay under 1 s. The per-attempt figure without process/sim start is also logged by every
//! run (`runner_overhead_seconds` in attempts.jsonl).

use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};

fn one_cell(c: &mut Criterion) {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    std::fs::write(
        arms.join("noop.toml"),
        "name = \"noop\"\nprogram = \"/bin/true\"\nargs = [\"{prompt_file}\"]\napi = \"ollama\"\n",
    )
    .unwrap();
    let mut g = c.benchmark_group("runner");
    g.sample_size(10);
    for task in ["WF-01", "WF-04"] {
        let mut i = 0u32;
        g.bench_function(format!("one_noop_cell_{task}"), |b| {
            b.iter(|| {
                i += 1;
                let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
                    .args([
                        "run", "--arms", "noop", "--models", "sim-2b", "--tasks", task,
                    ])
                    .args([
                        "--backend",
                        "sim",
                        "--no-progress",
                        "--run-id",
                        &format!("b{i}"),
                    ])
                    .arg("--arms-dir")
                    .arg(&arms)
                    .arg("--out")
                    .arg(d.path().join(task))
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            })
        });
    }
    g.finish();
}

criterion_group!(benches, one_cell);
criterion_main!(benches);
