//! Tests of the OpenAI translation.
use super::*;

fn up(reasoning: Reasoning, think: ThinkSetting) -> OpenaiUpstream {
    OpenaiUpstream {
        key: Secret::new("sk-test-0123456789abcdef"),
        reasoning,
        think,
        num_ctx: 8192,
    }
}

#[test]
fn native_request_becomes_openai_with_ids_and_switches() {
    let native = json!({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "ls", "arguments": {"p": "."}}},
            {"id": "c9", "function": {"name": "cat", "arguments": {"f": "a"}}}]},
        {"role": "tool", "tool_name": "cat", "content": "A"},
        {"role": "tool", "tool_name": "ls", "content": "a"}
    ], "tools": [{"type": "function", "function": {"name": "ls"}}],
       "options": {"temperature": 0, "num_ctx": 4096, "num_predict": 50}, "think": false});
    let r = up(Reasoning::TemplateKwargs, ThinkSetting::On).chat_request(&native, true);
    let m = &r["messages"];
    assert_eq!(m[1]["tool_calls"][0]["id"], "call_1_0");
    assert_eq!(
        m[1]["tool_calls"][0]["function"]["arguments"],
        "{\"p\":\".\"}"
    );
    assert_eq!(m[2]["tool_call_id"], "c9");
    assert_eq!(m[3]["tool_call_id"], "call_1_0");
    assert_eq!(r["temperature"], 0);
    assert_eq!(r["max_tokens"], 50);
    assert!(r.get("num_ctx").is_none() && r.get("options").is_none());
    assert_eq!(r["stream"], true);
    assert_eq!(r["stream_options"]["include_usage"], true);
    // the request's own think wins over the run's setting
    assert_eq!(r["chat_template_kwargs"]["enable_thinking"], false);
    let bare = json!({"model": "m", "messages": [], "stream": false});
    let r = up(Reasoning::Effort, ThinkSetting::Off).chat_request(&bare, false);
    assert_eq!(r["reasoning_effort"], "none");
    assert!(r.get("stream_options").is_none());
    let r = up(Reasoning::Effort, ThinkSetting::Model).chat_request(&bare, false);
    assert!(r.get("reasoning_effort").is_none() && r.get("chat_template_kwargs").is_none());
}

#[test]
fn sse_becomes_ndjson_with_whole_calls_and_counts() {
    let mut t = ToNative::new("m", Instant::now());
    let mut lines = Vec::new();
    for d in [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"hm"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"ok"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x1","function":{"name":"write","arguments":"{\"pa"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":1}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":20}}}"#,
        "[DONE]",
    ] {
        lines.extend(t.event(d));
    }
    assert!(t.eof().is_none());
    assert_eq!(lines[0]["message"]["thinking"], "hm");
    assert_eq!(lines[1]["message"]["content"], "ok");
    let c = &lines[2]["message"]["tool_calls"][0];
    assert_eq!(
        (
            c["id"].as_str(),
            c["function"]["arguments"]["path"].as_i64()
        ),
        (Some("x1"), Some(1))
    );
    let last = &lines[3];
    assert_eq!(
        (last["done"].as_bool(), last["done_reason"].as_str()),
        (Some(true), Some("stop"))
    );
    assert_eq!(last["prompt_eval_count"], 50);
    assert_eq!(last["prompt_eval_cached_count"], 20);
    assert_eq!(last["eval_count"], 4);
}

#[test]
fn cut_streams_bad_json_and_keys_are_errors_without_the_key() {
    let mut t = ToNative::new("m", Instant::now());
    t.event(r#"{"choices":[{"index":0,"delta":{"content":"o"}}]}"#);
    assert!(t.eof().unwrap()["error"]
        .as_str()
        .unwrap()
        .contains("ended before"));
    let mut t = ToNative::new("m", Instant::now());
    assert!(t.event("{not json").pop().unwrap()["error"].is_string());
    let mut t = ToNative::new("m", Instant::now()).without(Secret::new("sk-abcdefgh12345"));
    let e = t.event(r#"{"error":{"message":"bad key sk-abcdefgh12345"}}"#);
    assert_eq!(e[0]["error"], "bad key <redacted>");
    assert!(ToNative::new("m", Instant::now())
        .whole(b"<html>")
        .get("error")
        .is_some());
    let u = up(Reasoning::Effort, ThinkSetting::Off);
    let msg = u.error_message(
        br#"{"error":{"message":"Incorrect API key provided: sk-test-0123**cdef","type":"invalid_request_error"}}"#,
    );
    assert!(
        !msg.contains("sk-test-0123") && msg.contains("Incorrect API key"),
        "{msg}"
    );
    assert_eq!(format!("{:?}", u.key), "Some(<redacted>)");
}

#[test]
fn models_become_tags_and_show() {
    let models = json!({"object": "list", "data": [{"id": "qwen", "object": "model"}, {"id": "big", "max_model_len": 40960}]});
    assert_eq!(tags(&models)["models"][1]["name"], "big");
    let s = show(&models, "qwen:latest", 8192).unwrap();
    assert_eq!(s["model_info"]["openai.context_length"], 8192);
    assert_eq!(
        show(&models, "big", 8192).unwrap()["model_info"]["openai.context_length"],
        40960
    );
    assert!(show(&models, "gone", 1).is_none());
}
