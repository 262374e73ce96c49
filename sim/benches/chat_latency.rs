//! Server-side cost of one chat request with a ~30k-token context (parse, policy, render),
//! and of 100 concurrent streaming requests over real HTTP.

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_ollama::ChatRequest;
use lrab_sim::convo::Conv;
use lrab_sim::policy::{respond, Env};
use lrab_sim::render::{native_stream, Frame};
use lrab_sim::{catalog, SimConfig, TaskIndex};
use serde_json::{json, Value};

fn tool(name: &str, props: &[&str]) -> Value {
    let p: serde_json::Map<String, Value> = props
        .iter()
        .map(|k| ((*k).to_string(), json!({"type": "string"})))
        .collect();
    json!({"type": "function", "function": {"name": name, "description": "a tool", "parameters": {"type": "object", "properties": p, "required": props}}})
}

/// A task conversation padded with long tool results to about `tokens` prompt tokens.
fn long_body(tokens: usize) -> String {
    let pack = lrab_tasks::Pack::load(lrab_tasks::Pack::builtin_dir()).expect("pack");
    let prompt = pack.get("LH-02").expect("task").render_prompt();
    let mut messages = vec![
        json!({"role": "system", "content": "You are an agent."}),
        json!({"role": "user", "content": prompt}),
    ];
    let filler = "0123456789 abcdefghij klmnopqrst uvwxyz ".repeat(50);
    let mut i = 0;
    while messages.iter().map(|m| m.to_string().len()).sum::<usize>() < tokens * 4 {
        messages.push(json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "run_shell", "arguments": {"command": format!("cat part{i}.txt")}}}]}));
        messages.push(json!({"role": "tool", "content": filler, "tool_name": "run_shell"}));
        i += 1;
    }
    json!({"model": "sim-2b", "messages": messages, "stream": true,
        "tools": [tool("run_shell", &["command"]), tool("write_file", &["path", "content"]), tool("read_file", &["path"]), tool("finish", &["summary"])]})
    .to_string()
}

fn bench(c: &mut Criterion) {
    let (tasks, _) = TaskIndex::from_pack(&lrab_tasks::Pack::builtin_dir());
    let models = catalog::builtin();
    let model = models.iter().find(|m| m.name == "sim-2b").expect("model");
    let body = long_body(30_000);
    c.bench_function("chat_30k_context_server_side", |b| {
        b.iter(|| {
            let req: ChatRequest = serde_json::from_str(&body).expect("parse");
            let conv = Conv::from_native(&req, false);
            let turn = respond(
                &Env {
                    model,
                    seed: 0,
                    tasks: &tasks,
                },
                &conv,
            );
            let frame = Frame::new(&req.model, model, &conv, &turn);
            native_stream(&frame, &turn)
        })
    });
    let sim = lrab_sim::serve("127.0.0.1:0", SimConfig::default()).expect("serve");
    let url = format!("{}/api/chat", sim.url());
    let small = long_body(2_000);
    let mut g = c.benchmark_group("concurrency");
    g.sample_size(10);
    g.bench_function("100_concurrent_streams", |b| {
        b.iter(|| {
            let hs: Vec<_> = (0..100)
                .map(|_| {
                    let (u, body) = (url.clone(), small.clone());
                    std::thread::spawn(move || {
                        let r = ureq::post(&u).send_string(&body).expect("request ok");
                        assert_eq!(r.status(), 200);
                        let text = r.into_string().expect("body");
                        assert!(text.contains("\"done\":true"));
                    })
                })
                .collect();
            for h in hs {
                h.join().expect("no errors");
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
