//! OpenAI-compatible servers of every kind: `lrab doctor` detects them as `lrab run` does and
//! names what is wrong (unreachable, 401, 403, a missing model, a model list that is not JSON)
//! without the key; the run's `--think` reaches each kind of server in the field it reads
//! (`chat_template_kwargs` for vLLM / llama.cpp, `reasoning_effort` for Ollama's `/v1`); and the
//! simulator serving only the OpenAI API (`lrab sim serve --api openai`) runs a real cell of
//! our harness through the translation over HTTP, end to end, labelled simulated.

mod common;
#[path = "common/openai_fake.rs"]
mod openai_fake;

use common::{lrab, text};
use openai_fake::Fault;

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

const KEY: &str = "sk-lrab-doctor-7a1b2c3d4e5f6071";

fn doctor(url: &str, models: &str, key: Option<&str>, extra: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let mut cmd = lrab();
    cmd.args(["doctor", "--backend-url", url, "--models", models])
        .args(extra)
        .arg("--arms-dir")
        .arg(d.path());
    match key {
        Some(k) => cmd.env("OPENAI_API_KEY", k),
        None => cmd.env_remove("OPENAI_API_KEY"),
    };
    text(&cmd.output().unwrap())
}

/// The doctor's line for `name`.
fn line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.get(6..).is_some_and(|r| r.starts_with(name)))
        .unwrap_or_else(|| panic!("no {name} line in:\n{out}"))
}

#[test]
fn doctor_detects_openai_backends_and_names_what_is_wrong() {
    let fake = openai_fake::start(Some(KEY), &["fake-coder"], Fault::None, Duration::ZERO);
    let out = doctor(&fake.url, "fake-coder,nope", Some(KEY), &[]);
    let b = line(&out, "backend");
    assert!(
        b.starts_with("ok") && b.contains("answers the OpenAI API"),
        "{out}"
    );
    assert!(b.contains("chat_template_kwargs.enable_thinking"), "{out}");
    assert!(line(&out, "model fake-coder").starts_with("ok"), "{out}");
    let nope = line(&out, "model nope");
    assert!(
        nope.starts_with("warn")
            && nope.contains("unknown model(s) nope")
            && nope.contains("fake-coder"),
        "{out}"
    );
    // a wrong key: refused, named by its variable, never echoed (the server quotes it back)
    let wrong = "sk-wrong-doctor-0123456789";
    let out = doctor(&fake.url, "fake-coder", Some(wrong), &[]);
    let b = line(&out, "backend");
    assert!(
        b.contains("refused the API key in $OPENAI_API_KEY") && b.contains("401"),
        "{out}"
    );
    assert!(
        !out.contains(wrong) && !out.contains("sk-wrong-doc"),
        "{out}"
    );
    // no key
    let out = doctor(
        &fake.url,
        "fake-coder",
        None,
        &["--backend-key-env", "MY_KEY"],
    );
    assert!(
        line(&out, "backend").contains("environment variable MY_KEY"),
        "{out}"
    );
    // 403: a key without access
    let forbidden = openai_fake::start(None, &["m"], Fault::Forbidden, Duration::ZERO);
    let out = doctor(&forbidden.url, "m", Some(KEY), &[]);
    let b = line(&out, "backend");
    assert!(
        b.contains("403") && b.contains("does not have access"),
        "{out}"
    );
    assert!(!out.contains(KEY), "{out}");
    // a model list that is not JSON
    let bad = openai_fake::start(None, &["m"], Fault::BadModels, Duration::ZERO);
    let out = doctor(&bad.url, "m", None, &["--backend-api", "openai"]);
    assert!(
        line(&out, "backend").contains("not with a model list"),
        "{out}"
    );
    // nobody there
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let out = doctor(&dead, "m", None, &["--backend-api", "openai"]);
    assert!(line(&out, "backend").contains("unreachable"), "{out}");
}

/// `lrab proxy --upstream-api openai --think <think>` in front of `upstream`.
struct Proxy(std::process::Child, String);
impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn proxy(upstream: &str, think: &str, log: &Path) -> Proxy {
    let mut c = common::proxy_command(upstream, log);
    c.args(["--upstream-api", "openai", "--think", think])
        .env_remove("OPENAI_API_KEY");
    let (child, url) = common::listening(c);
    Proxy(child, url)
}

