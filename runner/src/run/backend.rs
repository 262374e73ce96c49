//! The model backends of a run: a real Ollama (`OLLAMA_HOST`), the simulated one started
//! in-process (`lrab-sim` on a free port), or one or more URLs speaking the Ollama API (one
//! Ollama per GPU; pool.rs shares the cells among them). Health checks, model presence and
//! digests go through the public HTTP API only.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::Value;

pub use super::backend_api::{openai_upstream, BackendOptions};

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendSpec {
    /// Ollama if it answers, else the simulated backend (with a banner).
    Auto,
    Ollama,
    Sim,
    Url(String),
    /// Two or more URLs (`--backend URL1,URL2,…`), each checked well-formed and distinct.
    Urls(Vec<String>),
}

/// Why a backend URL is refused ([`parse_url`]); each displays the URL as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Neither `http://` nor `https://`.
    #[error("'{0}' is not an http:// or https:// URL")]
    Scheme(String),
    /// A space, `?`, `#` or `@` somewhere in it.
    #[error("'{0}' has a space, query, fragment or user part")]
    Extra(String),
    /// An IPv6 host whose `[` is not closed.
    #[error("'{0}': unclosed '[' in the host")]
    Bracket(String),
    /// An empty host or one with characters a host cannot have.
    #[error("'{0}' has no valid host")]
    Host(String),
    /// A port outside 1–65535 or not a number.
    #[error("'{url}': port '{port}' is not a number from 1 to 65535")]
    Port {
        /// The URL as given.
        url: String,
        /// The port as given.
        port: String,
    },
}

/// Checks one backend URL: `http://` or `https://`, a host (name, IPv4 or `[IPv6]`), an
/// optional port 1–65535, an optional path; no spaces, query or fragment. Returns it without a
/// trailing `/`.
pub fn parse_url(u: &str) -> Result<String, UrlError> {
    let rest = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
        .ok_or_else(|| UrlError::Scheme(u.to_string()))?;
    if u.chars()
        .any(|c| c.is_whitespace() || c == '?' || c == '#' || c == '@')
    {
        return Err(UrlError::Extra(u.to_string()));
    }
    let authority = rest.split('/').next().unwrap_or("");
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| UrlError::Bracket(u.to_string()))?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let v6 = authority.starts_with('[');
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') || (v6 && c == ':'));
    if !host_ok {
        return Err(UrlError::Host(u.to_string()));
    }
    if let Some(p) = port {
        if !matches!(p.parse::<u32>(), Ok(1..=65535)) {
            return Err(UrlError::Port {
                url: u.to_string(),
                port: p.to_string(),
            });
        }
    }
    Ok(u.trim_end_matches('/').to_string())
}

impl std::str::FromStr for BackendSpec {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(BackendSpec::Auto),
            "ollama" => Ok(BackendSpec::Ollama),
            "sim" => Ok(BackendSpec::Sim),
            list if list.contains(',') => {
                let parts: Vec<&str> = list.split(',').map(str::trim).collect();
                let mut urls: Vec<String> = Vec::new();
                for (i, p) in parts.iter().enumerate() {
                    let at = format!("element {} of {}", i + 1, parts.len());
                    if p.is_empty() {
                        return Err(format!("--backend '{list}': {at} is empty"));
                    }
                    let u = parse_url(p).map_err(|e| {
                        format!("--backend '{list}': {at}: {e} (a list holds URLs only)")
                    })?;
                    if urls.contains(&u) {
                        return Err(format!("--backend '{list}': {u} is listed twice"));
                    }
                    urls.push(u);
                }
                Ok(BackendSpec::Urls(urls))
            }
            u if u.starts_with("http://") || u.starts_with("https://") => parse_url(u)
                .map(BackendSpec::Url)
                .map_err(|e| format!("--backend {e}")),
            other => Err(format!(
                "--backend '{other}': expected ollama, sim, auto, an http:// URL or a comma list of URLs"
            )),
        }
    }
}

