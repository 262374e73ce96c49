//! The generating routes (`/api/chat`, `/v1/chat/completions`, `/api/generate`): serving
//! (context window, truncation, cache, durations), the model's turn, the server parser's
//! outcome for calls that do not parse, pacing by the time scale, the ledger.

use super::*;
use crate::convo::{Conv, Msg};
use crate::dialect::Outcome;
use crate::policy::{Env, Turn};
use crate::render::{Frame, Timing};
use crate::SimError;

pub(super) fn mark_loaded(s: &AppState, m: &ModelSpec, num_ctx: u64) {
    if let Ok(mut l) = s.loaded.lock() {
        l.insert(m.name.clone(), num_ctx);
    }
}

/// The window a request gets: its `num_ctx`, else the server default; at least 4, at most
/// the model's trained context (docs/sim.md, "Serving behaviour").
pub(super) fn window(s: &AppState, m: &ModelSpec, requested: Option<u64>) -> u64 {
    requested
        .filter(|n| *n > 0)
        .unwrap_or(s.config.default_ctx)
        .clamp(4, m.context_length)
}

/// One generation, paced by the time scale (see [`compute`]).
pub(super) async fn generate_turn(
    s: &AppState,
    key: &str,
    m: &ModelSpec,
    conv: Conv,
    num_ctx: u64,
    api: Api,
) -> Result<(Turn, Frame), Response> {
    let (out, paced) = compute(s, key, m, conv, num_ctx, api);
    if paced > 0 {
        tokio::time::sleep(Duration::from_nanos(paced)).await;
    }
    out
}

/// One generation without the wait: serving, the model's turn, timing, ledger, and the pacing
/// delay owed. Err is the finished error response of a call the server parser rejects.
#[allow(clippy::result_large_err)]
fn compute(
    s: &AppState,
    key: &str,
    m: &ModelSpec,
    conv: Conv,
    num_ctx: u64,
    api: Api,
) -> (Result<(Turn, Frame), Response>, u64) {
    let p = &m.profile;
    let served = s
        .serving
        .admit(key, &m.name, p.family, &p.speed, &conv, num_ctx);
    let mut visible = served.visible;
    visible.ctx_window = num_ctx;
    let mut turn = crate::reply::respond(
        &Env {
            model: m,
            seed: s.config.seed,
            tasks: &s.tasks,
        },
        &visible,
    );
    let eval = turn.eval_tokens();
    let timing = Timing {
        prompt_tokens: served.prompt_tokens,
        cached_tokens: served.cached_tokens,
        eval_tokens: eval,
        load_ns: served.load_ns,
        prompt_ns: served.prompt_ns,
        eval_ns: (p.speed.decode_s(eval) * 1e9) as u64,
    };
    let total = timing.total_ns();
    let paced = (total as f64 * s.config.time_scale) as u64;
    match turn.outcome.take() {
        Some(Outcome::Http500(msg)) => {
            s.serving.account(key, total, paced, 0, true);
            return (
                Err(api_error(api, StatusCode::INTERNAL_SERVER_ERROR, msg)),
                paced,
            );
        }
        Some(Outcome::Dropped(content)) => {
            turn.content = content;
            turn.calls.clear();
        }
        None => {}
    }
    s.serving.remember_reply(key, &m.name, &turn);
    s.serving
        .account(key, total, paced, turn.calls.len() as u64, false);
    let frame = Frame::new(&m.full_name(), &conv, &turn, timing);
    (Ok((turn, frame)), paced)
}

