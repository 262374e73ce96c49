//! Request and reply translation between the OpenAI chat API and Ollama's native one, and the
//! sampling the normalizing proxy forces (temperature 0, the run's thinking, a fixed context
//! length).

use lrab_records::ThinkSetting;
use serde_json::{json, Map, Value};

pub(super) use super::openai_upstream::text_of;
use super::openai_upstream::Reasoning;

/// Pins the run's thinking on a native body: `think` false or true, or no `think` at all
/// (`model`: the server's default).
pub fn pin_think(body: &mut Value, think: ThinkSetting) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    match think {
        ThinkSetting::Off => obj.insert("think".into(), json!(false)),
        ThinkSetting::On => obj.insert("think".into(), json!(true)),
        ThinkSetting::Model => obj.remove("think"),
    };
}

/// Forces the normalized sampling on a native `/api/chat` body.
pub fn normalize_native(body: &mut Value, num_ctx: u64, think: ThinkSetting) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    let opts = obj
        .entry("options")
        .or_insert_with(|| Value::Object(Map::new()));
    if !opts.is_object() {
        *opts = Value::Object(Map::new());
    }
    let o = opts.as_object_mut().expect("object");
    o.insert("temperature".into(), json!(0));
    o.insert("num_ctx".into(), json!(num_ctx));
    pin_think(body, think);
}

/// Normalizes an OpenAI body in place (for pass-through mode): temperature 0 and the run's
/// thinking in the field the server reads ([`Reasoning`]); for `model` the arm's own
/// reasoning fields are dropped and the model's default applies.
pub fn normalize_openai(body: &mut Value, think: ThinkSetting, reasoning: Reasoning) {
    if let Some(obj) = body.as_object_mut() {
        obj.insert("temperature".into(), json!(0));
        let on = match think {
            ThinkSetting::Off => false,
            ThinkSetting::On => true,
            ThinkSetting::Model => {
                obj.remove("reasoning");
                obj.remove("reasoning_effort");
                return;
            }
        };
        reasoning.write(on, None, obj);
    }
}

/// Translates an OpenAI chat-completions request into a native `/api/chat` one (normalized).
/// Tool calls keep their ids, so a tool result's `tool_call_id` still names its call.
pub fn openai_to_native(req: &Value, num_ctx: u64, think: ThinkSetting) -> Value {
    let mut names_by_id = std::collections::HashMap::new();
    let mut messages = Vec::new();
    for m in req["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("user").to_string();
        let mut out = json!({"role": role, "content": text_of(&m["content"])});
        if let Some(calls) = m["tool_calls"].as_array() {
            let mut native = Vec::new();
            for c in calls {
                let name = c["function"]["name"].as_str().unwrap_or("").to_string();
                if let Some(id) = c["id"].as_str() {
                    names_by_id.insert(id.to_string(), name.clone());
                }
                let args = match &c["function"]["arguments"] {
                    Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
                    v @ Value::Object(_) => v.clone(),
                    _ => json!({}),
                };
                let mut call = json!({"function": {"name": name, "arguments": args}});
                if let Some(id) = c["id"].as_str() {
                    call["id"] = json!(id);
                }
                native.push(call);
            }
            out["tool_calls"] = Value::Array(native);
        }
        if role == "tool" {
            let name = m["name"]
                .as_str()
                .map(str::to_string)
                .or_else(|| {
                    m["tool_call_id"]
                        .as_str()
                        .and_then(|id| names_by_id.get(id).cloned())
                })
                .unwrap_or_default();
            out["tool_name"] = json!(name);
            if let Some(id) = m["tool_call_id"].as_str() {
                out["tool_call_id"] = json!(id);
            }
        }
        messages.push(out);
    }
    let mut options = Map::new();
    if let Some(n) = req.get("max_tokens").or(req.get("max_completion_tokens")) {
        options.insert("num_predict".into(), n.clone());
    }
    for k in super::SHARED_SAMPLING {
        if let Some(v) = req.get(k).filter(|v| !v.is_null()) {
            options.insert(k.into(), v.clone());
        }
    }
    let mut body = json!({
        "model": req["model"],
        "messages": messages,
        "stream": req["stream"].as_bool().unwrap_or(false),
        "options": Value::Object(options),
    });
    if let Some(t) = req.get("tools").filter(|t| t.is_array()) {
        body["tools"] = t.clone();
    }
    if req["response_format"]["type"] == "json_object" {
        body["format"] = json!("json");
    }
    normalize_native(&mut body, num_ctx, think);
    body
}

