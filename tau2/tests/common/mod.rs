#![allow(dead_code)]
use std::path::PathBuf;

/// The τ² data folder, or None after the suite's one test gate said why it is skipped
/// (`skipped: <file>: <why>`; a failure under `LRAB_REQUIRE_DATA`): `TAU2_DATA_DIR` when set,
/// else the data lookup (`LRAB_DATA` or `../shared/data`, then the cache `lrab data fetch` fills).
/// Every test that reads the data starts with it.
pub fn data() -> Option<PathBuf> {
    match std::env::var_os("TAU2_DATA_DIR") {
        Some(p) => {
            Some(lrab_tau2::resolve_data_dir(Some(&PathBuf::from(p))).expect("TAU2_DATA_DIR"))
        }
        None => lrab_data::test_folder("tau2"),
    }
}

/// The data folder of a test that has passed [`data`].
pub fn data_dir() -> PathBuf {
    data().expect("a test reading the tau2 data starts with `common::data()`")
}

use serde_json::Value;
use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

pub type Log = Arc<Mutex<Vec<(String, Value)>>>;

/// A tiny HTTP server on 127.0.0.1:0 answering JSON POSTs with `reply(path, body)`.
/// Serves at most `max_requests` requests, then its thread ends.
pub fn spawn_server<F>(max_requests: usize, reply: F) -> (String, Log)
where
    F: Fn(&str, &Value) -> (u16, Value) + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        // the simulator check's requests (below) do not count against `max_requests`
        let mut served = 0;
        for stream in listener.incoming() {
            if served >= max_requests {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            let lrab_util::RawRequest { method, path, body } =
                lrab_util::read_http_request(&stream).unwrap();
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            // a client asking what the backend is (the simulator check) gets a plain Ollama's
            // answers; these requests are not logged
            let (status, out) = match (method == "GET", path.as_str()) {
                (true, "/api/version") => (200, serde_json::json!({"version": "0.30.0"})),
                (true, "/api/tags") => (200, serde_json::json!({"models": []})),
                _ => {
                    served += 1;
                    let (status, out) = reply(&path, &v);
                    log2.lock().unwrap().push((path, v));
                    (status, out)
                }
            };
            let text = out.to_string();
            let resp = format!("HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}", text.len());
            stream.write_all(resp.as_bytes()).unwrap();
        }
    });
    (url, log)
}

/// Ollama-shaped reply with text.
pub fn ollama_text(text: &str) -> Value {
    serde_json::json!({"model": "m", "message": {"role": "assistant", "content": text}, "done": true})
}

/// Ollama-shaped reply with one tool call.
pub fn ollama_call(name: &str, args: Value) -> Value {
    serde_json::json!({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]}, "done": true})
}

/// Whether a request body is from the user simulator (its system prompt has a scenario).
pub fn is_user_request(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("<scenario>"))
}

use lrab_tau2::{Domain, DomainKind};
use std::sync::OnceLock;

/// Each domain loaded once per test binary (loading the airline DB is the slow part).
pub fn domain(kind: DomainKind) -> &'static Domain {
    static A: OnceLock<Domain> = OnceLock::new();
    static R: OnceLock<Domain> = OnceLock::new();
    static M: OnceLock<Domain> = OnceLock::new();
    static T: OnceLock<Domain> = OnceLock::new();
    let cell = match kind {
        DomainKind::Airline => &A,
        DomainKind::Retail => &R,
        DomainKind::Mock => &M,
        DomainKind::Telecom => &T,
    };
    cell.get_or_init(|| Domain::load(&data_dir(), kind).expect("load domain"))
}

/// The `tau2` command line, as the binary parses it.
#[derive(clap::Parser)]
pub struct Cli {
    #[command(flatten)]
    pub args: lrab_tau2::Tau2Args,
}

/// Runs the command line `tau2 --tau2-data <data> <args…>` in this process: its result and
/// what it printed.
pub fn run_cli(data: &std::path::Path, args: &[&str]) -> (anyhow::Result<()>, String) {
    use clap::Parser;
    let mut argv = vec!["tau2", "--tau2-data", data.to_str().expect("utf-8 path")];
    argv.extend_from_slice(args);
    let c = Cli::try_parse_from(argv).expect("arguments parse");
    let mut out = Vec::new();
    let r = lrab_tau2::run_cli(&c.args, &mut out);
    (r, String::from_utf8(out).expect("utf-8 output"))
}

/// `run` arguments for an LLM agent arm talking to `backend` (agent model `m`, user model `u`,
/// fixed clock) on `tasks`, writing to `out`.
pub fn llm_run_args(
    domain: &str,
    agent: &str,
    backend: &str,
    tasks: &str,
    out: &std::path::Path,
) -> Vec<String> {
    [
        "run",
        "--domain",
        domain,
        "--agent",
        agent,
        "--model",
        "m",
        "--user-model",
        "u",
        "--backend",
        backend,
        "--tasks",
        tasks,
        "--fixed-clock",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]
    .map(String::from)
    .to_vec()
}
