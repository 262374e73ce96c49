//! A backend that speaks only the OpenAI API (a fake made here: `/v1/models`,
//! `/v1/chat/completions` in JSON and SSE, 404 on `/api/*`), used through the runner's
//! translation: our harness (the real binary, an Ollama-native arm) runs a real cell against
//! it and the trajectory and records come out as for an Ollama; the API key reaches the server
//! and no file; a streamed answer is relayed as it arrives; bad backends are refused before
//! the first cell, naming what is wrong and never the key.

mod common;
#[path = "common/openai_fake.rs"]
mod openai_fake;

use common::{lrab, text};
use openai_fake::Fault;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::{Duration, Instant};

const KEY: &str = "sk-lrab-test-5f1c0ffee0ddba11";

/// Every file below `dir` that contains `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                if b.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    out.push(p.display().to_string());
                }
            }
        }
    }
    out
}

#[test]
fn harness_runs_a_cell_on_an_openai_only_backend() {
    let fake = openai_fake::start(Some(KEY), &["fake-coder"], Fault::None, Duration::ZERO);
    let d = tempfile::tempdir().unwrap();
    let o = common::harness_cell(&fake.url, "oa", d.path(), KEY)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let run = d.path().join("oa");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["backends"][0]["kind"], "openai", "{m}");
    assert_eq!(m["backends"][0]["url"], fake.url.as_str());
    assert_eq!(m["backend_url"], fake.url.as_str());
    assert_eq!(m["matrix"]["think"], "off");
    assert_eq!(m["simulated"], false);
    let cells = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let rows = common::csv_lines(&cells);
    assert_eq!(rows.len(), 2, "{cells}");
    assert_eq!(rows[1][common::col("backend")], fake.url);
    assert_eq!(rows[1][common::col("backend_kind")], "openai");
    assert_eq!(rows[1][common::col("think")], "off");
    let attempts = std::fs::read_to_string(run.join("attempts.jsonl")).unwrap();
    let a: serde_json::Value = serde_json::from_str(attempts.lines().next().unwrap()).unwrap();
    assert_eq!(
        (a["backend"].as_str(), a["backend_kind"].as_str()),
        (Some(fake.url.as_str()), Some("openai"))
    );
    assert_eq!(a["think"], "off");
    // the trajectory is the Ollama one: calls, results, counts with the cached tokens
    let dir = run.join(&rows[1][common::col("attempt_dir")]);
    let t = lrab_records::read_trajectory(&dir.join("proxy.jsonl")).unwrap();
    assert!(t.len() >= 2, "{t:?}");
    let first = t[0].reply.as_ref().expect("a reply");
    assert_eq!(first.tool_calls[0].name, "write_file", "{t:?}");
    assert_eq!(first.tool_calls[0].arguments["path"], "notes.md");
    assert_eq!(first.done_reason.as_deref(), Some("stop"));
    assert!(t[0].prompt_tokens.unwrap() >= 100 && t[0].completion_tokens == Some(7));
    assert!(t[0].cached_prompt_tokens.is_some() && t[0].uncached_prompt_tokens.is_some());
    assert!(t[1]
        .messages
        .iter()
        .any(|m| m.role == "tool" && m.tool_name.as_deref() == Some("write_file")));
    // the fake saw OpenAI requests: ids tie each result to its call, thinking off the way a
    // local server's chat template takes it, no Ollama options
    let seen = fake.seen.lock().unwrap().clone();
    assert!(seen.len() >= 2);
    let with_result = seen
        .iter()
        .find(|r| {
            r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "tool")
        })
        .expect("a request with a tool result");
    let msgs = with_result["messages"].as_array().unwrap();
    let call_id = msgs
        .iter()
        .find_map(|m| m["tool_calls"][0]["id"].as_str())
        .unwrap();
    let result = msgs.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["tool_call_id"], call_id);
    assert_eq!(seen[0]["chat_template_kwargs"]["enable_thinking"], false);
    assert!(seen[0].get("options").is_none() && seen[0]["tools"].is_array());
    // the key reached the server (it refuses others) and no file of the run
    assert!(
        files_containing(&run, KEY).is_empty(),
        "{:?}",
        files_containing(&run, KEY)
    );
    assert!(!out.contains(KEY));
}

fn run_expecting_error(url: &str, extra: &[&str], key: Option<&str>) -> String {
    run_model_expecting_error(url, "fake-coder", extra, key)
}

fn run_model_expecting_error(url: &str, model: &str, extra: &[&str], key: Option<&str>) -> String {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    common::sh_arm(&arms, "noop", "true");
    let mut cmd = lrab();
    cmd.args([
        "run", "--arms", "noop", "--models", model, "--tasks", "WF-01",
    ])
    .args(["--backend", url, "--no-progress", "--run-id", "bad"])
    .args(["--backend-wait-secs", "1"])
    .args(extra)
    .arg("--arms-dir")
    .arg(&arms)
    .arg("--out")
    .arg(d.path().join("out"));
    match key {
        Some(k) => cmd.env("OPENAI_API_KEY", k),
        None => cmd.env_remove("OPENAI_API_KEY"),
    };
    let o = cmd.output().unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(!d.path().join("out/bad/cells.csv").exists(), "{t}");
    t
}

