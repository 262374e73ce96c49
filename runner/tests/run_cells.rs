//! End-to-end tests of `lrab run` with small shell-script arms (written into a temp folder):
//! arms that work, crash, hang, ignore SIGTERM, fork children, or need kill-and-resume; bad
//! input rejected before any cell; resume after the runner is SIGKILLed.

mod common;

use common::{col, csv_lines, lrab, quick, running_below_after, sh_arm as arm, text};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A shell arm that does a partial job of WF-01 (one milestone artifact).
const GOOD: &str = "cat \"$1\" > /dev/null; echo read task_input.txt; printf 'S001 Ti aging\\n' > shortlist.md; exit 0\n";

/// Ignores SIGTERM and forks a child that ignores it too; both record their pids.
const STUBBORN: &str =
    "trap '' TERM; (trap '' TERM; echo $$ >> pids; exec sleep 600) & echo $$ >> pids; sleep 600\n";

/// The leader exits at once; one child finishes writing shortlist.md a little later, another
/// would sleep forever.
const FORKER: &str =
    "(sleep 0.1; printf 'S001 Ti aging\\n' > shortlist.md) & (echo $$ > forever.pid; exec sleep 600) & exit 0\n";

/// First launch: leaves a marker and hangs. Second: sees the marker and finishes.
const RESUMER: &str =
    "echo \"args: $*\"; if [ -f marker ]; then echo resumed; printf x > out.md; exit 0; fi; touch marker; sleep 600\n";

/// Records its pid, works a little, writes one artifact.
const SLOW: &str = "echo $$ > arm.pid; sleep 0.4; printf 'S001\\n' > shortlist.md; exit 0\n";

/// Records its pid and a child's; both hang.
const HANG: &str = "(echo $$ > child.pid; exec sleep 600) & echo $$ > arm.pid; sleep 600\n";

/// One test's world: a temp folder holding `arms/` (shell arms) and `results/` (`--out`).
struct Bench {
    _dir: tempfile::TempDir,
    arms: PathBuf,
    out: PathBuf,
}

impl Bench {
    /// Writes one shell arm per `(name, script)`.
    fn new(arms: &[(&str, &str)]) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let arms_dir = dir.path().join("arms");
        std::fs::create_dir(&arms_dir).unwrap();
        for (name, script) in arms {
            arm(&arms_dir, name, script);
        }
        Bench {
            out: dir.path().join("results"),
            arms: arms_dir,
            _dir: dir,
        }
    }

    /// `lrab run` on these arms into `results/`, fast timings, against the simulated backend.
    fn command(&self, extra: &[&str]) -> Command {
        let mut c = quick("run", &self.arms, &self.out, (300, 3000, 200));
        c.args(extra);
        c
    }

    /// The test's folder (everything an arm of it runs in is below).
    fn root(&self) -> &Path {
        self._dir.path()
    }

    fn run(&self, extra: &[&str]) -> Output {
        self.command(extra).output().unwrap()
    }

    /// The one-model run of [`cell`] plus `extra`; it must succeed.
    fn run_ok(&self, arms: &str, tasks: &str, extra: &[&str]) -> Ran {
        let mut args = cell(arms, tasks);
        args.extend_from_slice(extra);
        let o = self.run(&args);
        assert!(o.status.success(), "{}", text(&o));
        let dir = self.out.join("r");
        Ran {
            text: text(&o),
            rows: rows(&dir),
            dir,
        }
    }

    /// The runner in the background, silent, for tests that signal it.
    fn spawn(&self, extra: &[&str]) -> Child {
        self.command(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

/// The matrix of a one-model run: `--arms A --models sim-2b --tasks T --run-id r`.
fn cell<'a>(arms: &'a str, tasks: &'a str) -> Vec<&'a str> {
    vec![
        "--arms", arms, "--models", "sim-2b", "--tasks", tasks, "--run-id", "r",
    ]
}

/// A run that exited successfully: what it printed, its folder and its `cells.csv` rows.
struct Ran {
    text: String,
    dir: PathBuf,
    rows: Vec<Vec<String>>,
}

/// The rows of `cells.csv`, after checking its header is the documented one.
fn rows(run: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let mut r = csv_lines(&text);
    assert_eq!(r.remove(0), lrab_records::HEADER, "cells.csv header");
    r
}

#[test]
fn good_and_crashing_arms_are_scored_and_recorded() {
    let b = Bench::new(&[("good", GOOD), ("crash", "echo boom >&2; exit 3\n")]);
    let ran = b.run_ok("good,crash", "WF-01", &[]);
    let (t, run, r) = (&ran.text, &ran.dir, &ran.rows);
    assert!(t.contains("SIMULATED"), "{t}");
    assert!(t.contains("report: "), "{t}");
    assert_eq!(r.len(), 2, "{r:?}");
    let good = r.iter().find(|x| x[col("arm")] == "good").unwrap();
    assert_eq!(good[col("failure_mode")], "completed");
    assert!(good[col("score")].parse::<f64>().unwrap() > 0.0);
    assert_eq!(good[col("simulated")], "true");
    assert_eq!(good[col("exit_code")], "0");
    let crash = r.iter().find(|x| x[col("arm")] == "crash").unwrap();
    assert_eq!(crash[col("failure_mode")], "crash");
    assert_eq!(crash[col("exit_code")], "3");
    // A crash is not retried.
    assert_eq!(crash[col("attempt")], "0");
    let a = run.join(&crash[col("attempt_dir")]);
    let tr = std::fs::read_to_string(a.join("transcript.txt")).unwrap();
    assert!(tr.contains("--- STDERR ---\nboom"), "{tr}");
    let sj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("score.json")).unwrap()).unwrap();
    assert_eq!(sj["arm"], "crash");
    assert_eq!(sj["simulated"], true);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["simulated"], true);
    assert_eq!(m["arms"][0]["version"], "fake 1.0");
    assert!(m["models"][0]["digest"].is_string());
    assert_eq!(
        std::fs::read_to_string(run.join("attempts.jsonl"))
            .unwrap()
            .lines()
            .count(),
        2
    );
}

