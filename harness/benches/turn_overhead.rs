//! Harness overhead per turn, model time excluded, on a 100-turn scripted conversation (file
//! tools, plan updates, anti-loop, context check, event log and the atomic checkpoint after every
//! turn all included). Prints p50/p99 per turn, then lets criterion time whole conversations.
//!
//! Run: `cargo bench -p lrab-harness --bench turn_overhead`

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_harness::backend::ScriptedModel;
use lrab_harness::{Agent, AgentConfig, Reply};
use serde_json::json;
use std::time::Duration;

fn script(turns: usize) -> Vec<Reply> {
    let mut v = vec![Reply::call(
        "todo",
        json!({"action": "create", "items": ["write the sections", "check them", "finish"]}),
    )];
    let mut i = 0;
    while v.len() < turns - 1 {
        let f = format!("notes/part{}.md", i % 40);
        v.push(Reply::call(
            "write_file",
            json!({"path": f, "content": format!("# Part {i}\n{}\n", "text ".repeat(60))}),
        ));
        v.push(Reply::call("read_file", json!({"path": f})));
        v.push(Reply::call("edit_file", json!({"path": f, "old": format!("# Part {i}"), "new": format!("# Part {i} (checked)")})));
        v.push(Reply::call("list_dir", json!({"path": "notes"})));
        i += 1;
    }
    v.truncate(turns - 1);
    v.push(Reply::call("todo", json!({"action": "done_all"})));
    v
}

/// One 100-turn conversation; returns per-turn overheads.
fn conversation() -> Vec<Duration> {
    conversation_with("")
}

fn conversation_with(ablate: &str) -> Vec<Duration> {
    let d = tempfile::tempdir().unwrap();
    let mut model = ScriptedModel::replies(script(100));
    model.record = false;
    let mut cfg = AgentConfig::new(
        d.path(),
        "Write notes/part0.md to notes/part39.md with sections.",
    );
    cfg.ablations = lrab_harness::Ablations::parse(ablate).unwrap();
    let mut agent = Agent::new(cfg, model).unwrap();
    for _ in 0..100 {
        if agent.step().is_some() {
            break;
        }
    }
    agent.overheads.clone()
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(label: &str, ablate: &str) {
    let mut all = Vec::new();
    for _ in 0..10 {
        all.extend(conversation_with(ablate));
    }
    all.sort();
    println!(
        "turn overhead ({label}) over {} turns: p50 {:?}, p99 {:?}, max {:?}",
        all.len(),
        pct(&all, 0.50),
        pct(&all, 0.99),
        all.last().unwrap()
    );
}

fn bench(c: &mut Criterion) {
    report("all mechanisms", "");
    if std::env::var("LRAB_BENCH_BREAKDOWN").is_ok() {
        report("no checkpoint", "resilience");
        report("no backups", "edit_safety");
        report("no checkpoint, no backups", "resilience,edit_safety");
    }
    let mut g = c.benchmark_group("turn_overhead");
    g.sample_size(10);
    g.bench_function("100_turn_conversation", |b| b.iter(conversation));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