#[test]
fn bad_openai_backends_are_refused_before_the_first_cell() {
    // a wrong key: named by its variable, never echoed (the server quotes it back)
    let fake = openai_fake::start(Some(KEY), &["fake-coder"], Fault::None, Duration::ZERO);
    let wrong = "sk-wrong-0123456789abcdef";
    let e = run_expecting_error(&fake.url, &[], Some(wrong));
    assert!(
        e.contains("refused the API key in $OPENAI_API_KEY") && e.contains("401"),
        "{e}"
    );
    assert!(!e.contains(wrong) && !e.contains("sk-wrong-012"), "{e}");
    let e = run_expecting_error(&fake.url, &[], None);
    assert!(
        e.contains("wants an API key") && e.contains("OPENAI_API_KEY"),
        "{e}"
    );
    let e = run_expecting_error(&fake.url, &["--backend-key-env", "MY_KEY"], Some(KEY));
    assert!(e.contains("environment variable MY_KEY"), "{e}");
    // a model the server does not serve
    let e = run_model_expecting_error(&fake.url, "nope", &[], Some(KEY));
    assert!(
        e.contains("unknown model(s) nope") && e.contains(&fake.url) && e.contains("fake-coder"),
        "{e}"
    );
    // a model list that is not JSON
    let bad = openai_fake::start(None, &["m"], Fault::BadModels, Duration::ZERO);
    let e = run_expecting_error(&bad.url, &["--backend-api", "openai"], None);
    assert!(e.contains("not with a model list"), "{e}");
    // nobody there
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let e = run_expecting_error(&dead, &["--backend-api", "openai"], None);
    assert!(e.contains("unreachable"), "{e}");
}

/// `lrab proxy --upstream-api openai` in front of `upstream`; returns its URL.
fn proxy(upstream: &str, log: &Path) -> (std::process::Child, String) {
    let mut c = common::proxy_command(upstream, log);
    c.args(["--upstream-api", "openai"])
        .env("OPENAI_API_KEY", KEY);
    common::listening(c)
}

/// POSTs a native chat request; returns the lines of the answer with the time each arrived.
fn native_chat(url: &str, stream: bool) -> (u16, Vec<(Duration, String)>) {
    let body = serde_json::json!({"model": "fake-coder", "stream": stream,
        "messages": [{"role": "user", "content": "say something"}]})
    .to_string();
    let addr = url.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    write!(c, "POST /api/chat HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    let t = Instant::now();
    let mut r = BufReader::new(c);
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut lines = Vec::new();
    let mut chunked = false;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap() == 0 || h.trim().is_empty() {
            break;
        }
        chunked |= h.to_ascii_lowercase().contains("chunked");
    }
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            break;
        }
        let l = l.trim();
        // chunk sizes are hex numbers alone on their line
        if l.is_empty() || (chunked && u64::from_str_radix(l, 16).is_ok()) {
            continue;
        }
        lines.push((t.elapsed(), l.to_string()));
    }
    (code, lines)
}

