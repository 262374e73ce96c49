//! `lrab tau2 mcp` end to end: the real binary, spawned, driven over stdio by a scripted MCP
//! client that replays a task's gold actions and then talks to the (scripted) customer; the
//! record it writes grades with the gold final DB state. Also: arguments that do not fit a
//! tool come back as the tool's error and are recorded as upstream records them; an agent
//! that never talks to the customer runs into the step limit and is graded; a client that
//! leaves ends the conversation (agent_stop).

#[path = "../../tau2/tests/common/mod.rs"]
mod tau2_common;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A minimal MCP client over the child's stdio.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Client {
    fn spawn(data: &Path, args: &[&str]) -> Client {
        let mut argv = vec!["tau2", "--tau2-data", data.to_str().unwrap(), "mcp"];
        argv.extend_from_slice(args);
        Client::spawn_lrab(&argv)
    }

    /// `lrab tau2 mcp-relay DIR`: the server a confined agent starts.
    fn relay(dir: &Path) -> Client {
        Client::spawn_lrab(&["tau2", "mcp-relay", dir.to_str().unwrap()])
    }

    fn spawn_lrab(args: &[&str]) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lrab"));
        cmd.args(args);
        Client::spawn_cmd(cmd)
    }

    fn spawn_cmd(mut cmd: Command) -> Client {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn lrab tau2 mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    fn send(&mut self, v: &Value) {
        let w = self.stdin.as_mut().unwrap();
        writeln!(w, "{v}").unwrap();
        w.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(v["id"], json!(id), "{v}");
        v
    }

    fn initialize(&mut self) -> Value {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r["result"].clone()
    }

    /// A tool call: (text, isError).
    fn call(&mut self, name: &str, args: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let res = &r["result"];
        (
            res["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            res["isError"].as_bool().unwrap(),
        )
    }

    /// Closes stdin and waits for a clean exit.
    fn close(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "lrab tau2 mcp exited with {status}");
    }
}

fn data() -> PathBuf {
    tau2_common::data_dir()
}

fn results(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap()
}

/// `lrab tau2 mcp` serving `task` of `domain` to a customer `who` (its arguments), with a
/// fixed clock, recording to `out`.
fn serve(domain: &str, task: &str, who: &[&str], out: &Path) -> Client {
    let mut args = vec!["--domain", domain, "--task", task];
    args.extend_from_slice(who);
    args.extend(["--fixed-clock", "--out", out.to_str().unwrap()]);
    Client::spawn(&data(), &args)
}

/// [`serve`] mock's `update_task_1` with the scripted customer and `extra` arguments.
fn scripted_update_task_1(out: &Path, extra: &[&str]) -> Client {
    serve(
        "mock",
        "update_task_1",
        &[&["--user", "scripted"], extra].concat(),
        out,
    )
}

