//! What confinement adds to one shell call: build the confined `sh -c true` (allow-list,
//! Landlock ruleset or mount plan, seccomp filter) and run it to completion (shim, pid-namespace
//! init, namespaces, mounts, exec), against the same command unconfined. Prints p50/p90 over
//! 200 calls per variant, then lets criterion time them.

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_safety::{sandboxed_command, Sandbox, SandboxPolicy as Policy};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn once(b: &Sandbox, wd: &Path, network: bool) {
    let c = if *b == Sandbox::None {
        let mut c = Command::new("sh");
        c.arg("-c").arg("true").current_dir(wd);
        c
    } else {
        let policy = Policy {
            force: Some(b.clone()),
            network,
            ..Policy::default()
        };
        sandboxed_command("true", wd, wd, &policy)
            .expect("confined")
            .0
    };
    let mut c = c;
    let st = c
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    assert!(st.success());
}

fn variants() -> Vec<(String, Sandbox, bool)> {
    let mut v = vec![("unconfined".to_string(), Sandbox::None, true)];
    if let s @ Sandbox::Landlock { .. } = Sandbox::detect() {
        v.push(("landlock".into(), s.clone(), false));
        v.push(("landlock, host network".into(), s, true));
    }
    if Sandbox::named("namespaces").is_ok() {
        v.push(("namespaces".into(), Sandbox::Namespaces, false));
    }
    v
}

fn bench(c: &mut Criterion) {
    let d = tempfile::tempdir().expect("tempdir");
    let wd = d.path();
    let mut base = Duration::ZERO;
    for (name, b, net) in variants() {
        let mut t: Vec<Duration> = (0..200)
            .map(|_| {
                let s = Instant::now();
                once(&b, wd, net);
                s.elapsed()
            })
            .collect();
        t.sort();
        let (p50, p90) = (t[100], t[180]);
        if b == Sandbox::None {
            base = p50;
        }
        println!(
            "sh -c true, {name}: p50 {:.2} ms, p90 {:.2} ms, added p50 {:.2} ms",
            p50.as_secs_f64() * 1e3,
            p90.as_secs_f64() * 1e3,
            (p50.saturating_sub(base)).as_secs_f64() * 1e3
        );
        c.bench_function(&format!("run_shell overhead/{name}"), |bn| {
            bn.iter(|| once(&b, wd, net))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
