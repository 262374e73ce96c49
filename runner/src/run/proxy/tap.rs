//! Reading a reply while it is relayed: the proxy hands every piece of the answer to a [`Tap`]
//! as it forwards it, and the tap keeps only what the trajectory records (the text, thinking,
//! tool calls, stop reason, token counts and durations), never the whole body. It reads the
//! three answer shapes: Ollama's NDJSON (whole or streamed), OpenAI chat completions (JSON or
//! SSE) and Responses (JSON or `response.*` events).

use lrab_records::{TrajectoryEntry, TrajectoryReply, TrajectoryToolCall};
use serde_json::Value;

/// The answer format a tap reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Ollama `/api/chat`: one JSON object per line.
    Native,
    /// OpenAI chat completions: a JSON object, or `data:` events.
    Chat,
    /// OpenAI Responses: a `response` object, or `response.*` events.
    Responses,
}

/// Longest error text kept from a failed answer.
const ERROR_CAP: usize = 2000;

/// What one answer said, collected piece by piece.
#[derive(Debug, Default)]
pub struct Tap {
    wire: Option<Wire>,
    /// An incomplete last line of the bytes fed so far.
    pending: Vec<u8>,
    content: String,
    thinking: String,
    calls: Vec<TrajectoryToolCall>,
    /// Streamed OpenAI calls by index: (id, name, argument text).
    partial: Vec<(Option<String>, String, String)>,
    done_reason: Option<String>,
    saw_reply: bool,
    /// The start of a failed answer's body.
    error_body: Vec<u8>,
    failed: bool,
    /// The error came as an object in the answer; later bytes do not change it.
    error_final: bool,
    prompt: Option<u64>,
    completion: Option<u64>,
    cached: Option<u64>,
    durations: [Option<u64>; 4],
}

fn parse_args(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        other => other.clone(),
    }
}

impl Tap {
    /// A tap for an answer in `wire` format; `ok` is false for an HTTP error status.
    pub fn new(wire: Wire, ok: bool) -> Tap {
        Tap {
            wire: Some(wire),
            failed: !ok,
            ..Default::default()
        }
    }

