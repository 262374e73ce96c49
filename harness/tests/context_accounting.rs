//! Context accounting against what real servers report, through the agent loop with scripted
//! replies (no model): `prompt_eval_count` counting only the uncached tokens (Ollama v0.30.0,
//! old servers) or capped by a server that cut the prompt; a server that refuses a prompt too
//! long; a prompt that would not fit, compacted before it is sent; and the context window of
//! an OpenAI-compatible server, probed (llama.cpp `/props`, vLLM `max_model_len`) or set.

mod common;

use common::*;
use lrab_harness::backend::{classify_http_error, BackendError, OpenAiBackend, OpenAiConfig};
use lrab_harness::backend::{Model, ScriptedModel};
use lrab_harness::{Agent, Reply};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

const TASK: &str = "Read every part file and write summary.md.";

fn parts(dir: &Path, n: usize, chars: usize) {
    for i in 0..n {
        let body: String = format!(
            "part {i}\n{}",
            "lorem ipsum dolor sit amet ".repeat(chars / 27)
        );
        fs::write(dir.join(format!("part{i:02}.txt")), body).unwrap();
    }
}

fn read(i: usize, pec: Option<u64>) -> Reply {
    Reply {
        prompt_eval_count: pec,
        ..Reply::call("read_file", json!({"path": format!("part{i:02}.txt")}))
    }
}

