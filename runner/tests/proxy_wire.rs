//! The normalizing proxy on the wire: a fake upstream records the exact bodies it receives;
//! `lrab proxy` sits between it and a client.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Seen = Arc<Mutex<Vec<(String, serde_json::Value)>>>;

/// Serves `n` connections: records (path, JSON body); answers /api/chat with two NDJSON lines
/// 400 ms apart (so streaming can be observed) and /api/tags with a model list.
fn fake_upstream(n: usize) -> (String, Seen) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for _ in 0..n {
            let Ok((mut c, _)) = l.accept() else { return };
            let lrab_util::RawRequest { path, body, .. } =
                lrab_util::read_http_request(&c).unwrap();
            let v = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            s2.lock().unwrap().push((path.clone(), v));
            if path == "/api/chat" {
                c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\nconnection: close\r\n\r\n").unwrap();
                c.write_all(b"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},\"done\":false}\n").unwrap();
                c.flush().unwrap();
                std::thread::sleep(Duration::from_millis(400));
                c.write_all(b"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":11,\"eval_count\":3}\n").unwrap();
            } else {
                let b = b"{\"models\":[{\"name\":\"m:latest\"}]}";
                c.write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", b.len()).as_bytes()).unwrap();
                c.write_all(b).unwrap();
            }
        }
    });
    (url, seen)
}

struct Proxy(std::process::Child);
impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_proxy(upstream: &str, log: &std::path::Path) -> (Proxy, String) {
    start_proxy_with(upstream, log, &[])
}

fn start_proxy_with(upstream: &str, log: &std::path::Path, extra: &[&str]) -> (Proxy, String) {
    let mut c = common::proxy_command(upstream, log);
    c.args(["--num-ctx", "8192"]).args(extra);
    let (child, url) = common::listening(c);
    (Proxy(child), url)
}

