//! Simulated results are labelled simulated however the simulator is reached: `--backend sim`,
//! a URL to a running `lrab-sim`, through `lrab proxy`, and in shards and their merge. A
//! backend that is not the simulator is not labelled simulated. On the simulator, budgets run
//! on the modelled clock (a modelled-slow model times out a cell that is fast in real time), and
//! so does LH-03's kill-and-resume point.

mod common;

use common::{lrab, text};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};

/// A shell arm that reads the task file and writes one artifact.
fn arms(dir: &Path) -> std::path::PathBuf {
    let a = dir.join("arms");
    std::fs::create_dir_all(&a).unwrap();
    common::sh_arm(
        &a,
        "good",
        "cat \"$1\" > /dev/null; printf 'S001 Ti aging\\n' > shortlist.md; exit 0\n",
    );
    a
}

fn run(dir: &Path, backend: &str, run_id: &str, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join("results");
    let o = lrab()
        .args(["run", "--arms-dir"])
        .arg(arms(dir))
        .arg("--out")
        .arg(&out)
        .args([
            "--backend",
            backend,
            "--no-progress",
            "--quiet-poll-ms",
            "20",
            "--quiet-stable-ms",
            "100",
            "--quiet-max-ms",
            "1000",
        ])
        .args([
            "--arms",
            "good",
            "--models",
            "sim-2b",
            "--tasks",
            "WF-01,WF-02",
            "--run-id",
            run_id,
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    out.join(run_id)
}

fn assert_simulated(run: &Path, expect: bool) {
    let cells = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let rows: Vec<&str> = cells.lines().skip(1).collect();
    assert!(!rows.is_empty());
    let col = cells
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "simulated")
        .unwrap();
    for r in &rows {
        assert_eq!(
            r.split(',').nth(col),
            Some(if expect { "true" } else { "false" }),
            "{}: {r}",
            run.display()
        );
    }
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["simulated"], expect, "{}", run.display());
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap_or_default();
    assert_eq!(summary.contains("SIMULATED"), expect, "{}", run.display());
    for entry in walk(&run.join("cells")) {
        if entry.ends_with("score.json") {
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
            assert_eq!(v["simulated"], expect, "{}", entry.display());
        }
    }
}