/// Serve `task` with the scripted customer; replay its gold (agent-side) actions, then say
/// its communicate_info; returns the results.json written.
fn gold_over_mcp(domain: &str, task_id: &str, bad_call: Option<(&str, Value)>) -> Value {
    let dir = data();
    let d = lrab_tau2::Domain::load(&dir, lrab_tau2::DomainKind::parse(domain).unwrap()).unwrap();
    let task = d.task(task_id).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut c = serve(
        domain,
        task_id,
        &["--user", "scripted", "--arm", "script"],
        &out,
    );
    let init = c.initialize();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    let instructions = init["instructions"].as_str().unwrap();
    assert!(
        instructions.contains(&d.policy),
        "the policy is the server's instructions"
    );
    assert!(
        instructions.contains("<customer_first_message>\nHello, I need help with my request.\n</customer_first_message>"),
        "{instructions}"
    );
    // the domain's agent tools with upstream's schemas, plus the customer tool
    let listed = c.request("tools/list", json!({}))["result"]["tools"].clone();
    let schemas = d.env().tool_schemas("assistant");
    assert_eq!(listed.as_array().unwrap().len(), schemas.len() + 1);
    for s in &schemas {
        let name = s.function.name.as_str();
        let t = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        assert_eq!(
            Some(&t["inputSchema"]),
            s.function.parameters.as_ref(),
            "{name}"
        );
        assert_eq!(
            t["description"].as_str(),
            s.function.description.as_deref(),
            "{name}"
        );
    }
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == lrab_tau2::CUSTOMER_TOOL));
    if let Some((name, args)) = &bad_call {
        let (text, is_error) = c.call(name, args.clone());
        assert!(is_error && text.starts_with("Error: "), "{text}");
    }
    let ec = task.evaluation_criteria.as_ref().unwrap();
    for a in ec
        .actions
        .iter()
        .flatten()
        .filter(|a| a.requestor == "assistant")
    {
        let (text, is_error) = c.call(&a.name, Value::Object(a.arguments.clone()));
        assert!(!is_error, "{}: {text}", a.name);
    }
    let say = ec.communicate_info.clone().unwrap_or_default().join(". ");
    let say = if say.is_empty() {
        "All done.".to_string()
    } else {
        say
    };
    let (reply, is_error) = c.call(lrab_tau2::CUSTOMER_TOOL, json!({"message": say}));
    assert!(!is_error);
    assert!(
        reply.contains("###STOP###")
            && reply.contains("[The customer has ended the conversation.]"),
        "{reply}"
    );
    let (after, is_error) = c.call("get_user_details", json!({"user_id": "x"}));
    assert!(
        is_error && after.contains("the conversation is over (user_stop)"),
        "{after}"
    );
    c.close();
    let v = results(&out);
    // the task's cell in the folder's manifest, in the published shape
    let m = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_manifest.json"))
        .expect("a manifest");
    let m = lrab_records::Tau2Manifest::read(&m).unwrap();
    assert_eq!(m.tasks.len(), 1);
    assert_eq!(m.tasks[0].0, task_id);
    assert_eq!(m.tasks[0].1[0].1.reward, Some(1.0));
    // `lrab tau2 grade` re-grades the record to the same reward
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(["tau2", "--tau2-data", dir.to_str().unwrap(), "grade"])
        .arg(out.join("results.json"))
        .output()
        .unwrap();
    let graded = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && graded.contains(&format!("task {task_id} trial 0: reward 1.0")),
        "{graded}"
    );
    v
}

#[test]
fn mock_gold_actions_over_mcp_grade_with_the_gold_db() {
    if tau2_common::data().is_none() {
        return;
    }
    let v = gold_over_mcp("mock", "update_task_1", None);
    let sim = &v["simulations"][0];
    assert_eq!(sim["termination_reason"], "user_stop");
    assert_eq!(sim["reward_info"]["reward"], 1.0);
    assert_eq!(sim["reward_info"]["db_check"]["db_match"], true);
    assert_eq!(v["info"]["agent_info"]["implementation"], "lrab_script");
    let calls: Vec<&Value> = sim["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["tool_calls"].is_array())
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["tool_calls"][0]["name"], "update_task_status");
}

#[test]
fn retail_gold_actions_over_mcp_grade_with_the_gold_db_and_bad_arguments_are_tool_errors() {
    if tau2_common::data().is_none() {
        return;
    }
    // a call missing a required argument: the tool's own error, recorded as upstream records it
    let v = gold_over_mcp(
        "retail",
        "33",
        Some(("get_order_details", json!({"id": "#W6111398"}))),
    );
    let sim = &v["simulations"][0];
    assert_eq!(sim["termination_reason"], "user_stop");
    assert_eq!(sim["reward_info"]["reward"], 1.0);
    assert_eq!(sim["reward_info"]["db_check"]["db_match"], true);
    let msgs = sim["messages"].as_array().unwrap();
    let err = msgs
        .iter()
        .find(|m| m["role"] == "tool" && m["error"] == true)
        .unwrap();
    assert!(
        err["content"]
            .as_str()
            .unwrap()
            .contains("get_order_details() got an unexpected keyword argument 'id'"),
        "{err}"
    );
}

