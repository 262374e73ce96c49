//! Test helpers: a scripted agent and a tiny HTTP server (std TcpListener on 127.0.0.1:0) that
//! replays scripted backend replies.
#![allow(dead_code)]

use lrab_harness::backend::{RetryPolicy, ScriptedModel};
use lrab_harness::{Agent, AgentConfig, Reply};
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn config(dir: &Path, task: &str) -> AgentConfig {
    let mut c = AgentConfig::new(dir, task);
    c.retry = RetryPolicy {
        base_ms: 0,
        cap_ms: 0,
        max_attempts: 3,
    };
    c.test_timeout_s = 60;
    c
}

pub fn agent_in(dir: &Path, task: &str, replies: Vec<Reply>) -> Agent<ScriptedModel> {
    let mut a = Agent::new(config(dir, task), ScriptedModel::replies(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

/// Contents of the last harness message the model saw on call `i`.
/// An agent whose model reads forty ~1 KB part files one per turn in a `num_ctx` window: the
/// history fills the window and the context mechanism has to prune (and maybe compact).
pub fn part_reader(dir: &Path, num_ctx: u64) -> Agent<ScriptedModel> {
    let mut a = part_reader_unstarted(dir, num_ctx);
    for _ in 0..40 {
        a.step();
    }
    a
}

/// [`part_reader`] before its first turn.
pub fn part_reader_unstarted(dir: &Path, num_ctx: u64) -> Agent<ScriptedModel> {
    for i in 0..40 {
        std::fs::write(
            dir.join(format!("part{i:02}.txt")),
            format!("part {i}\n{}", "lorem ipsum dolor sit amet ".repeat(40)),
        )
        .unwrap();
    }
    let mut cfg = config(dir, "Read every part file and write summary.md.");
    cfg.num_ctx = num_ctx;
    let replies: Vec<Reply> = (0..40)
        .map(|i| {
            Reply::call(
                "read_file",
                serde_json::json!({"path": format!("part{i:02}.txt")}),
            )
        })
        .collect();
    let mut a = Agent::new(cfg, ScriptedModel::replies(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

/// The texts the harness injected into the conversation (its nudges), in order.
pub fn nudges(a: &Agent<ScriptedModel>) -> Vec<&str> {
    a.state
        .messages
        .iter()
        .filter(|m| m.injected)
        .map(|m| m.content.as_str())
        .collect()
}

pub fn seen_text(a: &Agent<ScriptedModel>, i: usize) -> String {
    a.model.seen[i]
        .messages
        .iter()
        .rev()
        .take(3)
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The state folder of a run in `workdir` started without `--state-dir` (the standalone
/// default beside the workdir).
pub fn state_of(workdir: &Path) -> std::path::PathBuf {
    lrab_records::layout::default_state_dir(&workdir.canonicalize().unwrap()).unwrap()
}

/// That default state folder, opened (for tests that build their own shell executor).
pub fn open_state(workdir: &Path) -> lrab_harness::StateDir {
    lrab_harness::StateDir::open(&state_of(workdir), workdir).unwrap()
}

pub fn events(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(state_of(dir).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn mech_count(dir: &Path, name: &str, action: &str) -> usize {
    events(dir)
        .iter()
        .filter(|e| e["kind"] == "mechanism" && e["name"] == name && e["action"] == action)
        .count()
}

/// One scripted HTTP response: status, content type, body chunks (sent with chunked encoding,
/// flushed one by one, like a streaming server); with `cut`, only that many body bytes are
/// sent and the connection drops (a broken stream).
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub chunks: Vec<String>,
    pub cut: Option<usize>,
}

impl Resp {
    pub fn json(status: u16, body: &str) -> Self {
        Resp {
            status,
            content_type: "application/json; charset=utf-8".into(),
            chunks: vec![body.to_string()],
            cut: None,
        }
    }
    pub fn ndjson(lines: Vec<String>) -> Self {
        Resp {
            status: 200,
            content_type: "application/x-ndjson".into(),
            chunks: lines.into_iter().map(|l| l + "\n").collect(),
            cut: None,
        }
    }
}

pub type Handler = Box<dyn FnMut(&str, &str) -> Resp + Send>;

pub struct FakeServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<(String, String)>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Serve `handler(path, body)` on 127.0.0.1:0 until dropped (at most 120 s).
pub fn serve(mut handler: Handler) -> FakeServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let (req2, stop2) = (requests.clone(), stop.clone());
    std::thread::spawn(move || {
        let start = Instant::now();
        while !stop2.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(120) {
            let (stream, _) = match listener.accept() {
                Ok(s) => s,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
            };
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let Ok(req) = lrab_util::read_http_request(&stream) else {
                continue;
            };
            let path = req.path;
            let body = String::from_utf8_lossy(&req.body).into_owned();
            req2.lock().unwrap().push((path.clone(), body.clone()));
            let resp = handler(&path, &body);
            let mut w = stream;
            let _ = write!(
                w,
                "HTTP/1.1 {} X\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
                resp.status, resp.content_type
            );
            let mut left = resp.cut.unwrap_or(usize::MAX);
            for c in &resp.chunks {
                let c = &c.as_bytes()[..c.len().min(left)];
                left -= c.len();
                if c.is_empty() {
                    break;
                }
                let _ = write!(w, "{:x}\r\n", c.len());
                let _ = w.write_all(c);
                let _ = w.write_all(b"\r\n");
                let _ = w.flush();
            }
            if resp.cut.is_none() {
                let _ = write!(w, "0\r\n\r\n");
            }
            let _ = w.flush();
            let _ = w.shutdown(std::net::Shutdown::Both);
        }
    });
    FakeServer {
        url,
        requests,
        stop,
    }
}

/// An Ollama NDJSON stream for one reply: content split in two chunks, tool calls in their own
/// chunk, then the done line with metrics.
pub fn ollama_stream(
    content: &str,
    calls: &[(&str, serde_json::Value)],
    prompt_tokens: u64,
) -> Vec<String> {
    let half = content.len() / 2;
    let half = (0..=half)
        .rev()
        .find(|i| content.is_char_boundary(*i))
        .unwrap_or(0);
    let mut v = vec![
        serde_json::json!({"model":"m","created_at":"2026-11-29T00:00:00Z","message":{"role":"assistant","content":&content[..half]},"done":false}).to_string(),
        serde_json::json!({"model":"m","created_at":"2026-11-29T00:00:00Z","message":{"role":"assistant","content":&content[half..]},"done":false}).to_string(),
    ];
    if !calls.is_empty() {
        let tc: Vec<_> = calls
            .iter()
            .enumerate()
            .map(|(i, (n, a))| serde_json::json!({"id": format!("call_{i:08}"), "function": {"index": i, "name": n, "arguments": a}}))
            .collect();
        v.push(serde_json::json!({"model":"m","created_at":"2026-11-29T00:00:00Z","message":{"role":"assistant","content":"","tool_calls":tc},"done":false}).to_string());
    }
    v.push(serde_json::json!({"model":"m","created_at":"2026-11-29T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1000,"prompt_eval_count":prompt_tokens,"eval_count":12}).to_string());
    v
}

/// A fake Ollama whose model has `caps` and answers each `/api/chat` with the next of
/// `replies` (an error once they are used up).
pub fn ollama_server(caps: &'static [&'static str], mut replies: Vec<Vec<String>>) -> FakeServer {
    serve(Box::new(move |path, _body| match path {
        "/api/show" => Resp::json(200, &show_body(caps)),
        "/api/chat" => {
            if replies.is_empty() {
                Resp::json(500, r#"{"error":"script exhausted"}"#)
            } else {
                Resp::ndjson(replies.remove(0))
            }
        }
        _ => Resp::json(404, r#"{"error":"not found"}"#),
    }))
}

/// The bodies of the `/api/chat` requests `s` received, in order.
pub fn chat_bodies(s: &FakeServer) -> Vec<serde_json::Value> {
    s.requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p == "/api/chat")
        .map(|(_, b)| serde_json::from_str(b).unwrap())
        .collect()
}

pub fn show_body(caps: &[&str]) -> String {
    serde_json::json!({"details":{"family":"test"},"model_info":{"general.architecture":"llama","llama.context_length":16384},"capabilities":caps}).to_string()
}

/// An OpenAI-compatible SSE stream of `chunks`, ended by `[DONE]`.
pub fn sse(chunks: Vec<serde_json::Value>) -> Resp {
    let mut v: Vec<String> = chunks
        .into_iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect();
    v.push("data: [DONE]\n\n".into());
    Resp {
        status: 200,
        content_type: "text/event-stream".into(),
        chunks: v,
        cut: None,
    }
}

/// One `chat.completion.chunk` with `delta`.
pub fn chunk(delta: serde_json::Value, finish: Option<&str>) -> serde_json::Value {
    serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "system_fingerprint": "fp", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}
