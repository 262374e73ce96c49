//! A generated turn on the wire: Ollama NDJSON / JSON and OpenAI JSON / SSE, byte-exact and
//! deterministic (timestamps and ids are derived from the conversation, not the clock).

use lrab_ollama::{openai, ChatResponse, Message, Metrics, ToolCall};

use crate::convo::Conv;
use crate::policy::{fnv, Turn, FNV0};

/// Base of the simulated clock: 2026-01-01T00:00:00Z.
pub const EPOCH_UNIX: i64 = 1_767_225_600;

/// Simulated wall time for a conversation of `n` messages (seconds since the Unix epoch).
pub fn sim_unix(n: usize) -> i64 {
    EPOCH_UNIX + 7 * n as i64
}

/// RFC 3339 with nanoseconds, UTC.
pub fn rfc3339(unix: i64, nanos: u32) -> String {
    let t = lrab_util::UtcTime::from_unix(unix);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// The response identity: timestamps, ids and metrics for one turn.
pub struct Frame {
    pub model: String,
    pub created_at: String,
    pub created: i64,
    pub id_seed: u64,
    pub metrics: Metrics,
}

/// The modelled cost of one reply (nanoseconds; prompt counts include cached tokens).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timing {
    pub prompt_tokens: u64,
    /// Of the prompt tokens, those the KV cache served.
    pub cached_tokens: u64,
    pub eval_tokens: u64,
    pub load_ns: u64,
    pub prompt_ns: u64,
    pub eval_ns: u64,
}

impl Timing {
    /// Everything the request cost, as `total_duration` reports it (plus rendering overhead).
    pub fn total_ns(&self) -> u64 {
        self.load_ns + self.prompt_ns + self.eval_ns + 250_000
    }
}

impl Frame {
    pub fn new(model_name: &str, conv: &Conv, turn: &Turn, t: Timing) -> Frame {
        let unix = sim_unix(conv.messages.len());
        let mut seed = fnv(FNV0, turn.content.as_bytes());
        for c in &turn.calls {
            seed = fnv(seed, c.name.as_bytes());
            seed = fnv(seed, c.args.to_string().as_bytes());
        }
        seed = fnv(seed, &(conv.messages.len() as u64).to_le_bytes());
        // the model's own earlier turns, so that a call repeated after an agent rewrote its
        // history (a compressed conversation of the same length) gets a new id, as on Ollama;
        // rewording the other messages changes no id
        for m in conv.messages.iter().filter(|m| m.role == "assistant") {
            seed = fnv(seed, m.content.as_bytes());
            for c in &m.calls {
                seed = fnv(seed, c.name.as_bytes());
                seed = fnv(seed, c.args.to_string().as_bytes());
            }
        }
        Frame {
            model: model_name.to_string(),
            created_at: rfc3339(unix, (seed % 1_000_000_000) as u32),
            created: unix,
            id_seed: seed,
            metrics: Metrics {
                total_duration: Some(t.total_ns()),
                load_duration: Some(t.load_ns),
                prompt_eval_count: Some(t.prompt_tokens),
                prompt_eval_cached_count: Some(t.cached_tokens),
                prompt_eval_duration: Some(t.prompt_ns),
                eval_count: Some(t.eval_tokens),
                eval_duration: Some(t.eval_ns),
            },
        }
    }

    /// `call_` + 8 lowercase alphanumerics, as Ollama generates.
    pub fn call_id(&self, i: usize) -> String {
        const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut h = fnv(self.id_seed, &(i as u64).to_le_bytes());
        let mut s = String::from("call_");
        for _ in 0..8 {
            s.push(A[(h % 36) as usize] as char);
            h = fnv(h, b"x");
        }
        s
    }

    fn native_calls(&self, turn: &Turn) -> Option<Vec<ToolCall>> {
        (!turn.calls.is_empty()).then(|| {
            turn.calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    ToolCall::new(Some(self.call_id(i)), i as u32, &c.name, c.args.clone())
                })
                .collect()
        })
    }
}

