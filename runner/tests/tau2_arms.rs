//! `lrab tau2 run --agent <arm>` end to end without any third-party arm: a stand-in arm made
//! here (an arm file whose `[mcp]` section writes a `mcpServers` file, and a Python script
//! that reads it, starts the server it names, speaks MCP over stdio, replays the task's gold
//! actions and talks to the customer) runs confined through the recording proxy and is graded
//! with the gold DB state. Also: an arm killed at `--arm-timeout` ends as `max_steps` (not
//! `agent_stop`), and an arm without an `[mcp]` section is refused by name.

#[path = "../../tau2/tests/common/mod.rs"]
mod tau2_common;

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

const STAND_IN: &str = r#"import json, os, subprocess, sys, time
mode, gold_file, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
srv = json.load(open(os.path.join(os.environ["HOME"], "mcp.json")))["mcpServers"]["tau2"]
seen = {"prompt": prompt, "server": srv}
json.dump(seen, open("seen.json", "w"))
if mode == "sleep":
    time.sleep(600)
p = subprocess.Popen([srv["command"]] + srv["args"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
n = 0
def send(msg):
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()
def req(method, params):
    global n
    n += 1
    send({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
    return json.loads(p.stdout.readline())
init = req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "stand-in", "version": "0"}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
seen["instructions"] = init["result"]["instructions"]
seen["tools"] = [t["name"] for t in req("tools/list", {})["result"]["tools"]]
gold = json.load(open(gold_file))
for a in gold["actions"]:
    r = req("tools/call", {"name": a["name"], "arguments": a["arguments"]})
    assert not r["result"].get("isError"), r
r = req("tools/call", {"name": "send_message_to_customer", "arguments": {"message": gold["say"]}})
seen["reply"] = r["result"]["content"][0]["text"]
json.dump(seen, open("seen.json", "w"))
p.stdin.close()
p.wait()
"#;

/// The arms folder: `standin` (replays gold), `sleeper` (never answers), `nomcp`.
fn arms(dir: &Path, gold: &Path) {
    let script = dir.join("standin.py");
    std::fs::write(&script, STAND_IN).unwrap();
    let mcp = r#"
[mcp]
config_files = [{ path = "{home}/mcp.json", content = '''{"mcpServers": {"tau2": {"command": {mcp_program}, "args": {mcp_args}}}}''' }]
"#;
    for (name, mode, with_mcp) in [
        ("standin", "replay", true),
        ("sleeper", "sleep", true),
        ("nomcp", "replay", false),
    ] {
        let toml = format!(
            "name = \"{name}\"\nprogram = \"python3\"\nargs = [\"{}\", \"{mode}\", \"{}\", \"{{prompt}}\"]\napi = \"openai\"\nisolate_home = true\n{}",
            script.display(),
            gold.display(),
            if with_mcp { mcp } else { "" }
        );
        std::fs::write(dir.join(format!("{name}.toml")), toml).unwrap();
    }
}

/// The task's agent-side gold actions and what to tell the customer.
fn gold_file(path: &Path, task: &lrab_tau2::Task) {
    let ec = task.evaluation_criteria.as_ref().unwrap();
    let actions: Vec<Value> = ec
        .actions
        .iter()
        .flatten()
        .filter(|a| a.requestor == "assistant")
        .map(|a| json!({"name": a.name, "arguments": Value::Object(a.arguments.clone())}))
        .collect();
    let say = ec.communicate_info.clone().unwrap_or_default().join(". ");
    let say = if say.is_empty() {
        "All done.".into()
    } else {
        say
    };
    std::fs::write(path, json!({"actions": actions, "say": say}).to_string()).unwrap();
}

fn run(root: &Path, agent: &str, extra: &[&str]) -> Output {
    let data = tau2_common::data_dir();
    Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(["tau2", "--tau2-data", data.to_str().unwrap(), "run"])
        .args([
            "--domain",
            "mock",
            "--tasks",
            "update_task_1",
            "--agent",
            agent,
        ])
        .args([
            "--model",
            "sim-oracle",
            "--backend",
            "sim",
            "--user",
            "scripted",
        ])
        .args(["--fixed-clock", "--out"])
        .arg(root.join("out"))
        .args(extra)
        .env("LRAB_ARMS", root.join("arms"))
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A temp folder with the arms; `None` when the data or the kernel's arm box is missing.
fn setup() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    tau2_common::data()?;
    if let Some(m) = lrab_safety::arm_box_missing(lrab_safety::ArmNet::Private) {
        eprintln!("skipped: this kernel cannot confine arms: {m}");
        return None;
    }
    let d = lrab_tau2::Domain::load(
        &tau2_common::data_dir(),
        lrab_tau2::DomainKind::parse("mock").unwrap(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("arms")).unwrap();
    // beside the arm files: the box lets an arm read its arm file's folder, nothing else here
    let gold = root.join("arms/gold.json");
    gold_file(&gold, d.task("update_task_1").unwrap());
    arms(&root.join("arms"), &gold);
    Some((tmp, root))
}

#[test]
fn a_command_line_arm_gets_the_server_and_is_graded_with_the_gold_db() {
    let Some((_tmp, root)) = setup() else { return };
    let o = run(&root, "standin", &[]);
    assert!(o.status.success(), "{}", text(&o));
    let out = root.join("out");
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let sim = &v["simulations"][0];
    let attempt = out.join("attempts/update_task_1-t0");
    let stderr = std::fs::read_to_string(attempt.join("arm.stderr")).unwrap_or_default();
    assert_eq!(
        sim["termination_reason"],
        "user_stop",
        "{}\n{stderr}",
        text(&o)
    );
    assert_eq!(sim["reward_info"]["reward"], 1.0, "{sim}");
    assert_eq!(sim["reward_info"]["db_check"]["db_match"], true, "{sim}");
    assert_eq!(v["info"]["agent_info"]["implementation"], "lrab_standin");
    assert_eq!(v["info"]["simulated"], true);
    // the arm saw the customer's first message as its prompt and the relay as its server
    let seen: Value =
        serde_json::from_slice(&std::fs::read(attempt.join("workdir/seen.json")).unwrap()).unwrap();
    assert_eq!(seen["prompt"], "Hello, I need help with my request.");
    assert_eq!(seen["server"]["args"][0], "tau2");
    assert_eq!(seen["server"]["args"][1], "mcp-relay");
    assert_eq!(
        seen["server"]["args"][2],
        attempt.join("tmp/mcp").to_str().unwrap()
    );
    assert!(seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == lrab_tau2::CUSTOMER_TOOL));
    assert!(
        seen["reply"].as_str().unwrap().contains("###STOP###"),
        "{seen}"
    );
    assert!(attempt.join("proxy.jsonl").exists() || attempt.join("arm.stdout").exists());
}

#[test]
fn an_arm_killed_at_the_deadline_ends_as_a_limit_not_agent_stop() {
    let Some((_tmp, root)) = setup() else { return };
    let o = run(&root, "sleeper", &["--arm-timeout", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value =
        serde_json::from_slice(&std::fs::read(root.join("out/results.json")).unwrap()).unwrap();
    let sim = &v["simulations"][0];
    assert_eq!(sim["termination_reason"], "max_steps", "{sim}");
    assert_eq!(sim["reward_info"]["reward"], 0.0, "{sim}");
}

#[test]
fn an_arm_without_mcp_support_is_refused_by_name() {
    let Some((_tmp, root)) = setup() else { return };
    let o = run(&root, "nomcp", &[]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("arm 'nomcp' cannot run τ²") && t.contains("no MCP support"),
        "{t}"
    );
    assert!(!root.join("out/results.json").exists());
    let o = run(&root, "no-such-arm", &[]);
    assert!(!o.status.success() && text(&o).contains("unknown arm 'no-such-arm'"));
    // a setting the arm cannot be given is refused, not run for the customer alone
    let o = run(&root, "standin", &["--temperature", "0.5"]);
    assert!(
        !o.status.success()
            && text(&o).contains("--temperature 0.5 would hold for the customer only")
    );
    assert!(!root.join("out/results.json").exists());
}

#[test]
fn a_bad_mcp_section_is_refused_naming_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let arms = tmp.path().join("arms");
    std::fs::create_dir_all(&arms).unwrap();
    std::fs::write(
        arms.join("bad.toml"),
        r#"name = "bad"
program = "python3"
args = ["{prompt}"]
api = "openai"
isolate_home = true
[mcp]
config_files = [{ path = "/etc/mcp.json", content = "{mcp_bogus}" }]
"#,
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args([
            "tau2", "run", "--domain", "mock", "--agent", "bad", "--model", "m",
        ])
        .arg("--out")
        .arg(tmp.path().join("out"))
        .env("LRAB_ARMS", &arms)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("bad.toml: mcp.config_files[0].content: unknown placeholder {mcp_bogus}"),
        "{t}"
    );
    assert!(
        t.contains("bad.toml: mcp.config_files[0].path: must start with {home}/"),
        "{t}"
    );
}
