//! Both sides of a τ² conversation played by the simulator against each other, with the
//! environment's results stood in by `ok` (the end-to-end runs with the real environment and
//! grading are `tau2/tests/sim_oracle.rs` and the runner's τ² arm tests).

use super::*;
use crate::catalog::ModelSpec;
use crate::convo::{Call, Msg};
use crate::profile::Profile;
use crate::task::TaskIndex;
use lrab_ollama::Tool;
use serde_json::json;

fn data() -> Option<Data> {
    let dir = lrab_data::test_folder("tau2")?;
    Some(data::load(&dir))
}

fn m(role: &str, content: &str, calls: Vec<Call>) -> Msg {
    Msg {
        role: role.into(),
        content: content.into(),
        calls,
    }
}

fn tool(name: &str, params: &[&str]) -> Tool {
    let props: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| (p.to_string(), json!({"type": "string"})))
        .collect();
    Tool::function(
        name,
        "",
        json!({"type": "object", "properties": props, "required": params}),
    )
}

/// Tools of these names, each with no parameters.
fn tools<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Tool> {
    names.into_iter().map(|n| tool(n, &[])).collect()
}

use serde_json::Value;

fn reply(data: &Data, profile: Profile, conv: &Conv) -> Option<Turn> {
    let tasks = TaskIndex::default();
    let model = ModelSpec::from_profile(profile);
    let env = Env {
        model: &model,
        seed: 1,
        tasks: &tasks,
    };
    respond_with(data, &env, conv)
}

/// The domain whose agent has the tool `has_tool`.
fn domain<'a>(data: &'a Data, has_tool: &str) -> &'a Domain {
    data.domains
        .iter()
        .find(|d| d.agent_tools.contains(has_tool))
        .expect("domain in the data")
}

/// The task `id` of that domain.
fn task<'a>(data: &'a Data, id: &str, has_tool: &str) -> &'a Task {
    domain(data, has_tool)
        .tasks
        .iter()
        .find(|t| t.id == id)
        .expect("task in the data")
}

/// The agent's tools of domain `d`, named as the domain names them.
fn agent_tools(d: &Domain) -> Vec<Tool> {
    tools(d.agent_tools.iter().map(String::as_str))
}