/// The server-side work of one native chat request (parse, serving, policy, render) without
/// HTTP or pacing: what the latency benchmark measures.
pub fn server_side_chat(s: &AppState, body: &[u8]) -> Result<Vec<String>, SimError> {
    let req: ChatRequest =
        serde_json::from_slice(body).map_err(|e| SimError::Request(e.to_string()))?;
    let m = catalog::lookup(&s.models, &req.model)
        .ok_or_else(|| SimError::Request(format!("unknown model `{}`", req.model)))?;
    let conv = Conv::from_native(&req, m.has("thinking"));
    let num_ctx = window(s, m, conv.num_ctx);
    match compute(s, "bench", m, conv, num_ctx, Api::Native).0 {
        Ok((turn, frame)) => Ok(render::native_stream(&frame, &turn)),
        Err(_) => Ok(vec![]),
    }
}

pub(super) async fn chat(s: St, key: String, body: Bytes) -> Response {
    let fault = match faults(&s, "/api/chat", &body, Api::Native).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let req: ChatRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(e) => return native_error(StatusCode::BAD_REQUEST, e),
    };
    let m = match check_model(
        &s,
        Api::Native,
        &req.model,
        !req.tools().is_empty(),
        req.think.as_ref(),
    ) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let conv = Conv::from_native(&req, m.has("thinking"));
    let num_ctx = window(&s, m, conv.num_ctx);
    let keep_alive_zero = matches!(&req.keep_alive, Some(Value::Number(n)) if n.as_f64() == Some(0.0))
        || matches!(&req.keep_alive, Some(Value::String(t)) if t == "0" || t == "0s");
    if req.messages.is_empty() {
        let reason = if keep_alive_zero {
            if let Ok(mut l) = s.loaded.lock() {
                l.remove(&m.name);
            }
            "unload"
        } else {
            mark_loaded(&s, m, num_ctx);
            "load"
        };
        let r = lrab_ollama::ChatResponse {
            model: req.model.clone(),
            created_at: render::rfc3339(render::sim_unix(0), 0),
            message: lrab_ollama::Message::assistant(""),
            done_reason: Some(reason.into()),
            done: true,
            ..Default::default()
        };
        return json_response(StatusCode::OK, &r);
    }
    mark_loaded(&s, m, num_ctx);
    let (turn, mut frame) = match generate_turn(&s, &key, m, conv, num_ctx, Api::Native).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    frame.model = req.model.clone();
    if s.config.log_dir.is_some() {
        log_exchange(&s, &body, &render::native_stream(&frame, &turn));
    }
    if req.streaming() {
        stream_response(
            "application/x-ndjson",
            render::native_stream(&frame, &turn),
            fault == Some(Fault::MidStream),
        )
    } else if fault == Some(Fault::MidStream) {
        let body = serde_json::to_string(&render::native_whole(&frame, &turn)).unwrap_or_default();
        let mut half = body.len() / 2;
        while !body.is_char_boundary(half) {
            half -= 1;
        }
        broken_body(vec![body[..half].to_string()])
    } else {
        json_response(StatusCode::OK, &render::native_whole(&frame, &turn))
    }
}

