//! The harness event log, `<state>/events.jsonl` (where the state is: [`crate::layout`]; docs/harness.md, *Files*): one
//! [`EventLine`] per line — every model call, tool call and mechanism firing of a run. The
//! harness writes it; the runner sums tokens and calls from it, the analysis counts mechanism
//! activations, and the safety glue reads each call's typed outcome.
//!
//! Readers are lenient on purpose: a killed harness can leave a torn last line (skipped and
//! counted), and a field a log does not have takes its default, so logs of earlier versions
//! and hand-written fixtures load.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of the log: when, in which launch of the run, and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventLine {
    /// Schema version of the line.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Milliseconds since this launch of the harness started.
    #[serde(default)]
    pub t_ms: u64,
    /// Launch number: 1 for the first, 2 after a relaunch, …
    #[serde(default)]
    pub run: u32,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
}

/// What happened; `kind` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A launch began.
    RunStart(RunStart),
    /// The model was called once.
    ModelCall(ModelCall),
    /// One tool call was answered.
    ToolCall(ToolCall),
    /// A mechanism fired.
    Mechanism(MechanismFiring),
    /// The backend failed past the retry ladder; the run ends.
    BackendError {
        /// The error.
        #[serde(default)]
        error: String,
    },
    /// Something went wrong that does not end the run.
    Warning {
        /// The checkpoint could not be written.
        #[serde(default)]
        checkpoint_error: String,
    },
    /// A launch ended.
    RunEnd(RunEnd),
    /// A kind this build does not know (from a newer harness); kept so the rest still loads.
    #[serde(other)]
    Other,
}

/// `run_start`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunStart {
    /// `task` or `chat`.
    pub tier: String,
    /// The launch continued a checkpoint.
    pub resumed: bool,
    /// Switched-off mechanisms.
    pub ablations: Vec<String>,
    /// The static prefill in tokens.
    pub static_prefill: usize,
    /// The context window.
    pub num_ctx: u64,
    /// The confinement shell commands run under.
    pub sandbox: String,
    /// Where `num_ctx` came from: `flag`, `default`, `api_show`, `props` (llama.cpp),
    /// `max_model_len` (vLLM), `api_ps`, `n_ctx_train`, `config` (library use).
    pub num_ctx_source: String,
    /// How tools reach the model: `native` (tool definitions in the request) or `text`
    /// (described in the system prompt, calls read back from the reply text).
    pub tool_protocol: String,
}

/// `model_call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelCall {
    /// Turn number.
    pub turn: u32,
    /// Prompt tokens the server counted.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens the server counted.
    pub completion_tokens: Option<u64>,
    /// Latency of the call.
    pub latency_ms: u64,
    /// The harness's own estimate of the prompt.
    pub est_tokens: u64,
    /// The output cap sent.
    pub num_predict: u32,
    /// Why generation stopped (`stop`, `length`).
    pub done_reason: Option<String>,
    /// Tools offered.
    pub tools_offered: usize,
    /// Bytes of the request (tool definitions and messages, serialized for `/api/chat`).
    pub prompt_bytes: u64,
    /// Bytes at its start that repeat the previous request exactly (what a prompt cache
    /// with exact prefix reuse can serve); `prefix_bytes / prompt_bytes` is the share.
    pub prefix_bytes: u64,
    /// The harness's estimate of the tokens in that prefix (uncorrected estimator).
    pub est_prefix_tokens: u64,
    /// Why the history was rewritten since the previous request (`compaction`, `prune`,
    /// `repair`, `tier`, `protocol`, `resume`…), when it was: such a request is expected to
    /// share less.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<String>,
}

/// `tool_call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolCall {
    /// Turn number.
    pub turn: u32,
    /// Tool name as called.
    pub name: String,
    /// The call succeeded.
    pub ok: bool,
    /// Time spent answering it.
    pub ms: u64,
    /// A mechanism answered instead of the tool.
    pub intercepted: bool,
    /// The arguments, clipped to 200 characters.
    pub args: String,
    /// What became of the call (absent in logs of earlier versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallOutcome>,
    /// The text the model was given as the result (absent in logs of earlier versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// What became of one tool call; `status` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The tool ran (successfully or not: see `ok`).
    Ran {
        /// A shell command's exit code; absent when it was killed (signal, timeout) and for
        /// other tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit: Option<i32>,
        /// A shell command ran into its timeout.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        timed_out: bool,
    },
    /// A safety ring refused the call before anything ran.
    Refused(Refusal),
    /// No tool of that name exists in this run.
    UnknownTool,
    /// Answered without running the tool (an identical repeat, a paused tool, a tool the chat
    /// tier does not offer).
    NotRun,
}

/// A refusal by a safety ring (docs/safety.md): the ring's number and its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// Ring 1..=5.
    pub ring: u8,
    /// Why.
    pub reason: String,
    /// What to do instead, when the ring said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternative: Option<String>,
    /// Refused only because nobody is watching (a person could confirm it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_attended: bool,
}

/// `mechanism`: a mechanism fired (`name`, `action`, and a detail object of its own).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MechanismFiring {
    /// Mechanism (its ablation name, or the module's name).
    pub name: String,
    /// What it did.
    pub action: String,
    /// The mechanism's own facts about the firing.
    pub detail: Value,
}

/// `run_end`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunEnd {
    /// How the run ended (`finished`, `max_turns`, …).
    pub status: String,
    /// Turns over all launches.
    pub turns: u32,
    /// Tool calls over all launches.
    pub tool_calls: u32,
    /// Model calls over all launches.
    pub model_calls: u32,
    /// Prompt tokens over all launches.
    pub prompt_tokens: u64,
    /// Completion tokens over all launches.
    pub completion_tokens: u64,
    /// Verification level (`tested`, `exercised`, …).
    pub verification: String,
    /// Mechanism firings of this launch, by `name` and `name.action`.
    pub mechanisms: BTreeMap<String, u64>,
}

