//! Several backends per run (`--backend URL1,URL2,…`): three `lrab sim serve` processes on
//! ephemeral ports, one killed while a cell is talking to it. Every cell still finishes, with
//! the scores of a single-backend run of the same matrix (the simulator is deterministic); the
//! broken attempt is journalled as the backend's failure, set aside, and rerun on another
//! backend; the `backend` column shows the backend of every attempt. Bad lists are refused
//! before anything is written.

mod common;

use common::{lrab, text};

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A small agent (python, stdlib only): it offers write_file and finish, writes what the model
/// asks for, and stops on finish. After its first reply it records its working directory in
/// `<gate>/started-<pid>` and waits (at most 60 s) for `<gate>/go`, so the test can find the
/// backend behind its proxy and kill it while the cell is in flight. A failed request ends it
/// with exit 1.
const AGENT: &str = r#"import json, os, sys, time, urllib.request
prompt, model, gate = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
url = os.environ["OLLAMA_HOST"].rstrip("/") + "/api/chat"
tools = [{"type": "function", "function": {"name": "write_file", "description": "write a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                         "required": ["path", "content"]}}},
         {"type": "function", "function": {"name": "finish", "description": "done",
          "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}}}]
msgs = [{"role": "user", "content": prompt}]
for turn in range(8):
    body = json.dumps({"model": model, "stream": False, "messages": msgs, "tools": tools,
                       "options": {"num_ctx": 32768, "temperature": 0}}).encode()
    req = urllib.request.Request(url, body, {"content-type": "application/json"})
    m = json.loads(urllib.request.urlopen(req, timeout=30).read())["message"]
    if turn == 0:
        open(os.path.join(gate, "started-%d" % os.getpid()), "w").write(os.getcwd())
        t = time.time()
        while not os.path.exists(os.path.join(gate, "go")) and time.time() - t < 60:
            time.sleep(0.05)
    msgs.append(m)
    calls = m.get("tool_calls") or []
    done = not calls
    for c in calls:
        f = c["function"]
        a = f.get("arguments") or {}
        if f["name"] == "write_file" and a.get("path"):
            p = os.path.normpath(a["path"])
            if not p.startswith(".."):
                os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
                open(p, "w").write(a.get("content", ""))
        if f["name"] == "finish":
            done = True
        msgs.append({"role": "tool", "tool_name": f["name"], "content": "ok"})
    if done:
        break
"#;

fn arms(dir: &Path, gate: &Path) -> PathBuf {
    let a = dir.join("arms");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::write(a.join("agent.py"), AGENT).unwrap();
    std::fs::write(
        a.join("agent.toml"),
        format!(
            "name = \"agent\"\nprogram = \"python3\"\nargs = [\"{}\", \"{{prompt_file}}\", \"{{model}}\", \"{}\"]\napi = \"ollama\"\nversion_args = [\"-c\", \"print(1)\"]\n",
            a.join("agent.py").display(),
            gate.display()
        ),
    )
    .unwrap();
    a
}

/// `lrab sim serve` on a free port, killed on drop.
struct Sim {
    child: Child,
    url: String,
}

impl Sim {
    fn start() -> Sim {
        let mut child = lrab()
            .args(["sim", "serve", "--addr", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        Sim { child, url }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.kill();
    }
}

const MATRIX: [&str; 6] = [
    "--arms",
    "agent",
    "--models",
    "sim-2b,sim-12b",
    "--tasks",
    "WF-01,WF-02,WF-04",
];

fn run_cmd(dir: &Path, gate: &Path, backend: &str, id: &str, jobs: &str) -> std::process::Command {
    let mut c = lrab();
    c.args(["run", "--arms-dir"])
        .arg(arms(dir, gate))
        .arg("--out")
        .arg(dir.join("results"))
        .args(["--backend", backend, "--jobs", jobs, "--no-progress"])
        .args(["--quiet-poll-ms", "20", "--quiet-stable-ms", "100"])
        .args(["--quiet-max-ms", "1000", "--grace-ms", "200"])
        .args(["--cell-backend-wait-secs", "5", "--run-id", id])
        // the test's agent signals through a gate folder outside its workdir, which a confined
        // arm can neither read nor write (arm confinement is tested in hostile_arm.rs)
        .arg("--unconfined-arms")
        .args(MATRIX);
    c
}

/// cells.csv as maps of column → value.
fn rows(run: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(run.join("cells.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|x| {
            let x = x.unwrap();
            h.iter()
                .zip(x.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The backend a cell in flight talks to: every arm talks through a proxy of its own, so the
/// arm cannot see it; the sim counts each attempt's requests in a ledger keyed by the attempt
/// folder (the runner's own key for it), and exactly one backend has them.
fn backend_of(workdir: &str, urls: &[String]) -> Option<String> {
    let key = lrab_runner::sim_cell_key(Path::new(workdir).parent()?);
    let with: Vec<&String> = urls
        .iter()
        .filter(|u| {
            ureq::get(&format!("{u}/lrab-sim/ledger/{key}"))
                .call()
                .ok()
                .and_then(|r| r.into_json::<serde_json::Value>().ok())
                .and_then(|v| v["requests"].as_u64())
                .is_some_and(|n| n > 0)
        })
        .collect();
    (with.len() == 1).then(|| with[0].clone())
}

fn key(r: &BTreeMap<String, String>) -> (String, String, String) {
    (r["arm"].clone(), r["model"].clone(), r["task"].clone())
}

/// The (score, failure mode) of each cell: what a run on several backends must reproduce.
type Scores = BTreeMap<(String, String, String), (String, String)>;

fn scores(rows: &[BTreeMap<String, String>]) -> Scores {
    rows.iter()
        .map(|r| (key(r), (r["score"].clone(), r["failure_mode"].clone())))
        .collect()
}

#[test]
fn a_killed_backend_is_left_out_and_its_cell_reruns_elsewhere_with_the_same_scores() {
    let d = tempfile::tempdir().unwrap();
    let reference = single_backend_reference(d.path());
    let mut sims = [Sim::start(), Sim::start(), Sim::start()];
    let urls: Vec<String> = sims.iter().map(|s| s.url.clone()).collect();
    let o = run_killing_the_first_backend_mid_cell(d.path(), &mut sims, &urls);
    let run = d.path().join("results/multi");
    let got = rows(&run);
    every_cell_finished_once_with_the_reference_scores(&got, &reference, &urls);
    let moved = the_broken_attempt_is_set_aside_and_rerun_elsewhere(&run, &got, &urls);
    the_manifest_lists_every_backend(&run, &urls);
    // the analysis reads the rows of several backends (the run's own report)
    assert!(run.join("report/report.md").is_file(), "{}", text(&o));
    a_merge_keeps_backends_and_the_set_aside_attempt(d.path(), &run, &got, &moved);
}

/// The reference: the same matrix on one backend, gate open; its scores must vary for the
/// comparison to mean something.
fn single_backend_reference(dir: &Path) -> Scores {
    let ref_gate = dir.join("gate-ref");
    std::fs::create_dir_all(&ref_gate).unwrap();
    std::fs::write(ref_gate.join("go"), "").unwrap();
    let one = Sim::start();
    let o = run_cmd(dir, &ref_gate, &one.url, "single", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    drop(one);
    let reference = scores(&rows(&dir.join("results/single")));
    assert_eq!(reference.len(), 6);
    assert!(
        reference
            .values()
            .any(|(s, _)| s != &reference.values().next().unwrap().0),
        "the scores must vary for the comparison to mean something: {reference:?}"
    );
    reference
}

/// Runs the matrix on all three backends; once three cells are in flight, one on each, kills
/// the first backend and opens the gate. The run's output.
fn run_killing_the_first_backend_mid_cell(
    dir: &Path,
    sims: &mut [Sim; 3],
    urls: &[String],
) -> std::process::Output {
    let gate = dir.join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let mut child = run_cmd(dir, &gate, &urls.join(","), "multi", "3")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(started) = three_cells_started(&gate, &mut child) else {
        let o = child.wait_with_output().unwrap();
        panic!(
            "the run ended ({}) before its cells started: {}",
            o.status,
            text(&o)
        );
    };
    let on: Vec<Option<String>> = started.iter().map(|w| backend_of(w, urls)).collect();
    for u in urls {
        assert_eq!(
            on.iter()
                .filter(|b| b.as_deref() == Some(u.as_str()))
                .count(),
            1,
            "one cell per backend at first: {started:?} on {on:?}"
        );
    }
    sims[0].kill();
    std::fs::write(gate.join("go"), "").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("backend {} stopped answering", urls[0])),
        "{}",
        text(&o)
    );
    o
}

/// The workdirs of the first three cells once each has had its first reply (at most 120 s);
/// `None` if the run ends first.
fn three_cells_started(gate: &Path, child: &mut Child) -> Option<Vec<String>> {
    let t0 = Instant::now();
    loop {
        let s: Vec<String> = std::fs::read_dir(gate)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("started-"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        if s.len() >= 3 && s.iter().all(|u| !u.is_empty()) {
            return Some(s);
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "cells did not start: {s:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every cell finished once, with the single-backend scores; the backend column holds the real
/// backend of each attempt, never the killed one.
fn every_cell_finished_once_with_the_reference_scores(
    got: &[BTreeMap<String, String>],
    reference: &Scores,
    urls: &[String],
) {
    assert_eq!(got.len(), 6, "one row per finished attempt: {got:?}");
    assert_eq!(&scores(got), reference);
    assert!(got
        .iter()
        .all(|r| r["attempt"] == "0" && r["simulated"] == "true"));
    let used: std::collections::BTreeSet<&str> =
        got.iter().map(|r| r["backend"].as_str()).collect();
    assert!(used.len() >= 2, "{used:?}");
    assert!(
        used.iter().all(|b| urls[1..].contains(&b.to_string())),
        "{used:?}"
    );
}

/// The broken attempt: journalled as the backend's, set aside, rerun elsewhere. Its folder
/// under `lost/`.
fn the_broken_attempt_is_set_aside_and_rerun_elsewhere(
    run: &Path,
    got: &[BTreeMap<String, String>],
    urls: &[String],
) -> String {
    let journal = std::fs::read_to_string(run.join("attempts.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let lost: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l.get("backend_failure").is_some())
        .collect();
    assert_eq!(lost.len(), 1, "{journal}");
    let l = lost[0];
    assert_eq!(l["backend"], urls[0].as_str());
    let typed: lrab_records::AttemptRecord = serde_json::from_value(l.clone()).unwrap();
    assert!(typed.retry && !typed.phases.is_empty(), "{l}");
    let moved = l["attempt_dir"].as_str().unwrap();
    assert!(
        moved.starts_with("lost/") && run.join(moved).is_dir(),
        "{l}"
    );
    let k = (
        l["arm"].as_str().unwrap().to_string(),
        l["model"].as_str().unwrap().to_string(),
        l["task"].as_str().unwrap().to_string(),
    );
    let rerun = got.iter().find(|r| key(r) == k).unwrap();
    assert_ne!(rerun["backend"], urls[0]);
    assert_eq!(rerun["attempt"], l["attempt"].to_string());
    let counted: Vec<_> = lines
        .iter()
        .filter(|x| x.get("backend_failure").is_none())
        .collect();
    assert_eq!(counted.len(), 6);
    assert!(counted.iter().all(|x| x["backend"] != urls[0].as_str()));
    moved.to_string()
}

/// The manifest lists every backend, all simulated.
fn the_manifest_lists_every_backend(run: &Path, urls: &[String]) {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    let listed: Vec<&str> = m["backends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["url"].as_str().unwrap())
        .collect();
    assert_eq!(listed, urls.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(m["simulated"], true);
    assert_eq!(m["matrix"]["backend"], urls.join(",").as_str());
}

/// A merge keeps each row's backend and the set-aside attempt with its journal line.
fn a_merge_keeps_backends_and_the_set_aside_attempt(
    dir: &Path,
    run: &Path,
    got: &[BTreeMap<String, String>],
    moved: &str,
) {
    let merged = dir.join("results/merged");
    let o = lrab()
        .arg("merge")
        .arg("--out")
        .arg(&merged)
        .arg(run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let back: BTreeMap<_, _> = rows(&merged)
        .into_iter()
        .map(|r| (key(&r), r["backend"].clone()))
        .collect();
    let orig: BTreeMap<_, _> = got.iter().map(|r| (key(r), r["backend"].clone())).collect();
    assert_eq!(back, orig);
    assert!(merged.join(moved).is_dir(), "{moved}");
}

#[test]
fn malformed_backend_lists_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let gate = d.path().join("gate");
    for (list, says) in [
        (
            "http://127.0.0.1:1,,http://127.0.0.1:2",
            "element 2 of 3 is empty",
        ),
        ("http://127.0.0.1:1,htp:/x", "'htp:/x'"),
        ("http://127.0.0.1:1,http://127.0.0.1:70000", "'70000'"),
        ("http://127.0.0.1:1,", "element 2 of 2 is empty"),
    ] {
        let o = run_cmd(d.path(), &gate, list, "bad", "2").output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{list}: {}", text(&o));
        assert!(text(&o).contains(says), "{list}: {}", text(&o));
        assert!(!d.path().join("results/bad").exists(), "nothing written");
    }
    // well-formed but not answering: named, before any cell
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let sim = Sim::start();
    let o = run_cmd(d.path(), &gate, &format!("{},{dead}", sim.url), "bad", "2")
        .args(["--backend-wait-secs", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&dead) && text(&o).contains("unreachable"),
        "{}",
        text(&o)
    );
    assert!(!d.path().join("results/bad").exists());
}
