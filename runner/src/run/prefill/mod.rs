//! The prefill cost curve (`lrab bench prefill`): how long a backend takes to process a prompt
//! with 0…256 tool schemas attached, cold (a prompt prefix the server has never seen) and warm
//! (the same request again). Every request goes through the runner's backend (an OpenAI server
//! is reached through its translating proxy, so one native client serves both APIs); the
//! timing is the server's own report when it gives one (`prompt_eval_duration`), else the wall
//! time to the first streamed line, and each row says which.

pub mod curve;
pub mod schemas;

use std::io::BufRead;
use std::time::{Duration, Instant};

use lrab_ollama::{ChatRequest, ChatStreamLine, Message, Options, Tool};

pub use curve::{Cache, PointRow, Published, TimingSource};
pub use schemas::schemas;

/// One request's measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub prompt_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub prefill_ms: f64,
    pub wall_ms: f64,
    /// The server's `total_duration` (on the simulator: the modelled time of the request).
    pub server_total_ms: Option<f64>,
    pub source: TimingSource,
}

/// What one request came to: a sample, or the server's refusal of this point (an HTTP 4xx
/// such as a context overflow), which does not end the curve.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Sample(Sample),
    Refused(String),
}

/// The request for `tools` behind `nonce`: the nonce opens the system message and the first
/// tool's description, so whichever part a chat template renders first, the prefix is new.
pub fn request(model: &str, tools: &[Tool], nonce: &str, num_ctx: Option<u64>) -> ChatRequest {
    let mut tools = tools.to_vec();
    if let Some(t) = tools.first_mut() {
        let d = t.function.description.take().unwrap_or_default();
        t.function.description = Some(format!("[{nonce}] {d}"));
    }
    let system = format!(
        "[{nonce}] You are a coding agent working in a project folder. Use the tools when they \
         help; answer briefly."
    );
    ChatRequest {
        model: model.to_string(),
        messages: vec![
            Message::system(system),
            Message::user("List the files of the project and say which one is the entry point."),
        ],
        tools: (!tools.is_empty()).then_some(tools),
        stream: Some(true),
        options: Some(Options {
            temperature: Some(0.0),
            num_predict: Some(1),
            num_ctx,
            seed: Some(0),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A 16-hex-digit nonce from a seed and the invocation's salt.
pub fn nonce(seed: u64, salt: u64, point: usize, run: usize) -> String {
    let mut h = seed ^ salt.rotate_left(17) ^ ((point as u64) << 32) ^ run as u64;
    h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    format!("{:016x}", h ^ (h >> 33))
}

/// Sends one request to `{url}/api/chat` and reads the stream to its end. An `Err` is the
/// backend failing (unreachable, a 5xx, a stream cut or not understood): the curve stops.
pub fn measure(url: &str, req: &ChatRequest, timeout: Duration) -> anyhow::Result<Outcome> {
    let mut agent = ureq::AgentBuilder::new().timeout(timeout);
    if let Ok(tls) = lrab_util::tls::client_config() {
        agent = agent.tls_config(tls);
    }
    let agent = agent.build();
    let body = serde_json::to_value(req)?;
    let t0 = Instant::now();
    let resp = match agent.post(&format!("{url}/api/chat")).send_json(body) {
        Ok(r) => r,
        Err(ureq::Error::Status(s, r)) if (400..500).contains(&s) => {
            let text = r.into_string().unwrap_or_default();
            return Ok(Outcome::Refused(format!("HTTP {s}: {}", error_text(&text))));
        }
        Err(ureq::Error::Status(s, r)) => {
            let text = r.into_string().unwrap_or_default();
            anyhow::bail!("POST {url}/api/chat: HTTP {s}: {}", error_text(&text))
        }
        Err(e) => anyhow::bail!("POST {url}/api/chat: {e}"),
    };
    let mut first: Option<f64> = None;
    let mut last = None;
    for line in std::io::BufReader::new(resp.into_reader()).lines() {
        let line =
            line.map_err(|e| anyhow::anyhow!("reading the answer of {url}/api/chat: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        first.get_or_insert_with(|| t0.elapsed().as_secs_f64() * 1e3);
        match serde_json::from_str::<ChatStreamLine>(&line) {
            Ok(ChatStreamLine::Error(e)) => anyhow::bail!("{url}/api/chat: {}", e.error),
            Ok(ChatStreamLine::Chunk(c)) if c.done => last = Some(c),
            Ok(_) => {}
            Err(e) => anyhow::bail!("{url}/api/chat sent a line that is not a chat chunk: {e}"),
        }
    }
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    let done = last.ok_or_else(|| {
        anyhow::anyhow!("{url}/api/chat: the stream ended without its final chunk")
    })?;
    let m = &done.metrics;
    let (prefill_ms, source) = match m.prompt_eval_duration {
        Some(ns) => (ns as f64 / 1e6, TimingSource::Server),
        None => (first.unwrap_or(wall_ms), TimingSource::WallFirstByte),
    };
    Ok(Outcome::Sample(Sample {
        prompt_tokens: m.prompt_eval_count,
        cached_tokens: m.prompt_eval_cached_count,
        prefill_ms,
        wall_ms,
        server_total_ms: m.total_duration.map(|ns| ns as f64 / 1e6),
        source,
    }))
}

/// The `error` of a JSON error body (Ollama's or OpenAI's shape), else the text cut short.
fn error_text(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let msg = v["error"]["message"].as_str().or(v["error"].as_str());
    let s = msg
        .map(str::to_string)
        .unwrap_or_else(|| body.trim().to_string());
    lrab_util::prefix_bytes(&s, 300).to_string()
}
