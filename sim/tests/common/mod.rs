//! A small generic agent used only by the tests: it talks to the simulated backend over real
//! HTTP (native or OpenAI API, streaming or not), runs tool calls for real in a workdir (`sh -c`
//! in its own process group with a timeout), and stops on a text answer or a finish call.
//! It has no recovery mechanisms of its own unless asked (`rescue_text_calls`, `block_repeats`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use lrab_sim::{serve, SimConfig, SimHandle};
use serde_json::{json, Value};

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Api {
    Native,
    NativeStream,
    OpenAi,
    OpenAiStream,
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Toolset {
    /// shell + write + read + finish
    Rich,
    /// only a shell: files are written with heredocs, finish is a text answer
    ShellOnly,
    /// opencode-like names and parameters, no finish tool
    OpencodeLike,
}

pub struct Agent {
    pub url: String,
    pub model: String,
    pub api: Api,
    pub toolset: Toolset,
    pub max_turns: usize,
    pub num_predict: Option<u64>,
    /// Format rescue: parse a text-only JSON tool call and run it.
    pub rescue_text_calls: bool,
    /// Anti-loop: do not run an identical consecutive call; say it was not executed.
    pub block_repeats: bool,
    /// System prompt text.
    pub system: String,
    /// Prefix of every message the agent itself writes (to test that renaming it changes nothing).
    pub marker: String,
    /// Claimed-artifact finish gate: reject a finish whose summary names missing files.
    pub finish_gate: bool,
    /// Restate the task when rejecting a finish.
    pub restate_on_reject: bool,
    /// Answer a text-only turn with a "continue" nudge up to this many times.
    pub nudges: u32,
}

#[derive(Debug, Default)]
pub struct Transcript {
    pub messages: Vec<Value>,
    pub turns: usize,
    pub calls: usize,
    pub finished_by_tool: bool,
    pub text_end: Option<String>,
    pub done_reasons: Vec<String>,
    pub raw_bodies: Vec<String>,
    /// The model call that failed (an HTTP error ends the run).
    pub error: Option<String>,
}

pub fn tool(name: &str, props: &[(&str, &str)], required: &[&str]) -> Value {
    let mut p = serde_json::Map::new();
    for (k, t) in props {
        p.insert((*k).into(), json!({"type": t}));
    }
    json!({"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object", "properties": p, "required": required}}})
}

pub fn tools_for(ts: Toolset) -> Vec<Value> {
    match ts {
        Toolset::Rich => vec![
            tool("run_shell", &[("command", "string")], &["command"]),
            tool(
                "write_file",
                &[("path", "string"), ("content", "string")],
                &["path", "content"],
            ),
            tool("read_file", &[("path", "string")], &["path"]),
            tool("finish", &[("summary", "string")], &["summary"]),
        ],
        Toolset::ShellOnly => vec![tool("bash", &[("command", "string")], &["command"])],
        Toolset::OpencodeLike => vec![
            tool(
                "bash",
                &[
                    ("command", "string"),
                    ("description", "string"),
                    ("timeout", "integer"),
                ],
                &["command", "description"],
            ),
            tool(
                "edit",
                &[
                    ("filePath", "string"),
                    ("oldString", "string"),
                    ("newString", "string"),
                ],
                &["filePath", "oldString", "newString"],
            ),
            tool("glob", &[("pattern", "string")], &["pattern"]),
            tool("read", &[("filePath", "string")], &["filePath"]),
            tool(
                "write",
                &[("content", "string"), ("filePath", "string")],
                &["content", "filePath"],
            ),
        ],
    }
}

impl Agent {
    pub fn new(url: &str, model: &str, api: Api, toolset: Toolset) -> Agent {
        Agent {
            url: url.to_string(),
            model: model.to_string(),
            api,
            toolset,
            max_turns: 80,
            num_predict: None,
            rescue_text_calls: false,
            block_repeats: false,
            system: "You are a careful agent. Use the tools to do the work.".into(),
            marker: String::new(),
            finish_gate: false,
            restate_on_reject: false,
            nudges: 0,
        }
    }