pub(super) async fn v1_chat(s: St, key: String, body: Bytes) -> Response {
    let fault = match faults(&s, "/v1/chat/completions", &body, Api::OpenAi).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let req: openai::ChatCompletionRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(e) => return openai_error(StatusCode::BAD_REQUEST, e),
    };
    let only = s.config.api == ServeApi::Openai;
    let think = match req.think() {
        _ if only => None,
        Ok(t) => t,
        Err(v) => {
            return openai_error(
                StatusCode::BAD_REQUEST,
                format!("invalid reasoning value: '{v}'"),
            )
        }
    };
    let has_tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
    let m = match check_model(&s, Api::OpenAi, &req.model, has_tools, think.as_ref()) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let think = match only {
        true => match openai_only::think(&req, m.has("thinking")) {
            Ok(t) => t,
            Err(e) => return openai_error(StatusCode::BAD_REQUEST, e),
        },
        false => think,
    };
    if req.messages.is_empty() {
        return openai_error(StatusCode::BAD_REQUEST, "[] is too short - 'messages'");
    }
    let mut conv = Conv::from_openai(&req, think.as_ref().is_some_and(|t| t.enabled()));
    // /v1 cannot carry num_ctx: the server default applies
    let num_ctx = window(&s, m, None);
    if only {
        match openai_only::fit(
            crate::serving::prompt_tokens(&conv),
            conv.num_predict,
            num_ctx,
        ) {
            Ok(cap) => conv.num_predict = Some(cap),
            Err(r) => return r,
        }
    }
    mark_loaded(&s, m, num_ctx);
    let (turn, mut frame) = match generate_turn(&s, &key, m, conv, num_ctx, Api::OpenAi).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    frame.model = req.model.clone();
    if s.config.log_dir.is_some() {
        log_exchange(&s, &body, &render::openai_stream(&frame, &turn, false));
    }
    let cached = frame.metrics.prompt_eval_cached_count.unwrap_or(0);
    match (req.streaming(), only) {
        (true, _) => {
            let mut parts = render::openai_stream(&frame, &turn, req.include_usage());
            if only {
                parts = openai_only::events(parts, cached);
            }
            stream_response("text/event-stream", parts, fault == Some(Fault::MidStream))
        }
        (false, true) => openai_only::whole(&render::openai_whole(&frame, &turn), cached),
        (false, false) => json_response(StatusCode::OK, &render::openai_whole(&frame, &turn)),
    }
}

pub(super) async fn generate(s: St, key: String, body: Bytes) -> Response {
    let fault = match faults(&s, "/api/generate", &body, Api::Native).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let req: GenerateRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(e) => return native_error(StatusCode::BAD_REQUEST, e),
    };
    let m = match check_model(&s, Api::Native, &req.model, false, req.think.as_ref()) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let mut conv = Conv {
        think: req.think.as_ref().map(|t| t.enabled()).unwrap_or(false),
        num_predict: req
            .options
            .as_ref()
            .and_then(|o| o.num_predict)
            .filter(|n| *n > 0)
            .map(|n| n as u64),
        ..Default::default()
    };
    if let Some(sys) = &req.system {
        conv.messages.push(Msg {
            role: "system".into(),
            content: sys.clone(),
            calls: vec![],
        });
    }
    let num_ctx = window(&s, m, req.options.as_ref().and_then(|o| o.num_ctx));
    mark_loaded(&s, m, num_ctx);
    if req.prompt.is_empty() {
        let r = GenerateResponse {
            model: req.model.clone(),
            created_at: render::rfc3339(render::sim_unix(0), 0),
            done: true,
            done_reason: Some("load".into()),
            ..Default::default()
        };
        return json_response(StatusCode::OK, &r);
    }
    conv.messages.push(Msg {
        role: "user".into(),
        content: req.prompt.clone(),
        calls: vec![],
    });
    let (turn, frame) = match generate_turn(&s, &key, m, conv, num_ctx, Api::Native).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let whole = GenerateResponse {
        model: req.model.clone(),
        created_at: frame.created_at.clone(),
        response: turn.content.clone(),
        thinking: turn.thinking.clone(),
        done: true,
        done_reason: Some(turn.done_reason.to_string()),
        context: None,
        metrics: frame.metrics.clone(),
    };
    if req.stream.unwrap_or(true) {
        let mut lines = Vec::new();
        for p in render::pieces(&turn.content, 48) {
            let c = GenerateResponse {
                model: req.model.clone(),
                created_at: frame.created_at.clone(),
                response: p.to_string(),
                ..Default::default()
            };
            lines.push(serde_json::to_string(&c).unwrap_or_default() + "\n");
        }
        let mut last = whole;
        last.response = String::new();
        last.thinking = None;
        lines.push(serde_json::to_string(&last).unwrap_or_default() + "\n");
        stream_response(
            "application/x-ndjson",
            lines,
            fault == Some(Fault::MidStream),
        )
    } else {
        json_response(StatusCode::OK, &whole)
    }
}