/// Confined (the default) and with `--unconfined-arms`: the process-group logic is the same.
const MODES: [&[&str]; 2] = [&[], &["--unconfined-arms"]];

#[test]
fn hanging_arm_times_out_is_retried_once_and_leaves_no_orphans() {
    for mode in MODES {
        hanging_arm(mode);
    }
}

fn hanging_arm(mode: &[&str]) {
    let b = Bench::new(&[("stubborn", STUBBORN)]);
    let t0 = Instant::now();
    let mut args = vec!["--budget-minutes", "0.01"];
    args.extend_from_slice(mode);
    let ran = b.run_ok("stubborn", "WF-01", &args);
    let (run, r) = (&ran.dir, &ran.rows);
    assert!(t0.elapsed() < Duration::from_secs(60));
    assert_eq!(r.len(), 2, "one retry after a timeout: {r:?}");
    for (i, x) in r.iter().enumerate() {
        assert_eq!(x[col("failure_mode")], "timeout");
        assert_eq!(x[col("attempt")], i.to_string());
        assert_eq!(x[col("score")], "0.000");
        assert_eq!(x[col("exit_code")], "");
        let sj =
            std::fs::read_to_string(run.join(&x[col("attempt_dir")]).join("score.json")).unwrap();
        assert!(!sj.contains("\"total\""), "{sj}");
        let pids = std::fs::read_to_string(
            run.join(&x[col("attempt_dir")])
                .join("workdir")
                .join("pids"),
        )
        .unwrap();
        assert_eq!(pids.split_whitespace().count(), 2, "both started: {pids}");
    }
    let left = running_below_after(b.root(), Duration::from_secs(2));
    assert!(left.is_empty(), "{mode:?}: processes {left:?} survived");
}

#[test]
fn children_are_waited_for_then_killed() {
    for mode in MODES {
        children_waited_for(mode);
    }
}

fn children_waited_for(mode: &[&str]) {
    let b = Bench::new(&[("forker", FORKER)]);
    let ran = b.run_ok("forker", "WF-01", mode);
    let (run, r) = (&ran.dir, &ran.rows);
    assert_eq!(r.len(), 1);
    assert!(
        r[0][col("score")].parse::<f64>().unwrap() > 0.0,
        "late file was scored: {r:?}"
    );
    let wd = run.join(&r[0][col("attempt_dir")]).join("workdir");
    assert!(wd.join("forever.pid").exists(), "the forever child started");
    let left = running_below_after(b.root(), Duration::from_secs(2));
    assert!(left.is_empty(), "{mode:?}: children {left:?} left behind");
}

#[test]
fn lh03_is_killed_at_half_budget_and_relaunched_identically() {
    let b = Bench::new(&[("resumer", RESUMER)]);
    let ran = b.run_ok("resumer", "LH-03", &["--budget-minutes-lh", "0.05"]);
    let (run, r) = (&ran.dir, &ran.rows);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_ne!(r[0][col("failure_mode")], "timeout");
    let a = run.join(&r[0][col("attempt_dir")]);
    let tr = std::fs::read_to_string(a.join("transcript.txt")).unwrap();
    assert!(tr.contains("--- KILLED AT 50%, RELAUNCHED ---"), "{tr}");
    let args: Vec<&str> = tr.lines().filter(|l| l.starts_with("args: ")).collect();
    assert_eq!(args.len(), 2);
    assert_eq!(args[0], args[1], "identical command");
    assert!(tr.contains("resumed"));
    let sj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("score.json")).unwrap()).unwrap();
    assert_eq!(sj["resume"]["killed"], true);
    assert_eq!(sj["resume"]["kill_at_pct"], 50);
    assert!(sj["resume"]["attempt1_wall"].as_f64().unwrap() >= 1.4);
    let wall: f64 = r[0][col("wall_seconds")].parse().unwrap();
    assert!(wall >= 1.4, "wall counts both phases: {wall}");
}