fn openai_tool_calls(msg: &Value, offset: usize) -> Vec<Value> {
    msg["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "index": offset + i,
                "id": c["id"].as_str().map(str::to_string).unwrap_or_else(|| format!("call_{}", offset + i)),
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"].to_string()},
            })
        })
        .collect()
}

fn finish_reason(done_reason: &Value, tool_calls: bool) -> String {
    let r = done_reason.as_str().unwrap_or("stop");
    if r == "stop" && tool_calls {
        "tool_calls".into()
    } else {
        r.to_string()
    }
}

fn usage(final_obj: &Value) -> Value {
    let p = final_obj["prompt_eval_count"].as_u64().unwrap_or(0);
    let c = final_obj["eval_count"].as_u64().unwrap_or(0);
    let mut u = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
    if let Some(cached) = final_obj["prompt_eval_cached_count"].as_u64() {
        u["prompt_tokens_details"] = json!({ "cached_tokens": cached });
    }
    u
}

/// A non-streamed native reply as an OpenAI `chat.completion`.
pub fn native_to_openai(resp: &Value, created: u64) -> Value {
    let calls = openai_tool_calls(&resp["message"], 0);
    let mut message =
        json!({"role": "assistant", "content": resp["message"]["content"].as_str().unwrap_or("")});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.clone());
    }
    json!({
        "id": "chatcmpl-lrab", "object": "chat.completion", "created": created,
        "model": resp["model"], "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(&resp["done_reason"], !calls.is_empty())}],
        "usage": usage(resp),
    })
}

/// State of one streamed translation (native NDJSON lines → SSE events).
pub struct SseTranslator {
    pub model: String,
    pub created: u64,
    pub include_usage: bool,
    started: bool,
    calls: usize,
    /// The start of a text chunk, up to the content's JSON string.
    text_prefix: String,
}

impl SseTranslator {
    pub fn new(model: &str, created: u64, include_usage: bool) -> Self {
        SseTranslator {
            model: model.into(),
            created,
            include_usage,
            started: false,
            calls: 0,
            text_prefix: String::new(),
        }
    }