    /// Feeds the next bytes of the answer as they were relayed.
    pub fn bytes(&mut self, chunk: &[u8]) {
        if self.error_final {
            return;
        }
        if self.failed {
            let room = ERROR_CAP.saturating_sub(self.error_body.len());
            self.error_body
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
            return;
        }
        self.pending.extend_from_slice(chunk);
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            self.line(&line);
        }
    }

    /// Feeds one complete line (or a whole JSON body).
    fn line(&mut self, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw);
        let t = text.trim();
        if t.is_empty() || t.starts_with("event:") || t == "data: [DONE]" {
            return;
        }
        let t = t.strip_prefix("data:").map(str::trim_start).unwrap_or(t);
        let Ok(v) = serde_json::from_str::<Value>(t) else {
            return;
        };
        self.object(&v);
    }

    /// A streamed native line that only carries text (`message.content` / `thinking`, not
    /// done, no calls, no error), read without building a JSON tree: most lines of an answer
    /// are such, and parsing each into a [`Value`] was the larger part of the proxy's work per
    /// request. False: the line is something else, feed it to [`Tap::object`].
    pub fn native_text_line(&mut self, line: &[u8]) -> bool {
        #[derive(serde::Deserialize)]
        struct Line<'a> {
            #[serde(borrow)]
            message: Option<Text<'a>>,
            done: Option<bool>,
            error: Option<serde::de::IgnoredAny>,
        }
        #[derive(serde::Deserialize)]
        struct Text<'a> {
            #[serde(borrow, default, deserialize_with = "super::borrow::opt_cow")]
            content: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, default, deserialize_with = "super::borrow::opt_cow")]
            thinking: Option<std::borrow::Cow<'a, str>>,
            tool_calls: Option<serde::de::IgnoredAny>,
        }
        if self.wire != Some(Wire::Native) || self.failed {
            return false;
        }
        if let Some(text) = super::fast::plain_native_text(line) {
            return self.native_text(text);
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            return false;
        };
        let (Some(m), None | Some(false), None) = (&l.message, l.done, &l.error) else {
            return false;
        };
        if m.tool_calls.is_some() {
            return false;
        }
        self.saw_reply = true;
        self.content.push_str(m.content.as_deref().unwrap_or(""));
        self.thinking.push_str(m.thinking.as_deref().unwrap_or(""));
        true
    }

    /// The text of a streamed native line already read as carrying only text (by
    /// [`super::fast::native_text`], or written so by [`super::openai_upstream::ToNative`]):
    /// what [`Tap::native_text_line`] does with such a line, without reading it again.
    pub fn native_text(&mut self, content: &str) -> bool {
        if self.wire != Some(Wire::Native) || self.failed {
            return false;
        }
        self.saw_reply = true;
        self.content.push_str(content);
        true
    }

    /// One parsed object of the answer.
    pub fn object(&mut self, v: &Value) {
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            let msg = e["message"]
                .as_str()
                .or(e.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string());
            self.error_body = msg.into_bytes();
            self.failed = true;
            self.error_final = true;
            return;
        }
        match self.wire {
            Some(Wire::Native) => self.native(v),
            Some(Wire::Chat) => self.chat(v),
            Some(Wire::Responses) => self.responses(v),
            None => {}
        }
    }

    fn native(&mut self, v: &Value) {
        let m = &v["message"];
        if m.is_object() {
            self.saw_reply = true;
        }
        self.content.push_str(m["content"].as_str().unwrap_or(""));
        self.thinking.push_str(m["thinking"].as_str().unwrap_or(""));
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            self.calls.push(TrajectoryToolCall {
                id: c["id"].as_str().map(str::to_string),
                name: c["function"]["name"].as_str().unwrap_or("").to_string(),
                arguments: parse_args(&c["function"]["arguments"]),
            });
        }
        if v["done"].as_bool() == Some(true) {
            self.done_reason = v["done_reason"].as_str().map(str::to_string);
            self.prompt = v["prompt_eval_count"].as_u64();
            self.completion = v["eval_count"].as_u64();
            self.cached = v["prompt_eval_cached_count"].as_u64();
            for (i, k) in [
                "load_duration",
                "prompt_eval_duration",
                "eval_duration",
                "total_duration",
            ]
            .iter()
            .enumerate()
            {
                self.durations[i] = v[*k].as_u64();
            }
        }
    }

    fn chat_usage(&mut self, u: &Value) {
        if u.is_object() {
            self.prompt = u["prompt_tokens"].as_u64();
            self.completion = u["completion_tokens"].as_u64();
            self.cached = u["prompt_tokens_details"]["cached_tokens"].as_u64();
        }
    }

    fn chat(&mut self, v: &Value) {
        self.chat_usage(&v["usage"]);
        let Some(choice) = v["choices"].get(0) else {
            return;
        };
        self.saw_reply = true;
        if let Some(r) = choice["finish_reason"].as_str() {
            self.done_reason = Some(r.to_string());
        }
        let (m, streamed) = match choice.get("delta") {
            Some(d) => (d, true),
            None => (&choice["message"], false),
        };
        self.content.push_str(m["content"].as_str().unwrap_or(""));
        let think = m["reasoning_content"].as_str().or(m["reasoning"].as_str());
        self.thinking.push_str(think.unwrap_or(""));
        for (k, c) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
            let i = if streamed {
                c["index"].as_u64().unwrap_or(0) as usize
            } else {
                self.partial.len().max(k)
            };
            while self.partial.len() <= i {
                self.partial.push((None, String::new(), String::new()));
            }
            let p = &mut self.partial[i];
            if let Some(id) = c["id"].as_str() {
                p.0 = Some(id.to_string());
            }
            p.1.push_str(c["function"]["name"].as_str().unwrap_or(""));
            match &c["function"]["arguments"] {
                Value::String(s) => p.2.push_str(s),
                Value::Null => {}
                other => p.2.push_str(&other.to_string()),
            }
        }
    }

    fn responses(&mut self, v: &Value) {
        // A stream ends with `response.completed` (or `.incomplete`) carrying the whole
        // response; a JSON answer is the response itself.
        let r = if v["object"] == "response" {
            v
        } else if v["response"]["status"]
            .as_str()
            .is_some_and(|s| s != "in_progress")
        {
            &v["response"]
        } else {
            return;
        };
        self.saw_reply = true;
        self.content.clear();
        self.thinking.clear();
        self.calls.clear();
        for item in r["output"].as_array().into_iter().flatten() {
            match item["type"].as_str() {
                Some("message") => {
                    for part in item["content"].as_array().into_iter().flatten() {
                        self.content.push_str(part["text"].as_str().unwrap_or(""));
                    }
                }
                Some("reasoning") => {
                    for part in ["summary", "content"]
                        .iter()
                        .filter_map(|k| item[*k].as_array())
                        .flatten()
                    {
                        self.thinking.push_str(part["text"].as_str().unwrap_or(""));
                    }
                }
                Some("function_call") => self.calls.push(TrajectoryToolCall {
                    id: item["call_id"].as_str().map(str::to_string),
                    name: item["name"].as_str().unwrap_or("").to_string(),
                    arguments: parse_args(&item["arguments"]),
                }),
                _ => {}
            }
        }
        self.done_reason = r["status"].as_str().map(str::to_string);
        let u = &r["usage"];
        if u.is_object() {
            self.prompt = u["input_tokens"].as_u64();
            self.completion = u["output_tokens"].as_u64();
            self.cached = u["input_tokens_details"]["cached_tokens"].as_u64();
        }
    }

    /// Fills the reply, token, duration and error fields of `e` (an unterminated last line is
    /// read too: a non-streamed JSON body has no newline).
    pub fn finish(mut self, e: &mut TrajectoryEntry) {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.line(&rest);
        }
        if self.failed {
            let text = String::from_utf8_lossy(&self.error_body).into_owned();
            let msg = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| error_field(&v).map(str::to_string))
                .unwrap_or(text);
            e.error = Some(msg.trim().to_string());
            return;
        }
        for (id, name, args) in std::mem::take(&mut self.partial) {
            let arguments = if args.trim().is_empty() {
                Value::Object(Default::default())
            } else {
                parse_args(&Value::String(args))
            };
            self.calls.push(TrajectoryToolCall {
                id,
                name,
                arguments,
            });
        }
        if self.saw_reply {
            e.reply = Some(TrajectoryReply {
                content: self.content,
                thinking: (!self.thinking.is_empty()).then_some(self.thinking),
                tool_calls: self.calls,
                done_reason: self.done_reason,
            });
        }
        e.prompt_tokens = self.prompt;
        e.completion_tokens = self.completion;
        e.cached_prompt_tokens = self.cached;
        e.uncached_prompt_tokens = match (self.prompt, self.cached) {
            (Some(p), Some(c)) => Some(p.saturating_sub(c)),
            _ => None,
        };
        [
            e.load_duration_ns,
            e.prompt_eval_duration_ns,
            e.eval_duration_ns,
            e.total_duration_ns,
        ] = self.durations;
    }
}

