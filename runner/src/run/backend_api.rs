//! Which API a backend URL speaks, and an OpenAI-only backend made usable: `--backend-api auto`
//! takes a URL whose `/api/tags` answers for Ollama, else one whose `/v1/models` answers for
//! OpenAI-compatible (`openai` or `ollama` forces it). An OpenAI backend gets a run-wide
//! translating proxy (proxy/openai_upstream.rs) that presents it as Ollama to everything
//! else in the runner — the pool's health checks, model checks and every attempt's proxy — and
//! alone holds the API key (read from `--backend-key-env`, never written anywhere).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use lrab_records::{BackendApi, BackendKind, ThinkSetting};
use serde_json::Value;

use super::proxy::{self, OpenaiUpstream, Reasoning, Secret};

/// The environment variable read for the key unless `--backend-key-env` says another.
pub const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// How the backends of a run are reached (`--backend-api`, `--backend-key-env`) and what
/// every translated request carries (`--think`, `--num-ctx`).
#[derive(Debug, Clone)]
pub struct BackendOptions {
    pub api: BackendApi,
    pub key_env: String,
    pub think: ThinkSetting,
    pub num_ctx: u64,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions {
            api: BackendApi::Auto,
            key_env: DEFAULT_KEY_ENV.into(),
            think: ThinkSetting::Off,
            num_ctx: 32768,
        }
    }
}

impl BackendOptions {
    /// The key, when the variable is set and not empty.
    pub fn key(&self) -> Option<Secret> {
        std::env::var(&self.key_env)
            .ok()
            .and_then(|k| Secret::new(&k))
    }
}

/// A client with the TLS settings every backend client shares (`lrab_util::tls`); when those
/// cannot be made (a bad CA file), an https URL is refused with the reason before this is used.
fn agent(timeout: Duration) -> ureq::Agent {
    let b = ureq::AgentBuilder::new().timeout(timeout);
    match lrab_util::tls::client_config() {
        Ok(c) => b.tls_config(c),
        Err(_) => b,
    }
    .build()
}

/// One GET: status and body, or the transport error (the server did not answer).
fn get(url: &str, key: Option<&Secret>, timeout: Duration) -> Result<(u16, Vec<u8>)> {
    let mut req = agent(timeout).get(url);
    if let Some(k) = key {
        req = req.set("authorization", &k.bearer());
    }
    let resp = match req.call() {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => return Err(anyhow::Error::new(e).context(format!("GET {url}"))),
    };
    let status = resp.status();
    let mut body = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(resp.into_reader(), 16 << 20),
        &mut body,
    )
    .with_context(|| format!("GET {url}: body"))?;
    Ok((status, body))
}

/// [`get`], or a refusal that waiting will not mend: the TLS settings cannot be made (a bad CA
/// file) or the server's certificate is not trusted. Neither message holds a header.
fn get_or_refuse(
    url: &str,
    key: Option<&Secret>,
    timeout: Duration,
) -> Result<std::result::Result<(u16, Vec<u8>), String>> {
    if url.starts_with("https://") {
        if let Err(e) = lrab_util::tls::client_config() {
            return Ok(Err(e));
        }
    }
    match get(url, key, timeout) {
        Err(e) if is_tls_failure(&e) => Ok(Err(format!(
            "TLS with {url} failed: {} ({})",
            e.root_cause(),
            lrab_util::tls::trust_hint()
        ))),
        r => r.map(Ok),
    }
}