    fn chunk(&self, delta: Value, finish: Value) -> String {
        let c = json!({"id": "chatcmpl-lrab", "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    }

    /// [`SseTranslator::text_into`] as a string of its own (the tests compare it).
    #[cfg(test)]
    pub fn text(&mut self, content: &str) -> String {
        let mut out = Vec::new();
        self.text_into(content, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// SSE text for a native line that carried only `content` ([`super::fast::native_text`]),
    /// as [`SseTranslator::line`] writes it, appended to `out` (no string of its own per line).
    pub fn text_into(&mut self, content: &str, out: &mut Vec<u8>) {
        use super::fast::json_str;
        if !self.started {
            self.started = true;
            let first = self.chunk(json!({"role": "assistant", "content": ""}), Value::Null);
            out.extend_from_slice(first.as_bytes());
        }
        if !content.is_empty() {
            if self.text_prefix.is_empty() {
                self.text_prefix = format!(
                    "data: {{\"id\":\"chatcmpl-lrab\",\"object\":\"chat.completion.chunk\",\"created\":{},\"model\":{},\"system_fingerprint\":\"fp_ollama\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":",
                    self.created,
                    json_str(&self.model)
                );
            }
            out.extend_from_slice(self.text_prefix.as_bytes());
            // the same bytes as `json_str(content)`
            let _ = serde_json::to_writer(&mut *out, content);
            out.extend_from_slice(b"},\"finish_reason\":null}]}\n\n");
        }
    }

    /// SSE text for one native line.
    pub fn line(&mut self, obj: &Value) -> String {
        let mut out = String::new();
        if let Some(e) = obj.get("error") {
            let err =
                json!({"error": {"message": e, "type": "api_error", "param": null, "code": null}});
            out.push_str(&format!("data: {err}\n\n"));
            return out;
        }
        if !self.started {
            self.started = true;
            out.push_str(&self.chunk(json!({"role": "assistant", "content": ""}), Value::Null));
        }
        let content = obj["message"]["content"].as_str().unwrap_or("");
        if !content.is_empty() {
            out.push_str(&self.chunk(json!({"content": content}), Value::Null));
        }
        let calls = openai_tool_calls(&obj["message"], self.calls);
        if !calls.is_empty() {
            self.calls += calls.len();
            out.push_str(&self.chunk(json!({"tool_calls": calls}), Value::Null));
        }
        if obj["done"].as_bool() == Some(true) {
            out.push_str(&self.chunk(
                json!({}),
                json!(finish_reason(&obj["done_reason"], self.calls > 0)),
            ));
            if self.include_usage {
                let c = json!({"id": "chatcmpl-lrab", "object": "chat.completion.chunk", "created": self.created,
                    "model": self.model, "system_fingerprint": "fp_ollama", "choices": [], "usage": usage(obj)});
                out.push_str(&format!("data: {c}\n\n"));
            }
            out.push_str("data: [DONE]\n\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_normalization_overrides_everything() {
        let mut v =
            json!({"model": "m", "think": true, "options": {"temperature": 0.7, "top_k": 5}});
        normalize_native(&mut v, 8192, ThinkSetting::Off);
        assert_eq!(
            v["options"],
            json!({"temperature": 0, "top_k": 5, "num_ctx": 8192})
        );
        assert_eq!(v["think"], json!(false));
    }

    #[test]
    fn openai_request_translation() {
        let req = json!({"model": "m", "stream": true, "max_tokens": 100, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\":\".\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
        ], "tools": [{"type": "function", "function": {"name": "ls"}}]});
        let n = openai_to_native(&req, 4096, ThinkSetting::Off);
        assert_eq!(n["messages"][0]["content"], "hi");
        assert_eq!(
            n["messages"][1]["tool_calls"][0]["function"]["arguments"],
            json!({"p": "."})
        );
        assert_eq!(n["messages"][2]["tool_name"], "ls");
        assert_eq!(n["options"]["num_predict"], 100);
        assert_eq!(n["options"]["num_ctx"], 4096);
        assert_eq!(n["options"]["temperature"], 0);
        assert_eq!(n["think"], false);
        assert_eq!(n["stream"], true);
        assert_eq!(n["messages"][1]["tool_calls"][0]["id"], "call_1");
        assert!(openai_to_native(&req, 1, ThinkSetting::Model)
            .get("think")
            .is_none());
        assert_eq!(openai_to_native(&req, 1, ThinkSetting::On)["think"], true);
    }

    #[test]
    fn openai_normalization_speaks_each_dialect() {
        let mut v = json!({"reasoning_effort": "high", "temperature": 1});
        normalize_openai(&mut v, ThinkSetting::Off, Reasoning::Effort);
        assert_eq!(v, json!({"temperature": 0, "reasoning_effort": "none"}));
        normalize_openai(&mut v, ThinkSetting::On, Reasoning::TemplateKwargs);
        assert_eq!(
            v,
            json!({"temperature": 0, "chat_template_kwargs": {"enable_thinking": true}})
        );
        let mut v = json!({"reasoning_effort": "high"});
        normalize_openai(&mut v, ThinkSetting::Model, Reasoning::Effort);
        assert_eq!(v, json!({"temperature": 0}));
        // OpenRouter's object, and no field of another dialect left behind
        let mut v = json!({"reasoning_effort": "high"});
        normalize_openai(&mut v, ThinkSetting::Off, Reasoning::Object);
        assert_eq!(
            v,
            json!({"temperature": 0, "reasoning": {"effort": "none"}})
        );
        normalize_openai(&mut v, ThinkSetting::On, Reasoning::Object);
        assert_eq!(v, json!({"temperature": 0, "reasoning": {"enabled": true}}));
    }

    #[test]
    fn sse_translation_ends_with_done() {
        let mut t = SseTranslator::new("m", 1, true);
        let a = t.line(&json!({"message": {"content": "he"}, "done": false}));
        assert!(a.contains("\"role\":\"assistant\"") && a.contains("\"content\":\"he\""));
        let b = t.line(&json!({"message": {"content": "", "tool_calls": [{"function": {"name": "ls", "arguments": {}}}]}, "done": false}));
        assert!(b.contains("\"arguments\":\"{}\""));
        let c = t.line(&json!({"message": {"content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2}));
        assert!(c.contains("\"finish_reason\":\"tool_calls\""));
        assert!(c.contains("\"total_tokens\":5"));
        assert!(c.ends_with("data: [DONE]\n\n"));
    }
}
