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

/// Each domain (by name) loaded once per test binary (loading the airline DB is the slow
/// part).
pub fn domain(name: &str) -> &'static Domain {
    static LOADED: Mutex<Vec<&'static Domain>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = loaded.iter().find(|d| d.kind.name() == name) {
        return d;
    }
    let kind = DomainKind::parse(name).expect("a domain");
    let d = Domain::load(&data_dir(), kind).expect("load domain");
    let d: &'static Domain = Box::leak(Box::new(d));
    loaded.push(d);
    d
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
    models_run_args(domain, agent, ("m", "u"), backend, tasks, out)
}

/// As [`llm_run_args`] with the agent and user models given (`(agent, user)`).
pub fn models_run_args(
    domain: &str,
    agent: &str,
    (model, user_model): (&str, &str),
    backend: &str,
    tasks: &str,
    out: &std::path::Path,
) -> Vec<String> {
    let who = [
        "--model",
        model,
        "--user-model",
        user_model,
        "--backend",
        backend,
    ];
    run_args(domain, agent, &who, tasks, out)
}

/// `run` arguments for the gold agent with the scripted user (no model) on mock `tasks`,
/// fixed clock, writing to `out`.
pub fn gold_run_args(tasks: &str, out: &std::path::Path) -> Vec<String> {
    run_args("mock", "gold", &["--user", "scripted"], tasks, out)
}

/// `run --domain <domain> --agent <agent> <who…> --tasks <tasks> --fixed-clock --out <out>`.
fn run_args(
    domain: &str,
    agent: &str,
    who: &[&str],
    tasks: &str,
    out: &std::path::Path,
) -> Vec<String> {
    let mut argv = vec!["run", "--domain", domain, "--agent", agent];
    argv.extend_from_slice(who);
    let out = out.to_str().expect("utf-8 path");
    argv.extend(["--tasks", tasks, "--fixed-clock", "--out", out]);
    argv.into_iter().map(String::from).collect()
}

/// [`run_cli`] with owned arguments.
pub fn run_cli_owned(data: &std::path::Path, args: &[String]) -> (anyhow::Result<()>, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_cli(data, &args)
}

/// A backend script for mock's `update_task_1`. User: asks, then stops. Agent: marks task_1
/// completed, then confirms.
pub fn complete_task_1(b: &Value) -> Value {
    let msgs = b["messages"].as_array().expect("messages");
    if is_user_request(b) {
        return if msgs.len() <= 2 {
            ollama_text("Please mark task_1 as completed.")
        } else {
            ollama_text("Thanks! ###STOP###")
        };
    }
    if msgs.last().expect("a message")["role"] == "tool" {
        ollama_text("task_1 is now completed.")
    } else {
        ollama_call(
            "update_task_status",
            serde_json::json!({"task_id": "task_1", "status": "completed"}),
        )
    }
}
