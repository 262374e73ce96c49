//! OpenAI's Responses API (`POST /v1/responses`) expressed through the native `/api/chat`
//! exchange, for clients that speak nothing else (codex). The request's `instructions`, `input`
//! items and function tools become native messages and tools; the native reply, whole or
//! streamed, becomes a `response` object or its `response.*` server-sent events, emitted as the
//! native lines arrive. Used by the normalizing proxy (which then normalizes the native body)
//! and by the simulated backend's own `/v1/responses` route, so both speak it the same way.
//! Stateless: `previous_response_id` is not supported (the client must send its whole history,
//! which codex does with `store: false`). Only `function` tools are offered to the model;
//! `custom`, `web_search` and other hosted tool types are dropped. Generic JSON, not typed
//! structs: the Responses item zoo is large and a proxy must not reject fields it ignores.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

/// The text of a message's `content`: a string, or the concatenated `text` of its parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The arguments of a call as a JSON object (the Responses API sends a JSON string).
fn arguments_object(args: &Value) -> Value {
    match args {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
        v @ Value::Object(_) => v.clone(),
        _ => json!({}),
    }
}

/// Adds a tool call to the assistant message being built (consecutive output items of one
/// model turn are one native assistant message).
fn push_call(messages: &mut Vec<Value>, name: &str, args: Value) {
    let call = json!({"function": {"name": name, "arguments": args}});
    if let Some(last) = messages.last_mut().filter(|m| m["role"] == "assistant") {
        match last["tool_calls"].as_array_mut() {
            Some(calls) => calls.push(call),
            None => last["tool_calls"] = json!([call]),
        }
        return;
    }
    messages.push(json!({"role": "assistant", "content": "", "tool_calls": [call]}));
}

/// How many input items a request carries: the base of the ids its reply gets, so ids are
/// deterministic and differ from turn to turn of one conversation.
pub fn id_base(req: &Value) -> usize {
    match &req["input"] {
        Value::Array(items) => items.len(),
        Value::String(_) => 1,
        _ => 0,
    }
}

/// Translates a Responses request into a native `/api/chat` body (sampling options as sent:
/// `max_output_tokens`, `top_p`, `temperature`).
pub fn responses_to_native(req: &Value) -> Value {
    let mut messages = Vec::new();
    if let Some(i) = req["instructions"].as_str().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": i}));
    }
    let items = match &req["input"] {
        Value::String(s) => vec![json!({"type": "message", "role": "user", "content": s})],
        Value::Array(items) => items.clone(),
        _ => Vec::new(),
    };
    let mut names_by_id: HashMap<String, String> = HashMap::new();
    for item in &items {
        let kind = item["type"]
            .as_str()
            .unwrap_or(if item.get("role").is_some() {
                "message"
            } else {
                ""
            });
        match kind {
            "message" => {
                let role = match item["role"].as_str().unwrap_or("user") {
                    "developer" => "system",
                    r => r,
                };
                let text = content_text(&item["content"]);
                // An assistant message after tool calls of the same turn starts a new message.
                messages.push(json!({"role": role, "content": text}));
            }
            "function_call" | "custom_tool_call" => {
                let name = item["name"].as_str().unwrap_or("").to_string();
                if let Some(id) = item["call_id"].as_str() {
                    names_by_id.insert(id.to_string(), name.clone());
                }
                let args = if kind == "function_call" {
                    arguments_object(&item["arguments"])
                } else {
                    json!({"input": item["input"]})
                };
                push_call(&mut messages, &name, args);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = item["call_id"].as_str().unwrap_or("");
                let mut out = json!({
                    "role": "tool",
                    "content": content_text(&item["output"]),
                    "tool_name": names_by_id.get(id).cloned().unwrap_or_default(),
                });
                if !id.is_empty() {
                    out["tool_call_id"] = json!(id);
                }
                messages.push(out);
            }
            // Reasoning items, hosted-tool calls and unknown items carry nothing a local
            // model can use.
            _ => {}
        }
    }
    let tools: Vec<Value> = req["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter(|t| t["type"] == "function" && t["name"].is_string())
                .map(|t| {
                    let mut f = json!({"name": t["name"], "parameters": t["parameters"]});
                    if let Some(d) = t["description"].as_str() {
                        f["description"] = json!(d);
                    }
                    json!({"type": "function", "function": f})
                })
                .collect()
        })
        .unwrap_or_default();
    let mut options = Map::new();
    if let Some(n) = req.get("max_output_tokens").filter(|v| v.is_u64()) {
        options.insert("num_predict".into(), n.clone());
    }
    for k in ["top_p", "temperature"] {
        if let Some(v) = req.get(k).filter(|v| v.is_number()) {
            options.insert(k.into(), v.clone());
        }
    }
    let mut body = json!({
        "model": req["model"],
        "messages": messages,
        "stream": req["stream"].as_bool().unwrap_or(false),
        "options": Value::Object(options),
    });
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    match req["text"]["format"]["type"].as_str() {
        Some("json_object") => body["format"] = json!("json"),
        Some("json_schema") if req["text"]["format"]["schema"].is_object() => {
            body["format"] = req["text"]["format"]["schema"].clone()
        }
        _ => {}
    }
    body
}