fn agent(
    dir: &Path,
    num_ctx: u64,
    replies: Vec<Result<Reply, BackendError>>,
) -> Agent<ScriptedModel> {
    let mut cfg = config(dir, TASK);
    cfg.num_ctx = num_ctx;
    let mut a = Agent::new(cfg, ScriptedModel::new(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

fn model_calls(dir: &Path) -> Vec<Value> {
    events(dir)
        .into_iter()
        .filter(|e| e["kind"] == "model_call")
        .collect()
}

#[test]
fn counts_of_uncached_tokens_never_pull_the_estimate_down() {
    let d = tempfile::tempdir().unwrap();
    parts(d.path(), 8, 2000);
    // the first count is a full one; every later prompt is served from cache and only the
    // handful of new tokens is counted
    let replies = (0..8)
        .map(|i| Ok(read(i, Some(if i == 0 { 900 } else { 40 }))))
        .collect();
    let mut a = agent(d.path(), 32768, replies);
    for _ in 0..8 {
        a.step();
    }
    assert!(a.state.context.uncached_counts);
    assert!(
        a.state.context.ratio >= 1.0,
        "ratio {}",
        a.state.context.ratio
    );
    assert_eq!(mech_count(d.path(), "context", "uncached_counts"), 1);
    // the estimate kept growing with the conversation
    let est: Vec<u64> = model_calls(d.path())
        .iter()
        .map(|e| e["est_tokens"].as_u64().unwrap())
        .collect();
    assert!(est.windows(2).all(|w| w[1] > w[0]), "{est:?}");
}

#[test]
fn a_count_capped_by_a_server_that_cut_the_prompt_compacts_before_the_next_request() {
    let d = tempfile::tempdir().unwrap();
    parts(d.path(), 10, 5000);
    // an 8192 window; the server counts exactly 8192 on the 4th reply: it cut the prompt
    let mut replies: Vec<_> = (0..3).map(|i| Ok(read(i, None))).collect();
    replies.push(Ok(read(3, Some(8192))));
    replies.extend((4..8).map(|i| Ok(read(i, None))));
    let mut a = agent(d.path(), 8192, replies);
    for _ in 0..6 {
        a.step();
    }
    let ev = events(d.path());
    let cut = ev
        .iter()
        .position(|e| e["kind"] == "mechanism" && e["action"] == "server_truncated")
        .expect("the cut was seen");
    let next_compact = ev[cut..]
        .iter()
        .position(|e| e["kind"] == "mechanism" && e["action"] == "compact")
        .expect("compacted")
        + cut;
    let next_call = ev[cut..]
        .iter()
        .position(|e| e["kind"] == "model_call")
        .unwrap()
        + cut;
    assert!(
        next_compact < next_call,
        "compacted before the next request was sent"
    );
    assert!(a.state.context.truncations == 1);
}

#[test]
fn a_server_refusing_a_prompt_too_long_gets_a_compacted_one() {
    let d = tempfile::tempdir().unwrap();
    parts(d.path(), 4, 5000);
    let long = classify_http_error(
        400,
        "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length",
    );
    assert!(matches!(long, BackendError::ContextOverflow(_)));
    let mut a = agent(
        d.path(),
        32768,
        vec![
            Ok(read(0, None)),
            Ok(read(1, None)),
            Err(long),
            Ok(read(2, None)),
        ],
    );
    for _ in 0..3 {
        a.step();
    }
    assert_eq!(mech_count(d.path(), "context", "server_overflow"), 1);
    let seen = &a.model.seen;
    // the refused request was not sent again as it was
    assert_ne!(seen[2].messages, seen[3].messages);
    assert!(seen[3].messages.len() < seen[2].messages.len());
    assert!(a.state.context.ratio > 1.0);
}

#[test]
fn a_prompt_that_would_not_fit_is_compacted_before_it_is_sent() {
    let d = tempfile::tempdir().unwrap();
    parts(d.path(), 12, 8000);
    let num_ctx = 2048;
    let mut a = agent(
        d.path(),
        num_ctx,
        (0..12).map(|i| Ok(read(i, None))).collect(),
    );
    for _ in 0..12 {
        a.step();
    }
    let calls = model_calls(d.path());
    assert_eq!(calls.len(), 12);
    for e in &calls {
        // the corrected estimate of every request left room for a reply
        assert!(
            e["est_tokens"].as_u64().unwrap() + 256 + 64 <= num_ctx,
            "{e}"
        );
    }
    // the task text survived every rewrite
    assert!(a
        .model
        .seen
        .iter()
        .all(|s| s.messages.iter().any(|m| m.content == TASK)));
}

fn llama_cpp_like(props: Value, models: Value) -> FakeServer {
    let mut n = 0;
    serve(Box::new(move |path, _| match path {
        "/v1/models" => Resp::json(200, &models.to_string()),
        "/props" => Resp::json(200, &props.to_string()),
        "/v1/chat/completions" => {
            n += 1;
            let (name, args) = if n == 1 {
                (
                    "write_file",
                    json!({"path": "out.md", "content": "hello"}).to_string(),
                )
            } else {
                ("finish", json!({"summary": "ok"}).to_string())
            };
            sse(vec![
                chunk(
                    json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function", "function": {"name": name, "arguments": args}}]}),
                    None,
                ),
                chunk(json!({}), Some("tool_calls")),
            ])
        }
        _ => Resp::json(
            404,
            r#"{"error":{"message":"no","type":"not_found_error"}}"#,
        ),
    }))
}

#[test]
fn an_openai_compatible_servers_window_is_probed() {
    // llama.cpp: /props tells the slot's context
    let s = llama_cpp_like(
        json!({"default_generation_settings": {"n_ctx": 6144}, "total_slots": 1}),
        json!({"object": "list", "data": [{"id": "model.gguf", "meta": {"n_ctx_train": 131072}}]}),
    );
    let b =
        OpenAiBackend::connect(OpenAiConfig::new(&format!("{}/v1", s.url), "model.gguf")).unwrap();
    assert_eq!(b.context_length(), Some(6144));
    assert_eq!(
        lrab_harness::openai_context(&b.context, None),
        (6144, "props")
    );
    // a smaller --num-ctx wins; a larger one cannot exceed what the server runs with
    assert_eq!(
        lrab_harness::openai_context(&b.context, Some(4096)),
        (4096, "flag")
    );
    assert_eq!(
        lrab_harness::openai_context(&b.context, Some(65536)),
        (6144, "props")
    );
    // vLLM: max_model_len in /v1/models
    let s = llama_cpp_like(
        json!(null),
        json!({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 40960}]}),
    );
    let b = OpenAiBackend::connect(OpenAiConfig::new(&s.url, "Qwen/Qwen3-8B")).unwrap();
    assert_eq!(
        lrab_harness::openai_context(&b.context, None),
        (40960, "max_model_len")
    );
    // nothing reported: the flag, else the default
    let s = llama_cpp_like(
        json!(null),
        json!({"object": "list", "data": [{"id": "m"}]}),
    );
    let b = OpenAiBackend::connect(OpenAiConfig::new(&s.url, "m")).unwrap();
    assert_eq!(b.context_length(), None);
    assert_eq!(
        lrab_harness::openai_context(&b.context, Some(8192)),
        (8192, "flag")
    );
    assert_eq!(
        lrab_harness::openai_context(&b.context, None),
        (32768, "default")
    );
}

#[test]
fn the_binary_sizes_its_context_check_from_the_probe() {
    let s = llama_cpp_like(
        json!({"default_generation_settings": {"n_ctx": 6144}}),
        json!({"object": "list", "data": [{"id": "m"}]}),
    );
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, "Write out.md containing the word hello.").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lrab-harness"))
        .args(["run", "--model", "m", "--api", "openai", "--prompt-file"])
        .arg(&prompt)
        .arg("--workdir")
        .arg(d.path())
        .args(["--backend-url", &format!("{}/v1", s.url)])
        .env_remove("LRAB_ABLATION")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = events(d.path());
    let start = ev.iter().find(|e| e["kind"] == "run_start").unwrap();
    assert_eq!(start["num_ctx"], 6144);
    assert_eq!(start["num_ctx_source"], "props");
}
