//! The HTTP server: Ollama's native routes and its OpenAI-compatible routes (chat completions,
//! and the Responses API in `server/responses.rs`), with Ollama's
//! error shapes and status codes. Bad input never panics the server.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use lrab_ollama::{openai, ChatRequest, ErrorBody, GenerateRequest, GenerateResponse, ShowRequest};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::catalog::{self, ModelSpec};
use crate::convo::{Conv, Msg};
use crate::faults::Fault;
use crate::policy::{self, fnv, Env, FNV0};
use crate::render::{self, Frame};
use crate::task::TaskIndex;
use crate::SimConfig;

mod responses;

/// Shared server state.
pub struct AppState {
    pub models: Vec<ModelSpec>,
    pub tasks: TaskIndex,
    pub config: SimConfig,
    attempts: Mutex<HashMap<u64, u32>>,
    /// Loaded models and their allocated context, for `/api/ps`.
    loaded: Mutex<BTreeMap<String, u64>>,
    log_seq: std::sync::atomic::AtomicU64,
}

impl AppState {
    pub fn new(models: Vec<ModelSpec>, tasks: TaskIndex, config: SimConfig) -> AppState {
        AppState {
            models,
            tasks,
            config,
            attempts: Mutex::new(HashMap::new()),
            loaded: Mutex::new(BTreeMap::new()),
            log_seq: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

type St = Arc<AppState>;

/// Writes a request and its reply parts into the log folder, if one is configured.
fn log_exchange(s: &AppState, body: &Bytes, parts: &[String]) {
    let Some(dir) = &s.config.log_dir else { return };
    let n = s.log_seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(format!("{n:06}-request.json")), body);
    let _ = std::fs::write(dir.join(format!("{n:06}-reply.txt")), parts.concat());
}

pub fn router(state: St) -> Router {
    Router::new()
        .route("/", get(root).head(root))
        .route("/api/version", get(version))
        .route("/api/tags", get(tags))
        .route("/api/ps", get(ps))
        .route("/api/show", post(show))
        .route("/api/chat", post(chat))
        .route("/api/generate", post(generate))
        .route("/v1/chat/completions", post(v1_chat))
        .route("/v1/responses", post(responses::responses))
        .route("/v1/models", get(v1_models))
        .route("/v1/models/{*model}", get(v1_model))
        .fallback(not_found)
        .with_state(state)
}

async fn root() -> &'static str {
    "Ollama is running"
}

async fn not_found(method: Method, uri: Uri) -> Response {
    let _ = method;
    (
        StatusCode::NOT_FOUND,
        format!("404 page not found: {}", uri.path()),
    )
        .into_response()
}

fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    (
        status,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        bytes,
    )
        .into_response()
}

fn native_error(status: StatusCode, msg: impl Into<String>) -> Response {
    json_response(status, &ErrorBody::new(msg))
}

fn openai_error(status: StatusCode, msg: impl Into<String>) -> Response {
    json_response(
        status,
        &openai::ErrorResponse::for_status(status.as_u16(), msg),
    )
}

async fn version(State(s): State<St>) -> Response {
    json_response(StatusCode::OK, &json!({"version": s.config.version}))
}

fn details(m: &ModelSpec) -> lrab_ollama::ModelDetails {
    lrab_ollama::ModelDetails {
        parent_model: String::new(),
        format: "gguf".into(),
        family: m.family.clone(),
        families: Some(vec![m.family.clone()]),
        parameter_size: m.parameter_size.clone(),
        quantization_level: "Q4_K_M".into(),
    }
}

fn modified_at() -> String {
    render::rfc3339(render::EPOCH_UNIX, 0)
}

async fn tags(State(s): State<St>) -> Response {
    let models = s
        .models
        .iter()
        .map(|m| lrab_ollama::ListModel {
            name: m.full_name(),
            model: m.full_name(),
            modified_at: modified_at(),
            size: m.size_bytes,
            digest: m.digest(),
            details: details(m),
            capabilities: Some(m.capabilities.clone()),
        })
        .collect();
    json_response(StatusCode::OK, &lrab_ollama::TagsResponse { models })
}

async fn ps(State(s): State<St>) -> Response {
    let loaded = s.loaded.lock().map(|l| l.clone()).unwrap_or_default();
    let models = loaded
        .iter()
        .filter_map(|(name, ctx)| {
            let m = catalog::lookup(&s.models, name)?;
            Some(lrab_ollama::PsModel {
                name: m.full_name(),
                model: m.full_name(),
                size: m.size_bytes,
                digest: m.digest(),
                details: details(m),
                expires_at: render::rfc3339(render::EPOCH_UNIX + 300, 0),
                size_vram: m.size_bytes,
                context_length: *ctx,
            })
        })
        .collect();
    json_response(StatusCode::OK, &lrab_ollama::PsResponse { models })
}

