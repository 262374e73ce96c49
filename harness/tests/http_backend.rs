//! The HTTP path end to end: a tiny in-test server replays scripted `/api/chat` NDJSON streams
//! and `/v1/chat/completions` SSE streams; the real backends, the agent and the binary talk to it.

mod common;

use common::*;
use lrab_harness::backend::{
    BackendError, Model, OllamaBackend, OllamaConfig, OpenAiBackend, OpenAiConfig,
};
use lrab_harness::{Agent, RunStatus};
use serde_json::{json, Value};
use std::fs;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASK: &str = "Write out.md containing the word hello.";

fn script() -> Vec<Vec<String>> {
    vec![
        ollama_stream(
            "",
            &[("write_file", json!({"path": "out.md", "content": "hello"}))],
            900,
        ),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 950),
        ollama_stream("Checked.", &[("finish", json!({"summary": "done"}))], 1000),
    ]
}

#[test]
fn ollama_native_streaming_end_to_end() {
    let server = ollama_server(&["completion", "tools", "thinking"], script());
    let d = tempfile::tempdir().unwrap();
    let mut cfg = OllamaConfig::new(&server.url, "test:2b");
    cfg.num_ctx = Some(8192);
    let backend = OllamaBackend::connect(cfg).unwrap();
    assert_eq!(backend.context_length(), Some(16384));
    let mut a = Agent::new(config(d.path(), TASK), backend).unwrap();
    let out = a.run();
    assert_eq!(out.status, RunStatus::Finished);
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
    assert_eq!(out.report.model_calls, 3);
    assert_eq!(out.report.prompt_tokens, 900 + 950 + 1000);
    assert_eq!(out.report.completion_tokens, 36);
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 3);
    let b = &bodies[0];
    assert_eq!(b["model"], "test:2b");
    assert_eq!(b["stream"], true);
    assert_eq!(
        b["think"], false,
        "thinking-capable model gets think:false at top level"
    );
    assert!(b["options"].get("think").is_none());
    assert_eq!(b["options"]["temperature"], 0.0);
    assert_eq!(b["options"]["num_ctx"], 8192);
    assert_eq!(b["options"]["num_predict"], 8192);
    assert!(b["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == "write_file"));
    // the tool result goes back with tool_name; the assistant call keeps its id
    let msgs = bodies[1]["messages"].as_array().unwrap();
    let tool = msgs.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["tool_name"], "write_file");
    let asst = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(asst["tool_calls"][0]["function"]["name"], "write_file");
    assert_eq!(asst["tool_calls"][0]["id"], "call_00000000");
    // server token counts are logged and calibrate the context check
    let ev = events(d.path());
    let calls: Vec<&Value> = ev.iter().filter(|e| e["kind"] == "model_call").collect();
    assert_eq!(calls[0]["prompt_tokens"], 900);
    assert_eq!(calls[0]["completion_tokens"], 12);
    assert!(a.state.context.ratio > 1.0);
}

#[test]
fn think_is_not_sent_to_models_without_the_capability() {
    let server = ollama_server(&["completion", "tools"], script());
    let d = tempfile::tempdir().unwrap();
    let backend = OllamaBackend::connect(OllamaConfig::new(&server.url, "m")).unwrap();
    let mut a = Agent::new(config(d.path(), TASK), backend).unwrap();
    a.step();
    assert!(chat_bodies(&server)[0].get("think").is_none());
}

