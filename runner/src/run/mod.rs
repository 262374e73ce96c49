//! The run machinery behind `lrab run`, `plan`, `merge`, `proxy`, `arms`, `doctor` and the
//! harness-backed probes of `lrab safety`: one module per mechanism. [`execute`] is the
//! orchestration: validate everything, write the manifest and plan, then run the pending cells
//! (serially or with `jobs` workers).

pub mod arms;
pub mod attempt;
pub mod backend;
pub mod backend_api;
pub mod cell;
pub mod confine;
pub mod doctor;
pub mod install;
pub mod manifest;
pub mod matrix;
pub mod merge;
pub mod pool;
pub mod prefill;
pub mod probe_harness;
pub mod process;
pub mod progress;
pub mod proxy;
pub mod quiet;
pub mod resume;
pub mod sim_clock;
pub mod tau2_arm;
pub mod usage;
pub mod wait;

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use lrab_tasks::Pack;

use arms::Arm;
use backend::{Backend, BackendSpec};
use cell::{CellConfig, CellEnv};
use manifest::{Manifest, MatrixSpec};
use matrix::{Cell, Shard};

/// Everything `lrab run` needs (CLI flags and matrix file merged).
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub arms_dir: PathBuf,
    pub pack_dir: PathBuf,
    /// None = every installed arm file.
    pub arms: Option<Vec<String>>,
    /// None = the backend's default four.
    pub models: Option<Vec<String>>,
    /// None = every task of the pack.
    pub tasks: Option<Vec<String>>,
    pub repeats: u32,
    pub backend: BackendSpec,
    /// How long the backend may take to answer before the run (upstream: 180 s).
    pub backend_wait: Duration,
    /// … and before every cell (upstream: 60 s).
    pub cell_backend_wait: Duration,
    pub cell: CellConfig,
    pub out_root: PathBuf,
    pub run_id: Option<String>,
    pub shard: Option<Shard>,
    pub jobs: usize,
    pub fresh_backend: bool,
    /// Cells one real backend serves at once (the simulator: any number); caps `jobs`.
    pub backend_slots: usize,
    /// Start (and with `fresh_backend` restart) `ollama serve` when Ollama does not answer.
    pub ollama_serve: bool,
    pub quiet: bool,
    pub sim_seed: u64,
    /// Cell order (`lrab ablate` interleaves the arms).
    pub order: matrix::Order,
    /// `--backend-api`: the API the backend URLs speak (auto: detected).
    pub backend_api: lrab_records::BackendApi,
    /// `--backend-key-env`: the variable holding an OpenAI backend's key.
    pub backend_key_env: String,
}

impl RunOptions {
    /// How the backends are reached and what translated requests carry.
    pub fn backend_options(&self) -> backend::BackendOptions {
        backend::BackendOptions {
            api: self.backend_api,
            key_env: self.backend_key_env.clone(),
            think: self.cell.think,
            num_ctx: self.cell.num_ctx,
        }
    }
}

/// What a finished (or resumed) run reports.
#[derive(Debug)]
pub struct RunSummary {
    pub run_dir: PathBuf,
    pub simulated: bool,
    pub attempts_run: usize,
    pub cells_total: usize,
    pub table: String,
    pub mean_overhead: Option<Duration>,
}

/// A run folder held by one runner process (exclusive `flock` on `.lock`).
pub struct RunLock {
    _file: std::fs::File,
}

pub fn lock_run(dir: &Path) -> Result<RunLock> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lock"))?;
    // SAFETY: flock on our own descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!("{} is in use by another lrab run", dir.display());
    }
    Ok(RunLock { _file: f })
}

pub(crate) fn default_run_id(shard: Option<Shard>) -> String {
    let t = lrab_util::UtcTime::now();
    let base = format!(
        "run-{:04}{:02}{:02}-{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    match shard {
        Some(sh) => format!("{base}-s{}of{}", sh.k, sh.n),
        None => base,
    }
}

/// The resolved, validated work of a run (before any cell starts).
pub struct Prepared {
    pub arms: Vec<Arm>,
    pub skipped_arms: Vec<String>,
    pub models: Vec<String>,
    pub tasks: Vec<String>,
    pub pack: Pack,
    pub cells: Vec<Cell>,
}