#[test]
fn streams_are_translated_as_they_arrive_and_cut_streams_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let fake = openai_fake::start(
        Some(KEY),
        &["fake-coder"],
        Fault::None,
        Duration::from_millis(300),
    );
    let (mut p, url) = proxy(&fake.url, &d.path().join("ok.jsonl"));
    let (code, lines) = native_chat(&url, true);
    assert_eq!(code, 200, "{lines:?}");
    let objs: Vec<serde_json::Value> = lines
        .iter()
        .map(|(_, l)| serde_json::from_str(l).unwrap())
        .collect();
    let text: String = objs
        .iter()
        .filter_map(|o| o["message"]["content"].as_str())
        .collect();
    assert_eq!(text, "All done.");
    let last = objs.last().unwrap();
    assert_eq!(
        (last["done"].as_bool(), last["done_reason"].as_str()),
        (Some(true), Some("stop"))
    );
    assert_eq!(last["prompt_eval_cached_count"], 10);
    // the first words left before the server had sent the rest (≥ 4 × 300 ms later)
    let first_text = lines
        .iter()
        .position(|(_, l)| l.contains("\"All "))
        .unwrap();
    assert!(
        lines[first_text].0 + Duration::from_millis(500) < lines.last().unwrap().0,
        "{lines:?}"
    );
    // a whole answer, and the Ollama endpoints from /v1/models
    let (code, lines) = native_chat(&url, false);
    assert_eq!(code, 200);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let tags: serde_json::Value = ureq::get(&format!("{url}/api/tags"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(tags["models"][0]["name"], "fake-coder");
    let show: serde_json::Value = ureq::post(&format!("{url}/api/show"))
        .send_json(serde_json::json!({"model": "fake-coder"}))
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(show["model_info"]["openai.context_length"], 32768);
    let _ = p.kill();
    let _ = p.wait();

    for (fault, says) in [
        (Fault::CutStream, "ended before the reply was complete"),
        (Fault::BadJson, "not JSON"),
    ] {
        let fake = openai_fake::start(Some(KEY), &["fake-coder"], fault, Duration::ZERO);
        let log = d.path().join(format!("{fault:?}.jsonl"));
        let (mut p, url) = proxy(&fake.url, &log);
        let stream = fault == Fault::CutStream;
        let (_, lines) = native_chat(&url, stream);
        let last = &lines.last().unwrap().1;
        assert!(
            last.contains("\"error\"") && last.contains(says),
            "{fault:?}: {lines:?}"
        );
        let rec = common::complete_records(&log, 1, Duration::from_secs(10));
        assert!(rec[0]["error"].as_str().unwrap().contains(says), "{rec:?}");
        let _ = p.kill();
        let _ = p.wait();
    }
    assert!(files_containing(d.path(), KEY).is_empty());
}

/// A small agent (python, stdlib only) speaking Ollama's `/api/chat` without streaming: it
/// offers write_file, writes what the model asks for, and stops at the first text reply.
const AGENT: &str = r#"import json, os, sys, urllib.request
prompt, model = open(sys.argv[1]).read(), sys.argv[2]
url = os.environ["OLLAMA_HOST"].rstrip("/") + "/api/chat"
tools = [{"type": "function", "function": {"name": "write_file", "description": "write a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                         "required": ["path", "content"]}}}]
msgs = [{"role": "user", "content": prompt}]
for turn in range(4):
    body = json.dumps({"model": model, "stream": False, "messages": msgs, "tools": tools}).encode()
    req = urllib.request.Request(url, body, {"content-type": "application/json"})
    m = json.loads(urllib.request.urlopen(req, timeout=30).read())["message"]
    msgs.append(m)
    calls = m.get("tool_calls") or []
    for c in calls:
        a = c["function"].get("arguments") or {}
        open(os.path.basename(a.get("path", "out.txt")), "w").write(a.get("content", ""))
        msgs.append({"role": "tool", "tool_name": "write_file", "content": "ok"})
    if not calls:
        break
"#;

/// `--backend` mixes kinds: an Ollama-speaking server (here `lrab proxy` presenting a fake
/// OpenAI server as Ollama) and an OpenAI-only one; cells spread over both and each row and
/// attempt line names its backend and kind.
#[test]
fn a_list_of_backends_mixes_kinds() {
    let d = tempfile::tempdir().unwrap();
    let first = openai_fake::start(None, &["fake-coder"], Fault::None, Duration::ZERO);
    let second = openai_fake::start(None, &["fake-coder"], Fault::None, Duration::ZERO);
    let (mut p, ollama_like) = proxy(&first.url, &d.path().join("gw.jsonl"));
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    common::script_arm(
        &arms,
        "agent",
        "python3",
        "py",
        AGENT,
        "print(1)",
        "proxy = true\n",
    );
    let list = format!("{ollama_like},{}", second.url);
    let o = lrab()
        .args(["run", "--arms", "agent", "--models", "fake-coder"])
        .args(["--tasks", "WF-01,WF-02,WF-03,WF-04", "--jobs", "2"])
        .args(["--backend", &list, "--no-progress", "--run-id", "mix"])
        .args([
            "--retries",
            "0",
            "--quiet-stable-ms",
            "200",
            "--quiet-max-ms",
            "1000",
        ])
        .arg("--arms-dir")
        .arg(&arms)
        .arg("--out")
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    let _ = p.kill();
    let _ = p.wait();
    assert!(o.status.success(), "{}", text(&o));
    let run = d.path().join("out/mix");
    let cells = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let rows = common::csv_lines(&cells);
    let kinds: std::collections::BTreeSet<(String, String)> = rows[1..]
        .iter()
        .map(|r| {
            (
                r[common::col("backend")].clone(),
                r[common::col("backend_kind")].clone(),
            )
        })
        .collect();
    let want: std::collections::BTreeSet<(String, String)> = [
        (ollama_like.clone(), "ollama".to_string()),
        (second.url.clone(), "openai".to_string()),
    ]
    .into();
    assert_eq!(kinds, want, "{cells}");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["backends"][0]["kind"], "ollama");
    assert_eq!(m["backends"][1]["kind"], "openai");
    // both servers were asked for chats, and each answer's tool call reached a file
    assert!(!first.seen.lock().unwrap().is_empty() && !second.seen.lock().unwrap().is_empty());
}
