//! Server-side cost of one chat request with a ~30k-token context (parse, serving: window,
//! truncation, KV-cache bookkeeping; policy; render), and of 100 concurrent streaming requests
//! over real HTTP.

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_sim::{build_state, server_side_chat, SimConfig};
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
    json!({"model": "sim-2b", "messages": messages, "stream": true, "options": {"num_ctx": 32768},
        "tools": [tool("run_shell", &["command"]), tool("write_file", &["path", "content"]), tool("read_file", &["path"]), tool("finish", &["summary"])]})
    .to_string()
}

/// `body` with one more tool call and a result unique to `n` at the end.
fn with_new_result(body: &str, n: u64) -> String {
    let mut v: Value = serde_json::from_str(body).expect("body");
    let msgs = v["messages"].as_array_mut().expect("messages");
    msgs.push(json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "run_shell", "arguments": {"command": format!("python3 check.py --round {n}")}}}]}));
    msgs.push(json!({"role": "tool", "content": format!("round {n}: 3 passed, 1 failed\nFAILED test_report.py::test_totals - assert {n} == 7"), "tool_name": "run_shell"}));
    v.to_string()
}

fn bench(c: &mut Criterion) {
    let (state, _) = build_state(SimConfig::default());
    let body = long_body(30_000);
    assert!(!server_side_chat(&state, body.as_bytes())
        .expect("chat")
        .is_empty());
    // Each iteration's conversation ends in a tool result the server has not seen, as on a
    // real agent turn (earlier blocks were read by earlier requests).
    let mut n = 0u64;
    c.bench_function("chat_30k_context_server_side", |b| {
        b.iter_batched(
            || {
                n += 1;
                with_new_result(&body, n)
            },
            |body| server_side_chat(&state, body.as_bytes()).expect("chat"),
            criterion::BatchSize::SmallInput,
        )
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
