//! τ²-bench conversations: the simulated model as the customer-service agent or as the
//! customer (the user simulator), recognised only from what the request shows.
//!
//! - **The customer**: the system prompt holds one of the tasks' scenarios (its reason for
//!   the call, what the customer knows and the task's instructions, whitespace aside) and the
//!   request offers none of the domain's agent tools. The model states its reason and what it
//!   knows, performs on its own device what the agent asks it to (a tool it is offered, named
//!   in the agent's message, with the JSON object that follows the name as arguments), answers
//!   a question with what it knows, and otherwise ends the conversation as upstream's user
//!   simulator does (`###STOP###`, `###TRANSFER###` after a transfer).
//! - **The agent**: the request offers a domain's agent tools (natively or as an MCP client's
//!   tools, whose names may carry a prefix: `tau2_get_order_details`, `mcp__tau2__…`); the task
//!   is the one whose reason for the call and known information the customer's words hold
//!   (else the one most of whose words they hold). The oracle performs the task's gold actions
//!   in order through the offered tools, asks the customer for the ones the customer performs,
//!   then says what it must communicate — through the offered customer tool when there is one,
//!   else as its message. Sized models fail on each turn as on LRAB tasks (the calibrated
//!   per-turn forms).
//!
//! The task data comes from the data folder (`data.rs`), never from the request's wire.

mod agent;
pub(crate) mod data;
mod deferred;
mod user;

use crate::convo::Conv;
use crate::policy::{Env, Turn};
use data::{squash, Data, Domain, Task};

/// The turn of a τ² conversation, or None when the request is not one.
pub(crate) fn respond(env: &Env, conv: &Conv) -> Option<Turn> {
    respond_with(data::get(), env, conv)
}

pub(crate) fn respond_with(data: &Data, env: &Env, conv: &Conv) -> Option<Turn> {
    if data.domains.is_empty() {
        return None;
    }
    let offered: Vec<String> = conv.tools.iter().map(|t| t.function.name.clone()).collect();
    match agent_domain(data, &offered) {
        Some(d) => {
            let task = find_task(d, conv, &offered)?;
            Some(agent::turn(env, conv, d, task, &offered))
        }
        None => {
            if let Some(t) = through_bridge(data, env, conv, &offered) {
                return Some(t);
            }
            let task = customer_of(data, conv)?;
            Some(user::turn(conv, task))
        }
    }
}

/// The agent's turn when the domain's tools are listed by name behind a bridge tool.
fn through_bridge(data: &Data, env: &Env, conv: &Conv, offered: &[String]) -> Option<Turn> {
    let b = deferred::detect(conv)?;
    let (d, offered) = data
        .domains
        .iter()
        .filter_map(|d| {
            let mut all = offered.to_vec();
            all.extend(deferred::listed(conv, d));
            let n = covered(d, &all);
            (n >= 3 && 2 * n >= d.agent_tools.len()).then_some((n, d, all))
        })
        .max_by_key(|(n, _, _)| *n)
        .map(|(_, d, all)| (d, all))?;
    let inner = deferred::unwrap(conv, &b);
    let task = find_task(d, &inner, &offered)?;
    let mut needed: Vec<String> = Vec::new();
    let names = task.actions.iter().filter(|g| !g.by_user).map(|g| &g.name);
    for n in names.filter_map(|g| bind(g, &offered)) {
        if !needed.contains(n) {
            needed.push(n.clone());
        }
    }
    needed.extend(agent::customer_tool(d, &offered));
    let t = agent::turn(env, &inner, d, task, &offered);
    Some(deferred::wrap(conv, &b, t, &needed))
}

/// How many of the domain's agent tools the offered names cover.
fn covered(d: &Domain, offered: &[String]) -> usize {
    d.agent_tools
        .iter()
        .filter(|t| bind(t, offered).is_some())
        .count()
}

/// The offered tool that stands for a domain tool `name`: the same name, or the shortest
/// offered name that ends in `name` after a separator (an MCP client's prefix).
pub(crate) fn bind<'a>(name: &str, offered: &'a [String]) -> Option<&'a String> {
    if let Some(o) = offered.iter().find(|o| *o == name) {
        return Some(o);
    }
    offered
        .iter()
        .filter(|o| {
            o.len() > name.len()
                && o.ends_with(name)
                && matches!(
                    o.as_bytes()[o.len() - name.len() - 1],
                    b'_' | b'.' | b'-' | b'/' | b':'
                )
        })
        .min_by_key(|o| o.len())
}

/// The domain whose agent tools the request offers: at least three of the tools its gold
/// actions use, and at least half of them.
fn agent_domain<'a>(data: &'a Data, offered: &[String]) -> Option<&'a Domain> {
    if offered.is_empty() {
        return None;
    }
    data.domains
        .iter()
        .map(|d| (d, covered(d, offered)))
        .filter(|(d, n)| *n >= 3 && 2 * n >= d.agent_tools.len())
        .max_by_key(|(_, n)| *n)
        .map(|(d, _)| d)
}

/// The customer's words an agent has seen: user messages, and the results of its calls to
/// the customer tool.
fn customer_words(conv: &Conv, customer_tool: Option<&str>) -> String {
    let mut out = String::new();
    let mut last_call: Option<&str> = None;
    for m in &conv.messages {
        match m.role.as_str() {
            "user" => out.push_str(&m.content),
            "tool" if last_call.is_some() && last_call == customer_tool => out.push_str(&m.content),
            _ => {}
        }
        if m.role == "assistant" {
            last_call = m.calls.first().map(|c| c.name.as_str());
        }
        out.push(' ');
    }
    squash(&out)
}

/// The task the customer's words state: every task whose reason for the call and known
/// information they hold (the first in the data's order when several do); else the one
/// with the largest share (at least 60 %) of its distinctive words among them.
fn find_task<'a>(d: &'a Domain, conv: &Conv, offered: &[String]) -> Option<&'a Task> {
    let words = customer_words(conv, agent::customer_tool(d, offered).as_deref());
    if let Some(t) = d
        .tasks
        .iter()
        .find(|t| !t.reason.is_empty() && words.contains(&t.reason) && words.contains(&t.known))
    {
        return Some(t);
    }
    let said = word_set(&words);
    let mut best: Option<(f64, &Task)> = None;
    for t in &d.tasks {
        let own = word_set(&t.opening());
        if own.is_empty() {
            continue;
        }
        let share = own.iter().filter(|w| said.contains(*w)).count() as f64 / own.len() as f64;
        if share >= 0.6 && best.is_none_or(|(b, _)| share > b) {
            best = Some((share, t));
        }
    }
    best.map(|(_, t)| t)
}

fn word_set(s: &str) -> std::collections::BTreeSet<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != '_' && c != '#')
        .filter(|w| w.chars().count() >= 3)
        .map(|w| w.to_lowercase())
        .collect()
}

/// The task whose scenario the system prompt holds (the model is its customer).
fn customer_of<'a>(data: &'a Data, conv: &Conv) -> Option<&'a Task> {
    let system = conv.system_text();
    if system.is_empty() {
        return None;
    }
    let system = squash(&system);
    data.domains.iter().flat_map(|d| d.tasks.iter()).find(|t| {
        !t.reason.is_empty()
            && [&t.reason, &t.known, &t.instructions]
                .iter()
                .all(|s| system.contains(s.as_str()))
    })
}

#[cfg(test)]
mod tests;