/// Builds the Responses reply from native lines, as `response.*` events (streaming) or as one
/// `response` object (`finish` after feeding the single native reply).
pub struct ResponsesTranslator {
    base: usize,
    model: String,
    created: u64,
    seq: u64,
    started: bool,
    /// The assistant text item being streamed, if one is open.
    text: Option<String>,
    /// Finished output items, in order.
    items: Vec<Value>,
    calls: usize,
    ended: bool,
}

impl ResponsesTranslator {
    /// A translator for one reply: `model` as reported, `base` from [`id_base`], `created` in Unix seconds.
    pub fn new(model: &str, base: usize, created: u64) -> Self {
        ResponsesTranslator {
            base,
            model: model.into(),
            created,
            seq: 0,
            started: false,
            text: None,
            items: Vec::new(),
            calls: 0,
            ended: false,
        }
    }

    fn event(&mut self, kind: &str, mut data: Value) -> String {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        format!("event: {kind}\ndata: {data}\n\n")
    }

    fn id(&self) -> String {
        format!("resp_lrab_{}", self.base)
    }

    fn message_id(&self) -> String {
        format!("msg_lrab_{}_{}", self.base, self.items.len())
    }

    /// The `response` object: in progress (no output yet) or final.
    fn response(&self, status: &str, last: &Value) -> Value {
        let mut r = json!({
            "id": self.id(), "object": "response", "created_at": self.created,
            "status": status, "model": self.model, "output": self.items,
            "parallel_tool_calls": false, "tool_choice": "auto", "tools": [],
            "error": null, "incomplete_details": null,
        });
        if status == "incomplete" {
            r["incomplete_details"] = json!({"reason": "max_output_tokens"});
        }
        if last["done"].as_bool() == Some(true) {
            let p = last["prompt_eval_count"].as_u64().unwrap_or(0);
            let c = last["eval_count"].as_u64().unwrap_or(0);
            r["usage"] = json!({
                "input_tokens": p, "input_tokens_details": {"cached_tokens": last["prompt_eval_cached_count"].as_u64().unwrap_or(0)},
                "output_tokens": c, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": p + c,
            });
        }
        r
    }

