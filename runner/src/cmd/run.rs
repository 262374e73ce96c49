//! `lrab run`: run (or resume) a matrix of arms × models × tasks × repeats into
//! `results/<run-id>/`. See docs/runner.md.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;

use super::Exit;
use crate::run::backend::BackendSpec;
use crate::run::cell::CellConfig;
use crate::run::matrix::{split_list, MatrixFile, Shard};
use crate::run::quiet::QuietConfig;
use crate::run::{self, RunOptions};

/// The matrix flags shared by `run` and `plan`.
#[derive(Parser, Debug, Clone, Default)]
pub struct MatrixArgs {
    /// A matrix file (TOML); flags given on the command line override its keys.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Comma list of arm names, or a group: `paper` (the published arms: mingbird, goose,
    /// opencode, agent-mini; `upstream` is the same), `paper+harness` (ours beside them) or `all`;
    /// in a group (and by default: all) arms that are not installed are left out with a note.
    #[arg(long)]
    pub arms: Option<String>,
    /// Comma list of model tags (default: the backend's four; sim-2b,sim-4b,sim-12b,sim-35b on sim).
    #[arg(long)]
    pub models: Option<String>,
    /// Comma list of task ids (default: every task of the pack).
    #[arg(long)]
    pub tasks: Option<String>,
    /// Repeats of every (arm, model, task).
    #[arg(long)]
    pub repeats: Option<u32>,
    /// ollama, sim, auto (Ollama if it answers, else sim), a URL, or a comma list of URLs (one
    /// Ollama per GPU: cells go to the healthy ones, see docs/runner.md).
    #[arg(long)]
    pub backend: Option<String>,
    /// The API the --backend URLs speak: auto (Ollama when /api/tags answers, else OpenAI when
    /// /v1/models does), ollama, or openai (vLLM, llama.cpp, LM Studio, hosted APIs).
    #[arg(long, default_value = "auto")]
    pub backend_api: lrab_records::BackendApi,
    /// Environment variable holding an OpenAI backend's API key (never recorded).
    #[arg(long, default_value = crate::run::backend_api::DEFAULT_KEY_ENV)]
    pub backend_key_env: String,
    /// Run only slice k of n (cells whose plan index ≡ k-1 mod n).
    // Hyphen values reach the parser, so `--shard -1/4` is rejected by name like `0/4`.
    #[arg(long, allow_hyphen_values = true)]
    pub shard: Option<String>,
    /// Task pack folder (default: LRAB_PACK or the built-in pack).
    #[arg(long)]
    pub pack: Option<PathBuf>,
    /// Folder of arm files (default: LRAB_ARMS or the suite's arms/).
    #[arg(long)]
    pub arms_dir: Option<PathBuf>,
    /// Cell order; `lrab ablate` sets it to interleaved (no flag of its own).
    #[arg(skip)]
    pub order: crate::run::matrix::Order,
}

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Budget of WF tasks in minutes (default: the task's, 90).
    #[arg(long)]
    pub budget_minutes: Option<f64>,
    /// Budget of LH tasks in minutes (default: the task's, 180).
    #[arg(long)]
    pub budget_minutes_lh: Option<f64>,
    /// Kill-and-resume point for every task in % of its budget (default: the task's; 0 = off).
    #[arg(long)]
    pub kill_at_pct: Option<u8>,
    /// Extra attempts for timeouts and missing scores.
    #[arg(long)]
    pub retries: Option<u32>,
    /// Context length pinned by the proxy and given to the arms.
    #[arg(long)]
    pub num_ctx: Option<u64>,
    /// Thinking on every model request: off (the paper's setting), on, or model (the
    /// server's default); pinned by the proxy the way the backend's API expects it.
    #[arg(long)]
    pub think: Option<lrab_records::ThinkSetting>,
    /// Results root.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Run folder name (default: run-YYYYMMDD-HHMMSS[-sKofN]).
    #[arg(long)]
    pub run_id: Option<String>,
    /// Continue the run in this folder (matrix and knobs come from its manifest).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Cells run in parallel (each arm process is separate; default 1 like upstream); capped
    /// at what the backends serve (--backend-slots per real backend).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Cells one real backend serves at once (Ollama's OLLAMA_NUM_PARALLEL is 1 by default;
    /// the simulator serves any number).
    #[arg(long, default_value_t = 1)]
    pub backend_slots: usize,
    /// Between cells: restart the simulated backend, or unload the models of a real one.
    #[arg(long)]
    pub fresh_backend: bool,
    /// With --backend ollama: start `ollama serve` (OLLAMA_BIN or PATH) when none answers; it is
    /// restarted by --fresh-backend and stopped at the end of the run.
    #[arg(long)]
    pub ollama_serve: bool,
    /// Seconds the backend may take to answer before the run.
    #[arg(long, default_value_t = 180)]
    pub backend_wait_secs: u64,
    /// Seconds it may take to answer before each cell.
    #[arg(long, default_value_t = 60)]
    pub cell_backend_wait_secs: u64,
    /// Quiet-wait poll interval (ms).
    #[arg(long, default_value_t = 5000)]
    pub quiet_poll_ms: u64,
    /// Quiet-wait: unchanged for this long (ms).
    #[arg(long, default_value_t = 20000)]
    pub quiet_stable_ms: u64,
    /// Quiet-wait: at most this long (ms).
    #[arg(long, default_value_t = 180000)]
    pub quiet_max_ms: u64,
    /// SIGTERM → SIGKILL grace at the deadline (ms).
    #[arg(long, default_value_t = 5000)]
    pub grace_ms: u64,
    /// Seed of the simulated backend.
    #[arg(long)]
    pub seed: Option<u64>,
    /// No progress bar or per-cell lines.
    #[arg(long)]
    pub no_progress: bool,
    /// Launch the arms without kernel confinement (writes, reads and connections anywhere the
    /// user can); recorded in the manifest and in every cell's score.json. Without it, a
    /// machine that cannot confine arms refuses to run.
    #[arg(long)]
    pub unconfined_arms: bool,
}