/// Parses a JSON body the way Ollama reports problems: empty → "missing request body",
/// malformed → the decoder's message, both 400.
fn parse_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, String> {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Err("missing request body".into());
    }
    serde_json::from_slice(body).map_err(|e| e.to_string())
}

async fn show(State(s): State<St>, body: Bytes) -> Response {
    let req: ShowRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(e) => return native_error(StatusCode::BAD_REQUEST, e),
    };
    let name = req.model_name().to_string();
    if name.is_empty() {
        return native_error(StatusCode::BAD_REQUEST, "model is required");
    }
    let Some(m) = catalog::lookup(&s.models, &name) else {
        return native_error(StatusCode::NOT_FOUND, format!("model '{name}' not found"));
    };
    let mut info = Map::new();
    info.insert("general.architecture".into(), json!(m.family));
    info.insert("general.parameter_count".into(), json!(m.size_bytes * 2));
    info.insert(
        format!("{}.context_length", m.family),
        json!(m.context_length),
    );
    let resp = lrab_ollama::ShowResponse {
        license: Some("simulated model; not a real model".into()),
        modelfile: Some(format!(
            "# Modelfile generated by lrab-sim\nFROM {}\n",
            m.full_name()
        )),
        parameters: Some("temperature 0".into()),
        template: Some("{{ .Prompt }}".into()),
        details: details(m),
        model_info: Some(info),
        capabilities: m.capabilities.clone(),
        modified_at: Some(modified_at()),
        ..Default::default()
    };
    json_response(StatusCode::OK, &resp)
}

async fn v1_models(State(s): State<St>) -> Response {
    let data = s
        .models
        .iter()
        .map(|m| openai::Model {
            id: m.full_name(),
            object: "model".into(),
            created: render::EPOCH_UNIX,
            owned_by: "library".into(),
        })
        .collect();
    json_response(
        StatusCode::OK,
        &openai::ModelList {
            object: "list".into(),
            data,
        },
    )
}

async fn v1_model(State(s): State<St>, Path(model): Path<String>) -> Response {
    match catalog::lookup(&s.models, &model) {
        Some(m) => json_response(
            StatusCode::OK,
            &openai::Model {
                id: m.full_name(),
                object: "model".into(),
                created: render::EPOCH_UNIX,
                owned_by: "library".into(),
            },
        ),
        None => openai_error(StatusCode::NOT_FOUND, format!("model '{model}' not found")),
    }
}

/// Which API a request came through (error shapes differ).
#[derive(Clone, Copy, PartialEq)]
enum Api {
    Native,
    OpenAi,
}

fn api_error(api: Api, status: StatusCode, msg: impl Into<String>) -> Response {
    match api {
        Api::Native => native_error(status, msg),
        Api::OpenAi => openai_error(status, msg),
    }
}

/// Applies the configured faults; Err(response) short-circuits the request.
#[allow(clippy::result_large_err)]
async fn faults(
    s: &AppState,
    route: &str,
    body: &Bytes,
    api: Api,
) -> Result<Option<Fault>, Response> {
    let fc = &s.config.faults;
    if !fc.any() {
        return Ok(None);
    }
    let key = fnv(
        fnv(fnv(FNV0, &s.config.seed.to_le_bytes()), route.as_bytes()),
        body,
    );
    let attempt = {
        let mut a = s
            .attempts
            .lock()
            .map_err(|_| api_error(api, StatusCode::INTERNAL_SERVER_ERROR, "state poisoned"))?;
        let e = a.entry(key).or_insert(0);
        *e += 1;
        *e
    };
    let (fault, delay) = fc.choose(key, attempt);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    match fault {
        Some(Fault::Http500) => Err(api_error(
            api,
            StatusCode::INTERNAL_SERVER_ERROR,
            "simulated server error",
        )),
        Some(Fault::Drop) => Err(broken_body(vec![])),
        Some(Fault::Malformed) => Err((
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
            "{\"model\":\"sim\",\"message\":{\"role\":\"assistant\",\"content\":\"",
        )
            .into_response()),
        other => Ok(other),
    }
}

