//! The LLM participants: the `plain` agent (upstream's reference LLM agent), the user
//! simulator, and the NL-assertion judge, each a view of the trajectory sent through the
//! model client ([`client`]).

mod client;

pub use client::{chat, Api, Backend, Reply};

use crate::error::{err, fail, Result};
use crate::evaluate::{Judge, NlResult};
use crate::message::{Message, ToolCall};
use crate::orchestrator::{Agent, User};
use lrab_ollama::{openai, Tool};
use serde_json::Value;

#[cfg(test)]
pub(crate) use client::check_url;

/// One wire message of a view.
type WireMsg = openai::Message;

fn wire(role: &str, content: Option<&str>) -> WireMsg {
    WireMsg {
        role: role.into(),
        content: Some(content.map_or(Value::Null, |c| Value::String(c.into()))),
        ..Default::default()
    }
}

/// The calls of a trajectory message in OpenAI shape (ids, JSON-string arguments).
fn wire_calls(calls: &[ToolCall]) -> Vec<openai::ToolCall> {
    calls
        .iter()
        .map(|c| openai::ToolCall {
            id: Some(c.id.clone()),
            index: None,
            kind: Some("function".into()),
            function: openai::FunctionCall {
                name: Some(c.name.clone()),
                arguments: Some(
                    serde_json::to_string(&Value::Object(c.arguments.clone())).unwrap_or_default(),
                ),
            },
        })
        .collect()
}

/// The agent's view of the trajectory in OpenAI shape (tool calls with ids, tool results
/// with their tool's name for Ollama).
pub fn agent_view(system: &str, traj: &[Message]) -> Vec<WireMsg> {
    let mut out = vec![wire("system", Some(system))];
    let mut names = std::collections::HashMap::new();
    for m in traj {
        for c in m.tool_calls.iter().flatten() {
            names.insert(c.id.clone(), c.name.clone());
        }
        match m.role.as_str() {
            "assistant" => out.push(WireMsg {
                tool_calls: m.tool_calls.as_deref().map(wire_calls),
                ..wire("assistant", m.content.as_deref())
            }),
            "user" if !m.is_tool_call() => out.push(wire("user", m.content.as_deref())),
            "tool" if m.requestor.as_deref() != Some("user") => out.push(WireMsg {
                tool_call_id: m.id.clone(),
                name: m.id.as_ref().and_then(|id| names.get(id)).cloned(),
                ..wire("tool", m.content.as_deref())
            }),
            _ => {}
        }
    }
    out
}

/// The agent instruction block wrapped around the policy (upstream's LLM agent shape,
/// in our own words).
pub fn agent_system_prompt(policy: &str) -> String {
    format!(
        "<instructions>\nYou are a customer service agent helping the user as the <policy> below describes.\nIn each turn you either send a message to the user or make a tool call, never both.\nBe helpful, follow the policy at all times, and produce valid JSON for tool arguments.\n</instructions>\n<policy>\n{policy}\n</policy>"
    )
}

/// `plain`: upstream's reference LLM agent — policy as system prompt, the domain tools,
/// whatever the model returns, no extra mechanisms.
pub struct PlainAgent {
    pub backend: Backend,
    pub system: String,
    pub tools: Vec<Tool>,
    calls: usize,
}

impl PlainAgent {
    pub fn new(backend: Backend, policy: &str, tools: Vec<Tool>) -> Self {
        PlainAgent {
            backend,
            system: agent_system_prompt(policy),
            tools,
            calls: 0,
        }
    }
}

impl Agent for PlainAgent {
    fn next(&mut self, traj: &[Message]) -> Result<Message> {
        let r = chat(&self.backend, &agent_view(&self.system, traj), &self.tools)?;
        Ok(reply_to_message("assistant", r, &mut self.calls))
    }
}

fn reply_to_message(role: &str, r: Reply, counter: &mut usize) -> Message {
    if r.tool_calls.is_empty() {
        return Message {
            role: role.into(),
            content: r.content,
            ..Default::default()
        };
    }
    let calls = r
        .tool_calls
        .into_iter()
        .map(|(name, arguments)| {
            *counter += 1;
            ToolCall {
                id: format!("{role}_call_{counter}"),
                name,
                arguments,
                requestor: role.into(),
            }
        })
        .collect();
    Message::with_calls(role, r.content, calls)
}

