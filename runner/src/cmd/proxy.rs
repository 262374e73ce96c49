//! `lrab proxy`: the normalizing proxy as a standalone server (the runner starts one per
//! attempt by itself, for every arm).

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

use super::Exit;
use crate::run::proxy::{start_on, ProxyConfig};

#[derive(Parser, Debug)]
pub struct Args {
    /// Backend to forward to (default: OLLAMA_HOST or http://127.0.0.1:11434).
    #[arg(long)]
    pub upstream: Option<String>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:11435")]
    pub listen: String,
    /// Context length pinned on every chat request.
    #[arg(long, default_value_t = 32768)]
    pub num_ctx: u64,
    /// The trajectory: one JSON line per model request (proxy.jsonl).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Forward /v1/chat/completions as /v1 (temperature and thinking normalized, no num_ctx).
    #[arg(long)]
    pub v1_passthrough: bool,
    /// Record only: forward every request byte for byte (arms with their own sampling knobs).
    #[arg(long)]
    pub record_only: bool,
    /// Thinking pinned on every chat request: off, on, or model (the server's default).
    #[arg(long, default_value = "off")]
    pub think: lrab_records::ThinkSetting,
    /// The API the upstream speaks: ollama (default), openai (translated for native clients),
    /// or auto (asks the upstream once at start).
    #[arg(long, default_value = "ollama")]
    pub upstream_api: lrab_records::BackendApi,
    /// Environment variable holding the upstream's API key (OpenAI-compatible upstreams).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub key_env: String,
}

pub fn run(a: Args) -> Result<Exit> {
    let upstream = a.upstream.unwrap_or_else(crate::run::backend::ollama_url);
    let openai = crate::run::backend::openai_upstream(
        &upstream,
        a.upstream_api,
        &a.key_env,
        a.think,
        a.num_ctx,
    )?;
    let h = start_on(
        &a.listen,
        ProxyConfig {
            upstream: upstream.clone(),
            num_ctx: a.num_ctx,
            log: a.log,
            normalize: !a.record_only,
            v1_to_native: !a.v1_passthrough,
            think: a.think,
            openai,
        },
    )?;
    if a.record_only {
        lrab_util::outln!("lrab proxy on {} → {upstream} (recording only)", h.url());
    } else {
        lrab_util::outln!(
            "lrab proxy on {} → {upstream} (temperature 0, think off, num_ctx {})",
            h.url(),
            a.num_ctx
        );
    }
    loop {
        std::thread::park();
    }
}