    fn execute(&self, name: &str, args: &Value, workdir: &Path) -> String {
        let s = |k: &str| {
            args.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        match name {
            "run_shell" | "bash" => {
                match lrab_tasks::process::run_shell(
                    &s("command"),
                    workdir,
                    Duration::from_secs(300),
                ) {
                    Ok(o) => {
                        let mut t = o.tail(4000);
                        if !o.success() {
                            t = format!("exit code {:?}\n{t}", o.code);
                        }
                        if t.trim().is_empty() {
                            "(no output)".into()
                        } else {
                            t
                        }
                    }
                    Err(e) => format!("Error: {e}"),
                }
            }
            "write_file" | "write" => {
                let p = if name == "write" {
                    s("filePath")
                } else {
                    s("path")
                };
                if p.is_empty() || p.starts_with('/') || p.contains("..") {
                    return "Error: invalid path".into();
                }
                let path = workdir.join(&p);
                if let Some(d) = path.parent() {
                    let _ = std::fs::create_dir_all(d);
                }
                match std::fs::write(&path, s("content")) {
                    Ok(()) => format!("Wrote {} bytes to {p}", s("content").len()),
                    Err(e) => format!("Error: {e}"),
                }
            }
            "read_file" | "read" => {
                let p = if name == "read" {
                    s("filePath")
                } else {
                    s("path")
                };
                match std::fs::read_to_string(workdir.join(&p)) {
                    Ok(t) => t.chars().take(4000).collect(),
                    Err(e) => format!("Error: cannot read {p}: {e}"),
                }
            }
            "finish" => "Finished.".into(),
            other => format!("Error: unknown tool {other}"),
        }
    }

    /// One model call; returns the assistant message in native shape and the done_reason.
    pub fn call(
        &self,
        messages: &[Value],
        tools: &[Value],
        tr: &mut Transcript,
    ) -> Result<(Value, String), String> {
        match self.api {
            Api::Native | Api::NativeStream => {
                let text = self.post("/api/chat", self.native_body(messages, tools), tr)?;
                if self.api == Api::Native {
                    let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                    return Ok((
                        v["message"].clone(),
                        v["done_reason"].as_str().unwrap_or("").to_string(),
                    ));
                }
                fold_native_stream(&text)
            }
            Api::OpenAi | Api::OpenAiStream => {
                let body = self.openai_body(messages, tools);
                let text = self.post("/v1/chat/completions", body, tr)?;
                self.openai_answer(&text)
            }
        }
    }

    /// POSTs `body` to `path` of the backend (60 s timeout); the answer's text, which the
    /// transcript keeps as it came.
    fn post(&self, path: &str, body: Value, tr: &mut Transcript) -> Result<String, String> {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(60))
            .build();
        let resp = agent
            .post(&format!("{}{path}", self.url))
            .send_json(body)
            .map_err(|e| e.to_string())?;
        let text = resp.into_string().map_err(|e| e.to_string())?;
        tr.raw_bodies.push(text.clone());
        Ok(text)
    }

    /// An `/api/chat` request: temperature 0, a 32k context, the token cap when set.
    fn native_body(&self, messages: &[Value], tools: &[Value]) -> Value {
        let mut body = json!({"model": self.model, "messages": messages, "tools": tools,
            "stream": self.api == Api::NativeStream, "options": {"temperature": 0, "num_ctx": 32768}});
        if let Some(n) = self.num_predict {
            body["options"]["num_predict"] = json!(n);
        }
        body
    }

    /// A `/v1/chat/completions` request (messages in OpenAI's shape, usage asked for when
    /// streaming), the token cap when set.
    fn openai_body(&self, messages: &[Value], tools: &[Value]) -> Value {
        let oai_msgs: Vec<Value> = messages.iter().map(to_openai).collect();
        let mut body = json!({"model": self.model, "messages": oai_msgs, "tools": tools,
            "stream": self.api == Api::OpenAiStream, "stream_options": {"include_usage": true}});
        if let Some(n) = self.num_predict {
            body["max_tokens"] = json!(n);
        }
        body
    }

