//! The lifecycle of one cell: fresh workdir, prompt file, the arm launched in its own process
//! group (cwd = workdir), budget, kill-and-resume for tasks with `kill_at_pct` (LH-03),
//! quiet-wait, scoring, failure mode, `score.json`, one atomic `cells.csv` row and one
//! `attempts.jsonl` record per attempt. One retry, only for timeouts or missing scores.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use lrab_scorer::{AttemptFacts, CellRecord, FailureMode, ScoreReport};
use lrab_tasks::{Pack, Task};
use serde_json::{json, Value};

use super::arms::{Arm, Vars};
use super::matrix::Cell;
use super::process::{self, Launch};
use super::proxy;
use super::quiet::{self, QuietConfig};
use super::usage;

/// Knobs of the cell lifecycle (defaults follow upstream).
#[derive(Debug, Clone)]
pub struct CellConfig {
    /// Budget of WF tasks (None = the task's `budget_minutes`).
    pub budget_minutes: Option<f64>,
    /// Budget of LH tasks (None = the task's `budget_minutes`).
    pub budget_minutes_lh: Option<f64>,
    /// Overrides every task's `kill_at_pct` (0 disables kill-and-resume).
    pub kill_at_pct: Option<u8>,
    pub quiet: QuietConfig,
    /// SIGTERM → SIGKILL grace.
    pub grace: Duration,
    /// Extra attempts for timeouts / missing scores (upstream: 1).
    pub retries: u32,
    /// Context length the proxy pins and the arms are told.
    pub num_ctx: u64,
}

impl Default for CellConfig {
    fn default() -> Self {
        CellConfig {
            budget_minutes: None,
            budget_minutes_lh: None,
            kill_at_pct: None,
            quiet: QuietConfig::default(),
            grace: Duration::from_secs(5),
            retries: 1,
            num_ctx: 32768,
        }
    }
}

/// Where and against what a cell runs.
pub struct CellEnv<'a> {
    pub run_dir: &'a Path,
    pub run_id: &'a str,
    pub pack: &'a Pack,
    pub backend_label: &'a str,
    pub backend_url: &'a str,
    pub simulated: bool,
    pub config: &'a CellConfig,
    /// Asked once the arm has finished: `Some(why)` when the backend stopped answering, so the
    /// attempt is the backend's failure, not the arm's (pool.rs).
    pub backend_lost: Option<&'a (dyn Fn() -> Option<String> + Sync)>,
}

/// The outcome of one attempt.
#[derive(Debug, Clone)]
pub struct AttemptResult {
    pub record: CellRecord,
    /// Runner time outside the arm's own launches.
    pub overhead: Duration,
}

impl AttemptResult {
    /// Upstream's retry rule: only timeouts and attempts without a score.
    pub fn needs_retry(&self) -> bool {
        needs_retry(&self.record)
    }
}

/// Whether a recorded attempt is retried (timeout or no score).
pub fn needs_retry(r: &CellRecord) -> bool {
    r.failure_mode == FailureMode::Timeout.as_str() || r.milestone_score.is_none()
}

/// Budget in seconds of `task` under `cfg`.
pub fn budget_seconds(task: &Task, cfg: &CellConfig) -> f64 {
    let lh = task.spec.id.starts_with("LH");
    let over = if lh {
        cfg.budget_minutes_lh
    } else {
        cfg.budget_minutes
    };
    over.unwrap_or(task.spec.budget_minutes as f64) * 60.0
}

fn rel(a: &Path, base: &Path) -> String {
    a.strip_prefix(base)
        .unwrap_or(a)
        .to_string_lossy()
        .into_owned()
}