/// Splits text into stream pieces of about `n` bytes, on char boundaries.
pub fn pieces(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// Native non-streaming reply.
pub fn native_whole(f: &Frame, turn: &Turn) -> ChatResponse {
    let mut message = Message::assistant(turn.content.clone());
    message.thinking = turn.thinking.clone();
    message.tool_calls = f.native_calls(turn);
    ChatResponse {
        model: f.model.clone(),
        created_at: f.created_at.clone(),
        message,
        done_reason: Some(turn.done_reason.to_string()),
        done: true,
        metrics: f.metrics.clone(),
        ..Default::default()
    }
}

/// Native NDJSON lines (each ends with `\n`).
pub fn native_stream(f: &Frame, turn: &Turn) -> Vec<String> {
    let chunk = |message: Message| ChatResponse {
        model: f.model.clone(),
        created_at: f.created_at.clone(),
        message,
        done: false,
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut push = |r: &ChatResponse| {
        let mut s = serde_json::to_string(r).unwrap_or_default();
        s.push('\n');
        out.push(s);
    };
    if let Some(t) = &turn.thinking {
        for p in pieces(t, 48) {
            let mut m = Message::assistant("");
            m.thinking = Some(p.to_string());
            push(&chunk(m));
        }
    }
    for p in pieces(&turn.content, 48) {
        push(&chunk(Message::assistant(p)));
    }
    if let Some(calls) = f.native_calls(turn) {
        let mut m = Message::assistant("");
        m.tool_calls = Some(calls);
        push(&chunk(m));
    }
    push(&ChatResponse {
        model: f.model.clone(),
        created_at: f.created_at.clone(),
        message: Message::assistant(""),
        done_reason: Some(turn.done_reason.to_string()),
        done: true,
        metrics: f.metrics.clone(),
        ..Default::default()
    });
    out
}

fn oai_calls(f: &Frame, turn: &Turn) -> Option<Vec<openai::ToolCall>> {
    (!turn.calls.is_empty()).then(|| {
        turn.calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                openai::ToolCall::new(&f.call_id(i), i as u32, &c.name, c.args.to_string())
            })
            .collect()
    })
}

fn finish_reason(turn: &Turn) -> String {
    if turn.done_reason == "stop" && !turn.calls.is_empty() {
        "tool_calls".to_string()
    } else {
        turn.done_reason.to_string()
    }
}

fn usage(f: &Frame) -> openai::Usage {
    let p = f.metrics.prompt_eval_count.unwrap_or(0);
    let c = f.metrics.eval_count.unwrap_or(0);
    openai::Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
    }
}

fn completion_id(f: &Frame) -> String {
    format!("chatcmpl-{}", f.id_seed % 999)
}

/// OpenAI non-streaming reply.
pub fn openai_whole(f: &Frame, turn: &Turn) -> openai::ChatCompletion {
    openai::ChatCompletion {
        id: completion_id(f),
        object: "chat.completion".into(),
        created: f.created,
        model: f.model.clone(),
        system_fingerprint: "fp_ollama".into(),
        choices: vec![openai::Choice {
            index: 0,
            message: openai::ResponseMessage {
                role: "assistant".into(),
                content: Some(turn.content.clone()),
                reasoning: turn.thinking.clone(),
                tool_calls: oai_calls(f, turn),
            },
            finish_reason: Some(finish_reason(turn)),
        }],
        usage: Some(usage(f)),
    }
}

/// OpenAI SSE events (`data: …\n\n`), ending with `data: [DONE]\n\n`.
pub fn openai_stream(f: &Frame, turn: &Turn, include_usage: bool) -> Vec<String> {
    let chunk = |delta: openai::Delta, finish: Option<String>| openai::ChatCompletionChunk {
        id: completion_id(f),
        object: "chat.completion.chunk".into(),
        created: f.created,
        model: f.model.clone(),
        system_fingerprint: "fp_ollama".into(),
        choices: vec![openai::ChunkChoice {
            index: 0,
            delta,
            finish_reason: finish,
        }],
        usage: None,
    };
    let mut out = Vec::new();
    let mut push = |c: &openai::ChatCompletionChunk| {
        out.push(openai::sse_data(
            &serde_json::to_string(c).unwrap_or_default(),
        ));
    };
    let delta = |content: &str| openai::Delta {
        role: Some("assistant".into()),
        content: Some(content.to_string()),
        ..Default::default()
    };
    if let Some(t) = &turn.thinking {
        for p in pieces(t, 48) {
            let mut d = delta("");
            d.reasoning = Some(p.to_string());
            push(&chunk(d, None));
        }
    }
    for p in pieces(&turn.content, 48) {
        push(&chunk(delta(p), None));
    }
    if turn.content.is_empty() && turn.thinking.is_none() && turn.calls.is_empty() {
        push(&chunk(delta(""), None));
    }
    if let Some(calls) = oai_calls(f, turn) {
        let mut d = delta("");
        d.tool_calls = Some(calls);
        push(&chunk(d, None));
    }
    push(&chunk(openai::Delta::default(), Some(finish_reason(turn))));
    if include_usage {
        let mut c = chunk(openai::Delta::default(), None);
        c.choices.clear();
        c.usage = Some(usage(f));
        push(&c);
    }
    out.push(openai::SSE_DONE.to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_formats() {
        assert_eq!(rfc3339(EPOCH_UNIX, 5), "2026-01-01T00:00:00.000000005Z");
        assert_eq!(rfc3339(951_782_400, 0), "2000-02-29T00:00:00.000000000Z");
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000000000Z");
    }

    #[test]
    fn pieces_respect_boundaries() {
        let s = "ééééé";
        let p = pieces(s, 3);
        assert_eq!(p.concat(), s);
        assert!(pieces("", 4).is_empty());
    }
}
