//! `POST /v1/responses`: the Responses API answered by the simulated model, streamed as
//! `response.*` events or whole, with OpenAI error shapes for bad input.

mod common;
use common::*;
use lrab_sim::SimConfig;
use serde_json::{json, Value};

fn post(url: &str, body: &Value) -> (u16, String, String) {
    post_raw(url, &body.to_string())
}

/// The WF-04 prompt as codex sends it: developer + user items, flat function tools.
fn body(stream: bool) -> Value {
    let prompt = pack().get("WF-04").unwrap().render_prompt();
    let tools: Vec<Value> = tools_for(Toolset::Rich)
        .into_iter()
        .map(|t| {
            let f = &t["function"];
            json!({"type": "function", "name": f["name"], "description": f["description"],
                "parameters": f["parameters"], "strict": false})
        })
        .collect();
    json!({"model": "sim-oracle", "stream": stream, "store": false,
        "reasoning": {"summary": "auto"}, "tool_choice": "auto", "parallel_tool_calls": true,
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "agent"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        ],
        "tools": tools})
}

fn events(sse: &str) -> Vec<Value> {
    sse.split("\n\n")
        .filter(|b| !b.is_empty())
        .map(|b| {
            let (ev, data) = b.split_once('\n').unwrap();
            let v: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(ev.strip_prefix("event: ").unwrap(), v["type"], "{b}");
            v
        })
        .collect()
}

#[test]
fn the_oracle_answers_a_responses_request_with_a_function_call() {
    let sim = start(SimConfig::default());
    let url = format!("{}/v1/responses", sim.url());
    let (c, ct, sse) = post(&url, &body(true));
    assert_eq!(c, 200, "{sse}");
    assert_eq!(ct, "text/event-stream");
    let ev = events(&sse);
    assert_eq!(ev[0]["type"], "response.created");
    let last = ev.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{sse}");
    let out = last["response"]["output"].as_array().unwrap();
    let call = out
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap_or_else(|| panic!("no function call in {out:?}"));
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert!(args.is_object());
    assert!(call["call_id"].as_str().unwrap().starts_with("call_"));
    assert!(last["response"]["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(ev
        .iter()
        .any(|e| e["type"] == "response.function_call_arguments.done"));

    // Whole: the same output as one `response` object; identical requests, identical bytes.
    let (c, ct, whole) = post(&url, &body(false));
    assert_eq!(c, 200);
    assert!(ct.starts_with("application/json"));
    let w: Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(w["object"], "response");
    assert_eq!(w["status"], "completed");
    assert_eq!(w["output"], last["response"]["output"]);
    assert_eq!(post(&url, &body(false)).2, whole);
}

#[test]
fn the_result_of_a_call_is_read_back_from_function_call_output() {
    let sim = start(SimConfig::default());
    let url = format!("{}/v1/responses", sim.url());
    let first: Value = serde_json::from_str(&post(&url, &body(false)).2).unwrap();
    let mut b = body(false);
    let items = b["input"].as_array_mut().unwrap();
    for item in first["output"].as_array().unwrap() {
        items.push(item.clone());
        if item["type"] == "function_call" {
            items.push(
                json!({"type": "function_call_output", "call_id": item["call_id"],
                "output": "ok"}),
            );
        }
    }
    let (c, _, second) = post(&url, &b);
    assert_eq!(c, 200, "{second}");
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!(second["status"], "completed");
    assert_ne!(
        second["output"], first["output"],
        "the conversation moved on"
    );
    assert_ne!(second["id"], first["id"]);
}

#[test]
fn bad_responses_requests_get_openai_errors() {
    let sim = start(SimConfig::default());
    let url = format!("{}/v1/responses", sim.url());
    let (c, _, e) = post(&url, &json!({"model": "no-such-model", "input": "hi"}));
    assert_eq!(c, 404);
    let e: Value = serde_json::from_str(&e).unwrap();
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no-such-model"));
    let (c, _, e) = post(&url, &json!({"model": "sim-oracle", "input": []}));
    assert_eq!(c, 400, "{e}");
    let (c, _, _) = post(&url, &json!([1, 2]));
    assert_eq!(c, 400);
}
