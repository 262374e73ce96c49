//! The text protocols end to end: sim-oracle carries out every LRAB task through a client
//! that speaks smolagents' CodeAgent protocol (no tools; Python in `<code>` blocks, run here
//! by the real python3, its output sent back as the observation), and writes every file of
//! its plan in one reply to a client that applies aider's whole-file listings the way aider
//! reads them.

mod common;
use common::*;
use lrab_sim::SimConfig;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// smolagents' CodeAgent system prompt, in the parts a model reads (code_agent.yaml).
const CODE_AGENT: &str = "You are an expert assistant who can solve any task using code blobs.\n\
To solve the task, you must plan forward to proceed in a series of steps, in a cycle of Thought, Code, and Observation sequences.\n\
At each step, in the 'Thought:' sequence, you should first explain your reasoning towards solving the task.\n\
Then in the Code sequence you should write the code in simple Python. The code sequence must be opened with '<code>', and closed with '</code>'.\n\
These print outputs will then appear in the 'Observation:' field, which will be available as input for the next step.\n\
In the end you have to return a final answer using the `final_answer` tool.\n\
<code>\ndef final_answer(answer: any) -> any:\n    \"\"\"Provides a final answer to the given problem.\n\n    Args:\n        answer: The final answer to the problem\n    \"\"\"\n</code>\n\
9. You can use imports in your code, but only from the following list of modules: ['collections', 'json', 'os', 'pathlib', 'subprocess']\n";

/// aider's whole-file system prompt (wholefile_prompts.py with its default fence).
const WHOLE: &str = "Act as an expert software developer.\nTake requests for changes to the supplied code.\n\
Once you understand the request you MUST:\n1. Determine if any code changes are needed.\n2. Explain any needed changes.\n3. If changes are needed, output a copy of each file that needs changes.\n\n\
To suggest changes to a file you MUST return the entire content of the updated file.\nYou MUST use this *file listing* format:\n\n\
path/to/filename.js\n```\n// entire file content ...\n// ... goes in between\n```\n";

fn chat(url: &str, messages: &[Value]) -> String {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    let body = json!({"model": "sim-oracle", "messages": messages, "stream": false,
        "options": {"temperature": 0, "num_ctx": 32768, "stop": ["Observation:", "Calling tools:", "</code>"]}});
    let v: Value = agent
        .post(&format!("{url}/api/chat"))
        .send_json(body)
        .expect("chat")
        .into_json()
        .expect("json");
    v["message"]["content"].as_str().unwrap_or("").to_string()
}

/// Runs a reply's code with python3 in the workdir: the observation, and whether it gave
/// the final answer.
fn run_code(reply: &str, wd: &Path) -> (String, bool) {
    let code: Vec<&str> = reply
        .split("<code>")
        .skip(1)
        .filter_map(|s| s.split("</code>").next())
        .collect();
    if code.is_empty() {
        return (
            "Error:\nError in code parsing: the regex pattern <code>(.*?)</code> was not found"
                .into(),
            false,
        );
    }
    let prelude =
        "def final_answer(answer):\n    print('FINAL ANSWER:', answer)\n    raise SystemExit(0)\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(format!("{prelude}{}", code.join("\n")))
        .current_dir(wd)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return (
            format!("Execution logs:\n{stdout}\nError:\nCode execution failed due to: {err}"),
            false,
        );
    }
    let done = stdout.contains("FINAL ANSWER:");
    (
        format!("Execution logs:\n{stdout}\nLast output from code snippet:\nNone"),
        done,
    )
}

fn code_agent(part: usize) {
    let sim = start(SimConfig::default());
    let pack = pack();
    for t in pack.tasks.iter().skip(part).step_by(2) {
        let id = &t.spec.id;
        let (_tmp, wd, m) = fresh(&pack, id);
        let mut msgs = vec![
            json!({"role": "system", "content": CODE_AGENT}),
            json!({"role": "user", "content": format!("New task:\n{}", t.render_prompt())}),
        ];
        let mut done = false;
        for _ in 0..20 {
            let reply = chat(&sim.url(), &msgs);
            let (obs, fin) = run_code(&reply, &wd);
            msgs.push(json!({"role": "assistant", "content": reply}));
            msgs.push(json!({"role": "user", "content": format!("Observation:\n{obs}")}));
            if fin {
                done = true;
                break;
            }
        }
        assert!(done, "{id}: no final answer in 20 steps: {:?}", msgs.last());
        let s = score(&pack, id, &m, &wd);
        assert_eq!(s, 1.0, "{id} scored {s} through code blocks");
    }
}

#[test]
fn oracle_code_agent_part_a() {
    code_agent(0);
}

#[test]
fn oracle_code_agent_part_b() {
    code_agent(1);
}

/// aider's reading of a reply in the whole-file format (wholefile_coder.py's update_files):
/// a line starting with the fence opens a block named by the line before it; the next line
/// starting with the fence closes it.
fn apply_listings(reply: &str, wd: &Path) -> Vec<String> {
    let lines: Vec<&str> = reply.split_inclusive('\n').collect();
    let (mut name, mut body, mut written) = (None::<String>, String::new(), Vec::new());
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("```") {
            match name.take() {
                Some(n) => {
                    let p = wd.join(&n);
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(p, std::mem::take(&mut body)).unwrap();
                    written.push(n);
                }
                None if i > 0 => name = Some(lines[i - 1].trim().to_string()),
                None => {}
            }
        } else if name.is_some() {
            body.push_str(line);
        }
    }
    written
}

#[test]
fn oracle_whole_file_listings_write_the_plan_in_one_reply() {
    let sim = start(SimConfig::default());
    let pack = pack();
    for t in &pack.tasks {
        let id = &t.spec.id;
        let sol = t.solution(lrab_tasks::SolutionKind::Reference).unwrap();
        let (_tmp, wd, _m) = fresh(&pack, id);
        let msgs = vec![
            json!({"role": "system", "content": WHOLE}),
            json!({"role": "user", "content": t.render_prompt()}),
        ];
        let reply = chat(&sim.url(), &msgs);
        let written = apply_listings(&reply, &wd);
        for (path, bytes) in &sol.files {
            let Ok(text) = std::str::from_utf8(bytes) else {
                continue;
            };
            assert!(written.contains(path), "{id}: {path} not written");
            if text.lines().any(|l| l.starts_with("```")) {
                // a fence inside the file ends aider's listing early (aider's format, not the sim)
                continue;
            }
            let got = std::fs::read_to_string(wd.join(path)).unwrap();
            assert_eq!(got, *text, "{id}: {path}");
        }
        assert!(reply.contains("All steps are done."), "{id}: {reply}");
    }
}