#[test]
fn bad_input_is_rejected_before_any_cell() {
    let b = Bench::new(&[("good", GOOD)]);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--arms", "nope", "--models", "sim-2b", "--tasks", "WF-01"],
            "unknown arm 'nope'",
        ),
        (
            vec!["--arms", "good", "--models", "gpt-9", "--tasks", "WF-01"],
            "unknown model(s) gpt-9",
        ),
        (
            vec!["--arms", "good", "--models", "sim-2b", "--tasks", "WF-99"],
            "unknown task 'WF-99'",
        ),
        (
            vec!["--arms", "good", "--models", "sim-2b", "--shard", "3/2"],
            "--shard",
        ),
    ];
    for (args, msg) in cases {
        let o = b.run(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(msg), "{msg}: {}", text(&o));
    }
    // Unreachable backend.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let o = lrab()
        .args([
            "run",
            "--arms",
            "good",
            "--models",
            "m",
            "--tasks",
            "WF-01",
            "--backend-wait-secs",
            "0",
        ])
        .arg("--arms-dir")
        .arg(&b.arms)
        .arg("--out")
        .arg(&b.out)
        .args(["--backend", &url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unreachable"), "{}", text(&o));
    // Broken arm file.
    std::fs::write(
        b.arms.join("broken.toml"),
        "name = \"broken\"\nprogram = \"x\"\nargs = [\"{prompt}\"]\napi = \"smoke-signals\"\n",
    )
    .unwrap();
    let o = b.run(&["--arms", "good", "--models", "sim-2b", "--tasks", "WF-01"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("broken.toml"), "{}", text(&o));
    assert!(!b.out.exists(), "nothing was written");
}

fn pids_of_children(run: &Path) -> Vec<i32> {
    let mut v = Vec::new();
    for e in walk(run) {
        if e.file_name().is_some_and(|n| n == "arm.pid") {
            if let Ok(t) = std::fs::read_to_string(&e) {
                v.extend(t.trim().parse::<i32>().ok());
            }
        }
    }
    v
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut st = vec![d.to_path_buf()];
    while let Some(x) = st.pop() {
        if let Ok(rd) = std::fs::read_dir(&x) {
            for e in rd.flatten() {
                if e.path().is_dir() {
                    st.push(e.path());
                } else {
                    out.push(e.path());
                }
            }
        }
    }
    out
}

#[test]
fn resume_after_sigkill_completes_without_loss_or_duplicates() {
    let b = Bench::new(&[("slow", SLOW)]);
    let mut child = b.spawn(&[
        "--arms",
        "slow",
        "--models",
        "sim-2b,sim-4b",
        "--tasks",
        "WF-01,WF-02",
        "--repeats",
        "2",
        "--run-id",
        "r",
    ]);
    let run = b.out.join("r");
    let t0 = Instant::now();
    loop {
        let n = std::fs::read_to_string(run.join("cells.csv"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 3 || t0.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = rows(&run).len();
    assert!((2..8).contains(&before), "killed mid-way: {before} rows");
    let o = lrab()
        .arg("run")
        .arg("--resume")
        .arg(&run)
        .arg("--no-progress")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r = rows(&run);
    let mut keys: Vec<(String, String, String)> = r
        .iter()
        .map(|x| {
            (
                x[col("model")].clone(),
                x[col("task")].clone(),
                x[col("repeat")].clone(),
            )
        })
        .collect();
    assert_eq!(keys.len(), 8, "{r:?}");
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 8, "no duplicates");
    assert!(r.iter().all(|x| x[col("failure_mode")] == "completed"));
    // the attempt in flight at the kill is set aside under interrupted/ and runs again
    assert_eq!(
        pids_of_children(&run.join("cells")).len(),
        8,
        "every cell's arm ran"
    );
    let left = running_below_after(b.root(), Duration::from_secs(2));
    assert!(left.is_empty(), "arms {left:?} orphaned");
}

#[test]
fn interrupted_runner_kills_the_arm_in_flight() {
    let b = Bench::new(&[("hang", HANG)]);
    let mut child = b.spawn(&cell("hang", "WF-01"));
    let wd = b.out.join("r/cells/hang/sim-2b/WF-01/r0/a0/workdir");
    let t0 = Instant::now();
    while !(wd.join("arm.pid").exists() && wd.join("child.pid").exists()) {
        assert!(t0.elapsed() < Duration::from_secs(60), "arm never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: SIGTERM to the runner we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let st = child.wait().unwrap();
    assert!(!st.success());
    let left = running_below_after(&wd, Duration::from_secs(5));
    assert!(left.is_empty(), "{left:?} survived the interrupted runner");
}