/// `OLLAMA_HOST` as a URL (Ollama accepts `host:port` without scheme).
pub fn ollama_url() -> String {
    let h = std::env::var("OLLAMA_HOST").unwrap_or_default();
    let h = h.trim().trim_end_matches('/');
    if h.is_empty() {
        "http://127.0.0.1:11434".into()
    } else if h.starts_with("http://") || h.starts_with("https://") {
        h.to_string()
    } else {
        format!("http://{h}")
    }
}

/// An `ollama serve` the runner started itself (own process group), so `--fresh-backend` can
/// restart it between cells and the run can stop it at the end.
struct Managed {
    program: std::path::PathBuf,
    pgid: i32,
}

impl Managed {
    fn spawn(program: &std::path::Path, url: &str, wait: Duration) -> Result<Managed> {
        use std::os::unix::process::CommandExt;
        let host = url
            .trim_start_matches("http://")
            .trim_start_matches("https://");
        let child = std::process::Command::new(program)
            .arg("serve")
            .env("OLLAMA_HOST", host)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .with_context(|| format!("cannot start {} serve", program.display()))?;
        let m = Managed {
            program: program.to_path_buf(),
            pgid: child.id() as i32,
        };
        // The child is reaped by the kernel once we drop the handle and it exits; we track it by
        // its group.
        std::thread::spawn(move || {
            let mut c = child;
            let _ = c.wait();
        });
        wait_healthy(url, wait)
            .with_context(|| format!("{} serve did not answer at {url}", program.display()))?;
        Ok(m)
    }

    fn stop(&self) {
        super::process::terminate_group(self.pgid, Duration::from_secs(10));
    }
}

/// A backend in use by a run.
pub struct Backend {
    /// `ollama`, `sim` or the URL (the cells.csv `backend` column).
    pub label: String,
    /// Where the runner reaches it: for an OpenAI backend, its translating proxy.
    pub url: String,
    /// The backend's own URL (the one recorded).
    pub public_url: String,
    /// The API it speaks.
    pub kind: lrab_records::BackendKind,
    /// An OpenAI backend's run-wide translating proxy (stops when the backend is dropped).
    gateway: Option<super::proxy::ProxyHandle>,
    pub simulated: bool,
    /// Set when the backend is `lrab-sim`, however it is reached (its time scale and ledger).
    pub sim_info: Option<lrab_sim::SimInfo>,
    sim: Option<lrab_sim::SimHandle>,
    sim_seed: u64,
    managed: Option<Managed>,
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(m) = self.managed.take() {
            m.stop();
        }
    }
}

/// `OLLAMA_BIN`, else `ollama` on PATH.
pub fn ollama_program() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("OLLAMA_BIN").filter(|v| !v.is_empty()) {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ollama"))
        .find(|c| c.is_file())
}

impl Backend {
    #[cfg(test)]
    /// Resolves the spec. `wait` bounds how long an explicit backend may take to answer. With
    /// `serve`, an Ollama backend that does not answer is started by the runner
    /// (`ollama serve`, `OLLAMA_BIN` or PATH) and stopped when the run ends.
    pub fn start_with(
        spec: &BackendSpec,
        wait: Duration,
        sim_seed: u64,
        serve: bool,
    ) -> Result<Backend> {
        Backend::start_with_opts(spec, wait, sim_seed, serve, &BackendOptions::default())
    }