#[test]
fn clear_errors_for_missing_model_missing_tools_and_unreachable() {
    let s = serve(Box::new(|_, _| {
        Resp::json(404, r#"{"error":"model 'nope' not found"}"#)
    }));
    assert!(matches!(
        OllamaBackend::connect(OllamaConfig::new(&s.url, "nope")),
        Err(BackendError::ModelNotFound(_))
    ));
    let s = ollama_server(&["completion"], vec![]);
    assert!(matches!(
        OllamaBackend::connect(OllamaConfig::new(&s.url, "m")),
        Err(BackendError::NoToolSupport(_))
    ));
    // a server that reports no capabilities, then refuses tools on the chat call
    let s = serve(Box::new(|p, _| match p {
        "/api/show" => Resp::json(200, "{}"),
        _ => Resp::json(
            400,
            r#"{"error":"registry.ollama.ai/library/m:latest does not support tools"}"#,
        ),
    }));
    let d = tempfile::tempdir().unwrap();
    let b = OllamaBackend::connect(OllamaConfig::new(&s.url, "m")).unwrap();
    let mut a = Agent::new(config(d.path(), TASK), b).unwrap();
    let out = a.run();
    assert!(
        matches!(out.backend_error, Some(BackendError::NoToolSupport(_))),
        "{:?}",
        out.backend_error
    );
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    assert!(matches!(
        OllamaBackend::connect(OllamaConfig::new(&format!("http://127.0.0.1:{port}"), "m")),
        Err(BackendError::Unreachable(_))
    ));
}

#[test]
fn error_line_mid_stream_is_retried() {
    let mut first = ollama_stream("partial", &[], 10);
    first.truncate(1);
    first.push(r#"{"error":"llama runner crashed"}"#.to_string());
    let mut replies = vec![first];
    replies.extend(script());
    let server = ollama_server(&["completion", "tools"], replies);
    let d = tempfile::tempdir().unwrap();
    let backend = OllamaBackend::connect(OllamaConfig::new(&server.url, "m")).unwrap();
    let mut a = Agent::new(config(d.path(), TASK), backend).unwrap();
    a.sleeper = Box::new(|_| {});
    assert_eq!(a.run().status, RunStatus::Finished);
    assert_eq!(mech_count(d.path(), "resilience", "backend_retry"), 1);
}

#[test]
fn openai_compatible_streaming_end_to_end() {
    let mut n = 0;
    let server = serve(Box::new(move |path, _| match path {
        "/v1/models" => Resp::json(
            200,
            r#"{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"library"}]}"#,
        ),
        "/v1/chat/completions" => {
            n += 1;
            match n {
                1 => sse(vec![
                    chunk(json!({"role": "assistant", "content": ""}), None),
                    chunk(
                        json!({"tool_calls": [{"index": 0, "id": "call_x", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"out"}}]}),
                        None,
                    ),
                    chunk(
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": ".md\", \"content\": \"hello\"}"}}]}),
                        None,
                    ),
                    chunk(json!({}), Some("tool_calls")),
                    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "system_fingerprint": "fp", "choices": [], "usage": {"prompt_tokens": 700, "completion_tokens": 9, "total_tokens": 709}}),
                ]),
                _ => sse(vec![
                    chunk(
                        json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function", "function": {"name": "finish", "arguments": "{\"summary\": \"ok\"}"}}]}),
                        None,
                    ),
                    chunk(json!({}), Some("tool_calls")),
                ]),
            }
        }
        _ => Resp::json(
            404,
            r#"{"error":{"message":"no","type":"not_found_error"}}"#,
        ),
    }));
    let d = tempfile::tempdir().unwrap();
    let backend =
        OpenAiBackend::connect(OpenAiConfig::new(&format!("{}/v1", server.url), "m")).unwrap();
    let mut a = Agent::new(config(d.path(), TASK), backend).unwrap();
    assert_eq!(a.run().status, RunStatus::Finished);
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
    let reqs = server.requests.lock().unwrap();
    let second: Value = serde_json::from_str(
        &reqs
            .iter()
            .filter(|(p, _)| p == "/v1/chat/completions")
            .nth(1)
            .unwrap()
            .1,
    )
    .unwrap();
    let tool = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool["tool_call_id"], "call_x");
    assert!(second["max_tokens"].as_u64().unwrap() > 0);
    let asst = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert!(asst["tool_calls"][0]["function"]["arguments"].is_string());
    let s = serve(Box::new(|_, _| {
        Resp::json(
            200,
            r#"{"object":"list","data":[{"id":"other","object":"model","created":1,"owned_by":"x"}]}"#,
        )
    }));
    assert!(matches!(
        OpenAiBackend::connect(OpenAiConfig::new(&s.url, "m")),
        Err(BackendError::ModelNotFound(_))
    ));
    // a llama-server with one model serves it under any name the client passes
    let s = serve(Box::new(|_, _| {
        Resp::json(
            200,
            r#"{"object":"list","data":[{"id":"Qwen3-4B-Q4_K_M.gguf","object":"model","created":1,"owned_by":"llamacpp","meta":{"n_ctx_train":262144}}]}"#,
        )
    }));
    assert!(OpenAiBackend::connect(OpenAiConfig::new(&s.url, "qwen3:4b")).is_ok());
}

// ---- the binary ----

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lrab-harness"))
}

fn run_bin(url: &str, prompt: &std::path::Path, workdir: &std::path::Path) -> std::process::Output {
    bin()
        .args(["run", "--model", "m", "--prompt-file"])
        .arg(prompt)
        .arg("--workdir")
        .arg(workdir)
        .args(["--backend-url", url])
        .env_remove("LRAB_ABLATION")
        .output()
        .unwrap()
}

