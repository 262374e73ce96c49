//! What the runner's proxy adds per model request, against a local fake Ollama that answers at
//! once: the same request sent straight to the fake and through `lrab proxy`, in the two modes
//! the runner uses (record-only for our harness, normalizing with the OpenAI→native rewrite for
//! opencode-like arms), with a 40-message conversation and a 60-line streamed reply. Prints the
//! p50/p99 latency of each and the added p50. Then streaming: the fake holds its last line for
//! 300 ms, and the time to the first line through the proxy shows that nothing is buffered.
//! Then the same at load 16 (16 clients at once), for the native paths and the translated one
//! (a native request through `lrab proxy --upstream-api openai` to a fake OpenAI server
//! answering the same reply as SSE), each against the same fake reached straight at load 16.
//! The fakes keep connections alive, as Ollama, vLLM and llama.cpp's server do, unless the
//! client asks to close (the bench's clients open a fresh connection per request, straight and
//! to the proxy alike, so the proxy's own reuse of its upstream connections is what it gains).
//! `cargo bench -p lrab-runner --bench proxy_overhead` (figures in docs/runner.md).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde_json::json;

const N: usize = 400;

/// One request read from a kept-alive connection: its path, and whether the client asked to
/// close after the answer (`None`: the connection ended).
fn next_request(r: &mut BufReader<TcpStream>) -> Option<(String, bool)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1)?.to_string();
    let (mut len, mut close) = (0usize, false);
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 || h.trim().is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        match k.trim().to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().ok()?,
            "connection" => close = v.trim().eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    Some((path, close))
}

/// Serves a connection until it ends or the client asks to close; `answer` writes one answer
/// (with its `connection` header) for a path.
fn keep_alive(c: TcpStream, answer: impl Fn(&mut TcpStream, &str, &str)) {
    // as Go's net/http (Ollama) and uvicorn (vLLM) do: no Nagle delay on a kept connection
    let _ = c.set_nodelay(true);
    let Ok(mut w) = c.try_clone() else { return };
    let mut r = BufReader::new(c);
    while let Some((path, close)) = next_request(&mut r) {
        answer(&mut w, &path, if close { "close" } else { "keep-alive" });
        if close {
            return;
        }
    }
}

/// Serves `l` from a pool of threads that each take the next connection and serve it to its
/// end, as a Go or asyncio server takes a connection without starting a thread for it (a
/// thread per connection cost the fakes ~0.1 ms per fresh connection at load 16, which made
/// the straight requests slower than the proxy's kept connections and the added time look
/// smaller than it is).
fn serve(l: TcpListener, conn: impl Fn(TcpStream) + Send + Sync + 'static) {
    let (l, conn) = (std::sync::Arc::new(l), std::sync::Arc::new(conn));
    for _ in 0..POOL {
        let (l, conn) = (l.clone(), conn.clone());
        std::thread::spawn(move || loop {
            if let Ok((c, _)) = l.accept() {
                conn(c);
            }
        });
    }
}

/// Threads per fake: more than the load's clients plus the proxy's idle upstream connections.
const POOL: usize = 64;

/// A fake OpenAI server: `/v1/models` and a chat answer of 60 SSE content events, the finish
/// event, usage and `[DONE]`.
fn fake_openai() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let ev = |v: serde_json::Value| format!("data: {v}\n\n");
    let mut out = String::new();
    for i in 0..60 {
        out.push_str(&ev(json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": format!("word{i} ")}, "finish_reason": null}]})));
    }
    out.push_str(&ev(json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})));
    out.push_str(&ev(json!({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 4000, "completion_tokens": 60, "prompt_tokens_details": {"cached_tokens": 3900}}})));
    out.push_str("data: [DONE]\n\n");
    let out: &'static str = Box::leak(out.into_boxed_str());
    serve(l, move |c| {
        keep_alive(c, |w, path, conn| {
            let (ct, b) = if path == "/v1/models" {
                (
                    "application/json",
                    r#"{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}"#,
                )
            } else {
                ("text/event-stream", out)
            };
            let a = format!("HTTP/1.1 200 OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: {conn}\r\n\r\n{b}", b.len());
            let _ = w.write_all(a.as_bytes());
        })
    });
    url
}

/// Latencies (ms, to the end of the answer) of `n` requests sent by `clients` threads at once,
/// after a quarter as many at the same load to warm up (a fresh process's allocator maps and
/// zeroes its heap over its first few hundred requests at this load; a runner's proxies share
/// one warm process).
fn loaded(base: &str, path: &str, body: &str, clients: usize, n: usize) -> Vec<f64> {
    burst(base, path, body, clients, n / 4);
    burst(base, path, body, clients, n)
}

