//! The HTTP server: Ollama's native routes and its OpenAI-compatible routes (chat completions,
//! and the Responses API in `server/responses.rs`), with Ollama's
//! error shapes and status codes. Bad input never panics the server.
//!
//! `--api openai` serves only the OpenAI routes, as vLLM does (`server/openai_only.rs`).
//!
//! Every route is also served under `/lrab-cell/<key>/…`; the key names the ledger (and the
//! KV-cache slot) the request is counted in. `GET /lrab-sim/ledger/<key>` reads a ledger.

mod chat;
mod openai_only;

pub(crate) use chat::server_side_chat;
pub use openai_only::ServeApi;

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use lrab_ollama::{openai, ChatRequest, ErrorBody, GenerateRequest, GenerateResponse, ShowRequest};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::catalog::{self, ModelSpec};
use crate::faults::Fault;
use crate::policy::{fnv, FNV0};
use crate::render;
use crate::serving::Serving;
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
    pub(crate) serving: Serving,
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
            serving: Serving::default(),
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
    Router::new().fallback(dispatch).with_state(state)
}

/// Longest body the server reads (a 30k-token conversation is about 150 kB).
const MAX_BODY: usize = 64 << 20;

/// Routes by hand so that every route also works under a `/lrab-cell/<key>` prefix.
async fn dispatch(State(s): State<St>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let body = match axum::body::to_bytes(req.into_body(), MAX_BODY).await {
        Ok(b) => b,
        Err(e) => {
            return native_error(
                StatusCode::BAD_REQUEST,
                format!("cannot read request body: {e}"),
            )
        }
    };
    let (key, rest) = match path.strip_prefix("/lrab-cell/") {
        Some(r) => match r.split_once('/') {
            Some((k, rest)) => (k.to_string(), format!("/{rest}")),
            None => (r.to_string(), "/".to_string()),
        },
        None => (String::new(), path.clone()),
    };
    let get = method == Method::GET || method == Method::HEAD;
    let post = method == Method::POST;
    if s.config.api == ServeApi::Openai {
        return match rest.as_str() {
            r if !key.is_empty() || !openai_only::routed(r) => openai_only::not_found(),
            "/health" if get => StatusCode::OK.into_response(),
            "/v1/models" if get => openai_only::models(&s),
            "/v1/chat/completions" if post => chat::v1_chat(s, key, body).await,
            r if get && r.starts_with("/v1/models/") => {
                v1_model(s, r["/v1/models/".len()..].to_string())
            }
            _ => openai_only::not_found(),
        };
    }
    match rest.as_str() {
        "/" | "" if get => "Ollama is running".into_response(),
        "/api/version" if get => version(s),
        "/api/tags" if get => tags(s),
        "/api/ps" if get => ps(s),
        "/api/show" if post => show(s, body),
        "/api/chat" if post => chat::chat(s, key, body).await,
        "/api/generate" if post => chat::generate(s, key, body).await,
        "/v1/chat/completions" if post => chat::v1_chat(s, key, body).await,
        "/v1/responses" if post => responses::responses(s, key, body).await,
        "/v1/models" if get => v1_models(s),
        r if get && r.starts_with("/v1/models/") => {
            v1_model(s, r["/v1/models/".len()..].to_string())
        }
        r if get && key.is_empty() && r.starts_with("/lrab-sim/ledger/") => json_response(
            StatusCode::OK,
            &s.serving.ledger(&r["/lrab-sim/ledger/".len()..]),
        ),
        _ => (StatusCode::NOT_FOUND, format!("404 page not found: {path}")).into_response(),
    }
}

pub(crate) fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    (
        status,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        bytes,
    )
        .into_response()
}

pub(crate) fn native_error(status: StatusCode, msg: impl Into<String>) -> Response {
    json_response(status, &ErrorBody::new(msg))
}

pub(crate) fn openai_error(status: StatusCode, msg: impl Into<String>) -> Response {
    json_response(
        status,
        &openai::ErrorResponse::for_status(status.as_u16(), msg),
    )
}

fn version(s: St) -> Response {
    json_response(
        StatusCode::OK,
        &json!({"version": s.config.version, "lrab_sim": {"simulated": true, "time_scale": s.config.time_scale, "ledger": true}}),
    )
}

fn details(m: &ModelSpec) -> lrab_ollama::ModelDetails {
    lrab_ollama::ModelDetails {
        parent_model: String::new(),
        format: "gguf".into(),
        family: m.profile.family.architecture().to_string(),
        families: Some(vec![m.profile.family.architecture().to_string()]),
        parameter_size: m.parameter_size.clone(),
        quantization_level: "Q4_K_M".into(),
    }
}

fn modified_at() -> String {
    render::rfc3339(render::EPOCH_UNIX, 0)
}

fn tags(s: St) -> Response {
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

fn ps(s: St) -> Response {
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

fn show(s: St, body: Bytes) -> Response {
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
    info.insert(
        "general.architecture".into(),
        json!(m.profile.family.architecture()),
    );
    info.insert("general.parameter_count".into(), json!(m.size_bytes * 2));
    info.insert(
        format!("{}.context_length", m.profile.family.architecture()),
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

fn v1_models(s: St) -> Response {
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

fn v1_model(s: St, model: String) -> Response {
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