#[test]
fn binary_runs_a_task_end_to_end() {
    let server = ollama_server(&["completion", "tools"], script());
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, TASK).unwrap();
    let out = run_bin(&server.url, &prompt, d.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("TASK COMPLETE"));
    assert!(stdout.contains("[lrab-harness] verification:"));
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
}

/// A model that only ever answers with text: the stall watch ends the run, which is the
/// harness's own decision and not a failure of the process (exit 0, like an arm that stops);
/// stderr and the report say it stalled.
#[test]
fn binary_a_stalled_run_exits_0_and_says_so() {
    let server = serve(Box::new(|path, _| match path {
        "/api/show" => Resp::json(200, &show_body(&["completion", "tools"])),
        "/api/chat" => Resp::ndjson(ollama_stream(
            "I have made a start. I will stop here.",
            &[],
            400,
        )),
        _ => Resp::json(404, "{}"),
    }));
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, TASK).unwrap();
    let out = run_bin(&server.url, &prompt, d.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("stopped unfinished") && err.contains("(stalled)"),
        "{err}"
    );
    let report: Value = serde_json::from_str(
        &fs::read_to_string(common::state_of(d.path()).join("report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["status"], "stalled");
    assert!(chat_bodies(&server).len() >= 20);
}

#[test]
fn binary_bad_input_gives_one_line_errors_and_documented_codes() {
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, TASK).unwrap();
    let good = ollama_server(&["completion", "tools"], script());
    let code = |o: &std::process::Output| o.status.code();
    let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();

    let o = bin().args(["run", "--model"]).output().unwrap();
    assert_eq!(code(&o), Some(2));
    let o = run_bin(&good.url, &d.path().join("missing.txt"), d.path());
    assert_eq!(code(&o), Some(3));
    assert!(
        err(&o).starts_with("lrab-harness: cannot read prompt file")
            && err(&o).contains("missing.txt")
    );
    let o = run_bin(&good.url, &prompt, &d.path().join("no-such-dir"));
    assert_eq!(code(&o), Some(4));
    assert!(err(&o).contains("does not exist"));
    let o = run_bin(&good.url, &prompt, std::path::Path::new("/proc/self"));
    assert_eq!(code(&o), Some(4), "{}", err(&o));
    assert!(err(&o).contains("not writable"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run_bin(&format!("http://127.0.0.1:{port}"), &prompt, d.path());
    assert_eq!(code(&o), Some(5));
    assert!(err(&o).contains("unreachable"));
    assert_eq!(err(&o).lines().count(), 1);
    let nf = serve(Box::new(|_, _| {
        Resp::json(404, r#"{"error":"model 'm' not found"}"#)
    }));
    let o = run_bin(&nf.url, &prompt, d.path());
    assert_eq!(code(&o), Some(6));
    assert!(err(&o).contains("model not found"));
    // a model that cannot chat at all
    let emb = ollama_server(&["embedding"], vec![]);
    let o = run_bin(&emb.url, &prompt, d.path());
    assert_eq!(code(&o), Some(7), "{}", err(&o));
    assert!(err(&o).contains("cannot chat"), "{}", err(&o));
    // a chat model without tools is refused only when the native protocol is demanded (by
    // default it gets the text protocol: tests/text_protocol.rs)
    let nt = ollama_server(&["completion"], vec![]);
    let o = bin()
        .args([
            "run",
            "--model",
            "m",
            "--tool-protocol",
            "native",
            "--prompt-file",
        ])
        .arg(&prompt)
        .arg("--workdir")
        .arg(d.path())
        .args(["--backend-url", &nt.url])
        .env_remove("LRAB_ABLATION")
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(7), "{}", err(&o));
    assert!(err(&o).contains("does not support tools"));
}

#[test]
fn binary_survives_kill_and_resume_with_the_identical_command() {
    let killed = Arc::new(AtomicBool::new(false));
    let k2 = killed.clone();
    let mut replies = vec![
        ollama_stream(
            "",
            &[(
                "todo",
                json!({"action": "create", "items": ["write out.md", "finish"]}),
            )],
            500,
        ),
        ollama_stream(
            "",
            &[("write_file", json!({"path": "out.md", "content": "hello"}))],
            600,
        ),
    ];
    let mut n = 0;
    let server = serve(Box::new(move |path, _| match path {
        "/api/show" => Resp::json(200, &show_body(&["completion", "tools"])),
        "/api/chat" => {
            n += 1;
            if n == 3 {
                // the first process hangs here until the test kills it
                let t = Instant::now();
                while !k2.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(20) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return Resp::json(500, r#"{"error":"gone"}"#);
            }
            if !replies.is_empty() {
                return Resp::ndjson(replies.remove(0));
            }
            Resp::ndjson(ollama_stream(
                "",
                &[("finish", json!({"summary": "done"}))],
                700,
            ))
        }
        _ => Resp::json(404, "{}"),
    }));
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, TASK).unwrap();
    let mut cmd = bin();
    cmd.args(["run", "--model", "m", "--prompt-file"])
        .arg(&prompt)
        .arg("--workdir")
        .arg(d.path())
        .args(["--backend-url", &server.url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let state = common::state_of(d.path());
    let t = Instant::now();
    loop {
        let turn = lrab_harness::read_checkpoint(&state).map_or(0, |s| s.turn);
        if turn >= 2 || t.elapsed() > Duration::from_secs(20) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    killed.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(50));
    let out = cmd.stdout(std::process::Stdio::piped()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("resumed checkpoint"), "{stdout}");
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
    let ev = events(d.path());
    assert!(ev
        .iter()
        .any(|e| e["kind"] == "mechanism" && e["action"] == "resume"));
}

/// The host pid of the `sleep <marker>` process, if it runs.
fn host_pid_of(marker: &str) -> Option<i32> {
    let want = format!("sleep\0{marker}\0");
    fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = fs::read(e.path().join("cmdline")).ok()?;
        (cmd == want.as_bytes()).then_some(pid)
    })
}

fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The runner ends an arm with SIGTERM (then SIGKILL) to the arm's group; the commands the
/// harness runs are in their own group, so the harness must take them down itself.
#[test]
fn terminating_the_binary_kills_the_running_command() {
    for (n, sig) in [libc::SIGTERM, libc::SIGKILL].into_iter().enumerate() {
        // The command runs in its own pid namespace, where `$$` means nothing to this test:
        // it is found on the host by a sleep duration no other process uses.
        let marker = format!("30.{}{n}", std::process::id());
        let cmd_text = format!("echo started > child.pid; exec sleep {marker}");
        let replies = vec![ollama_stream(
            "",
            &[("run_shell", json!({"command": cmd_text, "timeout": 100}))],
            100,
        )];
        let server = ollama_server(&["completion", "tools"], replies);
        let d = tempfile::tempdir().unwrap();
        let prompt = d.path().join("task_input.txt");
        fs::write(&prompt, TASK).unwrap();
        let mut child = bin()
            .args(["run", "--model", "m", "--quiet", "--prompt-file"])
            .arg(&prompt)
            .arg("--workdir")
            .arg(d.path())
            .args(["--backend-url", &server.url])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pidfile = d.path().join("child.pid");
        let t = Instant::now();
        let pid: i32 = loop {
            if let Some(p) = pidfile.exists().then(|| host_pid_of(&marker)).flatten() {
                break p;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "command never started"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(alive(pid));
        // SAFETY: signalling our own child process.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let status = child.wait().unwrap();
        if sig == libc::SIGTERM {
            assert_eq!(status.code(), Some(128 + libc::SIGTERM));
        }
        let t = Instant::now();
        while alive(pid) && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !alive(pid),
            "the command outlived the harness (signal {sig})"
        );
    }
}

#[test]
fn binary_answers_an_http_500_parse_failure_by_changing_the_conversation() {
    // Ollama's qwen3 parser on a malformed call: HTTP 500 with the bare Go error, then the
    // model writes the call properly once told what went wrong
    let mut replies = script();
    let mut first = true;
    let server = serve(Box::new(move |path, _body| match path {
        "/api/show" => Resp::json(200, &show_body(&["completion", "tools"])),
        "/api/chat" if first => {
            first = false;
            Resp::json(
                500,
                r#"{"error":"failed to parse JSON: unexpected end of JSON input"}"#,
            )
        }
        "/api/chat" if !replies.is_empty() => Resp::ndjson(replies.remove(0)),
        _ => Resp::json(500, r#"{"error":"script exhausted"}"#),
    }));
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, TASK).unwrap();
    let out = run_bin(&server.url, &prompt, d.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies = chat_bodies(&server);
    // not resent as it was: the second request tells the model its call could not be parsed
    assert_ne!(bodies[0]["messages"], bodies[1]["messages"]);
    let last = bodies[1]["messages"].as_array().unwrap().last().unwrap();
    assert!(last["content"]
        .as_str()
        .unwrap()
        .contains("could not be parsed"));
}