/// A response whose body yields `parts` and then fails, which aborts the connection.
fn broken_body(parts: Vec<String>) -> Response {
    let stream = futures_util::stream::iter(
        parts
            .into_iter()
            .map(|p| Ok::<Bytes, std::io::Error>(Bytes::from(p)))
            .chain(std::iter::once(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "simulated disconnect",
            )))),
    );
    Response::builder()
        .status(StatusCode::OK)
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn stream_response(content_type: &'static str, parts: Vec<String>, cut: bool) -> Response {
    if cut {
        let half = parts.len() / 2;
        let mut parts = parts;
        parts.truncate(half.max(1));
        let mut r = broken_body(parts);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(content_type),
        );
        return r;
    }
    let stream = futures_util::stream::iter(
        parts
            .into_iter()
            .map(|p| Ok::<Bytes, Infallible>(Bytes::from(p))),
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Model lookup and capability checks shared by both chat APIs. (The error is the finished
/// HTTP response; it is built at most once per request, so its size does not matter.)
#[allow(clippy::result_large_err)]
fn check_model<'a>(
    s: &'a AppState,
    api: Api,
    name: &str,
    has_tools: bool,
    think: Option<&lrab_ollama::Think>,
) -> Result<&'a ModelSpec, Response> {
    if name.trim().is_empty() {
        return Err(api_error(api, StatusCode::BAD_REQUEST, "model is required"));
    }
    let Some(m) = catalog::lookup(&s.models, name) else {
        return Err(api_error(
            api,
            StatusCode::NOT_FOUND,
            format!("model '{name}' not found"),
        ));
    };
    if has_tools && !m.has("tools") {
        return Err(api_error(
            api,
            StatusCode::BAD_REQUEST,
            format!(
                "registry.ollama.ai/library/{} does not support tools",
                m.full_name()
            ),
        ));
    }
    if let Some(t) = think {
        if !t.is_valid() {
            return Err(api_error(
                api,
                StatusCode::BAD_REQUEST,
                format!(
                    "invalid think value: {}",
                    serde_json::to_string(t).unwrap_or_default()
                ),
            ));
        }
        if t.enabled() && !m.has("thinking") {
            return Err(api_error(
                api,
                StatusCode::BAD_REQUEST,
                format!("\"{name}\" does not support thinking"),
            ));
        }
    }
    Ok(m)
}

fn mark_loaded(s: &AppState, m: &ModelSpec, num_ctx: Option<u64>) {
    if let Ok(mut l) = s.loaded.lock() {
        l.insert(m.name.clone(), num_ctx.unwrap_or(s.config.default_ctx));
    }
}

async fn chat(State(s): State<St>, body: Bytes) -> Response {
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
    let keep_alive_zero = matches!(&req.keep_alive, Some(Value::Number(n)) if n.as_f64() == Some(0.0))
        || matches!(&req.keep_alive, Some(Value::String(t)) if t == "0" || t == "0s");
    if req.messages.is_empty() {
        let reason = if keep_alive_zero {
            if let Ok(mut l) = s.loaded.lock() {
                l.remove(&m.name);
            }
            "unload"
        } else {
            mark_loaded(&s, m, conv.num_ctx);
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
    mark_loaded(&s, m, conv.num_ctx);
    let turn = policy::respond(
        &Env {
            model: m,
            seed: s.config.seed,
            tasks: &s.tasks,
        },
        &conv,
    );
    let frame = Frame::new(&req.model, m, &conv, &turn);
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

async fn v1_chat(State(s): State<St>, body: Bytes) -> Response {
    let fault = match faults(&s, "/v1/chat/completions", &body, Api::OpenAi).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let req: openai::ChatCompletionRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(e) => return openai_error(StatusCode::BAD_REQUEST, e),
    };
    let think = match req.think() {
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
    if req.messages.is_empty() {
        return openai_error(StatusCode::BAD_REQUEST, "[] is too short - 'messages'");
    }
    let conv = Conv::from_openai(&req, think.as_ref().is_some_and(|t| t.enabled()));
    mark_loaded(&s, m, None);
    let turn = policy::respond(
        &Env {
            model: m,
            seed: s.config.seed,
            tasks: &s.tasks,
        },
        &conv,
    );
    let frame = Frame::new(&req.model, m, &conv, &turn);
    if s.config.log_dir.is_some() {
        log_exchange(&s, &body, &render::openai_stream(&frame, &turn, false));
    }
    if req.streaming() {
        stream_response(
            "text/event-stream",
            render::openai_stream(&frame, &turn, req.include_usage()),
            fault == Some(Fault::MidStream),
        )
    } else {
        json_response(StatusCode::OK, &render::openai_whole(&frame, &turn))
    }
}

async fn generate(State(s): State<St>, body: Bytes) -> Response {
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
    mark_loaded(&s, m, req.options.as_ref().and_then(|o| o.num_ctx));
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
    let turn = policy::respond(
        &Env {
            model: m,
            seed: s.config.seed,
            tasks: &s.tasks,
        },
        &conv,
    );
    let frame = Frame::new(&req.model, m, &conv, &turn);
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