    fn close_text(&mut self, out: &mut String) {
        let Some(text) = self.text.take() else {
            return;
        };
        let (id, index) = (self.message_id(), self.items.len());
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        out.push_str(&self.event(
            "response.output_text.done",
            json!({"item_id": id, "output_index": index, "content_index": 0, "text": text}),
        ));
        out.push_str(&self.event(
            "response.content_part.done",
            json!({"item_id": id, "output_index": index, "content_index": 0, "part": part}),
        ));
        let item = json!({"type": "message", "id": id, "status": "completed",
            "role": "assistant", "content": [part]});
        out.push_str(&self.event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        ));
        self.items.push(item);
    }

    /// Events for one native line (an NDJSON object of `/api/chat`).
    pub fn line(&mut self, obj: &Value) -> String {
        let mut out = String::new();
        if self.ended {
            return out;
        }
        if !self.started {
            self.started = true;
            let r = self.response("in_progress", &Value::Null);
            out.push_str(&self.event("response.created", json!({"response": r})));
            out.push_str(&self.event("response.in_progress", json!({"response": r})));
        }
        if let Some(e) = obj.get("error") {
            self.ended = true;
            let msg = e
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string());
            let mut r = self.response("failed", &Value::Null);
            r["error"] = json!({"code": "server_error", "message": msg});
            out.push_str(&self.event("response.failed", json!({"response": r})));
            return out;
        }
        let content = obj["message"]["content"].as_str().unwrap_or("");
        if !content.is_empty() {
            if self.text.is_none() {
                let (id, index) = (self.message_id(), self.items.len());
                let item = json!({"type": "message", "id": id, "status": "in_progress",
                    "role": "assistant", "content": []});
                out.push_str(&self.event(
                    "response.output_item.added",
                    json!({"output_index": index, "item": item}),
                ));
                out.push_str(&self.event(
                    "response.content_part.added",
                    json!({"item_id": id, "output_index": index, "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []}}),
                ));
                self.text = Some(String::new());
            }
            if let Some(t) = self.text.as_mut() {
                t.push_str(content);
            }
            let (id, index) = (self.message_id(), self.items.len());
            out.push_str(&self.event(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0, "delta": content}),
            ));
        }
        let calls = obj["message"]["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !calls.is_empty() {
            self.close_text(&mut out);
        }
        for c in calls {
            let index = self.items.len();
            let n = self.calls;
            self.calls += 1;
            let id = format!("fc_lrab_{}_{n}", self.base);
            let call_id = c["id"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_lrab_{}_{n}", self.base));
            let name = c["function"]["name"].as_str().unwrap_or("").to_string();
            let args = arguments_object(&c["function"]["arguments"]).to_string();
            let mut item = json!({"type": "function_call", "id": id, "call_id": call_id,
                "name": name, "arguments": "", "status": "in_progress"});
            out.push_str(&self.event(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
            ));
            out.push_str(&self.event(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": args}),
            ));
            out.push_str(&self.event(
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": index, "arguments": args}),
            ));
            item["arguments"] = json!(args);
            item["status"] = json!("completed");
            out.push_str(&self.event(
                "response.output_item.done",
                json!({"output_index": index, "item": item}),
            ));
            self.items.push(item);
        }
        if obj["done"].as_bool() == Some(true) {
            self.close_text(&mut out);
            self.ended = true;
            let r = self.response(Self::status(obj), obj);
            let kind = if r["status"] == "completed" {
                "response.completed"
            } else {
                "response.incomplete"
            };
            out.push_str(&self.event(kind, json!({"response": r})));
        }
        out
    }

    fn status(last: &Value) -> &'static str {
        if last["done_reason"] == "length" {
            "incomplete"
        } else {
            "completed"
        }
    }

    /// The whole `response` object for a non-streamed native reply.
    pub fn whole(mut self, obj: &Value) -> Value {
        if let Some(e) = obj.get("error") {
            return json!({"error": {"message": e, "type": "api_error", "param": null, "code": null}});
        }
        let mut done = obj.clone();
        done["done"] = json!(true);
        let _ = self.line(&done);
        self.response(Self::status(obj), &done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(sse: &str) -> Vec<Value> {
        sse.split("\n\n")
            .filter(|b| !b.is_empty())
            .map(|b| {
                let (ev, data) = b.split_once('\n').unwrap();
                let v: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
                assert_eq!(ev.strip_prefix("event: ").unwrap(), v["type"]);
                v
            })
            .collect()
    }

    #[test]
    fn request_items_become_native_messages_and_tools() {
        let req = json!({
            "model": "m", "stream": true, "instructions": "be brief", "max_output_tokens": 50,
            "temperature": 1.0, "reasoning": {"summary": "auto"},
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "write a.txt"}]},
                {"type": "reasoning", "summary": []},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
                {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "a.txt\n"},
                {"role": "user", "content": "thanks"}
            ],
            "tools": [
                {"type": "function", "name": "exec_command", "description": "run", "parameters": {"type": "object"}},
                {"type": "web_search"},
                {"type": "custom", "name": "apply_patch"}
            ]
        });
        let n = responses_to_native(&req);
        let m = n["messages"].as_array().unwrap();
        assert_eq!(m.len(), 6, "{m:?}");
        assert_eq!(m[0], json!({"role": "system", "content": "be brief"}));
        assert_eq!(m[1], json!({"role": "system", "content": "rules"}));
        assert_eq!(m[2]["content"], "write a.txt");
        assert_eq!(m[3]["content"], "ok");
        assert_eq!(
            m[3]["tool_calls"][0]["function"],
            json!({"name": "exec_command", "arguments": {"cmd": "ls"}})
        );
        assert_eq!(m[4]["role"], "tool");
        assert_eq!(m[4]["tool_name"], "exec_command");
        assert_eq!(m[4]["content"], "a.txt\n");
        assert_eq!(m[5], json!({"role": "user", "content": "thanks"}));
        assert_eq!(n["tools"].as_array().unwrap().len(), 1);
        assert_eq!(n["tools"][0]["function"]["name"], "exec_command");
        assert_eq!(n["options"], json!({"num_predict": 50, "temperature": 1.0}));
        assert_eq!(n["stream"], true);
        assert!(n.get("reasoning").is_none());
    }

    #[test]
    fn a_string_input_is_one_user_message_and_stream_defaults_off() {
        let n = responses_to_native(&json!({"model": "m", "input": "hi"}));
        assert_eq!(n["messages"], json!([{"role": "user", "content": "hi"}]));
        assert_eq!(n["stream"], false);
    }

    #[test]
    fn streamed_text_and_calls_become_ordered_events_ending_completed() {
        let mut t = ResponsesTranslator::new("m", 3, 7);
        let mut sse = t.line(&json!({"message": {"content": "Hel"}, "done": false}));
        sse += &t.line(&json!({"message": {"content": "lo"}, "done": false}));
        sse += &t.line(&json!({"message": {"content": "", "tool_calls": [
            {"function": {"name": "exec_command", "arguments": {"cmd": "ls"}}}]}, "done": false}));
        sse += &t.line(
            &json!({"message": {"content": ""}, "done": true, "done_reason": "stop",
            "prompt_eval_count": 10, "eval_count": 4}),
        );
        let ev = events(&sse);
        let kinds: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (i, e) in ev.iter().enumerate() {
            assert_eq!(e["sequence_number"], i);
        }
        let done = &ev[13]["response"];
        assert_eq!(done["id"], "resp_lrab_3");
        assert_eq!(done["status"], "completed");
        assert_eq!(done["output"][0]["content"][0]["text"], "Hello");
        assert_eq!(done["output"][1]["type"], "function_call");
        assert_eq!(done["output"][1]["call_id"], "call_lrab_3_0");
        assert_eq!(done["output"][1]["arguments"], "{\"cmd\":\"ls\"}");
        assert_eq!(done["usage"]["input_tokens"], 10);
        assert_eq!(done["usage"]["total_tokens"], 14);
        assert!(
            t.line(&json!({"done": true})).is_empty(),
            "nothing after the end"
        );
    }

    #[test]
    fn whole_reply_and_errors() {
        let t = ResponsesTranslator::new("m", 1, 0);
        let r = t.whole(&json!({"message": {"content": "hi"}, "done": true, "done_reason": "length", "eval_count": 2}));
        assert_eq!(r["object"], "response");
        assert_eq!(r["status"], "incomplete");
        assert_eq!(r["incomplete_details"]["reason"], "max_output_tokens");
        assert_eq!(r["output"][0]["content"][0]["text"], "hi");
        let mut t = ResponsesTranslator::new("m", 1, 0);
        let ev = events(&t.line(&json!({"error": "model 'x' not found"})));
        assert_eq!(ev.last().unwrap()["type"], "response.failed");
        assert_eq!(
            ev.last().unwrap()["response"]["error"]["message"],
            "model 'x' not found"
        );
    }
}
