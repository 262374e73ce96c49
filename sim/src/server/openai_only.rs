//! `lrab sim serve --api openai`: the simulator as an OpenAI-compatible server only, the way
//! vLLM serves a model (docs/sim.md, "Serving the OpenAI API only"). No `/api/*` route;
//! `/v1/models` says `owned_by: vllm` and `max_model_len`; thinking is switched by the chat
//! template's `chat_template_kwargs.enable_thinking` (on by default for a thinking model,
//! as Qwen3's template does), `reasoning_effort` other than low/medium/high is refused; a
//! prompt longer than the window is refused with 400 instead of silently cut (as every
//! OpenAI-compatible server does, and Ollama does not), `max_tokens` is cut to the room left;
//! usage carries the cached prompt tokens in `prompt_tokens_details`. The model behind it is
//! the simulator's, unchanged.

use super::*;

/// Which API the simulator serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ServeApi {
    /// Ollama's native API and its `/v1` (the default).
    #[default]
    Ollama,
    /// Only the OpenAI API, as vLLM serves it.
    Openai,
}

/// Whether `path` exists on the OpenAI-only server.
pub(super) fn routed(path: &str) -> bool {
    path == "/v1/models"
        || path.starts_with("/v1/models/")
        || path == "/v1/chat/completions"
        || path == "/health"
}

/// What vLLM's FastAPI answers for a route it does not have.
pub(super) fn not_found() -> Response {
    json_response(StatusCode::NOT_FOUND, &json!({"detail": "Not Found"}))
}

/// `/v1/models` as vLLM lists them, with the simulator's marker (so a run through it is
/// labelled simulated; no ledger: `/lrab-cell/` routes are Ollama-only).
pub(super) fn models(s: &AppState) -> Response {
    let data: Vec<Value> = s
        .models
        .iter()
        .map(|m| {
            json!({"id": m.full_name(), "object": "model", "created": render::EPOCH_UNIX,
                "owned_by": "vllm", "root": m.full_name(), "parent": null,
                "max_model_len": m.context_length.min(s.config.default_ctx)})
        })
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"object": "list", "data": data,
            "lrab_sim": {"simulated": true, "time_scale": s.config.time_scale, "ledger": false}}),
    )
}

/// Thinking as vLLM's chat template reads it: `chat_template_kwargs.enable_thinking` (absent:
/// the template's default, thinking for a model that can). `reasoning_effort` does not switch
/// a hybrid model's thinking; a value vLLM does not accept is a 400 (Err: the message).
pub(super) fn think(
    req: &openai::ChatCompletionRequest,
    can_think: bool,
) -> Result<Option<lrab_ollama::Think>, String> {
    if let Some(e) = &req.reasoning_effort {
        if !matches!(e.as_str(), "low" | "medium" | "high") {
            return Err(format!(
                "1 validation error for ChatCompletionRequest\nreasoning_effort\n  Input should be \
                 'low', 'medium' or 'high' [type=literal_error, input_value='{e}', input_type=str]"
            ));
        }
    }
    let on = match &req
        .extra
        .get("chat_template_kwargs")
        .map(|k| &k["enable_thinking"])
    {
        Some(Value::Bool(b)) => *b,
        _ => can_think,
    };
    Ok(Some(lrab_ollama::Think::Bool(on)))
}

/// The reply's token cap in a window of `window` tokens: what was asked, at most what is left
/// after the prompt (llama.cpp's server and llama-cpp-python cut `max_tokens` to the room
/// left, as the real server did on the same requests; vLLM would refuse instead). A prompt
/// that leaves no room is refused, as every OpenAI-compatible server does (Err: the 400, built
/// at most once per request, as `check_model`'s).
#[allow(clippy::result_large_err)]
pub(super) fn fit(prompt: u64, asked: Option<u64>, window: u64) -> Result<u64, Response> {
    if prompt < window {
        let room = window - prompt;
        return Ok(asked.map_or(room, |a| a.min(room)));
    }
    let msg = format!(
        "This model's maximum context length is {window} tokens. However, your messages \
         resulted in {prompt} tokens. Please reduce the length of the messages."
    );
    Err(json_response(
        StatusCode::BAD_REQUEST,
        &json!({"error": {"message": msg, "type": "invalid_request_error", "param": "messages",
            "code": "context_length_exceeded"}}),
    ))
}

/// A usage object with the cached prompt tokens (vLLM's `prompt_tokens_details`).
fn with_cached(usage: &mut Value, cached: u64) {
    if usage.is_object() {
        usage["prompt_tokens_details"] = json!({ "cached_tokens": cached });
    }
}

/// The whole reply with the cached tokens in its usage.
pub(super) fn whole(c: &openai::ChatCompletion, cached: u64) -> Response {
    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
    with_cached(&mut v["usage"], cached);
    json_response(StatusCode::OK, &v)
}

/// The SSE events with the cached tokens in the usage event.
pub(super) fn events(parts: Vec<String>, cached: u64) -> Vec<String> {
    parts
        .into_iter()
        .map(|p| {
            let Some(data) = p.strip_prefix("data: ") else {
                return p;
            };
            match serde_json::from_str::<Value>(data.trim_end()) {
                Ok(mut v) if v["usage"].is_object() => {
                    with_cached(&mut v["usage"], cached);
                    openai::sse_data(&v.to_string())
                }
                _ => p,
            }
        })
        .collect()
}