    /// [`Backend::start_with`] with the API, key and translation settings of `opts`.
    pub fn start_with_opts(
        spec: &BackendSpec,
        wait: Duration,
        sim_seed: u64,
        serve: bool,
        opts: &BackendOptions,
    ) -> Result<Backend> {
        if !matches!(spec, BackendSpec::Url(_) | BackendSpec::Urls(_)) {
            super::backend_api::refuse_api(opts.api, &format!("{spec:?}"))?;
        }
        match spec {
            BackendSpec::Sim => Backend::sim(sim_seed),
            BackendSpec::Ollama if serve => {
                let url = ollama_url();
                if health(&url, Duration::from_secs(2)).is_ok() {
                    return Ok(Backend::plain("ollama", url));
                }
                let prog = ollama_program()
                    .context("--ollama-serve: no `ollama` on PATH (or set OLLAMA_BIN)")?;
                let m = Managed::spawn(&prog, &url, wait.max(Duration::from_secs(5)))?;
                let mut b = Backend::plain("ollama", url);
                b.managed = Some(m);
                Ok(b)
            }
            BackendSpec::Ollama => {
                let url = ollama_url();
                wait_healthy(&url, wait).with_context(|| {
                    format!("Ollama backend at {url} (OLLAMA_HOST) is unreachable; start `ollama serve`, set OLLAMA_HOST, or use --backend sim")
                })?;
                Ok(Backend::plain("ollama", url))
            }
            BackendSpec::Url(u) => Backend::at_url(u, wait, opts),
            BackendSpec::Urls(_) => bail!("a list of backends is started with start_all"),
            BackendSpec::Auto => {
                let url = ollama_url();
                if health(&url, Duration::from_secs(2)).is_ok() {
                    Ok(Backend::plain("ollama", url))
                } else {
                    Backend::sim(sim_seed)
                }
            }
        }
    }

    pub(super) fn plain(label: &str, url: String) -> Backend {
        Backend {
            label: label.to_string(),
            public_url: url.clone(),
            url,
            kind: lrab_records::BackendKind::Ollama,
            gateway: None,
            simulated: false,
            sim_info: None,
            sim: None,
            sim_seed: 0,
            managed: None,
        }
        .detected()
    }

    /// Labels the backend simulated when it answers as `lrab-sim` (by its `/api/version` or
    /// its model digests), so a sim reached by URL or through a proxy is never recorded as real.
    /// The simulator serving only the OpenAI API keeps the kind `openai` (the translation is
    /// what such a run exercises) and is still labelled simulated.
    fn detected(mut self) -> Backend {
        self.sim_info = lrab_sim::detect(&self.url);
        self.simulated |= self.sim_info.is_some();
        if self.simulated && self.kind == lrab_records::BackendKind::Ollama {
            self.kind = lrab_records::BackendKind::Sim;
        }
        self
    }

    /// The backend at `u` (a URL given with `--backend`), of the kind `opts` asks for or
    /// detects; an OpenAI one is reached through a translating proxy of its own.
    fn at_url(u: &str, wait: Duration, opts: &BackendOptions) -> Result<Backend> {
        if opts.api == lrab_records::BackendApi::Ollama {
            wait_healthy(u, wait).with_context(|| format!("backend {u} is unreachable"))?;
            return Ok(Backend::plain(u, u.to_string()));
        }
        let (kind, models) = super::backend_api::detect(u, opts, wait)?;
        if kind == lrab_records::BackendKind::Ollama {
            return Ok(Backend::plain(u, u.to_string()));
        }
        let gw = super::backend_api::gateway(u, &models, opts)?;
        // (plain asks the gateway whether a simulator is behind it)
        let mut b = Backend::plain(u, gw.url());
        b.kind = kind;
        b.public_url = u.to_string();
        b.gateway = Some(gw);
        Ok(b)
    }

    /// Its `/api/version` (none for an OpenAI backend, which has no version to tell).
    pub fn version(&self) -> Option<String> {
        match self.kind {
            lrab_records::BackendKind::Openai => None,
            _ => version(&self.url),
        }
    }