/// Merged matrix file + flags → options (without the run knobs).
pub fn matrix_options(m: &MatrixArgs) -> Result<(RunOptions, MatrixFile)> {
    let file = match &m.config {
        Some(p) => MatrixFile::load(p)?,
        None => MatrixFile::default(),
    };
    let list = |flag: &Option<String>, key: &Option<Vec<String>>| {
        flag.as_deref().map(split_list).or_else(|| key.clone())
    };
    let backend: BackendSpec = m
        .backend
        .clone()
        .or(file.backend.clone())
        .unwrap_or_else(|| "auto".into())
        .parse()
        .map_err(anyhow::Error::msg)?;
    let shard: Option<Shard> = m
        .shard
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let opts = RunOptions {
        arms_dir: m.arms_dir.clone().unwrap_or_else(run::arms::default_dir),
        pack_dir: super::pack_dir(m.pack.as_deref()),
        arms: list(&m.arms, &file.arms),
        models: list(&m.models, &file.models),
        tasks: list(&m.tasks, &file.tasks),
        repeats: m.repeats.or(file.repeats).unwrap_or(1),
        backend,
        backend_wait: Duration::from_secs(180),
        cell_backend_wait: Duration::from_secs(60),
        cell: CellConfig::default(),
        out_root: PathBuf::from("results"),
        run_id: None,
        shard,
        jobs: file.jobs.unwrap_or(1),
        fresh_backend: false,
        backend_slots: 1,
        ollama_serve: false,
        quiet: false,
        sim_seed: file.seed.unwrap_or(0),
        order: m.order,
        backend_api: m.backend_api,
        backend_key_env: m.backend_key_env.clone(),
    };
    Ok((opts, file))
}

pub fn run(a: Args) -> Result<Exit> {
    let ms = Duration::from_millis;
    let mut opts = if let Some(dir) = &a.resume {
        let m = run::resume::read_manifest(dir)?;
        let root = dir.parent().map(PathBuf::from).unwrap_or_default();
        run::options_from_manifest(&m, &root, a.no_progress)?
    } else {
        let (mut o, file) = matrix_options(&a.matrix)?;
        o.cell = CellConfig {
            budget_minutes: a.budget_minutes.or(file.budget_minutes),
            budget_minutes_lh: a.budget_minutes_lh.or(file.budget_minutes_lh),
            kill_at_pct: a.kill_at_pct,
            quiet: QuietConfig {
                poll: ms(a.quiet_poll_ms),
                stable: ms(a.quiet_stable_ms),
                max: ms(a.quiet_max_ms),
            },
            grace: ms(a.grace_ms),
            retries: a.retries.or(file.retries).unwrap_or(1),
            num_ctx: a.num_ctx.or(file.num_ctx).unwrap_or(32768),
            unconfined_arms: a.unconfined_arms,
            think: a.think.unwrap_or_default(),
        };
        o.out_root = a.out.clone();
        o.run_id = a.run_id.clone();
        if let Some(s) = a.seed {
            o.sim_seed = s;
        }
        o
    };
    for b in [a.budget_minutes, a.budget_minutes_lh]
        .into_iter()
        .flatten()
    {
        if !(b > 0.0 && b.is_finite()) {
            bail!("budgets must be positive minutes (got {b})");
        }
    }
    if let Some(j) = a.jobs {
        opts.jobs = j;
    }
    // on --resume too: the cells this session runs are unconfined (each score.json says so)
    opts.cell.unconfined_arms |= a.unconfined_arms;
    opts.fresh_backend = a.fresh_backend;
    if a.backend_slots == 0 {
        bail!("--backend-slots must be at least 1");
    }
    opts.backend_slots = a.backend_slots;
    opts.ollama_serve = a.ollama_serve;
    opts.quiet = a.no_progress;
    opts.backend_wait = Duration::from_secs(a.backend_wait_secs);
    opts.cell_backend_wait = Duration::from_secs(a.cell_backend_wait_secs);
    let s = run::execute(&opts, a.resume.as_deref())?;
    if s.simulated {
        lrab_util::outln!("*** SIMULATED backend: these scores are NOT results of real models ***");
    }
    lrab_util::outln!("{}", s.table);
    lrab_util::outln!(
        "{} attempts run; {} cells in the plan{}",
        s.attempts_run,
        s.cells_total,
        s.mean_overhead
            .map(|d| format!("; mean runner overhead {:.3} s/attempt", d.as_secs_f64()))
            .unwrap_or_default()
    );
    lrab_util::outln!("results: {}", s.run_dir.display());
    lrab_util::outln!("report: {}", report(&s.run_dir).display());
    Ok(Exit::Ok)
}

/// Writes the full analysis (report.md, report.html, figures) of the run into `<run>/report/`;
/// falls back to the run's summary.md, with the reason, when the analysis cannot be made.
fn report(run_dir: &std::path::Path) -> std::path::PathBuf {
    let out = run_dir.join("report");
    let mut args = lrab_analysis::AnalyzeArgs::new(vec![run_dir.join("cells.csv")], out.clone());
    args.quiet = true;
    match lrab_analysis::run(&args) {
        Ok(_) => out.join("report.md"),
        Err(e) => {
            eprintln!(
                "note: no full report for this run ({}); see the summary instead",
                lrab_util::error_chain(&e)
            );
            run_dir.join("summary.md")
        }
    }
}
