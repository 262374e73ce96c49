//! The MCP server's added time per tool call (docs/tau2.md, "Performance"): spawns the real
//! `lrab tau2 mcp` (retail task 33, scripted customer), times N `tools/call` round trips of a
//! read tool over stdio, and the same call made directly on an in-process environment; the
//! difference of the medians is what the server adds. Run in release:
//!
//! ```text
//! cargo build --release -p lrab-runner
//! cargo run --release -p lrab-tau2 --example mcp_call_bench [-- N]
//! ```
//!
//! `LRAB_BIN` names another `lrab`; the data comes from `TAU2_DATA_DIR` or the data lookup.

use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e6
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let dir = lrab_tau2::resolve_data_dir(None).expect("tau2 data (TAU2_DATA_DIR)");
    let bin = std::env::var_os("LRAB_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().expect("exe");
            exe.parent()
                .and_then(|p| p.parent())
                .expect("target dir")
                .join("lrab")
        });
    let out = std::env::temp_dir().join(format!("lrab-mcp-bench-{}", std::process::id()));
    let steps = (4 * n + 100).to_string();
    let mut child = Command::new(&bin)
        .args([
            "tau2",
            "--tau2-data",
            dir.to_str().expect("utf-8"),
            "mcp",
            "--domain",
            "retail",
        ])
        .args([
            "--task",
            "33",
            "--user",
            "scripted",
            "--max-steps",
            &steps,
            "--max-errors",
            &steps,
        ])
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let mut w = child.stdin.take().expect("stdin");
    let mut r = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut rpc = |id: usize, method: &str, params: Value| -> Value {
        writeln!(
            w,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        w.flush().unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("a JSON-RPC line")
    };
    rpc(0, "initialize", json!({"protocolVersion": "2025-06-18"}));
    let args = json!({"order_id": "#W6111398"});
    let call = json!({"name": "get_order_details", "arguments": args});
    let mut rt = Vec::with_capacity(n);
    for i in 0..n + 200 {
        let t = Instant::now();
        let v = rpc(i + 1, "tools/call", call.clone());
        if i >= 200 {
            rt.push(t.elapsed());
        }
        assert_eq!(v["result"]["isError"], false, "{v}");
    }
    drop(w);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&out);
    // the same call on an in-process environment: what any agent pays without the server
    let d = lrab_tau2::Domain::load(&dir, lrab_tau2::DomainKind::Retail).expect("retail");
    let mut env = d.env();
    let tc = lrab_tau2::ToolCall {
        id: "c".into(),
        name: "get_order_details".into(),
        arguments: args.as_object().cloned().unwrap_or_else(Map::new),
        requestor: "assistant".into(),
    };
    let mut direct = Vec::with_capacity(n);
    for i in 0..n + 200 {
        let t = Instant::now();
        let m = env.get_response(&tc);
        if i >= 200 {
            direct.push(t.elapsed());
        }
        assert_ne!(m.error, Some(true));
    }
    let (r50, r90, r99) = (pct(&mut rt, 0.5), pct(&mut rt, 0.9), pct(&mut rt, 0.99));
    let d50 = pct(&mut direct, 0.5);
    println!("tools/call round trip over stdio ({n} calls): p50 {r50:.1} us, p90 {r90:.1} us, p99 {r99:.1} us");
    println!("same call in-process: p50 {d50:.1} us");
    println!(
        "added by the MCP server (p50 difference): {:.1} us",
        r50 - d50
    );
}