    /// Every backend of the spec: the one of a single spec, or each URL of a list, all waited
    /// for at once; any that does not answer within `wait` is an error naming each such URL.
    pub fn start_all(
        spec: &BackendSpec,
        wait: Duration,
        sim_seed: u64,
        serve: bool,
        opts: &BackendOptions,
    ) -> Result<Vec<Backend>> {
        let BackendSpec::Urls(urls) = spec else {
            return Ok(vec![Backend::start_with_opts(
                spec, wait, sim_seed, serve, opts,
            )?]);
        };
        let results: Vec<Result<Backend>> = std::thread::scope(|s| {
            let hs: Vec<_> = urls
                .iter()
                .map(|u| {
                    s.spawn(move || {
                        let one = BackendSpec::Url(u.clone());
                        Backend::start_with_opts(&one, wait, sim_seed, false, opts)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("backend check panicked")))
                })
                .collect()
        });
        let mut out = Vec::new();
        let mut bad = Vec::new();
        for r in results {
            match r {
                Ok(b) => out.push(b),
                Err(e) => bad.push(lrab_util::error_chain(e.as_ref())),
            }
        }
        if !bad.is_empty() {
            bail!("{}", bad.join("; "));
        }
        let sims: Vec<&str> = out
            .iter()
            .filter(|b| b.simulated)
            .map(|b| b.url.as_str())
            .collect();
        if !sims.is_empty() && sims.len() < out.len() {
            let real: Vec<&str> = out
                .iter()
                .filter(|b| !b.simulated)
                .map(|b| b.url.as_str())
                .collect();
            bail!(
                "--backend mixes the simulator ({}) with real backends ({}): a run is either simulated or real",
                sims.join(", "),
                real.join(", ")
            );
        }
        Ok(out)
    }

    fn sim(seed: u64) -> Result<Backend> {
        // LRAB_SIM_TIME_SCALE paces replies; LRAB_SIM_PROFILES replaces the committed profiles
        let time_scale = match std::env::var("LRAB_SIM_TIME_SCALE") {
            Ok(v) if !v.is_empty() => v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .with_context(|| format!("LRAB_SIM_TIME_SCALE={v}: not a number ≥ 0"))?,
            _ => 0.0,
        };
        let profiles = match std::env::var_os("LRAB_SIM_PROFILES") {
            Some(d) if !d.is_empty() => Some(lrab_sim::load_profile_dir(std::path::Path::new(&d))?),
            _ => None,
        };
        let cfg = lrab_sim::SimConfig {
            seed,
            time_scale,
            profiles,
            ..Default::default()
        };
        let h =
            lrab_sim::serve("127.0.0.1:0", cfg).context("cannot start the simulated backend")?;
        let info = lrab_sim::detect(&h.url());
        Ok(Backend {
            label: "sim".into(),
            public_url: h.url(),
            url: h.url(),
            kind: lrab_records::BackendKind::Sim,
            gateway: None,
            simulated: true,
            sim_info: info,
            sim: Some(h),
            sim_seed: seed,
            managed: None,
        })
    }

    /// The banner printed for simulated runs.
    pub fn banner(&self) -> Option<String> {
        self.simulated.then(|| {
            format!(
                "*** SIMULATED BACKEND (lrab-sim at {}): these scores are NOT results of real models ***",
                self.url
            )
        })
    }