    /// An OpenAI answer, whole or streamed (SSE), in the native message shape: arguments
    /// parsed, `tool_calls` reported as `stop` as Ollama does.
    fn openai_answer(&self, text: &str) -> Result<(Value, String), String> {
        let (content, calls, reason) = if self.api == Api::OpenAi {
            let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
            let m = &v["choices"][0]["message"];
            (
                m["content"].as_str().unwrap_or("").to_string(),
                m["tool_calls"].as_array().cloned().unwrap_or_default(),
                v["choices"][0]["finish_reason"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        } else {
            fold_openai_stream(text)?
        };
        let native_calls: Vec<Value> = calls
            .iter()
            .map(|c| {
                let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap_or("{}")).unwrap_or(json!({}));
                json!({"id": c["id"], "function": {"name": c["function"]["name"], "arguments": args}})
            })
            .collect();
        let mut m = json!({"role": "assistant", "content": content});
        if !native_calls.is_empty() {
            m["tool_calls"] = Value::Array(native_calls);
        }
        let reason = if reason == "tool_calls" {
            "stop".into()
        } else {
            reason
        };
        Ok((m, reason))
    }

    /// Runs the task prompt in `workdir` until a text answer, a finish call or `max_turns`.
    pub fn run(&self, prompt: &str, workdir: &Path) -> Transcript {
        let tools = tools_for(self.toolset);
        let mut tr = Transcript::default();
        let mut messages = vec![
            json!({"role": "system", "content": self.system}),
            json!({"role": "user", "content": prompt}),
        ];
        let mut last_sig: Option<String> = None;
        let mut nudges_left = self.nudges;
        let mut rejections = 0;
        for _ in 0..self.max_turns {
            tr.turns += 1;
            let (msg, reason) = match self.call(&messages, &tools, &mut tr) {
                Ok(x) => x,
                Err(e) => {
                    tr.error = Some(e);
                    break;
                }
            };
            tr.done_reasons.push(reason);
            messages.push(msg.clone());
            let mut calls: Vec<(String, Value)> = msg["tool_calls"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| {
                            (
                                c["function"]["name"].as_str().unwrap_or("").to_string(),
                                c["function"]["arguments"].clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let content = msg["content"].as_str().unwrap_or("").to_string();
            if calls.is_empty() && self.rescue_text_calls {
                if let Some(c) = lrab_sim::parse_leak(&content) {
                    calls.push((c.name, c.args));
                }
            }
            if calls.is_empty() {
                if nudges_left > 0 && !content.starts_with("All steps are done") {
                    nudges_left -= 1;
                    messages.push(json!({"role": "user", "content": format!("{}Please continue with the next step of the task.", self.marker)}));
                    continue;
                }
                tr.text_end = Some(content);
                break;
            }
            let mut finished = false;
            for (name, args) in calls {
                tr.calls += 1;
                let sig = format!("{name}{args}");
                let mut result = if self.block_repeats && last_sig.as_deref() == Some(sig.as_str())
                {
                    format!("{}This identical call was blocked and not executed. Take the next step instead.", self.marker)
                } else {
                    self.execute(&name, &args, workdir)
                };
                last_sig = Some(sig);
                if name == "finish" {
                    let summary = args["summary"].as_str().unwrap_or("");
                    let missing: Vec<&str> = summary
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .map(|w| w.trim_end_matches('.'))
                        .filter(|w| w.contains('.') && w.len() > 3 && !workdir.join(w).exists())
                        .collect();
                    if self.finish_gate && !missing.is_empty() && rejections < 3 {
                        rejections += 1;
                        result = format!(
                            "{}Finish rejected: these files do not exist yet: {}.",
                            self.marker,
                            missing.join(", ")
                        );
                        if self.restate_on_reject {
                            messages.push(
                                json!({"role": "tool", "content": result, "tool_name": name}),
                            );
                            messages.push(json!({"role": "user", "content": format!("{}Here is the task again:\n{prompt}", self.marker)}));
                            continue;
                        }
                    } else {
                        finished = true;
                    }
                }
                messages.push(json!({"role": "tool", "content": result, "tool_name": name}));
            }
            if finished {
                tr.finished_by_tool = true;
                break;
            }
        }
        tr.messages = messages;
        tr
    }
}

/// Converts a native-shaped message to the OpenAI shape.
fn to_openai(m: &Value) -> Value {
    let mut o = json!({"role": m["role"], "content": m["content"]});
    if let Some(calls) = m["tool_calls"].as_array() {
        o["tool_calls"] = Value::Array(
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({"id": c["id"].as_str().map(str::to_string).unwrap_or(format!("call_{i}")), "type": "function",
                       "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"].to_string()}})
                })
                .collect(),
        );
    }
    if m["role"] == "tool" {
        o["tool_call_id"] = json!("call_0");
    }
    o
}