/// POSTs `body` to `url` + `path`; the status and body.
fn post(url: &str, path: &str, body: &Value) -> (u16, String) {
    let addr = url.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    let b = body.to_string();
    write!(c, "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len()).unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    let code = out.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, out)
}

#[test]
fn think_reaches_each_server_in_the_field_it_reads() {
    let d = tempfile::tempdir().unwrap();
    // (owned_by, --think, the field the server must get, the fields it must not)
    let cases = [
        (
            "vllm",
            "off",
            json!({"chat_template_kwargs": {"enable_thinking": false}}),
        ),
        (
            "vllm",
            "on",
            json!({"chat_template_kwargs": {"enable_thinking": true}}),
        ),
        (
            "llamacpp",
            "off",
            json!({"chat_template_kwargs": {"enable_thinking": false}}),
        ),
        ("library", "off", json!({"reasoning_effort": "none"})),
        ("library", "on", json!({"reasoning_effort": "medium"})),
        ("vllm", "model", json!({})),
    ];
    for (i, (owner, think, want)) in cases.iter().enumerate() {
        let fake = openai_fake::start_owned(None, &["m"], Fault::None, Duration::ZERO, owner);
        let p = proxy(&fake.url, think, &d.path().join(format!("{i}.jsonl")));
        // a native arm's request, and an OpenAI arm's that asks for something else
        let native =
            json!({"model": "m", "stream": false, "messages": [{"role": "user", "content": "hi"}]});
        let v1 = json!({"model": "m", "reasoning_effort": "high", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(post(&p.1, "/api/chat", &native).0, 200);
        assert_eq!(post(&p.1, "/v1/chat/completions", &v1).0, 200);
        let seen = fake.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2);
        for (n, body) in seen.iter().enumerate() {
            let got: serde_json::Map<String, Value> =
                ["chat_template_kwargs", "reasoning_effort", "reasoning"]
                    .iter()
                    .filter_map(|k| body.get(*k).map(|v| (k.to_string(), v.clone())))
                    .collect();
            let expect = if *think == "model" && n == 0 {
                json!({})
            } else {
                want.clone()
            };
            assert_eq!(
                Value::Object(got),
                expect,
                "{owner} --think {think}, request {n}: {body}"
            );
        }
    }
}

#[test]
fn the_simulator_serving_openai_runs_a_cell_through_the_translation() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("sim-log");
    let sim = lrab_sim::serve(
        "127.0.0.1:0",
        lrab_sim::SimConfig {
            api: lrab_sim::ServeApi::Openai,
            default_ctx: 32768,
            log_dir: Some(log.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    // it is not an Ollama
    let tags = ureq::get(&format!("{}/api/tags", sim.url())).call();
    assert!(matches!(tags, Err(ureq::Error::Status(404, _))));
    let o = lrab()
        .args([
            "run", "--arms", "harness", "--models", "sim-4b", "--tasks", "WF-01",
        ])
        .args([
            "--backend",
            &sim.url(),
            "--no-progress",
            "--run-id",
            "simoa",
        ])
        .args(["--retries", "0", "--num-ctx", "32768", "--think", "off"])
        .arg("--arms-dir")
        .arg(common::shipped_arms())
        .arg("--out")
        .arg(d.path())
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let run = d.path().join("simoa");
    let m: Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["backends"][0]["kind"], "openai", "{m}");
    assert_eq!(
        m["simulated"], true,
        "a simulator is always labelled simulated: {m}"
    );
    let cells = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let rows = common::csv_lines(&cells);
    assert_eq!(rows[1][common::col("backend_kind")], "openai", "{cells}");
    assert_eq!(
        rows[1][common::col("score")],
        "1.000",
        "the task was done through the translation: {cells}"
    );
    // the trajectory is the Ollama one: tool calls, results, prompt and cached tokens
    let dir = run.join(&rows[1][common::col("attempt_dir")]);
    let t = lrab_records::read_trajectory(&dir.join("proxy.jsonl")).unwrap();
    assert!(t.len() >= 2, "{t:?}");
    assert!(t
        .iter()
        .any(|e| e.reply.as_ref().is_some_and(|r| !r.tool_calls.is_empty())));
    assert!(
        t.iter()
            .skip(1)
            .any(|e| e.cached_prompt_tokens.unwrap_or(0) > 0),
        "{t:?}"
    );
    // every request the simulator got was OpenAI's, with thinking off in vLLM's switch
    let mut n = 0;
    for e in std::fs::read_dir(&log).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.ends_with("-request.json") {
            continue;
        }
        let body: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
        assert_eq!(
            body["chat_template_kwargs"]["enable_thinking"], false,
            "{body}"
        );
        assert!(
            body.get("options").is_none() && body.get("think").is_none(),
            "{body}"
        );
        n += 1;
    }
    assert!(n >= 2, "{n} requests");
}