#[test]
fn an_agent_that_never_talks_to_the_customer_ends_at_the_step_limit_and_is_graded() {
    if tau2_common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut c = scripted_update_task_1(&out, &["--max-steps", "6"]);
    c.initialize();
    let mut last = String::new();
    for _ in 0..10 {
        let (text, is_error) = c.call("get_users", json!({}));
        last = text;
        if is_error {
            break;
        }
    }
    assert!(last.contains("max_steps"), "{last}");
    c.close();
    let sim = &results(&out)["simulations"][0];
    assert_eq!(sim["termination_reason"], "max_steps");
    assert_eq!(sim["reward_info"]["reward"], 0.0);
}

#[test]
fn a_client_that_leaves_ends_the_conversation_as_agent_stop() {
    if tau2_common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut c = scripted_update_task_1(&out, &[]);
    c.initialize();
    let (_, is_error) = c.call(
        "update_task_status",
        json!({"task_id": "task_1", "status": "completed"}),
    );
    assert!(!is_error);
    c.close();
    let sim = &results(&out)["simulations"][0];
    assert_eq!(sim["termination_reason"], "agent_stop");
    // the write happened, so the DB matches the gold state
    assert_eq!(sim["reward_info"]["db_check"]["db_match"], true);
}

#[test]
fn bad_task_is_a_clear_error_before_serving() {
    if tau2_common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args([
            "tau2",
            "--tau2-data",
            data().to_str().unwrap(),
            "mcp",
            "--domain",
            "mock",
            "--task",
            "nope",
            "--user",
            "scripted",
            "--out",
        ])
        .arg(tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nope"), "{err}");
    assert!(o.stdout.is_empty(), "nothing on the protocol channel");
}

/// The launcher's side in-process (`Relayed`: loop, customer and record outside the agent's
/// box), the agent's side through `lrab tau2 mcp-relay` processes: a first relay only lists
/// the tools and leaves, a second does the task; the conversation grades with the gold DB.
#[test]
fn relayed_conversation_serves_one_relay_after_another_and_grades() {
    if tau2_common::data().is_none() {
        return;
    }
    use lrab_tau2::{evaluate, Limits, Relayed, ScriptedUser, User};
    let d =
        lrab_tau2::Domain::load(&data(), lrab_tau2::DomainKind::parse("mock").unwrap()).unwrap();
    let task = d.task("update_task_1").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut env = d.env();
    env.set_state(task.initial_state.as_ref(), &[]).unwrap();
    let make_user: Box<dyn FnOnce() -> Box<dyn User> + Send> =
        Box::new(|| Box::new(ScriptedUser::new(vec!["Please complete task_1.".into()])));
    let r = Relayed::start(
        tmp.path(),
        env,
        vec![],
        Limits::default(),
        &d.policy,
        make_user,
    )
    .unwrap();
    assert_eq!(r.opening(), Some("Please complete task_1."));
    let mut c = Client::relay(tmp.path());
    let init = c.initialize();
    assert!(init["instructions"]
        .as_str()
        .unwrap()
        .contains("Please complete task_1."));
    let tools = c.request("tools/list", json!({}))["result"]["tools"].clone();
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "update_task_status"));
    c.close();
    let mut c = Client::relay(tmp.path());
    c.initialize();
    let (_, is_error) = c.call(
        "update_task_status",
        json!({"task_id": "task_1", "status": "completed"}),
    );
    assert!(!is_error);
    let (reply, _) = c.call(
        lrab_tau2::CUSTOMER_TOOL,
        json!({"message": "task_1 is completed."}),
    );
    assert!(reply.contains("###STOP###"), "{reply}");
    c.close();
    let o = r.finish().unwrap();
    assert_eq!(o.termination, "user_stop");
    let ev = evaluate(&d, task, &o.messages, &o.termination, None).unwrap();
    assert_eq!(ev.reward, Some(1.0));
}

