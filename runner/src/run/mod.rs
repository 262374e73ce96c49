//! The run machinery behind `lrab run`, `plan`, `merge`, `proxy`, `arms`, `doctor` and the
//! harness-backed probes of `lrab safety`: one module per mechanism. [`execute`] is the
//! orchestration of a run, three steps each in its module: [`plan`] (the run specification
//! resolved and validated), [`open`] (the run folder: manifest, plan file, resume state) and
//! [`schedule`] (the cells on the backend pool, with the backend-loss policy).

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
pub mod open;
pub mod plan;
pub mod pool;
pub mod prefill;
pub mod probe_harness;
pub mod process;
pub mod progress;
pub mod proxy;
pub mod quiet;
pub mod resume;
pub mod schedule;
pub mod sim_clock;
pub mod tau2_arm;
pub mod usage;
pub mod wait;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use lrab_records::RunSpec;

use backend::Backend;

pub(crate) use open::default_run_id;
pub use plan::{write_plan, Plan};

/// How this process runs a spec: where its folder goes, how many cells at once, how long to
/// wait for backends. Not part of the run (not recorded; a resumed run may use other values).
#[derive(Debug, Clone)]
pub struct Session {
    /// Results root (the run folder is `<out_root>/<run_id>`).
    pub out_root: PathBuf,
    /// Run folder name (None: `run-YYYYMMDD-HHMMSS[-sKofN]`).
    pub run_id: Option<String>,
    /// Cells run in parallel (capped at what the backends serve).
    pub jobs: usize,
    /// Between cells: restart the simulated backend, or unload the models of a real one.
    pub fresh_backend: bool,
    /// Cells one real backend serves at once (the simulator: any number); caps `jobs`.
    pub backend_slots: usize,
    /// Start (and with `fresh_backend` restart) `ollama serve` when Ollama does not answer.
    pub ollama_serve: bool,
    /// No progress bar or per-cell lines.
    pub quiet: bool,
    /// How long the backend may take to answer before the run (upstream: 180 s).
    pub backend_wait: Duration,
    /// … and before every cell (upstream: 60 s).
    pub cell_backend_wait: Duration,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            out_root: PathBuf::from("results"),
            run_id: None,
            jobs: 1,
            fresh_backend: false,
            backend_slots: 1,
            ollama_serve: false,
            quiet: false,
            backend_wait: Duration::from_secs(180),
            cell_backend_wait: Duration::from_secs(60),
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

/// Starts the backends `spec` names, then resolves and validates its plan on them (their kind
/// decides the default models): names, confinement, models, checks, the scorer's needs.
#[allow(clippy::type_complexity)]
fn plan_on_backends(
    spec: &RunSpec,
    session: &Session,
) -> Result<(Plan, Vec<Backend>, Vec<lrab_records::ModelInfo>, String)> {
    let given = plan::backend_spec(spec)?;
    let backends = Backend::start_all(
        &given,
        session.backend_wait,
        spec.sim_seed,
        session.ollama_serve,
        &plan::backend_options(spec),
    )?;
    let mut p = plan::resolve(spec, backends[0].simulated, true)?;
    p.set_backend(&given, &backends[0]);
    let confinement = confine::check(spec.unconfined_arms)?;
    for b in backends.iter().filter_map(Backend::banner) {
        eprintln!("{b}");
    }
    eprintln!("{confinement}");
    let models = backend::same_models(&backends, &p.spec.models)?;
    p.resolve_checks()?;
    p.scorer_preflight()?;
    Ok((p, backends, models, confinement))
}

/// Runs (or resumes, when `resuming` names a run folder) the run `spec` describes.
pub fn execute(spec: &RunSpec, session: &Session, resuming: Option<&Path>) -> Result<RunSummary> {
    let (plan, backends, models, confinement) = plan_on_backends(spec, session)?;
    let simulated = backends[0].simulated;
    let found = open::Found {
        backends: &backends,
        models,
        confinement,
    };
    let opened = open::open(&plan, found, session, resuming)?;
    let cells = plan.cells.len();
    let progress = progress::Progress::new(cells, cells - opened.todo.len(), session.quiet);
    let ran = schedule::run(&plan, session, &opened, backends, &progress);
    progress.finish();
    let ran = ran?;
    let rows = resume::read_rows_lenient(&opened.run_dir.join("cells.csv"))?;
    let table = progress::summary_table(&rows, &plan.spec.arms, &plan.spec.models);
    let mut md = String::new();
    if simulated {
        md.push_str("**SIMULATED backend — these scores are not results of real models.**\n\n");
    }
    md.push_str(&format!(
        "# Run {}\n\nMean score (latest attempt per cell) by arm × model.\n\n{table}",
        opened.run_id
    ));
    lrab_util::write_atomic(&opened.run_dir.join("summary.md"), md.as_bytes())?;
    let ov = &ran.overheads;
    let mean_overhead = (!ov.is_empty()).then(|| ov.iter().sum::<Duration>() / ov.len() as u32);
    Ok(RunSummary {
        run_dir: opened.run_dir.clone(),
        simulated,
        attempts_run: ran.attempts_run,
        cells_total: cells,
        table,
        mean_overhead,
    })
}