fn burst(base: &str, path: &str, body: &str, clients: usize, n: usize) -> Vec<f64> {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    (0..n / clients)
                        .map(|_| request(base, path, body).1.as_secs_f64() * 1e3)
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// A fake `/api/chat`: 60 content lines and a final line; with `hold`, the final line waits.
fn fake(hold: Option<Duration>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let mut out = String::new();
    for i in 0..60 {
        out.push_str(&json!({"model": "m", "message": {"role": "assistant", "content": format!("word{i} ")}, "done": false}).to_string());
        out.push('\n');
    }
    let last = json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
        "prompt_eval_count": 4000, "prompt_eval_cached_count": 3900, "eval_count": 60,
        "prompt_eval_duration": 1, "eval_duration": 1, "load_duration": 0, "total_duration": 2});
    let last = format!("{last}\n");
    let (out, last): (&'static str, &'static str) = (
        Box::leak(out.into_boxed_str()),
        Box::leak(last.into_boxed_str()),
    );
    serve(l, move |c| {
        keep_alive(c, |w, _, conn| {
            let head = format!("HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ncontent-length: {}\r\nconnection: {conn}\r\n\r\n", out.len() + last.len());
            match hold {
                Some(h) => {
                    let _ = w.write_all(format!("{head}{out}").as_bytes());
                    std::thread::sleep(h);
                    let _ = w.write_all(last.as_bytes());
                }
                None => {
                    let _ = w.write_all(format!("{head}{out}{last}").as_bytes());
                }
            }
        })
    });
    url
}

struct Proxy(std::process::Child);
impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn proxy(upstream: &str, log: &std::path::Path, extra: &[&str]) -> (Proxy, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    drop(l);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(["proxy", "--upstream", upstream, "--listen", &addr, "--log"])
        .arg(log)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while TcpStream::connect(&addr).is_err() {
        assert!(t.elapsed() < Duration::from_secs(20), "proxy did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    (Proxy(child), format!("http://{addr}"))
}

fn conversation(openai: bool) -> String {
    let mut msgs =
        vec![json!({"role": "system", "content": "You are a careful agent. ".repeat(40)})];
    for i in 0..20 {
        msgs.push(
            json!({"role": "user", "content": format!("step {i}: {}", "details ".repeat(30))}),
        );
        msgs.push(
            json!({"role": "assistant", "content": format!("done {i} {}", "text ".repeat(30))}),
        );
    }
    let tools = json!([{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]);
    if openai {
        json!({"model": "m", "stream": true, "messages": msgs, "tools": tools}).to_string()
    } else {
        json!({"model": "m", "stream": true, "messages": msgs, "tools": tools, "options": {"temperature": 0.2}}).to_string()
    }
}

/// One request over a fresh connection; (time to the first body byte, time to the end).
fn request(base: &str, path: &str, body: &str) -> (Duration, Duration) {
    let hostport = base.trim_start_matches("http://");
    let t0 = Instant::now();
    let mut s = TcpStream::connect(hostport).unwrap();
    s.set_nodelay(true).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: {hostport}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
    }
    let mut first = [0u8; 1];
    r.read_exact(&mut first).unwrap();
    let t_first = t0.elapsed();
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert!(
        String::from_utf8_lossy(&rest).contains("done") || rest.windows(6).any(|w| w == b"[DONE]")
    );
    (t_first, t0.elapsed())
}

/// CPU time (ms) of process `pid` so far: all its threads, and its trajectory writer thread.
fn cpu_ms(pid: u32) -> (f64, f64) {
    let tick = 1e3 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    // utime and stime
    let of = |stat: &str| (stat_field(stat, 11) + stat_field(stat, 12)) * tick;
    let total = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(0.0, |s| of(&s));
    let mut writer = 0.0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.starts_with("lrab-proxy-reco") {
            writer += std::fs::read_to_string(t.path().join("stat")).map_or(0.0, |s| of(&s));
        }
    }
    (total, writer)
}

/// Minor page faults of process `pid` so far (memory the kernel had to zero and map for it).
fn faults(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat_field(&stat, 7)
}

/// Field `i` of a `/proc/…/stat` line counted after the command name (which ends with the
/// last `)`: the state is field 0, minflt 7, utime 11, stime 12); 0 when absent.
fn stat_field(stat: &str, i: usize) -> f64 {
    let rest = stat.rsplit_once(')').map_or("", |x| x.1);
    rest.split_whitespace()
        .nth(i)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0.0)
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn series(base: &str, path: &str, body: &str) -> Vec<f64> {
    for _ in 0..20 {
        request(base, path, body);
    }
    (0..N)
        .map(|_| request(base, path, body).1.as_secs_f64() * 1e3)
        .collect()
}

fn main() {
    let d = tempfile::tempdir().unwrap();
    let up = fake(None);
    let native = conversation(false);
    let openai = conversation(true);
    let mut direct = series(&up, "/api/chat", &native);
    let (d50, d99) = (pct(&mut direct, 0.5), pct(&mut direct, 0.99));
    println!("direct to the fake backend   p50 {d50:.3} ms  p99 {d99:.3} ms  ({N} requests, {} B bodies)", native.len());
    for (label, extra, path, body) in [
        (
            "record-only, /api/chat",
            vec!["--record-only"],
            "/api/chat",
            &native,
        ),
        (
            "normalizing, /v1 → native",
            vec![],
            "/v1/chat/completions",
            &openai,
        ),
    ] {
        let log = d.path().join(format!("{}.jsonl", label.len()));
        let (_p, url) = proxy(&up, &log, &extra);
        let mut v = series(&url, path, body);
        let (p50, p99) = (pct(&mut v, 0.5), pct(&mut v, 0.99));
        // the last record follows the last answer
        let lines = || std::fs::read_to_string(&log).map_or(0, |s| s.lines().count());
        let t = Instant::now();
        while lines() < N + 20 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(lines(), N + 20, "one trajectory line per request");
        println!(
            "through the proxy ({label:<26}) p50 {p50:.3} ms  p99 {p99:.3} ms  added p50 {:.3} ms",
            p50 - d50
        );
    }
    // Streaming: the first line must arrive long before the held last one.
    let held = fake(Some(Duration::from_millis(300)));
    let log = d.path().join("stream.jsonl");
    let (_p, url) = proxy(&held, &log, &["--record-only"]);
    let mut firsts = Vec::new();
    let mut ends = Vec::new();
    for _ in 0..5 {
        let (f, e) = request(&url, "/api/chat", &native);
        firsts.push(f.as_secs_f64() * 1e3);
        ends.push(e.as_secs_f64() * 1e3);
    }
    let (f50, e50) = (pct(&mut firsts, 0.5), pct(&mut ends, 0.5));
    println!(
        "streaming through the proxy (last line held 300 ms): first byte p50 {f50:.1} ms, end p50 {e50:.1} ms"
    );
    assert!(
        f50 < 150.0,
        "the reply was buffered: first byte after {f50:.1} ms"
    );
    at_load_16(&d, &up, &native, &openai);
}

/// One proxied path: label, upstream, proxy flags, path and body, and the path and body of
/// the same request sent straight to that upstream.
type Case<'a> = (
    &'a str,
    &'a str,
    Vec<&'a str>,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
);