/// An agent that never starts the server: finishing ends the conversation as agent_stop.
#[test]
fn relayed_conversation_without_any_relay_ends_as_agent_stop() {
    if tau2_common::data().is_none() {
        return;
    }
    use lrab_tau2::{Limits, Relayed, ScriptedUser, User};
    let d =
        lrab_tau2::Domain::load(&data(), lrab_tau2::DomainKind::parse("mock").unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let make_user: Box<dyn FnOnce() -> Box<dyn User> + Send> =
        Box::new(|| Box::new(ScriptedUser::new(vec!["Hi.".into()])));
    let r = Relayed::start(
        tmp.path(),
        d.env(),
        vec![],
        Limits::default(),
        &d.policy,
        make_user,
    )
    .unwrap();
    let o = r.finish().unwrap();
    assert_eq!(o.termination, "agent_stop");
    assert_eq!(
        o.messages.len(),
        3,
        "greeting, the customer's opening, the agent's stop"
    );
}

/// The relay started inside an arm's box (Landlock: writes only in the workdir, the `lrab`
/// binary's folder readable and executable; private network; no unix sockets) reaches the
/// conversation through the FIFOs in the workdir.
#[test]
fn relay_inside_the_arm_box_reaches_the_conversation() {
    if tau2_common::data().is_none() {
        return;
    }
    use lrab_tau2::{Limits, Relayed, ScriptedUser, User};
    if let Some(m) = lrab_safety::arm_box_missing(lrab_safety::ArmNet::Private) {
        eprintln!("skipped: this kernel cannot confine arms: {m}");
        return;
    }
    let d =
        lrab_tau2::Domain::load(&data(), lrab_tau2::DomainKind::parse("mock").unwrap()).unwrap();
    let task = d.task("update_task_1").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let mcp = work.join("mcp");
    std::fs::create_dir_all(&mcp).unwrap();
    let mut env = d.env();
    env.set_state(task.initial_state.as_ref(), &[]).unwrap();
    let make_user: Box<dyn FnOnce() -> Box<dyn User> + Send> =
        Box::new(|| Box::new(ScriptedUser::new(vec!["Please complete task_1.".into()])));
    let r = Relayed::start(&mcp, env, vec![], Limits::default(), &d.policy, make_user).unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_lrab"));
    let policy = lrab_safety::ArmPolicy {
        writable: vec![work.clone()],
        readable: vec![],
        executable: vec![bin.parent().unwrap().to_path_buf()],
        connect_port: 9,
        net: lrab_safety::ArmNet::Private,
        hide: vec![],
    };
    let mut cmd = Command::new(&bin);
    cmd.args(["tau2", "mcp-relay", mcp.to_str().unwrap()]);
    let _confined = lrab_safety::confine_arm(&mut cmd, &policy).expect("confine");
    let mut c = Client::spawn_cmd(cmd);
    c.initialize();
    let (_, is_error) = c.call(
        "update_task_status",
        json!({"task_id": "task_1", "status": "completed"}),
    );
    assert!(!is_error);
    let (reply, _) = c.call(lrab_tau2::CUSTOMER_TOOL, json!({"message": "Done."}));
    assert!(reply.contains("###STOP###"), "{reply}");
    c.close();
    let o = r.finish().unwrap();
    assert_eq!(o.termination, "user_stop");
    let ev = lrab_tau2::evaluate(&d, task, &o.messages, &o.termination, None).unwrap();
    assert_eq!(ev.reward, Some(1.0));
}

/// `--user-backend sim`: the simulated backend plays the customer (no GPU); the record says
/// simulated, and nothing but protocol lines reaches stdout.
#[test]
fn mcp_with_the_simulated_customer_is_labelled_simulated() {
    if tau2_common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut c = serve(
        "mock",
        "update_task_1",
        &["--user-model", "sim-4b", "--user-backend", "sim"],
        &out,
    );
    let init = c.initialize();
    assert!(init["instructions"]
        .as_str()
        .unwrap()
        .contains("<customer_first_message>"));
    let (_, is_error) = c.call(
        "update_task_status",
        json!({"task_id": "task_1", "status": "completed"}),
    );
    assert!(!is_error);
    c.close();
    let v = results(&out);
    assert_eq!(v["info"]["simulated"], true);
    assert_eq!(v["simulations"][0]["termination_reason"], "agent_stop");
    assert_eq!(
        v["simulations"][0]["reward_info"]["db_check"]["db_match"],
        true
    );
    let csv = std::fs::read_to_string(out.join("tau2.csv")).unwrap();
    assert!(csv.lines().nth(1).unwrap().ends_with(",true"), "{csv}");
}
