//! What a request becomes: the upstream target and body (normalized, rewritten onto the native
//! API or onto an OpenAI backend's chat completions), and what is recorded of it.

use serde_json::Value;

use lrab_ollama::responses::{id_base, responses_to_native};
use lrab_records::{ThinkSetting, TrajectoryMessage};

use super::tap::Wire;
use super::translate::{normalize_native, normalize_openai, openai_to_native, pin_think};
use super::{fast_request, fast_to_openai};
use super::{Incoming, ProxyConfig, Reasoning};

/// How a request is forwarded and its answer relayed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `/api/chat` (normalized or untouched): NDJSON relayed line by line.
    Native,
    /// `/v1/chat/completions` rewritten onto `/api/chat`, answer translated back.
    V1,
    /// `/v1/responses` rewritten onto `/api/chat`, answer translated back.
    Responses,
    /// An OpenAI request forwarded as OpenAI (normalized or untouched).
    Pass(Wire),
    /// Anything else: bytes through, nothing recorded.
    Raw,
}

/// What is sent upstream and what is recorded.
pub(super) struct Plan {
    pub(super) mode: Mode,
    pub(super) target: String,
    /// (The arm's own bytes, shared, when forwarded as they came.)
    pub(super) body: bytes::Bytes,
    pub(super) model: String,
    pub(super) stream: bool,
    pub(super) include_usage: bool,
    pub(super) base: usize,
    /// The request as a native body, for the trajectory.
    pub(super) recorded: Value,
    /// What the trajectory reads of the request (tool names, messages), when the plan read
    /// it already ([`super::fast_request`]; `recorded` is then null).
    pub(super) read: Option<(Vec<String>, Vec<TrajectoryMessage>)>,
    /// A request forwarded untouched is parsed for the trajectory only after it was answered.
    pub(super) deferred: bool,
    /// The native body goes to an OpenAI backend as chat completions; its answer comes back
    /// through [`super::openai_upstream::ToNative`].
    pub(super) up_openai: bool,
}

pub(super) fn plan(cfg: &ProxyConfig, r: &Incoming) -> Plan {
    let plain = r.path.split('?').next().unwrap_or("");
    // a native request is forwarded byte for byte unless something in it must change
    let untouched = !cfg.normalize && cfg.openai.is_none() && cfg.think == ThinkSetting::Off;
    let raw = raw_plan(r);
    if plain == "/api/chat" && r.method == "POST" && untouched {
        return Plan {
            mode: Mode::Native,
            deferred: true,
            ..raw
        };
    }
    if let Some(p) = fast_plan(cfg, r, plain) {
        return p;
    }
    let rewrite = cfg.normalize && cfg.v1_to_native;
    let parsed: Option<Value> = (r.method == "POST" && (!untouched || plain != "/api/chat"))
        .then(|| serde_json::from_slice(&r.body).ok())
        .flatten();
    let Some(mut v) = parsed else {
        return raw;
    };
    let model = v["model"].as_str().unwrap_or("").to_string();
    let p = match plain {
        "/api/chat" => {
            if cfg.normalize {
                normalize_native(&mut v, cfg.num_ctx, cfg.think);
            } else if cfg.think != ThinkSetting::Off {
                pin_think(&mut v, cfg.think);
            }
            let body = if untouched {
                r.body.clone()
            } else {
                v.to_string().into()
            };
            Plan {
                mode: Mode::Native,
                stream: v["stream"].as_bool().unwrap_or(true),
                body,
                model,
                recorded: v,
                ..raw
            }
        }
        "/v1/chat/completions" if rewrite && cfg.openai.is_none() => {
            let n = openai_to_native(&v, cfg.num_ctx, cfg.think);
            Plan {
                mode: Mode::V1,
                target: "/api/chat".into(),
                body: n.to_string().into(),
                stream: n["stream"].as_bool().unwrap_or(false),
                include_usage: v["stream_options"]["include_usage"]
                    .as_bool()
                    .unwrap_or(false),
                model,
                recorded: n,
                ..raw
            }
        }
        "/v1/responses" if rewrite => {
            let mut n = responses_to_native(&v);
            normalize_native(&mut n, cfg.num_ctx, cfg.think);
            Plan {
                mode: Mode::Responses,
                target: "/api/chat".into(),
                body: n.to_string().into(),
                stream: n["stream"].as_bool().unwrap_or(false),
                base: id_base(&v),
                model,
                recorded: n,
                ..raw
            }
        }
        "/v1/chat/completions" | "/v1/responses" => pass(cfg, r, v, plain, raw),
        _ => raw,
    };
    match &cfg.openai {
        Some(up) if matches!(p.mode, Mode::Native | Mode::Responses) => Plan {
            target: "/v1/chat/completions".into(),
            body: up.chat_request(&p.recorded, p.stream).to_string().into(),
            up_openai: true,
            ..p
        },
        _ => p,
    }
}

/// A request forwarded as it came, and the base of every other plan.
fn raw_plan(r: &Incoming) -> Plan {
    Plan {
        mode: Mode::Raw,
        target: r.path.to_string(),
        body: r.body.clone(),
        model: String::new(),
        stream: false,
        include_usage: false,
        base: 0,
        recorded: Value::Null,
        read: None,
        deferred: false,
        up_openai: false,
    }
}

/// The plans made without JSON trees of the request, when the request is one they read
/// exactly: `/v1` → native, native → an OpenAI backend (both normalized).
fn fast_plan(cfg: &ProxyConfig, r: &Incoming, plain: &str) -> Option<Plan> {
    if r.method != "POST" || !cfg.normalize {
        return None;
    }
    match (plain, &cfg.openai) {
        ("/v1/chat/completions", None) if cfg.v1_to_native => {
            let n = fast_request::v1_to_native(&r.body, cfg.num_ctx, cfg.think)?;
            Some(Plan {
                mode: Mode::V1,
                target: "/api/chat".into(),
                body: n.body.into(),
                stream: n.stream,
                include_usage: n.include_usage,
                model: n.model,
                read: Some((n.tools, n.messages)),
                ..raw_plan(r)
            })
        }
        ("/api/chat", Some(up)) => {
            let o = fast_to_openai::native_to_openai(&r.body, up, cfg.think)?;
            Some(Plan {
                mode: Mode::Native,
                target: "/v1/chat/completions".into(),
                body: o.body.into(),
                stream: o.stream,
                model: o.model,
                read: Some((o.tools, o.messages)),
                up_openai: true,
                ..raw_plan(r)
            })
        }
        _ => None,
    }
}

/// An OpenAI request forwarded as OpenAI (normalized unless recording only); recorded as native.
fn pass(cfg: &ProxyConfig, r: &Incoming, mut v: Value, plain: &str, raw: Plan) -> Plan {
    let (wire, recorded) = if plain == "/v1/responses" {
        (Wire::Responses, responses_to_native(&v))
    } else {
        let mut n = openai_to_native(&v, cfg.num_ctx, cfg.think);
        if let Some(t) = v.get("tools") {
            n["tools"] = t.clone();
        }
        (Wire::Chat, n)
    };
    let stream = v["stream"].as_bool().unwrap_or(false);
    let model = v["model"].as_str().unwrap_or("").to_string();
    let body = if cfg.normalize {
        let reasoning = cfg
            .openai
            .as_ref()
            .map_or(Reasoning::Effort, |u| u.reasoning);
        normalize_openai(&mut v, cfg.think, reasoning);
        v.to_string().into()
    } else {
        r.body.clone()
    };
    Plan {
        mode: Mode::Pass(wire),
        body,
        stream,
        model,
        recorded,
        ..raw
    }
}
