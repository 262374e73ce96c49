//! `lrab doctor`: backend, models, arms and python/pytest readiness in one report.

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

use super::Exit;
use crate::run::matrix::{split_list, UPSTREAM_MODELS};

#[derive(Parser, Debug)]
pub struct Args {
    /// Backend URL (default: OLLAMA_HOST or http://127.0.0.1:11434).
    #[arg(long)]
    pub backend_url: Option<String>,
    /// Models that must be present (default: upstream's four).
    #[arg(long)]
    pub models: Option<String>,
    #[arg(long)]
    pub arms_dir: Option<PathBuf>,
    /// What the backend speaks: `auto` (detected as `lrab run` does), `ollama` or `openai`.
    #[arg(long, default_value = "auto")]
    pub backend_api: lrab_records::BackendApi,
    /// Environment variable holding an OpenAI-compatible backend's API key.
    #[arg(long, default_value = crate::run::backend_api::DEFAULT_KEY_ENV)]
    pub backend_key_env: String,
}

pub fn run(a: Args) -> Result<Exit> {
    let url = a
        .backend_url
        .unwrap_or_else(crate::run::backend::ollama_url);
    let models = a
        .models
        .as_deref()
        .map(split_list)
        .unwrap_or_else(|| UPSTREAM_MODELS.iter().map(|s| s.to_string()).collect());
    let dir = a.arms_dir.unwrap_or_else(crate::run::arms::default_dir);
    let opts = crate::run::backend_api::BackendOptions {
        api: a.backend_api,
        key_env: a.backend_key_env,
        ..Default::default()
    };
    let checks = crate::run::doctor::run(url.trim_end_matches('/'), &opts, &models, &dir);
    let mut bad = false;
    for c in &checks {
        let tag = match (c.ok, c.required) {
            (true, _) => "ok  ",
            (false, true) => {
                bad = true;
                "FAIL"
            }
            (false, false) => "warn",
        };
        lrab_util::outln!("{tag}  {:<22} {}", c.name, c.detail);
    }
    Ok(if bad { Exit::Failures } else { Exit::Ok })
}
