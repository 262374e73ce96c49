//! Ollama's native API: `/api/chat`, `/api/generate`, `/api/tags`, `/api/show`, `/api/ps`,
//! `/api/version`. Field order follows Ollama's Go structs so our output is byte-comparable.
//! One module per concern: a chat turn, a raw generation, what the server says of its models.

mod chat;
mod generate;
mod models;

pub use chat::*;
pub use generate::*;
pub use models::*;

use serde::{Deserialize, Deserializer};

fn is_false(b: &bool) -> bool {
    !*b
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Roles are lower-cased on decode, as Ollama does.
fn lowercase_role<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(String::deserialize(d)?.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_request_roundtrip_with_tools_and_unknowns() {
        let body = json!({
            "model": "qwen3:4b",
            "messages": [
                {"role": "System", "content": "be brief"},
                {"role": "user", "content": "weather in Tokyo?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_ab12cd34", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Tokyo"}}}
                ]},
                {"role": "tool", "content": "22C", "tool_name": "get_weather"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": "{\"city\":\"Osaka\"}"}}
                ]}
            ],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
            "stream": false,
            "think": false,
            "keep_alive": "5m",
            "format": "json",
            "options": {"temperature": 0, "num_ctx": 32768, "num_predict": 8192, "seed": 7,
                        "top_p": 0.9, "top_k": 40, "stop": ["</s>"], "num_batch": 512},
            "x_unknown": 1
        });
        let req: ChatRequest = serde_json::from_value(body).unwrap();
        assert_eq!(req.messages[0].role, "system");
        assert!(!req.streaming());
        assert_eq!(req.tools()[0].function.name, "get_weather");
        let o = req.options.as_ref().unwrap();
        assert_eq!(o.num_ctx, Some(32768));
        assert_eq!(o.extra["num_batch"], json!(512));
        assert_eq!(req.messages[4].content, "");
        assert_eq!(
            req.messages[4].calls()[0].function.arguments,
            json!({"city": "Osaka"})
        );
        assert_eq!(req.extra["x_unknown"], json!(1));
        // serialise again: unknown and extra options kept, key order preserved
        let out = serde_json::to_value(&req).unwrap();
        assert_eq!(out["options"]["num_batch"], json!(512));
        assert_eq!(out["x_unknown"], json!(1));
        assert_eq!(out["think"], json!(false));
    }

    #[test]
    fn default_stream_is_true() {
        let req: ChatRequest = serde_json::from_str(r#"{"model":"m","messages":[]}"#).unwrap();
        assert!(req.streaming());
    }

    #[test]
    fn streaming_chunks_serialise_exactly() {
        let chunk = ChatResponse {
            model: "llama3.2".into(),
            created_at: "2026-11-29T22:00:00.000000000Z".into(),
            message: Message::assistant("Hel"),
            done: false,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&chunk).unwrap(),
            r#"{"model":"llama3.2","created_at":"2026-11-29T22:00:00.000000000Z","message":{"role":"assistant","content":"Hel"},"done":false}"#
        );
        let last = ChatResponse {
            model: "llama3.2".into(),
            created_at: "t".into(),
            message: Message::assistant(""),
            done: true,
            done_reason: Some("stop".into()),
            metrics: Metrics {
                total_duration: Some(10),
                load_duration: Some(1),
                prompt_eval_count: Some(26),
                prompt_eval_cached_count: None,
                prompt_eval_duration: Some(2),
                eval_count: Some(3),
                eval_duration: Some(4),
            },
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&last).unwrap(),
            r#"{"model":"llama3.2","created_at":"t","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":10,"load_duration":1,"prompt_eval_count":26,"prompt_eval_duration":2,"eval_count":3,"eval_duration":4}"#
        );
        let back: ChatResponse =
            serde_json::from_str(&serde_json::to_string(&last).unwrap()).unwrap();
        assert_eq!(back, last);
    }

    #[test]
    fn tool_call_chunk_shape() {
        let mut m = Message::assistant("");
        m.tool_calls = Some(vec![ToolCall::new(
            Some("call_0a1b2c3d".into()),
            0,
            "get_weather",
            json!({"city": "Tokyo", "unit": "c"}),
        )]);
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"assistant","content":"","tool_calls":[{"id":"call_0a1b2c3d","function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo","unit":"c"}}}]}"#
        );
    }

    #[test]
    fn stream_line_error_or_chunk() {
        let l: ChatStreamLine = serde_json::from_str(r#"{"error":"boom"}"#).unwrap();
        assert!(matches!(l, ChatStreamLine::Error(e) if e.error == "boom"));
        let l: ChatStreamLine = serde_json::from_str(
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false}"#,
        )
        .unwrap();
        assert!(matches!(l, ChatStreamLine::Chunk(_)));
    }

    #[test]
    fn show_context_length_and_capabilities() {
        let s: ShowResponse = serde_json::from_value(json!({
            "modelfile": "# x", "parameters": "temperature 0", "template": "{{ .Prompt }}",
            "details": {"parent_model": "", "format": "gguf", "family": "qwen3", "families": ["qwen3"],
                        "parameter_size": "4.0B", "quantization_level": "Q4_K_M"},
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
            "capabilities": ["completion", "tools", "thinking"],
            "modified_at": "2026-01-01T00:00:00Z"
        }))
        .unwrap();
        assert_eq!(s.context_length(), Some(40960));
        assert!(s.has_capability("tools") && s.has_capability("thinking"));
        let r: ShowRequest = serde_json::from_str(r#"{"name":"old"}"#).unwrap();
        assert_eq!(r.model_name(), "old");
    }

    #[test]
    fn tags_ps_version() {
        let t: TagsResponse = serde_json::from_value(json!({"models": [{
            "name": "llama3.2:latest", "model": "llama3.2:latest", "modified_at": "2026-01-01T00:00:00Z",
            "size": 2019393189u64, "digest": "a80c", "details": {"parent_model": "", "format": "gguf",
            "family": "llama", "families": null, "parameter_size": "3.2B", "quantization_level": "Q4_K_M"}}]}))
        .unwrap();
        assert_eq!(t.models[0].details.parameter_size, "3.2B");
        let p: PsResponse = serde_json::from_value(json!({"models": [{
            "name": "m", "model": "m", "size": 1, "digest": "d", "details": {}, "expires_at": "x",
            "size_vram": 1, "context_length": 32768}]}))
        .unwrap();
        assert_eq!(p.models[0].context_length, 32768);
        let v: VersionResponse = serde_json::from_str(r#"{"version":"0.33.0"}"#).unwrap();
        assert_eq!(v.version, "0.33.0");
    }

    #[test]
    fn generate_minimal() {
        let g: GenerateRequest =
            serde_json::from_str(r#"{"model":"m","prompt":"hi","stream":false}"#).unwrap();
        assert_eq!(g.prompt, "hi");
        let r = GenerateResponse {
            model: "m".into(),
            created_at: "t".into(),
            response: "hello".into(),
            done: true,
            done_reason: Some("stop".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"model":"m","created_at":"t","response":"hello","done":true,"done_reason":"stop"}"#
        );
    }
}
