//! The MCP server's added time per tool call (docs/tau2.md, "Performance"): spawns the real
//! `tau2 mcp` (retail task 33, scripted customer) and times N `tools/call` round trips of a
//! read tool over stdio; then the same through `tau2 mcp-relay` (what a confined agent starts)
//! to a conversation served in this process; and the same call made directly on an in-process
//! environment. The difference of the medians is what the server adds. Run in release:
//!
//! ```text
//! cargo build --release -p lrab-tau2 --examples
//! cargo run --release -p lrab-tau2 --example mcp_call_bench [-- N]
//! ```
//!
//! The server is the `tau2` example beside this one (the same `lrab_tau2::run_cli` as
//! `lrab tau2`); `LRAB_BIN=path/to/lrab` uses the `lrab` binary instead. The data comes from
//! `TAU2_DATA_DIR` or the data lookup.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e6
}

const WARMUP: usize = 200;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let dir = lrab_tau2::resolve_data_dir(None).expect("tau2 data (TAU2_DATA_DIR)");
    let (bin, prefix) = match std::env::var_os("LRAB_BIN") {
        Some(b) => (std::path::PathBuf::from(b), vec!["tau2"]),
        None => {
            let exe = std::env::current_exe().expect("exe");
            (exe.with_file_name("tau2"), vec![])
        }
    };
    let out = std::env::temp_dir().join(format!("lrab-mcp-bench-{}", std::process::id()));
    let steps = (4 * (n + WARMUP) + 100).to_string();
    let mut server = Command::new(&bin);
    server
        .args(&prefix)
        .args(["--tau2-data", dir.to_str().expect("utf-8"), "mcp"])
        .args(["--domain", "retail", "--task", "33", "--user", "scripted"])
        .args(["--max-steps", &steps, "--max-errors", &steps])
        .arg("--out")
        .arg(&out);
    let mut stdio = time_calls(server, n);
    let _ = std::fs::remove_dir_all(&out);
    let d = lrab_tau2::Domain::load(&dir, lrab_tau2::DomainKind::parse("retail").unwrap())
        .expect("retail");
    std::fs::create_dir_all(&out).expect("temp dir");
    let big = 4 * (n + WARMUP) + 100;
    let limits = lrab_tau2::Limits {
        max_steps: big,
        max_errors: big,
    };
    let make_user: Box<dyn FnOnce() -> Box<dyn lrab_tau2::User> + Send> =
        Box::new(|| Box::new(lrab_tau2::ScriptedUser::new(vec!["Hello.".into()])));
    let relayed = lrab_tau2::Relayed::start(&out, d.env(), vec![], limits, &d.policy, make_user)
        .expect("relayed conversation");
    let mut relay = Command::new(&bin);
    relay.args(&prefix).arg("mcp-relay").arg(&out);
    let mut relayed_calls = time_calls(relay, n);
    relayed.finish().expect("finish");
    let _ = std::fs::remove_dir_all(&out);
    // the same call on an in-process environment: what any agent pays without the server
    let mut env = d.env();
    let tc = lrab_tau2::ToolCall {
        id: "c".into(),
        name: "get_order_details".into(),
        arguments: args().as_object().cloned().expect("object"),
        requestor: "assistant".into(),
    };
    let mut direct = Vec::with_capacity(n);
    for i in 0..n + WARMUP {
        let t = Instant::now();
        let m = env.get_response(&tc);
        if i >= WARMUP {
            direct.push(t.elapsed());
        }
        assert_ne!(m.error, Some(true));
    }
    let d50 = pct(&mut direct, 0.5);
    println!("same call in-process: p50 {d50:.1} us");
    for (what, v) in [
        ("stdio server (tau2 mcp)", &mut stdio),
        ("relay (tau2 mcp-relay, FIFOs)", &mut relayed_calls),
    ] {
        let (p50, p90, p99) = (pct(v, 0.5), pct(v, 0.9), pct(v, 0.99));
        println!(
            "{what}: {n} tools/call round trips p50 {p50:.1} us, p90 {p90:.1} us, p99 {p99:.1} us; added at p50 {:.1} us",
            p50 - d50
        );
    }
}

fn args() -> Value {
    json!({"order_id": "#W6111398"})
}

/// Times `n` `tools/call` round trips (after WARMUP unmeasured ones) to the MCP server `cmd`.
fn time_calls(mut cmd: Command, n: usize) -> Vec<Duration> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut w = child.stdin.take().expect("stdin");
    let mut r = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut rpc = |id: usize, method: &str, params: Value| -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(w, "{msg}").unwrap();
        w.flush().unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("a JSON-RPC line")
    };
    rpc(0, "initialize", json!({"protocolVersion": "2025-06-18"}));
    let call = json!({"name": "get_order_details", "arguments": args()});
    let mut times = Vec::with_capacity(n);
    for i in 0..n + WARMUP {
        let t = Instant::now();
        let v = rpc(i + 1, "tools/call", call.clone());
        if i >= WARMUP {
            times.push(t.elapsed());
        }
        assert_eq!(v["result"]["isError"], false, "{v}");
    }
    drop(w);
    let _ = child.wait();
    times
}