#[test]
fn native_and_v1_requests_are_normalized_on_the_wire() {
    let (up, seen) = fake_upstream(3);
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("proxy.jsonl");
    let (_p, url) = start_proxy(&up, &log);

    // 1. Native chat: sampling forced, other options kept, stream passed through as it comes.
    let t0 = Instant::now();
    let resp = ureq::post(&format!("{url}/api/chat"))
        .send_json(serde_json::json!({"model": "m", "think": true, "messages": [{"role": "user", "content": "hi"}],
            "options": {"temperature": 0.9, "top_p": 0.5}}))
        .unwrap();
    let mut r = BufReader::new(resp.into_reader());
    let mut first = String::new();
    r.read_line(&mut first).unwrap();
    let first_at = t0.elapsed();
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    let all_at = t0.elapsed();
    assert!(first.contains("\"hello\""), "{first}");
    assert!(rest.contains("\"done\":true"));
    assert!(
        all_at - first_at >= Duration::from_millis(300),
        "first line came before the rest: streaming"
    );
    {
        let s = seen.lock().unwrap();
        let (path, body) = &s[0];
        assert_eq!(path, "/api/chat");
        assert_eq!(body["options"]["temperature"], 0);
        assert_eq!(body["options"]["num_ctx"], 8192);
        assert_eq!(body["options"]["top_p"], 0.5);
        assert_eq!(body["think"], false);
    }

    // 2. OpenAI chat: rewritten onto /api/chat (the only way to pin num_ctx), answered as SSE.
    let resp = ureq::post(&format!("{url}/v1/chat/completions"))
        .send_json(serde_json::json!({"model": "m", "stream": true, "temperature": 1.0, "reasoning_effort": "high",
            "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "hi"}]}))
        .unwrap();
    assert_eq!(resp.content_type(), "text/event-stream");
    let sse = resp.into_string().unwrap();
    assert!(sse.contains("\"content\":\"hello\""), "{sse}");
    assert!(sse.contains("\"prompt_tokens\":11"), "{sse}");
    assert!(sse.ends_with("data: [DONE]\n\n"), "{sse}");
    {
        let s = seen.lock().unwrap();
        let (path, body) = &s[1];
        assert_eq!(path, "/api/chat");
        assert_eq!(body["options"]["temperature"], 0);
        assert_eq!(body["options"]["num_ctx"], 8192);
        assert_eq!(body["think"], false);
        assert_eq!(body["stream"], true);
    }

    // 3. Other paths pass through untouched.
    let tags: serde_json::Value = ureq::get(&format!("{url}/api/tags"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(tags["models"][0]["name"], "m:latest");

    // Token log: one line per chat request.
    let logged = common::complete_records(&log, 2, Duration::from_secs(20));
    assert_eq!(logged.len(), 2);
    for l in &logged {
        assert_eq!(l["prompt_tokens"], 11);
        assert_eq!(l["completion_tokens"], 3);
    }
    assert_eq!(logged[1]["rewritten_to_native"], true);
}

#[test]
fn responses_requests_are_rewritten_onto_native_chat_and_streamed_as_events() {
    let (up, seen) = fake_upstream(1);
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("proxy.jsonl");
    let (_p, url) = start_proxy(&up, &log);

    // codex's shape: developer + user input items, function tools, no temperature.
    let t0 = Instant::now();
    let resp = ureq::post(&format!("{url}/v1/responses"))
        .send_json(serde_json::json!({"model": "m", "stream": true, "store": false,
            "reasoning": {"summary": "auto"}, "tool_choice": "auto",
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
            ],
            "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}]}))
        .unwrap();
    assert_eq!(resp.content_type(), "text/event-stream");
    let mut r = BufReader::new(resp.into_reader());
    let mut head = String::new();
    while !head.contains("\"delta\":\"hello\"") {
        assert_ne!(r.read_line(&mut head).unwrap(), 0, "{head}");
    }
    let first_at = t0.elapsed();
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    assert!(
        t0.elapsed() - first_at >= Duration::from_millis(300),
        "the text delta came before the end: streaming"
    );
    assert!(head.starts_with("event: response.created\n"), "{head}");
    assert!(head.contains("\"delta\":\"hello\""), "{head}");
    let completed = rest
        .split("\n\n")
        .find(|b| b.starts_with("event: response.completed"))
        .unwrap_or_else(|| panic!("no response.completed in {rest}"));
    let v: serde_json::Value =
        serde_json::from_str(completed.split_once("data: ").unwrap().1).unwrap();
    assert_eq!(v["response"]["output"][0]["content"][0]["text"], "hello");
    assert_eq!(v["response"]["usage"]["input_tokens"], 11);
    assert_eq!(v["response"]["usage"]["output_tokens"], 3);
    {
        let s = seen.lock().unwrap();
        let (path, body) = &s[0];
        assert_eq!(path, "/api/chat");
        assert_eq!(body["options"]["temperature"], 0);
        assert_eq!(body["options"]["num_ctx"], 8192);
        assert_eq!(body["think"], false);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "hi");
        assert_eq!(body["tools"][0]["function"]["name"], "exec_command");
    }
    let l = &common::complete_records(&log, 1, Duration::from_secs(20))[0];
    assert_eq!(l["path"], "/v1/responses");
    assert_eq!(l["rewritten_to_native"], true);
    assert_eq!(l["prompt_tokens"], 11);
}

/// `--think` is pinned on every chat request: `on` for normalized native and rewritten OpenAI
/// requests alike, `model` leaves `think` out even of a record-only proxy's requests (which the
/// arm sent with one), `off` forwards a record-only request byte for byte.
#[test]
fn the_runs_thinking_is_pinned_on_the_wire() {
    let (up, seen) = fake_upstream(4);
    let d = tempfile::tempdir().unwrap();
    let chat = |url: &str, path: &str, body: serde_json::Value| {
        ureq::post(&format!("{url}{path}"))
            .send_json(body)
            .unwrap()
            .into_string()
            .unwrap()
    };
    let msgs = serde_json::json!([{"role": "user", "content": "hi"}]);
    let (_p, url) = start_proxy_with(&up, &d.path().join("a.jsonl"), &["--think", "on"]);
    chat(
        &url,
        "/api/chat",
        serde_json::json!({"model": "m", "think": false, "messages": msgs}),
    );
    chat(
        &url,
        "/v1/chat/completions",
        serde_json::json!({"model": "m", "reasoning_effort": "none", "messages": msgs}),
    );
    let (_q, url) = start_proxy_with(
        &up,
        &d.path().join("b.jsonl"),
        &["--think", "model", "--record-only"],
    );
    chat(
        &url,
        "/api/chat",
        serde_json::json!({"model": "m", "think": false, "messages": msgs}),
    );
    let (_r, url) = start_proxy_with(&up, &d.path().join("c.jsonl"), &["--record-only"]);
    let raw = r#"{"model":"m",  "think":true,"messages":[]}"#;
    ureq::post(&format!("{url}/api/chat"))
        .set("content-type", "application/json")
        .send_string(raw)
        .unwrap()
        .into_string()
        .unwrap();
    let s = seen.lock().unwrap();
    assert_eq!(s[0].1["think"], true);
    assert_eq!(s[1].1["think"], true);
    assert!(s[2].1.get("think").is_none(), "{:?}", s[2]);
    assert_eq!(
        s[2].1["options"],
        serde_json::Value::Null,
        "record-only keeps the arm's options"
    );
    assert_eq!(
        s[3].1["think"], true,
        "off: the arm's own request, untouched"
    );
}