/// Loads arms and pack and resolves names; every bad name is an error here.
pub fn prepare(
    opts: &RunOptions,
    simulated_default: bool,
    require_installed: bool,
) -> Result<Prepared> {
    let all = arms::load_dir(&opts.arms_dir)?;
    // `all`, `paper` (= `upstream`) and `paper+harness` are groups: their uninstalled members
    // are left out with a note.
    let group: Option<Vec<String>> = match opts.arms.as_deref() {
        Some([g]) if g == "all" => Some(all.iter().map(|a| a.name.clone()).collect()),
        Some([g]) if matrix::arm_group(g).is_some() => Some(
            matrix::arm_group(g)
                .unwrap_or_default()
                .into_iter()
                .filter(|n| all.iter().any(|a| a.name == *n))
                .map(str::to_string)
                .collect(),
        ),
        Some(_) => None,
        None => Some(all.iter().map(|a| a.name.clone()).collect()),
    };
    let explicit = if group.is_some() {
        None
    } else {
        opts.arms.as_ref()
    };
    let (arms, skipped) = match explicit {
        Some(names) => {
            matrix::no_duplicates("arm", names)?;
            let sel = arms::select(&all, names)?;
            if require_installed {
                for a in &sel {
                    if a.locate().is_none() {
                        bail!(
                            "arm '{}' is not installed: program '{}' not found next to lrab or on PATH{}. {}",
                            a.name,
                            a.program,
                            a.bin_env.as_ref().map(|v| format!(" (or set ${v})")).unwrap_or_default(),
                            a.install_hint
                        );
                    }
                }
            }
            (sel, Vec::new())
        }
        None => {
            let names = group.unwrap_or_default();
            let (ok, missing): (Vec<Arm>, Vec<Arm>) = arms::select(&all, &names)?
                .into_iter()
                .partition(|a| !require_installed || a.locate().is_some());
            if ok.is_empty() {
                bail!("no arm is installed (see `lrab arms check`)");
            }
            (ok, missing.into_iter().map(|a| a.name).collect())
        }
    };
    let (pack, problems) = Pack::load_lenient(&opts.pack_dir);
    let tasks = match &opts.tasks {
        Some(t) => {
            matrix::no_duplicates("task", t)?;
            for id in t {
                if pack.get(id).is_none() {
                    let mine: Vec<String> = problems
                        .iter()
                        .filter(|p| p.file.starts_with(pack.root.join(id)))
                        .map(|p| format!("  {p}"))
                        .collect();
                    if mine.is_empty() {
                        bail!(
                            "unknown task '{id}' in pack {} (known: {})",
                            pack.root.display(),
                            pack.tasks
                                .iter()
                                .map(|t| t.spec.id.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                    }
                    bail!("task {id} is invalid:\n{}", mine.join("\n"));
                }
            }
            t.clone()
        }
        None => {
            if pack.tasks.is_empty() {
                bail!("pack {} has no valid task", pack.root.display());
            }
            pack.tasks.iter().map(|t| t.spec.id.clone()).collect()
        }
    };
    let models = match &opts.models {
        Some(m) => {
            matrix::no_duplicates("model", m)?;
            m.clone()
        }
        None if simulated_default => matrix::SIM_MODELS.iter().map(|s| s.to_string()).collect(),
        None => matrix::UPSTREAM_MODELS
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    if opts.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    let names: Vec<String> = arms.iter().map(|a| a.name.clone()).collect();
    let mut cells = matrix::expand_in(opts.order, &names, &models, &tasks, opts.repeats);
    if let Some(s) = opts.shard {
        cells = matrix::shard(&cells, s);
    }
    Ok(Prepared {
        arms,
        skipped_arms: skipped,
        models,
        tasks,
        pack,
        cells,
    })
}

fn spec_of(opts: &RunOptions, p: &Prepared, backend: &Backend) -> MatrixSpec {
    MatrixSpec {
        arms: p.arms.iter().map(|a| a.name.clone()).collect(),
        models: p.models.clone(),
        tasks: p.tasks.clone(),
        repeats: opts.repeats,
        shard: opts.shard.map(|s| format!("{}/{}", s.k, s.n)),
        backend: match &opts.backend {
            BackendSpec::Url(u) => u.clone(),
            BackendSpec::Urls(v) => v.join(","),
            _ => backend.label.clone(),
        },
        budget_minutes: opts.cell.budget_minutes,
        budget_minutes_lh: opts.cell.budget_minutes_lh,
        kill_at_pct: opts.cell.kill_at_pct,
        retries: opts.cell.retries,
        num_ctx: opts.cell.num_ctx,
        quiet_poll_ms: opts.cell.quiet.poll.as_millis() as u64,
        quiet_stable_ms: opts.cell.quiet.stable.as_millis() as u64,
        quiet_max_ms: opts.cell.quiet.max.as_millis() as u64,
        grace_ms: opts.cell.grace.as_millis() as u64,
        sim_seed: opts.sim_seed,
        unconfined_arms: opts.cell.unconfined_arms,
        think: opts.cell.think,
        backend_api: opts.backend_api,
        backend_key_env: (opts.backend_key_env != backend_api::DEFAULT_KEY_ENV)
            .then(|| opts.backend_key_env.clone()),
        pack: absolute(&opts.pack_dir),
        arms_dir: absolute(&opts.arms_dir),
        order: opts.order,
    }
}

/// A path as an absolute string (so `--resume` works from any folder).
fn absolute(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// Turns a manifest's matrix back into options (for `--resume`).
pub fn options_from_manifest(m: &Manifest, out_root: &Path, quiet: bool) -> Result<RunOptions> {
    let s = &m.matrix;
    let ms = |x: u64| Duration::from_millis(x);
    Ok(RunOptions {
        arms_dir: PathBuf::from(&s.arms_dir),
        pack_dir: PathBuf::from(&s.pack),
        arms: Some(s.arms.clone()),
        models: Some(s.models.clone()),
        tasks: Some(s.tasks.clone()),
        repeats: s.repeats,
        backend: s.backend.parse().map_err(anyhow::Error::msg)?,
        backend_wait: Duration::from_secs(180),
        cell_backend_wait: Duration::from_secs(60),
        cell: CellConfig {
            budget_minutes: s.budget_minutes,
            budget_minutes_lh: s.budget_minutes_lh,
            kill_at_pct: s.kill_at_pct,
            quiet: quiet::QuietConfig {
                poll: ms(s.quiet_poll_ms),
                stable: ms(s.quiet_stable_ms),
                max: ms(s.quiet_max_ms),
            },
            grace: ms(s.grace_ms),
            retries: s.retries,
            num_ctx: s.num_ctx,
            unconfined_arms: s.unconfined_arms,
            think: s.think,
        },
        out_root: out_root.to_path_buf(),
        run_id: Some(m.run_id.clone()),
        shard: s
            .shard
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        jobs: 1,
        fresh_backend: false,
        backend_slots: 1,
        ollama_serve: false,
        quiet,
        sim_seed: s.sim_seed,
        order: s.order,
        backend_api: s.backend_api,
        backend_key_env: s
            .backend_key_env
            .clone()
            .unwrap_or_else(|| backend_api::DEFAULT_KEY_ENV.into()),
    })
}

/// What the manifest records about an arm: where it is, the version it reports and the one its
/// file pins.
fn arm_info(a: &Arm) -> manifest::ArmInfo {
    let s = arms::status(a);
    manifest::ArmInfo {
        name: s.name,
        installed: s.installed,
        path: s.path,
        version: s.version,
        upstream_version: s.upstream_version,
        pinned_version: Some(a.pinned_version().to_string()),
        install_hint: s.install_hint,
    }
}

/// Writes `plan.jsonl` (one cell per line, in plan order).
pub fn write_plan(path: &Path, cells: &[Cell]) -> Result<()> {
    // the record error starts with the path: the message stays "write <path>: <why>"
    lrab_records::write_plan(path, cells).map_err(|e| anyhow::anyhow!("write {e}"))
}

/// Refuses a run whose planned tasks have checks that need a program or Python module this
/// machine lacks: scoring them would blame the arms for the scorer's machine. The needs come
/// from the scorer (`lrab_scorer::needs_of_task`), derived from the check kinds.
fn scorer_preflight(p: &Prepared) -> Result<()> {
    let planned: std::collections::BTreeSet<&str> =
        p.cells.iter().map(|c| c.task.as_str()).collect();
    let specs = planned
        .into_iter()
        .filter_map(|id| p.pack.get(id).map(|t| &t.spec));
    let lines: Vec<String> = lrab_scorer::missing_for_tasks(specs)
        .into_iter()
        .map(|(m, tasks)| {
            format!(
                "  {}",
                m.line(&format!("the checks of {}", tasks.join(", ")))
            )
        })
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    bail!(
        "the scorer cannot score the planned tasks on this machine (nothing was run):\n{}\n\
         Install what is missing, or leave those tasks out with --tasks.",
        lines.join("\n")
    )
}

/// Runs (or resumes, when `run_dir` already holds a manifest) a matrix.
pub fn execute(opts: &RunOptions, resuming: Option<&Path>) -> Result<RunSummary> {
    // The backends first: their kind decides the default models.
    let backends = Backend::start_all(
        &opts.backend,
        opts.backend_wait,
        opts.sim_seed,
        opts.ollama_serve,
        &opts.backend_options(),
    )?;
    let backend = &backends[0];
    let p = prepare(opts, backend.simulated, true)?;
    let confinement = confine::check(opts.cell.unconfined_arms)?;
    for b in &backends {
        if let Some(b) = b.banner() {
            eprintln!("{b}");
        }
    }
    eprintln!("{confinement}");
    let model_info = backend::same_models(&backends, &p.models)?;
    for id in &p.tasks {
        // Every task must materialize before any cell starts (bad generator, manifest…).
        let t = p.pack.get(id).expect("validated");
        lrab_tasks::resolve_checks(t, None).with_context(|| format!("task {id}"))?;
    }
    scorer_preflight(&p)?;
    let run_dir = match resuming {
        Some(d) => d.to_path_buf(),
        None => {
            let id = opts
                .run_id
                .clone()
                .unwrap_or_else(|| default_run_id(opts.shard));
            if id.is_empty() || id.contains('/') || id.starts_with('.') {
                bail!("--run-id '{id}': must be a plain folder name");
            }
            let d = opts.out_root.join(&id);
            if d.join("manifest.json").exists() {
                bail!(
                    "{} already holds a run; use --resume {} or another --run-id",
                    d.display(),
                    d.display()
                );
            }
            d
        }
    };
    std::fs::create_dir_all(&run_dir).with_context(|| format!("create {}", run_dir.display()))?;
    // Arms run with cwd = their workdir: every path handed to them must be absolute.
    let run_dir = std::fs::canonicalize(&run_dir)
        .with_context(|| format!("resolve {}", run_dir.display()))?;
    let _lock = lock_run(&run_dir)?;
    process::install_interrupt_handler();
    let run_id = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let manifest = Manifest {
        schema_version: lrab_records::SCHEMA_VERSION,
        run_id: run_id.clone(),
        lrab_version: env!("CARGO_PKG_VERSION").into(),
        suite_commit: Some(manifest::suite_commit()),
        host: Some(manifest::host()),
        pack_hash: Some(
            p.pack
                .content_hash()
                .with_context(|| format!("hash of the task pack {}", p.pack.root.display()))?,
        ),
        simulated: backend.simulated,
        backend_label: backend.label.clone(),
        backend_url: backend.public_url.clone(),
        backend_version: backend.version(),
        backends: backends
            .iter()
            .map(|b| manifest::BackendInfo {
                label: b.label.clone(),
                url: b.public_url.clone(),
                simulated: b.simulated,
                version: b.version(),
                kind: Some(b.kind),
            })
            .collect(),
        models: model_info,
        arms: p.arms.iter().map(arm_info).collect(),
        skipped_arms: p.skipped_arms.clone(),
        arm_confinement: confinement.clone(),
        matrix: spec_of(opts, &p, backend),
        cells_planned: p.cells.len(),
        note: if backend.simulated {
            "SIMULATED backend: these numbers are not results of real models".into()
        } else {
            String::new()
        },
    };
    if resuming.is_none() {
        manifest.write(&run_dir)?;
        write_plan(&run_dir.join("plan.jsonl"), &p.cells)?;
    } else {
        // Keep the original manifest; record this session's backend next to it.
        manifest.write_as(&run_dir.join("manifest.resume.json"))?;
    }
    if !p.skipped_arms.is_empty() {
        eprintln!(
            "note: arms not installed, left out: {} (see `lrab arms check`)",
            p.skipped_arms.join(", ")
        );
    }
    let rows = resume::read_rows_lenient(&run_dir.join("cells.csv"))?;
    if resuming.is_some() {
        // attempts the stopped runner left without a row: set aside, named, and run again
        resume::set_aside_unrecorded(&run_dir, &rows, &p.cells, opts.cell.retries)?;
    }
    let todo = resume::pending(&p.cells, &rows, opts.cell.retries);
    let progress = progress::Progress::new(p.cells.len(), p.cells.len() - todo.len(), opts.quiet);
    let arm_map: BTreeMap<String, Arm> =
        p.arms.iter().map(|a| (a.name.clone(), a.clone())).collect();
    let queue = Arc::new(Mutex::new(
        todo.into_iter()
            .map(|(c, first)| (c, first, 0u32))
            .collect::<std::collections::VecDeque<_>>(),
    ));
    let overheads = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let attempts_run = Arc::new(Mutex::new(0usize));
    let first_error: Arc<Mutex<Option<anyhow::Error>>> = Arc::new(Mutex::new(None));
    // `--fresh-backend` restarts or unloads a backend between cells: it needs it to itself.
    let slots = if opts.fresh_backend {
        1
    } else {
        opts.backend_slots
    };
    let flags: Vec<bool> = backends
        .iter()
        .map(|b| b.simulated && !opts.fresh_backend)
        .collect();
    let (jobs, capped) = pool::cap_jobs(&flags, slots, opts.jobs);
    if let Some(note) = capped {
        eprintln!("note: {note}");
    }
    let simulated_run = backend.simulated;
    let fresh_slots = if opts.fresh_backend { 1 } else { jobs };
    let pool = pool::Pool::new(backends, slots, fresh_slots);
    let fail = |e: anyhow::Error| {
        let mut f = first_error.lock().unwrap();
        if f.is_none() {
            *f = Some(e);
        }
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                if first_error.lock().unwrap().is_some() {
                    return;
                }
                let Some((c, first, losses)) = queue.lock().unwrap().pop_front() else {
                    return;
                };
                let lease = match pool.acquire(opts.cell_backend_wait) {
                    Ok(l) => l,
                    Err(e) => return fail(e.context(format!("cell {}", c.label()))),
                };
                let i = lease.index();
                let (url, simulated, backend_kind) = {
                    let mut b = lease.backend();
                    if opts.fresh_backend {
                        if let Err(e) = b.refresh(&p.models) {
                            return fail(e);
                        }
                    }
                    (b.url.clone(), b.simulated, b.kind)
                };
                let lost = || pool.lost(i);
                let env = CellEnv {
                    run_dir: &run_dir,
                    run_id: &run_id,
                    pack: &p.pack,
                    backend_label: pool.label(i),
                    backend_url: &url,
                    simulated,
                    backend_kind,
                    config: &opts.cell,
                    backend_lost: Some(&lost),
                };
                progress.start_cell(&c.label());
                let task = p.pack.get(&c.task).expect("validated");
                let arm = &arm_map[&c.arm];
                let mut a = first;
                loop {
                    match attempt::run_attempt(&env, arm, task, &c, a) {
                        Ok(r) => {
                            let last = !r.needs_retry() || a >= opts.cell.retries;
                            progress.attempt(&r.record, last);
                            overheads.lock().unwrap().push(r.overhead);
                            *attempts_run.lock().unwrap() += 1;
                            if last {
                                break;
                            }
                            a += 1;
                        }
                        Err(e) => {
                            // the backend broke the attempt: not the arm's failure, rerun elsewhere
                            let why = match e.downcast_ref::<pool::BackendLost>() {
                                Some(l) => Some(l.reason.clone()),
                                None => pool.lost(i),
                            };
                            let Some(why) = why else {
                                return fail(e.context(format!("cell {}", c.label())));
                            };
                            pool.mark_down(i, &why);
                            if let Err(e2) = pool::record_lost(&env, &c, a, &e, &why) {
                                return fail(e2);
                            }
                            if losses + 1 >= pool::MAX_BACKEND_LOSSES {
                                return fail(anyhow::anyhow!(
                                    "cell {}: {} backends stopped answering during it ({why}); stopping",
                                    c.label(),
                                    losses + 1
                                ));
                            }
                            queue.lock().unwrap().push_front((c.clone(), a, losses + 1));
                            break;
                        }
                    }
                }
            });
        }
    });
    progress.finish();
    if let Some(e) = first_error.lock().unwrap().take() {
        return Err(e);
    }
    let rows = resume::read_rows_lenient(&run_dir.join("cells.csv"))?;
    let arm_names: Vec<String> = p.arms.iter().map(|a| a.name.clone()).collect();
    let table = progress::summary_table(&rows, &arm_names, &p.models);
    let mut md = String::new();
    if simulated_run {
        md.push_str("**SIMULATED backend — these scores are not results of real models.**\n\n");
    }
    md.push_str(&format!(
        "# Run {run_id}\n\nMean score (latest attempt per cell) by arm × model.\n\n{table}"
    ));
    lrab_util::write_atomic(&run_dir.join("summary.md"), md.as_bytes())?;
    let ov = overheads.lock().unwrap();
    let mean_overhead = (!ov.is_empty()).then(|| ov.iter().sum::<Duration>() / ov.len() as u32);
    let attempts_run = *attempts_run.lock().unwrap();
    Ok(RunSummary {
        run_dir,
        simulated: simulated_run,
        attempts_run,
        cells_total: p.cells.len(),
        table,
        mean_overhead,
    })
}