/// The message of an error body as both APIs write it: OpenAI's `{error: {message}}` or
/// Ollama's `{error: "…"}`.
pub fn error_field(v: &Value) -> Option<&str> {
    v["error"]["message"].as_str().or(v["error"].as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(wire: Wire, ok: bool, pieces: &[&str]) -> TrajectoryEntry {
        let mut t = Tap::new(wire, ok);
        for p in pieces {
            t.bytes(p.as_bytes());
        }
        let mut e = TrajectoryEntry::default();
        t.finish(&mut e);
        e
    }

    #[test]
    fn text_lines_read_without_a_tree_say_what_the_tree_says() {
        let lines = [
            r#"{"model":"m","message":{"role":"assistant","content":"caf\u00e9 \"q\" ","thinking":"t"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":null},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"ls","arguments":{}}}]},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":5},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"end"},"done":true,"done_reason":"stop","eval_count":3}"#,
        ];
        let (mut fast, mut tree) = (Tap::new(Wire::Native, true), Tap::new(Wire::Native, true));
        let mut read_fast = 0;
        for l in lines {
            if fast.native_text_line(l.as_bytes()) {
                read_fast += 1;
            } else {
                fast.object(&serde_json::from_str(l).unwrap());
            }
            tree.object(&serde_json::from_str(l).unwrap());
        }
        assert_eq!(read_fast, 2, "only the plain text lines take the fast way");
        let (mut a, mut b) = (TrajectoryEntry::default(), TrajectoryEntry::default());
        fast.finish(&mut a);
        tree.finish(&mut b);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a.reply.unwrap().content.starts_with("café \"q\" "));
        // an error in the stream is never read as text
        let err = r#"{"error":"boom","message":{"content":"no"}}"#;
        assert!(!Tap::new(Wire::Native, true).native_text_line(err.as_bytes()));
    }

    #[test]
    fn native_stream_split_anywhere() {
        let body = concat!(
            "{\"message\":{\"role\":\"assistant\",\"content\":\"I will \",\"thinking\":\"hm\"},\"done\":false}\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"list\",\"tool_calls\":[{\"function\":{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}}]},\"done\":false}\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":100,\"prompt_eval_cached_count\":90,\"eval_count\":7,\"prompt_eval_duration\":5,\"load_duration\":1,\"eval_duration\":9,\"total_duration\":20}\n"
        );
        // relayed in 7-byte pieces, cutting lines and UTF-8-free JSON anywhere
        let pieces: Vec<&str> = (0..body.len())
            .step_by(7)
            .map(|i| &body[i..(i + 7).min(body.len())])
            .collect();
        let e = run(Wire::Native, true, &pieces);
        let r = e.reply.unwrap();
        assert_eq!(r.content, "I will list");
        assert_eq!(r.thinking.as_deref(), Some("hm"));
        assert_eq!(r.tool_calls[0].name, "bash");
        assert_eq!(r.tool_calls[0].arguments["command"], "ls");
        assert_eq!(r.done_reason.as_deref(), Some("stop"));
        assert_eq!(
            (
                e.prompt_tokens,
                e.cached_prompt_tokens,
                e.uncached_prompt_tokens
            ),
            (Some(100), Some(90), Some(10))
        );
        assert_eq!(e.completion_tokens, Some(7));
        assert_eq!(e.prompt_eval_duration_ns, Some(5));
        assert_eq!(e.total_duration_ns, Some(20));
        assert_eq!(e.error, None);
    }

    #[test]
    fn openai_sse_calls_are_assembled_by_index() {
        let e = run(
            Wire::Chat,
            true,
            &[
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"write\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":1}\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
                "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":20}}}\n\ndata: [DONE]\n\n",
            ],
        );
        let r = e.reply.unwrap();
        assert_eq!(r.content, "ok");
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("c1"));
        assert_eq!(r.tool_calls[0].arguments["path"], 1);
        assert_eq!(r.done_reason.as_deref(), Some("tool_calls"));
        assert_eq!(e.uncached_prompt_tokens, Some(30));
    }

    #[test]
    fn openai_json_and_responses_and_errors() {
        let e = run(
            Wire::Chat,
            true,
            &[
                r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"a","function":{"name":"ls","arguments":"not json"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}"#,
            ],
        );
        let r = e.reply.unwrap();
        assert_eq!(r.tool_calls[0].arguments, Value::String("not json".into()));
        assert_eq!((e.prompt_tokens, e.cached_prompt_tokens), (Some(9), None));
        assert_eq!(e.uncached_prompt_tokens, None);
        let e = run(
            Wire::Responses,
            true,
            &[
                "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\",\"output\":[]}}\n\n",
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"done\"}]},{\"type\":\"function_call\",\"call_id\":\"x\",\"name\":\"shell\",\"arguments\":\"{\\\"cmd\\\":[\\\"ls\\\"]}\"}],\"usage\":{\"input_tokens\":30,\"output_tokens\":2,\"input_tokens_details\":{\"cached_tokens\":24}}}}\n\n",
            ],
        );
        let r = e.reply.unwrap();
        assert_eq!(r.content, "done");
        assert_eq!(r.tool_calls[0].arguments["cmd"][0], "ls");
        assert_eq!(e.uncached_prompt_tokens, Some(6));
        let e = run(
            Wire::Native,
            false,
            &[r#"{"error":"error parsing tool call: raw='{bad'"}"#],
        );
        assert!(e.reply.is_none());
        assert_eq!(
            e.error.as_deref(),
            Some("error parsing tool call: raw='{bad'")
        );
        // an error object in the middle of a stream
        let e = run(
            Wire::Native,
            true,
            &["{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"error\":\"model crashed\"}\n"],
        );
        assert_eq!(e.error.as_deref(), Some("model crashed"));
    }
}