/// The user simulator's view: roles flipped, the agent's tool traffic hidden, the user's
/// own tool calls and results kept.
pub fn user_view(system: &str, traj: &[Message]) -> Vec<WireMsg> {
    let mut out = vec![wire("system", Some(system))];
    for m in traj {
        match m.role.as_str() {
            "assistant" if !m.is_tool_call() => out.push(wire("user", m.content.as_deref())),
            "user" => out.push(WireMsg {
                tool_calls: m.tool_calls.as_deref().map(wire_calls),
                ..wire("assistant", m.content.as_deref())
            }),
            "tool" if m.requestor.as_deref() == Some("user") => out.push(WireMsg {
                tool_call_id: m.id.clone(),
                ..wire("tool", m.content.as_deref())
            }),
            _ => {}
        }
    }
    out
}

/// Upstream's user system prompt: the guideline file, then the rendered scenario.
pub fn user_system_prompt(guidelines: &str, scenario: &str) -> String {
    format!("{guidelines}\n\n<scenario>\n{scenario}\n</scenario>")
}

/// LLM user simulator with its own model and backend.
pub struct LlmUser {
    pub backend: Backend,
    pub system: String,
    pub tools: Vec<Tool>,
    calls: usize,
}

impl LlmUser {
    pub fn new(backend: Backend, guidelines: &str, scenario: &str, tools: Vec<Tool>) -> Self {
        LlmUser {
            backend,
            system: user_system_prompt(guidelines, scenario),
            tools,
            calls: 0,
        }
    }
}

impl User for LlmUser {
    fn next(&mut self, traj: &[Message]) -> Result<Message> {
        let r = chat(&self.backend, &user_view(&self.system, traj), &self.tools)?;
        Ok(reply_to_message("user", r, &mut self.calls))
    }
}

const JUDGE_SYSTEM: &str = "You grade a customer-service conversation against a list of expected outcomes. \
For each expected outcome decide, from the conversation only, whether it was met. \
Reply with JSON only, in the form {\"results\": [{\"expectedOutcome\": <the outcome text>, \"reasoning\": <short reason>, \"metExpectation\": true|false}]}, one entry per expected outcome, in order.";

/// NL-assertion judge on any backend (upstream hard-codes gpt-4.1; here it is configurable).
pub struct LlmJudge {
    pub backend: Backend,
}

impl Judge for LlmJudge {
    fn judge(&mut self, messages: &[Message], assertions: &[String]) -> Result<Vec<NlResult>> {
        let transcript: Vec<String> = messages
            .iter()
            .filter(|m| m.content.is_some())
            .map(|m| format!("{}: {}", m.role, m.text()))
            .collect();
        let user = format!(
            "conversation:\n{}\n\nexpectedOutcomes:\n{}",
            transcript.join("\n"),
            serde_json::to_string(assertions)?
        );
        let r = chat(
            &self.backend,
            &[
                wire("system", Some(JUDGE_SYSTEM)),
                wire("user", Some(&user)),
            ],
            &[],
        )?;
        let text = r
            .content
            .ok_or_else(|| err!(Judge, "judge returned no text"))?;
        parse_judge(&text, assertions)
    }
}

/// Parse the judge's JSON (tolerating code fences); every assertion must get a verdict.
pub fn parse_judge(text: &str, assertions: &[String]) -> Result<Vec<NlResult>> {
    let start = text
        .find('{')
        .ok_or_else(|| err!(Judge, "judge reply has no JSON object"))?;
    let end = text
        .rfind('}')
        .ok_or_else(|| err!(Judge, "judge reply has no JSON object"))?;
    let v: Value = serde_json::from_str(&text[start..=end])
        .map_err(|e| err!(Judge, "judge reply is not valid JSON: {e}"))?;
    let list = v
        .get("results")
        .and_then(|r| r.as_array())
        .ok_or_else(|| err!(Judge, "judge reply has no results list"))?;
    if list.len() != assertions.len() {
        fail!(
            Judge,
            "judge returned {} verdicts for {} assertions",
            list.len(),
            assertions.len()
        );
    }
    Ok(list
        .iter()
        .zip(assertions)
        .map(|(r, a)| NlResult {
            assertion: a.clone(),
            met: r
                .get("metExpectation")
                .and_then(|m| m.as_bool())
                .unwrap_or(false),
            justification: r
                .get("reasoning")
                .and_then(|m| m.as_str())
                .unwrap_or("")
                .to_string(),
        })
        .collect())
}
