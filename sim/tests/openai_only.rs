//! `lrab sim serve --api openai`: only the OpenAI routes, as vLLM serves them — no `/api/*`,
//! `owned_by: vllm`, thinking switched by `chat_template_kwargs`, `reasoning_effort` values vLLM
//! refuses refused, prompts past the window refused (not cut), cached tokens in the usage, SSE
//! with tool calls.

mod common;
use common::start;
use lrab_sim::{ServeApi, SimConfig};
use serde_json::{json, Value};

fn call(method: &str, url: &str, body: Option<&Value>) -> (u16, String) {
    let req = ureq::request(method, url);
    let r = match body {
        Some(b) => req.send_string(&b.to_string()),
        None => req.call(),
    };
    match r {
        Ok(r) => (r.status(), r.into_string().unwrap()),
        Err(ureq::Error::Status(c, r)) => (c, r.into_string().unwrap()),
        Err(e) => panic!("{e}"),
    }
}

fn sim(default_ctx: u64) -> lrab_sim::SimHandle {
    start(SimConfig {
        api: ServeApi::Openai,
        default_ctx,
        ..Default::default()
    })
}

/// A real task's prompt with a rich tool set (the oracle calls a tool on it).
fn chat(model: &str, extra: Value) -> Value {
    let prompt = common::pack().get("WF-04").unwrap().render_prompt();
    let mut b = json!({"model": model, "tools": common::tools_for(common::Toolset::Rich),
        "messages": [{"role": "system", "content": "agent"}, {"role": "user", "content": prompt}]});
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    b
}

#[test]
fn only_the_openai_routes_answer() {
    let s = sim(8192);
    let u = s.url();
    for (m, p) in [
        ("GET", "/api/tags"),
        ("GET", "/api/version"),
        ("POST", "/api/chat"),
        ("POST", "/api/show"),
        ("GET", "/"),
        ("GET", "/lrab-cell/k/v1/models"),
    ] {
        let (code, body) = call(
            m,
            &format!("{u}{p}"),
            Some(&json!({})).filter(|_| m == "POST"),
        );
        assert_eq!(
            (code, body.as_str()),
            (404, r#"{"detail":"Not Found"}"#),
            "{m} {p}"
        );
    }
    let (code, body) = call("GET", &format!("{u}/v1/models"), None);
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    let first = &v["data"][0];
    assert_eq!(first["owned_by"], "vllm", "{v}");
    assert_eq!(first["max_model_len"], 8192);
    assert_eq!(v["lrab_sim"]["simulated"], true);
    assert_eq!(call("GET", &format!("{u}/health"), None).0, 200);
}

#[test]
fn chat_streams_tool_calls_with_cached_tokens_and_refuses_what_vllm_refuses() {
    let s = sim(8192);
    let url = format!("{}/v1/chat/completions", s.url());
    // whole: a tool call, usage with the cached tokens
    let (code, body) = call("POST", &url, Some(&chat("sim-oracle", json!({}))));
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["choices"][0]["message"]["tool_calls"].is_array(), "{v}");
    assert!(v["usage"]["prompt_tokens_details"]["cached_tokens"].is_u64());
    // the same prompt again: served from the cache
    let (_, body) = call("POST", &url, Some(&chat("sim-oracle", json!({}))));
    let again: Value = serde_json::from_str(&body).unwrap();
    assert!(again["usage"]["prompt_tokens_details"]["cached_tokens"].as_u64() > Some(0));
    // streamed: SSE events, the call, the usage event with cached tokens, [DONE]
    let body = chat(
        "sim-oracle",
        json!({"stream": true, "stream_options": {"include_usage": true}}),
    );
    let (code, text) = call("POST", &url, Some(&body));
    assert_eq!(code, 200);
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    assert!(text.contains("\"tool_calls\"") && text.contains("\"cached_tokens\""));
    // reasoning_effort values vLLM does not take are a 400
    let (code, e) = call(
        "POST",
        &url,
        Some(&chat("sim-oracle", json!({"reasoning_effort": "none"}))),
    );
    assert_eq!(code, 400, "{e}");
    assert!(e.contains("reasoning_effort"), "{e}");
    // a prompt past the window is refused, not cut
    let long = json!({"model": "sim-oracle", "messages": [{"role": "user", "content": "word ".repeat(8000)}]});
    // (about 10,000 tokens as the simulator counts them)
    let (code, e) = call("POST", &url, Some(&long));
    assert_eq!(code, 400, "{e}");
    assert!(e.contains("maximum context length is 8192 tokens"), "{e}");
    assert!(e.contains("context_length_exceeded"), "{e}");
    // max_tokens past the room left is cut to it, not refused (llama.cpp's server)
    let (code, body) = call(
        "POST",
        &url,
        Some(&chat("sim-oracle", json!({"max_tokens": 8192}))),
    );
    assert_eq!(code, 200, "{body}");
    // unknown model
    assert_eq!(call("POST", &url, Some(&chat("nope", json!({})))).0, 404);
}

#[test]
fn thinking_follows_the_chat_template_switch() {
    let s = sim(16384);
    let url = format!("{}/v1/chat/completions", s.url());
    // sim-4b can think: on by default (Qwen3's template), off with enable_thinking false
    let think = |extra: Value| -> bool {
        let (code, body) = call("POST", &url, Some(&chat("sim-4b", extra)));
        assert_eq!(code, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["choices"][0]["message"]["reasoning"]
            .as_str()
            .is_some_and(|r| !r.is_empty())
    };
    assert!(think(json!({})));
    assert!(!think(
        json!({"chat_template_kwargs": {"enable_thinking": false}})
    ));
    assert!(think(
        json!({"chat_template_kwargs": {"enable_thinking": true}})
    ));
    // reasoning_effort does not switch a hybrid model's thinking on vLLM
    assert!(!think(
        json!({"reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": false}})
    ));
}