/// Added latency at load 16: each proxied path against its backend reached straight at the
/// same load just before (p50 and p99 of each, and their differences; measuring the straight
/// requests next to the proxied ones keeps a drift of the machine's load out of the
/// difference).
fn at_load_16(d: &tempfile::TempDir, up: &str, native: &str, openai: &str) {
    const CLIENTS: usize = 16;
    const M: usize = 1600;
    let oa = fake_openai();
    // straight to the OpenAI fake: the same conversation, as the proxy sends it there (a
    // client would send its body anyway; until 2026-12-06 this was a one-message body, which
    // counted the conversation's transfer and parse by the fake as the proxy's)
    let mut oa_body: serde_json::Value = serde_json::from_str(openai).unwrap();
    oa_body["stream_options"] = json!({"include_usage": true});
    let oa_body = oa_body.to_string();
    let (native_path, oa_path) = ("/api/chat", "/v1/chat/completions");
    let cases: [Case; 3] = [
        (
            "record-only, /api/chat",
            up,
            vec!["--record-only"],
            native_path,
            native,
            native_path,
            native,
        ),
        (
            "normalizing, /v1 → native",
            up,
            vec![],
            oa_path,
            openai,
            native_path,
            native,
        ),
        (
            "translated, native → OpenAI",
            &oa,
            vec!["--upstream-api", "openai"],
            native_path,
            native,
            oa_path,
            &oa_body,
        ),
    ];
    for (label, upstream, extra, path, body, s_path, s_body) in cases {
        let mut straight = loaded(upstream, s_path, s_body, CLIENTS, M);
        let (b50, b99) = (pct(&mut straight, 0.5), pct(&mut straight, 0.99));
        let log = d.path().join(format!("load-{}.jsonl", label.len()));
        let (p, url) = proxy(upstream, &log, &extra);
        burst(&url, path, body, CLIENTS, M / 4);
        let (before, f0) = (cpu_ms(p.0.id()), faults(p.0.id()));
        let mut v = burst(&url, path, body, CLIENTS, M);
        let (after, f1) = (cpu_ms(p.0.id()), faults(p.0.id()));
        let (p50, p99) = (pct(&mut v, 0.5), pct(&mut v, 0.99));
        println!(
            "load {CLIENTS}, {label:<28} straight p50 {b50:.3} ms p99 {b99:.3} ms; through the proxy p50 {p50:.3} ms p99 {p99:.3} ms; added p50 {:.3} ms  added p99 {:.3} ms",
            p50 - b50,
            p99 - b99
        );
        // the proxy's own CPU per request, warm (all threads, and the trajectory writer's
        // share), and the pages it faulted in per request
        let n = M as f64;
        println!(
            "    proxy CPU per request {:.0} µs (trajectory writer {:.0} µs), {:.2} page faults",
            (after.0 - before.0) * 1e3 / n,
            (after.1 - before.1) * 1e3 / n,
            (f1 - f0) / n
        );
    }
}