/// The customer's system prompt as upstream renders the scenario (tab-indented).
fn customer_system(t: &Task) -> String {
    let ind = |s: &str| {
        s.lines()
            .map(|l| format!("\t\t{l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "Guidelines.\n\n<scenario>\nInstructions:\n\tReason for call:\n{}\n\tKnown info:\n{}\n\tTask instructions:\n{}\n</scenario>",
        ind(&t.reason),
        ind(&t.known),
        ind(&t.instructions)
    )
}

/// The customer's side of task `t` after the agent's greeting and `more`, offered `tools`.
fn customer_conv(t: &Task, more: Vec<Msg>, tools: Vec<Tool>) -> Conv {
    let mut messages = vec![
        m("system", &customer_system(t), vec![]),
        m("user", "Hi! How can I help you today?", vec![]),
    ];
    messages.extend(more);
    Conv {
        messages,
        tools,
        ..Default::default()
    }
}

/// Runs agent and customer against each other on task `t` of domain `d`; the agent's tool
/// names carry `prefix` and, with `customer_tool`, it talks to the customer through that tool.
/// Returns the agent's calls (domain tools only, prefix removed) and the customer's messages.
fn converse(
    data: &Data,
    t: &Task,
    d: &Domain,
    prefix: &str,
    customer_tool: Option<&str>,
) -> (Vec<(String, Value)>, Vec<String>) {
    let mut offered: Vec<Tool> = d
        .agent_tools
        .iter()
        .map(|n| tool(&format!("{prefix}{n}"), &[]))
        .collect();
    if let Some(c) = customer_tool {
        offered.push(tool(c, &["message"]));
    }
    let user_tools = tools(
        t.actions
            .iter()
            .filter(|g| g.by_user)
            .map(|g| g.name.as_str()),
    );
    let mut agent = Conv {
        messages: vec![m("system", "You are an agent.", vec![])],
        tools: offered,
        ..Default::default()
    };
    let mut customer = customer_conv(t, vec![], user_tools);
    let mut calls = Vec::new();
    let mut said = Vec::new();
    // the customer's turns until it speaks (its device's results stood in by `ok`)
    let customer_says = |customer: &mut Conv, said: &mut Vec<String>| -> String {
        for _ in 0..20 {
            let u = reply(data, Profile::oracle(), customer).expect("customer recognised");
            if u.calls.is_empty() {
                customer.messages.push(m("assistant", &u.content, vec![]));
                said.push(u.content.clone());
                return u.content;
            }
            customer.messages.push(m("assistant", "", u.calls.clone()));
            customer.messages.push(m("tool", "ok", vec![]));
        }
        panic!("the customer never spoke")
    };
    let first = customer_says(&mut customer, &mut said);
    agent.messages.push(m("user", &first, vec![]));
    for _ in 0..60 {
        let a = reply(data, Profile::oracle(), &agent).expect("agent recognised");
        agent
            .messages
            .push(m("assistant", &a.content, a.calls.clone()));
        let Some(c) = a.calls.first() else {
            if customer_tool.is_some() {
                break; // the agent has finished
            }
            customer.messages.push(m("user", &a.content, vec![]));
            let r = customer_says(&mut customer, &mut said);
            if r.contains("###") {
                break;
            }
            agent.messages.push(m("user", &r, vec![]));
            continue;
        };
        if Some(c.name.as_str()) == customer_tool {
            customer
                .messages
                .push(m("user", c.args["message"].as_str().unwrap(), vec![]));
            let r = customer_says(&mut customer, &mut said);
            agent.messages.push(m("tool", &r, vec![]));
        } else {
            calls.push((
                c.name.trim_start_matches(prefix).to_string(),
                c.args.clone(),
            ));
            agent.messages.push(m("tool", "ok", vec![]));
        }
    }
    (calls, said)
}

fn gold_agent_calls(t: &Task) -> Vec<(String, Value)> {
    t.actions
        .iter()
        .filter(|g| !g.by_user)
        .map(|g| (g.name.clone(), g.args.clone()))
        .collect()
}

#[test]
fn oracle_agent_replays_gold_actions_and_the_customer_stops() {
    let Some(data) = data() else { return };
    let t = task(&data, "0", "get_order_details");
    let d = domain(&data, "get_order_details");
    let (calls, said) = converse(&data, t, d, "", None);
    assert_eq!(calls, gold_agent_calls(t));
    assert!(
        said[0].contains("#W2378156") && said[0].contains("Yusuf Rossi"),
        "{said:?}"
    );
    assert_eq!(said.last().unwrap(), "###STOP###");
}

#[test]
fn through_prefixed_mcp_tools_and_a_customer_tool() {
    let Some(data) = data() else { return };
    let d = domain(&data, "book_reservation");
    let t = task(&data, "8", "book_reservation");
    for prefix in ["tau2_", "mcp__tau2__"] {
        let tool = format!("{prefix}send_message_to_customer");
        let (calls, said) = converse(&data, t, d, prefix, Some(&tool));
        assert_eq!(calls, gold_agent_calls(t), "{prefix}");
        assert_eq!(said.last().unwrap(), "###STOP###", "{prefix}");
    }
}

#[test]
fn the_customer_performs_what_the_agent_asks_on_its_phone() {
    let Some(data) = data() else { return };
    let d = domain(&data, "refuel_data");
    let t = &d.tasks[0];
    assert!(t.actions.iter().any(|g| g.by_user));
    let ask = "Please do this on your phone: `toggle_airplane_mode {}`, then `toggle_roaming {}`.";
    let mut customer = customer_conv(
        t,
        vec![m("assistant", "Hi.", vec![]), m("user", ask, vec![])],
        tools(["toggle_airplane_mode", "toggle_roaming", "toggle_data"]),
    );
    let mut done = Vec::new();
    for _ in 0..3 {
        let u = reply(&data, Profile::oracle(), &customer).unwrap();
        if u.calls.is_empty() {
            assert!(u.content.starts_with("I did that."), "{}", u.content);
            break;
        }
        done.push(u.calls[0].name.clone());
        customer.messages.push(m("assistant", "", u.calls));
        customer
            .messages
            .push(m("tool", "Airplane mode: OFF", vec![]));
    }
    assert_eq!(done, ["toggle_airplane_mode", "toggle_roaming"]);
    // the whole conversation: the agent asks for every gold action of the customer's side
    let (_, said) = converse(&data, t, d, "", None);
    assert_eq!(said.last().unwrap(), "###STOP###");
}

#[test]
fn a_request_of_no_tau2_task_is_left_alone() {
    let Some(data) = data() else { return };
    let conv = Conv {
        messages: vec![
            m("system", "You are a coding agent.", vec![]),
            m("user", "Write report.md with the totals.", vec![]),
        ],
        tools: ["bash", "read", "write", "edit"]
            .iter()
            .map(|n| tool(n, &["path"]))
            .collect(),
        ..Default::default()
    };
    assert!(reply(&data, Profile::oracle(), &conv).is_none());
    // τ² tools but a customer whose words match no task: not recognised either
    let d = &data.domains[0];
    let conv = Conv {
        messages: vec![m("user", "Hello there, nice weather today.", vec![])],
        tools: agent_tools(d),
        ..Default::default()
    };
    assert!(reply(&data, Profile::oracle(), &conv).is_none());
}

#[test]
fn sized_models_draw_failure_forms_deterministically() {
    let Some(data) = data() else { return };
    let d = domain(&data, "get_order_details");
    let t = task(&data, "0", "get_order_details");
    let mut forms = Vec::new();
    for p in crate::profile::builtin() {
        for i in 0..40 {
            let conv = Conv {
                messages: vec![m("user", &format!("Hi. {}", t.opening()), vec![])],
                tools: agent_tools(d),
                seed: Some(i),
                ..Default::default()
            };
            let a = reply(&data, p.clone(), &conv).unwrap();
            assert_eq!(
                Some(&a),
                reply(&data, p.clone(), &conv).as_ref(),
                "deterministic"
            );
            forms.extend(a.form);
        }
    }
    assert!(!forms.is_empty(), "some sized model fails on some seed");
}

#[test]
fn through_a_bridge_to_tools_listed_by_name() {
    let Some(data) = data() else { return };
    let d = domain(&data, "book_reservation");
    let t = task(&data, "8", "book_reservation");
    let mut listing: Vec<String> = d
        .agent_tools
        .iter()
        .map(|n| format!("- \"srv__{n}\": \"a tool\""))
        .collect();
    listing.push("- \"srv__send_message_to_customer\": \"talk\"".into());
    let bridge = Tool::function(
        "invoke",
        "Invokes a listed tool by name.",
        json!({"type": "object", "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}}, "required": ["name", "arguments"]}),
    );
    let search = Tool::function(
        "find_tools",
        "Query forms: \"select:A,B\" fetches these tools.",
        json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    );
    // a policy that names a bare tool does not make it callable under that name
    let mut conv = Conv {
        messages: vec![
            m("system", "Agent. Use book_reservation carefully.", vec![]),
            m(
                "user",
                &format!("Tools:\n{}\n\nHi. {}", listing.join("\n"), t.opening()),
                vec![],
            ),
        ],
        tools: vec![bridge, search],
        ..Default::default()
    };
    let first = reply(&data, Profile::oracle(), &conv).unwrap();
    assert_eq!(first.calls[0].name, "find_tools");
    let q = first.calls[0].args["query"].as_str().unwrap();
    assert!(
        q.starts_with("select:srv__") && q.contains("srv__send_message_to_customer"),
        "{q}"
    );
    conv.messages.push(m("assistant", "", first.calls));
    conv.messages
        .push(m("tool", "<functions>…</functions>", vec![]));
    let mut calls = Vec::new();
    for _ in 0..20 {
        let a = reply(&data, Profile::oracle(), &conv).unwrap();
        let Some(c) = a.calls.first().cloned() else {
            break;
        };
        assert_eq!(c.name, "invoke");
        let name = c.args["name"].as_str().unwrap().to_string();
        conv.messages.push(m("assistant", "", a.calls));
        if name.ends_with("send_message_to_customer") {
            conv.messages.push(m("tool", "###STOP###", vec![]));
        } else {
            calls.push((
                name.trim_start_matches("srv__").to_string(),
                c.args["arguments"].clone(),
            ));
            conv.messages.push(m("tool", "ok", vec![]));
        }
    }
    assert_eq!(calls, gold_agent_calls(t));
}