/// Whether a transport error is the TLS handshake failing (rustls says so in its words).
fn is_tls_failure(e: &anyhow::Error) -> bool {
    let text = format!("{e:#}").to_ascii_lowercase();
    [
        "invalid peer certificate",
        "tls connection init failed",
        "handshake",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// What one look at a URL found: its kind (with `/v1/models` for OpenAI), or a refusal that
/// waiting will not mend (a key refused, neither API, a model list that is not JSON).
type Found = std::result::Result<(BackendKind, Value), String>;

fn look(url: &str, api: BackendApi, opts: &BackendOptions, timeout: Duration) -> Result<Found> {
    let key = opts.key();
    let mut tags_status = None;
    if api != BackendApi::Openai {
        let (s, body) = match get_or_refuse(&format!("{url}/api/tags"), None, timeout)? {
            Ok(got) => got,
            Err(refused) => return Ok(Err(refused)),
        };
        if s < 400 && serde_json::from_slice::<Value>(&body).is_ok_and(|v| v["models"].is_array()) {
            return Ok(Ok((BackendKind::Ollama, Value::Null)));
        }
        tags_status = Some(s);
    }
    let (s, body) = match get_or_refuse(&format!("{url}/v1/models"), key.as_ref(), timeout)? {
        Ok(got) => got,
        Err(refused) => return Ok(Err(refused)),
    };
    let scrub = |t: String| key.as_ref().map(|k| k.scrub(&t)).unwrap_or(t);
    let msg = || {
        let up = OpenaiUpstream {
            key: key.clone(),
            reasoning: Reasoning::Effort,
            think: opts.think,
            num_ctx: opts.num_ctx,
        };
        lrab_util::prefix_bytes(&up.error_message(&body), 300).to_string()
    };
    Ok(match s {
        200..=299 => match serde_json::from_slice::<Value>(&body) {
            Ok(v) if v["data"].is_array() => Ok((BackendKind::Openai, v)),
            _ => Err(format!(
                "{url}/v1/models answered HTTP {s} but not with a model list in JSON: {}",
                scrub(lrab_util::prefix_bytes(&String::from_utf8_lossy(&body), 200).to_string())
            )),
        },
        401 | 403 => Err(match &key {
            Some(_) => format!(
                "{url} refused the API key in ${} (HTTP {s}: {})",
                opts.key_env,
                msg()
            ),
            None => format!(
                "{url} wants an API key (HTTP {s}: {}); put it in the environment variable {} \
                 (or name another with --backend-key-env)",
                msg(),
                opts.key_env
            ),
        }),
        _ => Err(match tags_status {
            Some(t) => format!(
                "{url} speaks neither Ollama's API (GET /api/tags: HTTP {t}) nor the OpenAI API \
                 (GET /v1/models: HTTP {s}: {})",
                msg()
            ),
            None => format!("{url}/v1/models: HTTP {s}: {}", msg()),
        }),
    })
}

/// Which API `url` speaks, waiting up to `wait` for it to answer at all. A server that
/// answers but refuses (key, API, malformed list) is an error at once.
pub fn detect(url: &str, opts: &BackendOptions, wait: Duration) -> Result<(BackendKind, Value)> {
    // a wait the user can see: what for, at most how long, how to change it, progress
    let w = super::wait::Wait::new(
        format!("the backend at {url} to answer"),
        wait,
        "--backend-wait-secs N",
    );
    let per_try = Duration::from_secs(15).min(wait.max(Duration::from_secs(2)));
    let first = per_try.min(Duration::from_secs(2));
    let found = super::wait::poll(w, Duration::from_millis(500), |n| {
        look(url, opts.api, opts, if n == 0 { first } else { per_try })
    })
    .with_context(|| format!("backend {url} is unreachable"))?;
    found.map_err(anyhow::Error::msg)
}

/// One look at `url` (no waiting): its kind and model list, a refusal that waiting will not
/// mend, or the transport error (nobody answered). `lrab doctor` reports this.
pub fn probe(url: &str, opts: &BackendOptions, timeout: Duration) -> Result<Found> {
    look(url, opts.api, opts, timeout)
}

/// The field an OpenAI-compatible server reads to think or not (docs/runner.md, "Thinking on
/// OpenAI-compatible servers"), from what `/v1/models` says it is and where it runs: vLLM,
/// SGLang and llama.cpp's server (`owned_by`), or any server on this machine or a private
/// network, take `chat_template_kwargs`; Ollama's `/v1` (`owned_by: library`) and hosted APIs
/// `reasoning_effort`; OpenRouter its `reasoning` object.
pub fn reasoning_of(url: &str, models: &Value) -> Reasoning {
    let owners: Vec<&str> = models["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["owned_by"].as_str())
        .collect();
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or("")
        .split(['/', ':'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let template_server = owners.iter().any(|o| {
        matches!(
            *o,
            "vllm" | "llamacpp" | "llama.cpp" | "sglang" | "me" | "local"
        )
    });
    if template_server {
        return Reasoning::TemplateKwargs;
    }
    if owners.contains(&"library") {
        return Reasoning::Effort;
    }
    if host == "openrouter.ai" || host.ends_with(".openrouter.ai") {
        return Reasoning::Object;
    }
    let private = host == "localhost"
        || host.starts_with("127.")
        || host.starts_with("10.")
        || host.starts_with("192.168.")
        || url.contains("://[::1]")
        || host
            .strip_prefix("172.")
            .and_then(|r| r.split('.').next())
            .and_then(|n| n.parse::<u8>().ok())
            .is_some_and(|n| (16..=31).contains(&n));
    if private {
        Reasoning::TemplateKwargs
    } else {
        Reasoning::Effort
    }
}

/// The translating side of a proxy in front of `url`, when it speaks only the OpenAI API
/// (`None`: it is an Ollama).
pub fn openai_upstream(
    url: &str,
    api: BackendApi,
    key_env: &str,
    think: ThinkSetting,
    num_ctx: u64,
) -> Result<Option<OpenaiUpstream>> {
    if api == BackendApi::Ollama {
        return Ok(None);
    }
    let opts = BackendOptions {
        api,
        key_env: key_env.to_string(),
        think,
        num_ctx,
    };
    let (kind, models) = detect(url, &opts, Duration::from_secs(10))?;
    Ok((kind == BackendKind::Openai).then(|| upstream(url, &models, &opts)))
}

fn upstream(url: &str, models: &Value, opts: &BackendOptions) -> OpenaiUpstream {
    OpenaiUpstream {
        key: opts.key(),
        reasoning: reasoning_of(url, models),
        think: opts.think,
        num_ctx: opts.num_ctx,
    }
}

/// The run-wide proxy that presents the OpenAI backend at `url` as Ollama (records nothing:
/// every attempt's own proxy records).
pub fn gateway(url: &str, models: &Value, opts: &BackendOptions) -> Result<proxy::ProxyHandle> {
    proxy::start(proxy::ProxyConfig {
        upstream: url.to_string(),
        num_ctx: opts.num_ctx,
        log: None,
        normalize: false,
        v1_to_native: false,
        think: opts.think,
        openai: Some(upstream(url, models, opts)),
    })
    .with_context(|| format!("cannot start the translating proxy for {url}"))
}

/// `bail!` helper for a spec that cannot take an API.
pub fn refuse_api(api: BackendApi, what: &str) -> Result<()> {
    if api == BackendApi::Openai {
        bail!("--backend-api openai needs --backend URL (got {what})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn thinking_switch_follows_the_server() {
        let none = json!({"data": [{"id": "m", "owned_by": "openai"}]});
        assert_eq!(
            reasoning_of("https://api.example.com/v1x", &none),
            Reasoning::Effort
        );
        assert_eq!(
            reasoning_of("http://127.0.0.1:8000", &none),
            Reasoning::TemplateKwargs
        );
        assert_eq!(
            reasoning_of("http://172.20.0.5:8000", &none),
            Reasoning::TemplateKwargs
        );
        assert_eq!(
            reasoning_of("http://172.40.0.5:8000", &none),
            Reasoning::Effort
        );
        let vllm = json!({"data": [{"id": "m", "owned_by": "vllm"}]});
        assert_eq!(
            reasoning_of("https://gpu.example.com", &vllm),
            Reasoning::TemplateKwargs
        );
        // Ollama's /v1 (forced with --backend-api openai) reads only reasoning_effort
        let ollama = json!({"data": [{"id": "qwen3:8b", "owned_by": "library"}]});
        assert_eq!(
            reasoning_of("http://127.0.0.1:11434", &ollama),
            Reasoning::Effort
        );
        let or = json!({"data": [{"id": "qwen/qwen3-8b"}]});
        assert_eq!(
            reasoning_of("https://openrouter.ai/api", &or),
            Reasoning::Object
        );
    }
}
