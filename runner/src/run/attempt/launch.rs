//! Launching the arm for one attempt: a fresh attempt folder and workdir, the proxy, the
//! template variables, then the phases — one launch, or two under kill-and-resume (the arm is
//! killed at `kill_at_pct` of the budget and relaunched on the same workdir for the rest) — and
//! the quiet-wait and end of the arm's process group.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use lrab_records::ResumeInfo;
use lrab_tasks::{Materialized, Task};

use super::super::arms::{Arm, Vars};
use super::super::cell::{budget_seconds, CellEnv};
use super::super::matrix::Cell;
use super::super::process::{self, Exit, Launch};
use super::super::proxy;
use super::super::quiet;
use super::super::sim_clock::{self, Ledger};
use super::round1;

/// What an attempt runs: a task of the pack, or a published safety case (`crate::safety_arms`),
/// which brings its own workdir and fixtures and gives the arm its prompt verbatim.
pub trait Workload {
    /// Writes the workdir (and whatever the work keeps beside it in the attempt folder `dir`).
    fn materialize(&self, env: &CellEnv<'_>, dir: &Path, workdir: &Path) -> Result<Materialized>;
    /// The prompt the arm is given.
    fn prompt(&self) -> String;
    /// The budget in seconds under the run's knobs.
    fn budget(&self, cfg: &lrab_records::RunSpec) -> f64;
    /// Its kill-and-resume point, if any.
    fn kill_at_pct(&self) -> Option<u8>;
}

impl Workload for Task {
    fn materialize(&self, env: &CellEnv<'_>, _dir: &Path, workdir: &Path) -> Result<Materialized> {
        lrab_tasks::materialize_with(env.pack, self, workdir, None, true)
            .with_context(|| format!("materialize {} into {}", self.spec.id, workdir.display()))
    }
    fn prompt(&self) -> String {
        self.render_prompt()
    }
    fn budget(&self, cfg: &lrab_records::RunSpec) -> f64 {
        budget_seconds(self, cfg)
    }
    fn kill_at_pct(&self) -> Option<u8> {
        self.spec.kill_at_pct
    }
}

/// What the launch step leaves for the later steps.
pub struct Launched {
    /// The attempt folder.
    pub dir: PathBuf,
    /// The arm's working directory inside it.
    pub workdir: PathBuf,
    /// What was materialized there (inputs and the resolved checks).
    pub mat: Materialized,
    /// Where the proxy logged the arm's model calls.
    pub proxy_log: PathBuf,
    /// The launched command line, program first.
    pub command: Vec<String>,
    /// The backend URL the arm was given.
    pub backend_url: String,
    /// The whole budget in seconds.
    pub budget: f64,
    /// The kill-and-resume point, when the task uses it.
    pub kill_pct: Option<u8>,
    /// Every launch, in order (never empty).
    pub phases: Vec<Exit>,
    /// How kill-and-resume went, for tasks that use it.
    pub resume: Option<ResumeInfo>,
    /// Time waited for the workdir to go quiet after the arm exited.
    pub quiet_waited: Duration,
    /// Wall time inside the arm's launches.
    pub arm_time: Duration,
    /// On the simulator: its ledger over the attempt.
    pub sim_ledger: Option<Ledger>,
}

impl Launched {
    /// The last launch, whose end is the attempt's end.
    pub fn last(&self) -> &Exit {
        self.phases.last().expect("one phase at least")
    }
}

/// Prepares the attempt folder and runs the arm in it to the end.
pub fn launch(
    env: &CellEnv<'_>,
    arm: &Arm,
    work: &dyn Workload,
    cell: &Cell,
    attempt: u32,
) -> Result<Launched> {
    let dir = env.run_dir.join(cell.rel_dir()).join(format!("a{attempt}"));
    let pgid_file = dir.join("arm.pgid");
    fresh_folder(&dir, &pgid_file, env.run_dir)?;
    let workdir = dir.join("workdir");
    let mat = work.materialize(env, &dir, &workdir)?;
    let dirs = super::super::confine::AttemptDirs::create(&dir)?;
    let home = dirs.home.clone();
    let proxy_log = dir.join("proxy.jsonl");
    // On the simulator every attempt talks under its own ledger key: its modelled model time
    // drives the budget and the kill point (sim_clock.rs).
    let sim = env
        .simulated
        .then(|| sim_clock::detect(env.backend_url))
        .flatten()
        .filter(|i| i.ledger);
    let sim_key = sim_clock::cell_key(&dir);
    let upstream = match sim {
        Some(_) => sim_clock::cell_url(env.backend_url, &sim_key),
        None => env.backend_url.to_string(),
    };
    // Every arm talks through a proxy of its own, which records the trajectory; arms with
    // `proxy = true` also get their sampling normalized, the others are forwarded untouched.
    let proxy = start_proxy(env, arm, upstream, &proxy_log)?;
    let backend_url = proxy.url();
    let budget = work.budget(env.config);
    // an arm's own clock runs on real time: on a paced sim it sees the budget scaled
    let arm_budget = match sim {
        Some(i) if i.time_scale > 0.0 => budget * i.time_scale,
        _ => budget,
    };
    let vars = template_vars(
        env,
        arm,
        work,
        cell,
        &dir,
        &workdir,
        &home,
        &backend_url,
        arm_budget,
    );
    arm.write_configs(&vars)?;
    let (program, args) = arm.command(&vars)?;
    let mut launch_env = dirs.env();
    launch_env.extend(arm.env_for(&vars));
    launch_env.push(("OLLAMA_HOST".into(), backend_url.clone()));
    let confine = match env.config.unconfined_arms {
        true => None,
        false => Some(arm.confinement(&program, &dir, &workdir, &dirs, &backend_url)?),
    };
    let base = Launch {
        program: program.clone(),
        args: args.clone(),
        cwd: workdir.clone(),
        env: launch_env,
        env_remove: arm.env_remove.clone(),
        stdout: PathBuf::new(),
        stderr: PathBuf::new(),
        deadline: Duration::ZERO,
        grace: env.config.grace(),
        pgid_file: Some(pgid_file.clone()),
        confine,
    };
    let kill_pct = env
        .config
        .kill_at_pct
        .or(work.kill_at_pct())
        .filter(|p| *p > 0 && *p < 100);
    let attempt_ledger = sim.map(|_| sim_clock::Clock::new(env.backend_url, &sim_key));
    let phased = run_phases(
        &Phases {
            base: &base,
            dir: &dir,
            budget,
            kill_pct,
            sim_key: sim.map(|_| (env.backend_url, sim_key.as_str())),
        },
        env.config,
    )?;
    let _ = std::fs::remove_file(&pgid_file);
    drop(proxy);
    Ok(Launched {
        dir,
        workdir,
        mat,
        proxy_log,
        command: std::iter::once(program.display().to_string())
            .chain(args)
            .collect(),
        backend_url,
        budget,
        kill_pct,
        phases: phased.phases,
        resume: phased.resume,
        quiet_waited: phased.quiet_waited,
        arm_time: phased.arm_time,
        sim_ledger: attempt_ledger.as_ref().map(|c| c.since_start()),
    })
}

/// The arm's own proxy: it records the trajectory, and for arms with `proxy = true` also
/// normalizes sampling (the others are forwarded untouched).
fn start_proxy(
    env: &CellEnv<'_>,
    arm: &Arm,
    upstream: String,
    log: &Path,
) -> Result<proxy::ProxyHandle> {
    proxy::start(proxy::ProxyConfig {
        upstream,
        num_ctx: env.config.num_ctx,
        log: Some(log.to_path_buf()),
        normalize: arm.proxy,
        v1_to_native: arm.proxy,
        think: env.config.think,
        // an OpenAI-only backend is reached through its run-wide translating proxy (backend.rs)
        openai: None,
    })
}

/// The variables an arm's command line and config templates may use.
#[allow(clippy::too_many_arguments)]
fn template_vars(
    env: &CellEnv<'_>,
    arm: &Arm,
    work: &dyn Workload,
    cell: &Cell,
    dir: &Path,
    workdir: &Path,
    home: &Path,
    backend_url: &str,
    arm_budget: f64,
) -> Vars {
    let mut vars = Vars::default();
    vars.set("prompt", work.prompt())
        .set(
            "prompt_file",
            workdir.join(lrab_tasks::TASK_INPUT).to_string_lossy(),
        )
        .set("workdir", workdir.to_string_lossy())
        .set("model", cell.model.clone())
        .set("backend_url", backend_url)
        .set("home", home.to_string_lossy())
        .set("num_ctx", env.config.num_ctx.to_string())
        .set("budget_minutes", format!("{}", arm_budget / 60.0))
        .set("attempt_dir", dir.to_string_lossy())
        .set("install_dir", arm.install_dir())
        .set(
            "path",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        );
    vars
}

/// A fresh attempt folder. One left over by a runner that died mid-attempt has what it launched
/// killed and is started afresh.
fn fresh_folder(dir: &Path, pgid_file: &Path, run_dir: &Path) -> Result<()> {
    if dir.exists() {
        process::reap_stale(pgid_file, run_dir);
        std::fs::remove_dir_all(dir).with_context(|| format!("remove {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))
}

/// How the phases of one attempt are launched.
struct Phases<'a> {
    /// The launch without its per-phase parts (output files, deadline).
    base: &'a Launch,
    dir: &'a Path,
    budget: f64,
    kill_pct: Option<u8>,
    /// On the simulator: its URL and the attempt's ledger key (its modelled clock).
    sim_key: Option<(&'a str, &'a str)>,
}

/// What the phases did.
struct Phased {
    phases: Vec<Exit>,
    resume: Option<ResumeInfo>,
    quiet_waited: Duration,
    arm_time: Duration,
}

impl Phases<'_> {
    /// Phase `n` of the launch with `deadline` seconds to run.
    fn launch(&self, n: u32, deadline: f64) -> Launch {
        Launch {
            stdout: self.dir.join(format!("phase{n}.stdout")),
            stderr: self.dir.join(format!("phase{n}.stderr")),
            deadline: Duration::from_secs_f64(deadline.max(0.0)),
            ..self.base.clone()
        }
    }

    /// Runs one phase; on the simulator its deadline is measured on the modelled clock, and the
    /// modelled time the real clock did not see is returned with it.
    fn run(&self, l: &Launch) -> Result<(Exit, Duration)> {
        match self.sim_key {
            Some((url, key)) => {
                let clock = sim_clock::Clock::new(url, key);
                let e = process::run_clocked(l, &|| clock.extra())?;
                Ok((e, clock.since_start().unpaced()))
            }
            None => Ok((process::run(l)?, Duration::ZERO)),
        }
    }
}

/// The first phase; under kill-and-resume, the relaunch for the rest of the budget when the
/// first was killed; then the quiet-wait and the end of the last phase's group.
fn run_phases(p: &Phases<'_>, cfg: &lrab_records::RunSpec) -> Result<Phased> {
    let first_deadline = match p.kill_pct {
        Some(pct) => p.budget * pct as f64 / 100.0,
        None => p.budget,
    };
    let (e1, unpaced1) = p.run(&p.launch(1, first_deadline))?;
    let mut arm_time = e1.wall;
    let mut phases = vec![e1.clone()];
    let mut resume = None;
    if let Some(pct) = p.kill_pct {
        let killed = e1.timed_out;
        let mut phase2_timeout = None;
        if killed {
            let rest = p.budget - (e1.wall + unpaced1).as_secs_f64();
            let (e2, _) = p.run(&p.launch(2, rest))?;
            arm_time += e2.wall;
            phase2_timeout = Some(e2.timed_out);
            phases.push(e2);
        }
        resume = Some(ResumeInfo {
            protocol: "kill_and_resume".into(),
            kill_at_pct: pct,
            kill_at_seconds: round1(first_deadline),
            budget_seconds: round1(p.budget),
            killed,
            attempt1_wall: round1(e1.wall.as_secs_f64()),
            attempt1_killed: killed,
            attempt2_wall: phases.get(1).map(|e| round1(e.wall.as_secs_f64())),
            phase2_timeout,
        });
    }
    let last = phases.last().expect("one phase at least");
    let mut quiet_waited = Duration::ZERO;
    if last.survivors {
        let pg = last.pgid;
        quiet_waited = quiet::wait(&p.base.cwd, quiet::QuietConfig::of(cfg), || {
            !process::group_members(pg).is_empty()
        });
        process::terminate_group(pg, cfg.grace());
    } else {
        process::forget_group(last.pgid);
    }
    Ok(Phased {
        phases,
        resume,
        quiet_waited,
        arm_time,
    })
}