/// A native NDJSON stream folded into one assistant message and its done_reason.
fn fold_native_stream(text: &str) -> Result<(Value, String), String> {
    let mut content = String::new();
    let mut thinking = String::new();
    let mut calls = Vec::new();
    let mut reason = String::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
        content.push_str(v["message"]["content"].as_str().unwrap_or(""));
        thinking.push_str(v["message"]["thinking"].as_str().unwrap_or(""));
        if let Some(c) = v["message"]["tool_calls"].as_array() {
            calls.extend(c.iter().cloned());
        }
        if v["done"] == json!(true) {
            reason = v["done_reason"].as_str().unwrap_or("").to_string();
        }
    }
    let mut m = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    Ok((m, reason))
}

/// An OpenAI SSE stream folded into (content, tool call deltas, finish_reason); a stream
/// without `[DONE]` is an error.
fn fold_openai_stream(text: &str) -> Result<(String, Vec<Value>, String), String> {
    let mut content = String::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut reason = String::new();
    let mut saw_done = false;
    for ev in text.split("\n\n").filter(|e| !e.is_empty()) {
        let data = ev
            .strip_prefix("data: ")
            .ok_or_else(|| format!("bad event {ev}"))?;
        if data == "[DONE]" {
            saw_done = true;
            continue;
        }
        let v: Value = serde_json::from_str(data).map_err(|e| e.to_string())?;
        let Some(ch) = v["choices"].get(0) else {
            continue;
        };
        content.push_str(ch["delta"]["content"].as_str().unwrap_or(""));
        if let Some(tc) = ch["delta"]["tool_calls"].as_array() {
            calls.extend(tc.iter().cloned());
        }
        if let Some(r) = ch["finish_reason"].as_str() {
            reason = r.to_string();
        }
    }
    if !saw_done {
        return Err("stream without [DONE]".into());
    }
    Ok((content, calls, reason))
}

/// POSTs `body` as JSON; the status, content type and body, whatever the status.
pub fn post_raw(url: &str, body: &str) -> (u16, String, String) {
    match ureq::post(url)
        .set("Content-Type", "application/json")
        .send_string(body)
    {
        Ok(r) => {
            let ct = r.header("content-type").unwrap_or("").to_string();
            (r.status(), ct, r.into_string().unwrap())
        }
        Err(ureq::Error::Status(c, r)) => {
            let ct = r.header("content-type").unwrap_or("").to_string();
            (c, ct, r.into_string().unwrap())
        }
        Err(e) => panic!("{e}"),
    }
}

pub fn start(config: SimConfig) -> SimHandle {
    serve("127.0.0.1:0", config).expect("server starts")
}

pub fn pack() -> lrab_tasks::Pack {
    lrab_tasks::Pack::load(lrab_tasks::Pack::builtin_dir()).expect("built-in pack loads")
}

/// Materializes `id` into a fresh temp dir.
pub fn fresh(
    pack: &lrab_tasks::Pack,
    id: &str,
) -> (tempfile::TempDir, PathBuf, lrab_tasks::Materialized) {
    let task = pack.get(id).expect("task exists");
    let tmp = tempfile::tempdir().expect("tempdir");
    let wd = tmp.path().join("work");
    let m = lrab_tasks::materialize(pack, task, &wd, None).expect("materialize");
    (tmp, wd, m)
}

pub fn score(pack: &lrab_tasks::Pack, id: &str, m: &lrab_tasks::Materialized, wd: &Path) -> f64 {
    let task = pack.get(id).expect("task");
    lrab_scorer::score(task, &m.checks, wd)
        .expect("score")
        .total
}