/// A whole log as read: its events in order, and the lines that were not events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventLog {
    /// Every event, in file order.
    pub lines: Vec<EventLine>,
    /// Non-blank lines that did not parse (a torn last line, foreign text).
    pub bad_lines: usize,
}

impl EventLog {
    /// Parses log text.
    pub fn parse(text: &str) -> EventLog {
        let (lines, bad_lines) = crate::jsonl::parse_lines(text);
        EventLog { lines, bad_lines }
    }

    /// The events, without their envelopes.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.lines.iter().map(|l| &l.event)
    }

    /// Every tool call, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.events().filter_map(|e| match e {
            Event::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    /// Every model call, in order.
    pub fn model_calls(&self) -> impl Iterator<Item = &ModelCall> {
        self.events().filter_map(|e| match e {
            Event::ModelCall(c) => Some(c),
            _ => None,
        })
    }

    /// Every mechanism firing, in order.
    pub fn mechanisms(&self) -> impl Iterator<Item = &MechanismFiring> {
        self.events().filter_map(|e| match e {
            Event::Mechanism(m) => Some(m),
            _ => None,
        })
    }

    /// The first launch's `run_start`.
    pub fn run_start(&self) -> Option<&RunStart> {
        self.events().find_map(|e| match e {
            Event::RunStart(s) => Some(s),
            _ => None,
        })
    }
}

/// Reads an event log; `None` when the file cannot be read.
pub fn read_events(path: &Path) -> Option<EventLog> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| EventLog::parse(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines exactly as the harness wrote them before lines carried `schema_version`.
    const LEGACY: &str = concat!(
        r#"{"t_ms":0,"run":1,"kind":"run_start","tier":"task","resumed":false,"ablations":[],"static_prefill":556,"num_ctx":32768,"sandbox":"landlock"}"#,
        "\n",
        r#"{"t_ms":12,"run":1,"kind":"model_call","turn":0,"prompt_tokens":700,"completion_tokens":9,"latency_ms":11,"est_tokens":690,"num_predict":8192,"done_reason":"stop","tools_offered":8}"#,
        "\n",
        r#"{"t_ms":15,"run":1,"kind":"tool_call","turn":0,"name":"todo","ok":true,"ms":0,"intercepted":false,"args":"{\"action\":\"create\"}"}"#,
        "\n",
        r#"{"t_ms":16,"run":1,"kind":"mechanism","name":"finish_gate","action":"accept","detail":{}}"#,
        "\n",
        r#"{"t_ms":17,"run":1,"kind":"warning","checkpoint_error":"disk full"}"#,
        "\n",
        r#"{"t_ms":18,"run":1,"kind":"run_end","status":"finished","turns":2,"tool_calls":1,"model_calls":1,"prompt_tokens":700,"completion_tokens":9,"verification":"unchecked","mechanisms":{"finish_gate":1,"finish_gate.accept":1}}"#,
        "\n",
        r#"{"t_ms":19,"run":1,"kind":"mecha"#
    );

    #[test]
    fn logs_written_before_versioning_load() {
        let log = EventLog::parse(LEGACY);
        assert_eq!(log.lines.len(), 6);
        assert_eq!(log.bad_lines, 1);
        assert!(log
            .lines
            .iter()
            .all(|l| l.schema_version == 1 && l.run == 1));
        assert_eq!(log.run_start().unwrap().sandbox, "landlock");
        assert_eq!(log.model_calls().next().unwrap().prompt_tokens, Some(700));
        let c = log.tool_calls().next().unwrap();
        assert!(c.ok && c.outcome.is_none() && c.result.is_none());
        assert_eq!(log.mechanisms().next().unwrap().action, "accept");
        assert!(
            matches!(&log.lines[5].event, Event::RunEnd(e) if e.mechanisms["finish_gate"] == 1)
        );
    }

    #[test]
    fn the_wire_format_is_flat_and_typed() {
        let line = EventLine {
            schema_version: crate::SCHEMA_VERSION,
            t_ms: 5,
            run: 2,
            event: Event::ToolCall(ToolCall {
                turn: 3,
                name: "run_shell".into(),
                ok: false,
                ms: 1,
                intercepted: false,
                args: "{}".into(),
                outcome: Some(CallOutcome::Refused(Refusal {
                    ring: 2,
                    reason: "mkfs formats a disk".into(),
                    alternative: None,
                    needs_attended: false,
                })),
                result: Some("error: [safety ring 2: …] refused".into()),
            }),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(
            text.starts_with(r#"{"schema_version":1,"t_ms":5,"run":2,"kind":"tool_call","turn":3,"name":"run_shell""#),
            "{text}"
        );
        assert!(
            text.contains(
                r#""outcome":{"status":"refused","ring":2,"reason":"mkfs formats a disk"}"#
            ),
            "{text}"
        );
        let back: EventLine = serde_json::from_str(&text).unwrap();
        assert_eq!(back, line);
        let ran = serde_json::to_string(&CallOutcome::Ran {
            exit: Some(0),
            timed_out: false,
        })
        .unwrap();
        assert_eq!(ran, r#"{"status":"ran","exit":0}"#);
    }

    #[test]
    fn sparse_and_unknown_lines_still_load() {
        let log = EventLog::parse(concat!(
            "{\"kind\":\"model_call\",\"prompt_tokens\":10}\n",
            "{\"kind\":\"from_the_future\",\"x\":1}\n",
            "not json\n",
        ));
        assert_eq!(log.lines.len(), 2);
        assert_eq!(log.bad_lines, 1);
        assert_eq!(log.lines[1].event, Event::Other);
    }
}
