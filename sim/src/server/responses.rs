//! `POST /v1/responses`, the OpenAI Responses API that Ollama also serves (codex speaks only
//! this). The request is read through the shared translation onto the native chat exchange,
//! the simulated model answers it like any other conversation, and its native reply is turned
//! back into a `response` object or `response.*` events by the same translator the runner's
//! proxy uses. Like Ollama's endpoint it is stateless and carries no context length, so the
//! server's default context applies.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use lrab_ollama::responses::{id_base, responses_to_native, ResponsesTranslator};
use lrab_ollama::ChatRequest;
use serde_json::Value;

use super::chat::{generate_turn, mark_loaded, window};
use super::{
    check_model, faults, json_response, log_exchange, openai_error, parse_body, stream_response,
    Api, St,
};
use crate::convo::Conv;
use crate::faults::Fault;
use crate::render;

pub(super) async fn responses(s: St, key: String, body: Bytes) -> Response {
    let fault = match faults(&s, "/v1/responses", &body, Api::OpenAi).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let raw: Value = match parse_body(&body) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return openai_error(StatusCode::BAD_REQUEST, "request body must be an object"),
        Err(e) => return openai_error(StatusCode::BAD_REQUEST, e),
    };
    let req: ChatRequest = match serde_json::from_value(responses_to_native(&raw)) {
        Ok(r) => r,
        Err(e) => return openai_error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let m = match check_model(&s, Api::OpenAi, &req.model, !req.tools().is_empty(), None) {
        Ok(m) => m,
        Err(r) => return r,
    };
    if req.messages.is_empty() {
        return openai_error(StatusCode::BAD_REQUEST, "input is required");
    }
    let conv = Conv::from_native(&req, false);
    // like /v1/chat/completions, the Responses API carries no num_ctx: the server default applies
    let num_ctx = window(&s, m, None);
    mark_loaded(&s, m, num_ctx);
    let (turn, mut frame) = match generate_turn(&s, &key, m, conv, num_ctx, Api::OpenAi).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    frame.model = req.model.clone();
    let created = u64::try_from(frame.created).unwrap_or(0);
    let base = id_base(&raw);
    let mut t = ResponsesTranslator::new(&req.model, base, created);
    let events: Vec<String> = render::native_stream(&frame, &turn)
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| t.line(&v))
        .filter(|e| !e.is_empty())
        .collect();
    if s.config.log_dir.is_some() {
        log_exchange(&s, &body, &events);
    }
    if raw["stream"].as_bool().unwrap_or(false) {
        stream_response("text/event-stream", events, fault == Some(Fault::MidStream))
    } else {
        let whole = serde_json::to_value(render::native_whole(&frame, &turn)).unwrap_or_default();
        json_response(
            StatusCode::OK,
            &ResponsesTranslator::new(&req.model, base, created).whole(&whole),
        )
    }
}