    /// Between cells with `--fresh-backend`: the simulated backend is restarted (new state,
    /// new port), a runner-managed `ollama serve` is restarted, any other backend has the given
    /// models unloaded (`keep_alive: 0`).
    pub fn refresh(&mut self, models: &[String]) -> Result<()> {
        if let Some(m) = self.managed.take() {
            m.stop();
            let prog = m.program.clone();
            self.managed = Some(Managed::spawn(&prog, &self.url, Duration::from_secs(60))?);
            return Ok(());
        }
        if self.sim.is_some() {
            if let Some(h) = self.sim.take() {
                h.shutdown();
            }
            let mut b = Backend::sim(self.sim_seed)?;
            self.url = b.url.clone();
            self.sim = b.sim.take();
            return Ok(());
        }
        for m in models {
            unload(&self.url, m)?;
        }
        Ok(())
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

/// `GET /api/tags` once.
pub fn health(url: &str, timeout: Duration) -> Result<Value> {
    let r = agent(timeout)
        .get(&format!("{url}/api/tags"))
        .call()
        .with_context(|| format!("GET {url}/api/tags"))?;
    r.into_json::<Value>()
        .with_context(|| format!("{url}/api/tags: not JSON"))
}

/// Polls `/api/tags` until it answers or `wait` passes (at least one try), saying on stderr
/// what it waits for once the first try fails (`super::wait`). The first try is short, so a
/// host that swallows packets is announced at once.
pub fn wait_healthy(url: &str, wait: Duration) -> Result<Value> {
    let what = format!("the backend at {url} to answer GET /api/tags");
    let w = super::wait::Wait::new(what, wait, "--backend-wait-secs N");
    let per_try = Duration::from_secs(15).min(wait.max(Duration::from_secs(2)));
    super::wait::poll(w, Duration::from_millis(500), |n| {
        health(
            url,
            if n == 0 {
                per_try.min(Duration::from_secs(2))
            } else {
                per_try
            },
        )
    })
}

pub use lrab_records::ModelInfo;

/// Normalises a tag: `m` → `m:latest`.
fn full_tag(m: &str) -> String {
    if m.rsplit('/').next().unwrap_or(m).contains(':') {
        m.to_string()
    } else {
        format!("{m}:latest")
    }
}

/// Checks every model is served by the backend reached at `url`; returns their tags info.
/// Missing ones are one error naming them all and the ones available, and the backend as
/// `shown` (an OpenAI backend is asked through its translating proxy).
pub fn check_models_at(url: &str, shown: &str, models: &[String]) -> Result<Vec<ModelInfo>> {
    let tags = health(url, Duration::from_secs(15)).with_context(|| format!("backend {shown}"))?;
    let list = tags["models"].as_array().cloned().unwrap_or_default();
    let names: Vec<String> = list
        .iter()
        .filter_map(|m| {
            m["name"]
                .as_str()
                .or(m["model"].as_str())
                .map(str::to_string)
        })
        .collect();
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for m in models {
        let want = full_tag(m);
        match list.iter().find(|x| {
            x["name"].as_str().or(x["model"].as_str()).map(full_tag) == Some(want.clone())
        }) {
            Some(x) => out.push(ModelInfo {
                name: m.clone(),
                digest: x["digest"].as_str().map(str::to_string),
                parameter_size: x["details"]["parameter_size"].as_str().map(str::to_string),
                quantization: x["details"]["quantization_level"]
                    .as_str()
                    .map(str::to_string),
            }),
            None => missing.push(m.clone()),
        }
    }
    if !missing.is_empty() {
        bail!(
            "unknown model(s) {} at {shown} (available: {})",
            missing.join(", "),
            names.join(", ")
        );
    }
    Ok(out)
}

/// Every backend serves every model of the matrix, and a model is the same everywhere: a tag
/// with different digests on two backends is two models, so the run refuses it.
pub fn same_models(backends: &[Backend], models: &[String]) -> Result<Vec<ModelInfo>> {
    let mut first: Option<(String, Vec<ModelInfo>)> = None;
    for b in backends {
        let info = check_models_at(&b.url, &b.public_url, models)?;
        if let Some((u0, i0)) = &first {
            for (x, y) in i0.iter().zip(&info) {
                if x.digest != y.digest {
                    bail!(
                        "model {} differs between backends: digest {} at {u0}, {} at {}",
                        x.name,
                        x.digest.as_deref().unwrap_or("(none)"),
                        y.digest.as_deref().unwrap_or("(none)"),
                        b.url
                    );
                }
            }
        } else {
            first = Some((b.url.clone(), info));
        }
    }
    Ok(first.map(|f| f.1).unwrap_or_default())
}

/// `GET /api/version`, if the backend has it.
pub fn version(url: &str) -> Option<String> {
    agent(Duration::from_secs(5))
        .get(&format!("{url}/api/version"))
        .call()
        .ok()?
        .into_json::<Value>()
        .ok()?["version"]
        .as_str()
        .map(str::to_string)
}

/// Unloads a model (`POST /api/generate {model, keep_alive: 0}`).
pub fn unload(url: &str, model: &str) -> Result<()> {
    agent(Duration::from_secs(60))
        .post(&format!("{url}/api/generate"))
        .send_json(serde_json::json!({"model": model, "keep_alive": 0}))
        .with_context(|| format!("unload {model} at {url}"))?;
    Ok(())
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