fn walk(d: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `lrab proxy --upstream URL` on a free port; returns it and its URL.
fn proxy(upstream: &str) -> (Proxy, String) {
    let mut c = lrab()
        .args(["proxy", "--upstream", upstream, "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    (Proxy(c), url)
}

#[test]
fn sim_results_are_labelled_simulated_however_the_sim_is_reached() {
    let d = tempfile::tempdir().unwrap();
    assert_simulated(&run(d.path(), "sim", "flag", &[]), true);
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    assert_simulated(&run(d.path(), &sim.url(), "url", &[]), true);
    let (_p, purl) = proxy(&sim.url());
    assert_simulated(&run(d.path(), &purl, "proxied", &[]), true);
    // shards and their merge
    let s1 = run(d.path(), &sim.url(), "s1", &["--shard", "1/2"]);
    let s2 = run(d.path(), &purl, "s2", &["--shard", "2/2"]);
    let merged = d.path().join("results/merged");
    let o = lrab()
        .arg("merge")
        .arg(&s1)
        .arg(&s2)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(merged.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["simulated"], true);
    assert!(std::fs::read_to_string(merged.join("cells.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .all(|l| l.contains(",true,")));
    // and the report made from the merged cells
    let rep = d.path().join("report");
    let o = lrab()
        .arg("analyze")
        .arg(merged.join("cells.csv"))
        .arg("--out")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for f in ["report.md", "report.html"] {
        let t = std::fs::read_to_string(rep.join(f)).unwrap();
        assert!(
            t.contains("SIMULATED BACKEND"),
            "{f} is not labelled simulated"
        );
    }
}

/// A minimal Ollama-shaped server that is not the simulator (real-looking digests, a plain
/// version), for the negative case.
fn fake_ollama() -> (
    std::thread::JoinHandle<()>,
    String,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let st = stop.clone();
    let h = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !st.load(std::sync::atomic::Ordering::SeqCst) && std::time::Instant::now() < deadline
        {
            match l.accept() {
                Ok((mut s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let mut buf = [0u8; 4096];
                    let n = s.read(&mut buf).unwrap_or(0);
                    let req = String::from_utf8_lossy(&buf[..n]);
                    let body = if req.starts_with("GET /api/version") {
                        r#"{"version":"0.33.2"}"#.to_string()
                    } else {
                        r#"{"models":[{"name":"sim-2b:latest","model":"sim-2b:latest","digest":"0123abcd","details":{"parameter_size":"2B","quantization_level":"Q4_K_M"}}]}"#.to_string()
                    };
                    let _ = write!(s, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    });
    (h, url, stop)
}

#[test]
fn a_backend_that_is_not_the_sim_is_not_labelled_simulated() {
    let d = tempfile::tempdir().unwrap();
    let (h, url, stop) = fake_ollama();
    assert_simulated(&run(d.path(), &url, "real", &[]), false);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    h.join().unwrap();
}

#[test]
fn several_backends_are_labelled_each_and_sim_never_mixes_with_real() {
    let d = tempfile::tempdir().unwrap();
    let a = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let b = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let run = run(
        d.path(),
        &format!("{},{}", a.url(), b.url()),
        "two",
        &["--jobs", "2"],
    );
    assert_simulated(&run, true);
    let (h, url, stop) = fake_ollama();
    let out = d.path().join("results");
    let o = lrab()
        .args(["run", "--arms-dir"])
        .arg(arms(d.path()))
        .arg("--out")
        .arg(&out)
        .args(["--backend", &format!("{},{url}", a.url()), "--no-progress"])
        .args(["--arms", "good", "--models", "sim-2b", "--tasks", "WF-01"])
        .args(["--run-id", "mixed"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("mixes the simulator"), "{}", text(&o));
    assert!(!out.join("mixed").exists());
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    h.join().unwrap();
}

/// An arm that keeps asking the model for the next step (python, stdlib only) for up to 20 s.
const CHATTY: &str = r#"import json, os, sys, time, urllib.request
prompt = open(sys.argv[1]).read()
url = os.environ["OLLAMA_HOST"].rstrip("/") + "/api/chat"
tools = [{"type": "function", "function": {"name": "write_file", "description": "write", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}}}]
start = time.time()
while time.time() - start < 20:
    body = json.dumps({"model": sys.argv[2], "stream": False, "options": {"num_ctx": 32768}, "tools": tools,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    urllib.request.urlopen(urllib.request.Request(url, body, {"content-type": "application/json"})).read()
    time.sleep(0.2)
"#;

/// Runs the chatty arm on the in-process sim for one task; returns the run folder.
fn chatty_run(dir: &Path, task: &str, budget: &[&str]) -> std::path::PathBuf {
    let a = dir.join("arms");
    std::fs::create_dir_all(&a).unwrap();
    common::script_arm(&a, "chatty", "python3", "py", CHATTY, "print(1)", "");
    let out = dir.join("results");
    let o = lrab()
        .args(["run", "--arms-dir"])
        .arg(&a)
        .arg("--out")
        .arg(&out)
        .args(common::fast(100, 1000, 200))
        .args([
            "--arms",
            "chatty",
            "--models",
            "sim-2b",
            "--tasks",
            task,
            "--run-id",
            "clock",
            "--retries",
            "0",
        ])
        .args(budget)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    out.join("clock")
}

#[test]
fn budgets_run_on_the_modelled_clock_of_the_sim() {
    let d = tempfile::tempdir().unwrap();
    let run = chatty_run(d.path(), "WF-02", &["--budget-minutes", "1"]);
    let cells = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    assert!(
        cells.contains(",timeout,"),
        "a minute of modelled model time is a timeout: {cells}"
    );
    let attempts = std::fs::read_to_string(run.join("attempts.jsonl")).unwrap();
    let v: serde_json::Value = serde_json::from_str(attempts.lines().next().unwrap()).unwrap();
    let phase = &v["phases"][0];
    assert_eq!(phase["timed_out"], true, "{v}");
    // killed by the modelled clock: the real time of the launch stayed under the budget
    assert!(phase["wall"].as_f64().unwrap() < 60.0, "{v}");
    assert!(v["modelled_wall_seconds"].as_f64().unwrap() >= 60.0, "{v}");
}

#[test]
fn lh03_is_killed_and_relaunched_at_its_modelled_kill_point() {
    let d = tempfile::tempdir().unwrap();
    // a 2-minute budget puts LH-03's kill point at one modelled minute
    let run = chatty_run(d.path(), "LH-03", &["--budget-minutes-lh", "2"]);
    let attempts = std::fs::read_to_string(run.join("attempts.jsonl")).unwrap();
    let v: serde_json::Value = serde_json::from_str(attempts.lines().next().unwrap()).unwrap();
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "killed and relaunched: {v}");
    assert_eq!(phases[0]["timed_out"], true, "{v}");
    // the first launch was stopped by the modelled clock, long before a real minute
    assert!(phases[0]["wall"].as_f64().unwrap() < 60.0, "{v}");
    let dir = run.join(v["attempt_dir"].as_str().unwrap());
    let sj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("score.json")).unwrap()).unwrap();
    assert_eq!(sj["resume"]["killed"], true, "{sj}");
    assert_eq!(sj["resume"]["kill_at_seconds"], 60.0, "{sj}");
    let tr = std::fs::read_to_string(dir.join("transcript.txt")).unwrap();
    assert!(tr.contains("--- KILLED AT 50%, RELAUNCHED ---"));
}