/// One attempt in a fresh attempt folder.
pub fn run_attempt(
    env: &CellEnv<'_>,
    arm: &Arm,
    task: &Task,
    cell: &Cell,
    attempt: u32,
) -> Result<AttemptResult> {
    let t0 = Instant::now();
    let dir = env.run_dir.join(cell.rel_dir()).join(format!("a{attempt}"));
    let pgid_file = dir.join("arm.pgid");
    if dir.exists() {
        // Left over by a runner that died mid-attempt: kill what it launched, start afresh.
        process::reap_stale(&pgid_file, env.run_dir);
        std::fs::remove_dir_all(&dir).with_context(|| format!("remove {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let workdir = dir.join("workdir");
    let mat = lrab_tasks::materialize_with(env.pack, task, &workdir, None, true)
        .with_context(|| format!("materialize {} into {}", task.spec.id, workdir.display()))?;
    let prompt_file = workdir.join(lrab_tasks::TASK_INPUT);
    let home = dir.join("home");
    if arm.isolate_home {
        std::fs::create_dir_all(&home)?;
    }
    let proxy_log = dir.join("proxy.jsonl");
    // On the simulator every attempt talks under its own ledger key: its modelled model time
    // drives the budget and the kill point (sim_clock.rs).
    let sim = env
        .simulated
        .then(|| super::sim_clock::detect(env.backend_url))
        .flatten()
        .filter(|i| i.ledger);
    let sim_key = super::sim_clock::cell_key(&dir);
    let upstream = match sim {
        Some(_) => super::sim_clock::cell_url(env.backend_url, &sim_key),
        None => env.backend_url.to_string(),
    };
    let proxy = if arm.proxy {
        Some(proxy::start(proxy::ProxyConfig {
            upstream: upstream.clone(),
            num_ctx: env.config.num_ctx,
            log: Some(proxy_log.clone()),
            v1_to_native: true,
        })?)
    } else {
        None
    };
    let backend_url = proxy
        .as_ref()
        .map(|p| p.url())
        .unwrap_or_else(|| upstream.clone());
    let budget = budget_seconds(task, env.config);
    // an arm's own clock runs on real time: on a paced sim it sees the budget scaled
    let arm_budget = match sim {
        Some(i) if i.time_scale > 0.0 => budget * i.time_scale,
        _ => budget,
    };
    let mut vars = Vars::default();
    vars.set("prompt", task.render_prompt())
        .set("prompt_file", prompt_file.to_string_lossy())
        .set("workdir", workdir.to_string_lossy())
        .set("model", cell.model.clone())
        .set("backend_url", backend_url.clone())
        .set("home", home.to_string_lossy())
        .set("num_ctx", env.config.num_ctx.to_string())
        .set("budget_minutes", format!("{}", arm_budget / 60.0))
        .set("attempt_dir", dir.to_string_lossy());
    arm.write_configs(&vars)?;
    let (program, args) = arm.command(&vars)?;
    let mut launch_env = arm.env_for(&vars);
    if arm.isolate_home {
        launch_env.push(("HOME".into(), home.to_string_lossy().into_owned()));
    }
    launch_env.push(("OLLAMA_HOST".into(), backend_url.clone()));

    let kill_pct = env
        .config
        .kill_at_pct
        .or(task.spec.kill_at_pct)
        .filter(|p| *p > 0 && *p < 100);
    let launch = |phase: u32, deadline: f64| Launch {
        program: program.clone(),
        args: args.clone(),
        cwd: workdir.clone(),
        env: launch_env.clone(),
        stdout: dir.join(format!("phase{phase}.stdout")),
        stderr: dir.join(format!("phase{phase}.stderr")),
        deadline: Duration::from_secs_f64(deadline.max(0.0)),
        grace: env.config.grace,
        pgid_file: Some(pgid_file.clone()),
    };
    let first_deadline = match kill_pct {
        Some(p) => budget * p as f64 / 100.0,
        None => budget,
    };
    let mut arm_time = Duration::ZERO;
    let attempt_ledger = sim.map(|_| super::sim_clock::Clock::new(env.backend_url, &sim_key));
    let run_phase = |l: &process::Launch| -> Result<(process::Exit, Duration)> {
        match sim {
            Some(_) => {
                let clock = super::sim_clock::Clock::new(env.backend_url, &sim_key);
                let e = process::run_clocked(l, &|| clock.extra())?;
                Ok((e, clock.since_start().unpaced()))
            }
            None => Ok((process::run(l)?, Duration::ZERO)),
        }
    };
    let (e1, unpaced1) = run_phase(&launch(1, first_deadline))?;
    arm_time += e1.wall;
    let mut phases = vec![e1.clone()];
    let mut resume = Value::Null;
    if let Some(p) = kill_pct {
        let killed = e1.timed_out;
        let mut phase2_timeout = None;
        if killed {
            let (e2, _) = run_phase(&launch(2, budget - (e1.wall + unpaced1).as_secs_f64()))?;
            arm_time += e2.wall;
            phase2_timeout = Some(e2.timed_out);
            phases.push(e2);
        }
        resume = json!({
            "protocol": "kill_and_resume",
            "kill_at_pct": p,
            "kill_at_seconds": round1(first_deadline),
            "budget_seconds": round1(budget),
            "killed": killed,
            "attempt1_wall": round1(e1.wall.as_secs_f64()),
            "attempt1_killed": killed,
            "attempt2_wall": phases.get(1).map(|e| round1(e.wall.as_secs_f64())),
            "phase2_timeout": phase2_timeout,
        });
    }
    let last = phases.last().expect("one phase at least").clone();
    let timed_out = last.timed_out;
    let mut quiet_waited = Duration::ZERO;
    if last.survivors {
        let pg = last.pgid;
        quiet_waited = quiet::wait(&workdir, env.config.quiet, || {
            !process::group_members(pg).is_empty()
        });
        process::terminate_group(pg, env.config.grace);
    }
    if !last.survivors {
        process::forget_group(last.pgid);
    }
    let _ = std::fs::remove_file(&pgid_file);
    drop(proxy);
    if let Some(reason) = env.backend_lost.and_then(|lost| lost()) {
        return Err(super::pool::BackendLost {
            attempt_dir: dir.clone(),
            command: std::iter::once(program.display().to_string())
                .chain(args.iter().cloned())
                .collect(),
            backend_url: backend_url.clone(),
            phases: (phases.iter())
                .map(|e| (e.wall.as_secs_f64(), e.code, e.timed_out, e.survivors))
                .collect(),
            reason,
        }
        .into());
    }

    // Transcript: stdout, then stderr, per phase; phases joined by upstream's separator.
    let mut transcript = String::new();
    for (i, _) in phases.iter().enumerate() {
        let n = i + 1;
        if n == 2 {
            transcript.push_str(&format!(
                "\n--- KILLED AT {}%, RELAUNCHED ---\n",
                kill_pct.unwrap_or(0)
            ));
        }
        for (ext, head) in [("stdout", ""), ("stderr", "\n--- STDERR ---\n")] {
            let p = dir.join(format!("phase{n}.{ext}"));
            let bytes = std::fs::read(&p).unwrap_or_default();
            transcript.push_str(head);
            transcript.push_str(&String::from_utf8_lossy(&bytes));
            let _ = std::fs::remove_file(&p);
        }
    }
    std::fs::write(dir.join("transcript.txt"), &transcript)?;

    let wall = phases.iter().map(|e| e.wall.as_secs_f64()).sum::<f64>();
    // on the simulator: the wall time the attempt would have taken on the modelled laptop
    let sim_ledger = attempt_ledger.as_ref().map(|c| c.since_start());
    let modelled_wall = sim_ledger.map(|l| wall + l.unpaced().as_secs_f64());
    let exit_code = if timed_out { None } else { last.code };
    let t_score = Instant::now();
    let (mut report, score_note) = if timed_out {
        (
            ScoreReport::timeout(&task.spec.id, &task.spec.domain, task.spec.tier),
            None,
        )
    } else {
        match lrab_scorer::score(task, &mat.checks, &workdir) {
            Ok(s) => {
                let facts = AttemptFacts {
                    timed_out: false,
                    exit_code,
                    wall_seconds: wall,
                    total: s.total,
                    produced: lrab_scorer::failure::produced_files(&workdir, &mat.files),
                    read_task_file: lrab_scorer::failure::transcript_read_task_file(&transcript),
                };
                let fm = lrab_scorer::classify(&facts);
                (ScoreReport::scored(s, fm), None)
            }
            Err(e) => {
                let mut r = ScoreReport::timeout(&task.spec.id, &task.spec.domain, task.spec.tier);
                r.failure_mode = FailureMode::Error;
                (r, Some(e.to_string()))
            }
        }
    };
    let scoring = t_score.elapsed();
    let mut u = usage::from_events(&workdir.join(".lrab/events.jsonl"))
        .or_else(|| usage::from_proxy_log(&proxy_log))
        .unwrap_or_default();
    if let (None, Some(l)) = (u.tool_calls, sim_ledger) {
        u.tool_calls = Some(l.tool_calls);
    }
    let x = &mut report.extra;
    x.insert("arm".into(), json!(arm.name));
    x.insert("model".into(), json!(cell.model));
    x.insert("run_id".into(), json!(env.run_id));
    x.insert("repeat".into(), json!(cell.repeat));
    x.insert("attempt".into(), json!(attempt));
    x.insert("wall_seconds".into(), json!(round1(wall)));
    x.insert("exit_code".into(), json!(exit_code));
    x.insert("backend".into(), json!(env.backend_label));
    x.insert("simulated".into(), json!(env.simulated));
    if let Some(mw) = modelled_wall {
        x.insert("modelled_wall_seconds".into(), json!(round1(mw)));
    }
    if timed_out {
        x.insert(
            "failure_note".into(),
            json!(format!("killed at the budget of {:.0} s", budget)),
        );
    }
    if let Some(n) = &score_note {
        x.insert("score_error".into(), json!(n));
    }
    if !resume.is_null() {
        x.insert("resume".into(), resume.clone());
    }
    lrab_scorer::write_score_json(&dir, &report)?;

    let record = CellRecord {
        run_id: env.run_id.to_string(),
        arm: arm.name.clone(),
        model: cell.model.clone(),
        task: task.spec.id.clone(),
        tier: task.spec.tier,
        repeat: cell.repeat,
        attempt,
        score: report.total.unwrap_or(0.0),
        milestone_score: report.milestone_score,
        final_score: report.final_score,
        wall_seconds: wall,
        exit_code,
        failure_mode: report.failure_mode.as_str().to_string(),
        backend: env.backend_label.to_string(),
        simulated: env.simulated,
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        model_calls: u.model_calls,
        tool_calls: u.tool_calls,
        attempt_dir: rel(&dir, env.run_dir),
    };
    lrab_scorer::append_row(&env.run_dir.join("cells.csv"), &record)?;
    let overhead = t0.elapsed().saturating_sub(arm_time);
    append_jsonl(
        &env.run_dir.join("attempts.jsonl"),
        &json!({
            "cell": cell.index, "arm": arm.name, "model": cell.model, "task": task.spec.id,
            "repeat": cell.repeat, "attempt": attempt, "attempt_dir": record.attempt_dir,
            "command": std::iter::once(program.display().to_string()).chain(args.iter().cloned()).collect::<Vec<_>>(),
            "backend": env.backend_label, "backend_url": backend_url, "phases": phases.iter().map(|e| json!({
                "wall": round3(e.wall.as_secs_f64()), "code": e.code, "timed_out": e.timed_out, "survivors": e.survivors
            })).collect::<Vec<_>>(),
            "quiet_wait_seconds": round3(quiet_waited.as_secs_f64()),
            "modelled_wall_seconds": modelled_wall.map(round1),
            "sim_ledger": sim_ledger.map(|l| json!({"requests": l.requests, "model_seconds": round3(l.model_ns as f64 / 1e9), "paced_seconds": round3(l.paced_ns as f64 / 1e9), "tool_calls": l.tool_calls, "errors": l.errors})),
            "runner_overhead_seconds": round3(overhead.as_secs_f64()),
            "scoring_seconds": round3(scoring.as_secs_f64()),
            "failure_mode": record.failure_mode, "score": record.score,
            "score_error": score_note, "retry": needs_retry(&record) && attempt < env.config.retries,
        }),
    )?;
    Ok(AttemptResult { record, overhead })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Appends one JSON line under an exclusive lock in a single write (same discipline as
/// `cells.csv`), terminating a torn last line first.
pub fn append_jsonl(path: &Path, v: &Value) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("open {}", path.display()))?;
    // SAFETY: flock on a descriptor we own; released on close.
    unsafe {
        libc::flock(f.as_raw_fd(), libc::LOCK_EX);
    }
    let len = f.metadata()?.len();
    let mut line = String::new();
    if len > 0 {
        use std::io::{Read, Seek, SeekFrom};
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1))?;
        f.read_exact(&mut last)?;
        if last[0] != b'\n' {
            line.push('\n');
        }
    }
    line.push_str(&v.to_string());
    line.push('\n');
    f.write_all(line.as_bytes())?;
    f.sync_data()?;
    Ok(())
}
