//! `lrab run`: run (or resume) a matrix of arms × models × tasks × repeats into
//! `results/<run-id>/`. See docs/runner.md.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;

use lrab_records::RunSpec;

use super::Exit;
use crate::run::matrix::{split_list, MatrixFile};
use crate::run::{self, Session};

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
    /// Budget of the other (WF, tiers 1–3) tasks in minutes (default: the task's, 90).
    #[arg(long)]
    pub budget_minutes: Option<f64>,
    /// Budget of long-horizon (tier 4, LH) tasks in minutes (default: the task's, 180).
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
    #[arg(long, default_value_os_t = Session::default().out_root)]
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
    #[arg(long, default_value_t = Session::default().backend_slots)]
    pub backend_slots: usize,
    /// Between cells: restart the simulated backend, or unload the models of a real one.
    #[arg(long)]
    pub fresh_backend: bool,
    /// With --backend ollama: start `ollama serve` (OLLAMA_BIN or PATH) when none answers; it is
    /// restarted by --fresh-backend and stopped at the end of the run.
    #[arg(long)]
    pub ollama_serve: bool,
    /// Seconds the backend may take to answer before the run.
    #[arg(long, default_value_t = Session::default().backend_wait.as_secs())]
    pub backend_wait_secs: u64,
    /// Seconds it may take to answer before each cell.
    #[arg(long, default_value_t = Session::default().cell_backend_wait.as_secs())]
    pub cell_backend_wait_secs: u64,
    /// Quiet-wait poll interval (ms).
    #[arg(long, default_value_t = RunSpec::default().quiet_poll_ms)]
    pub quiet_poll_ms: u64,
    /// Quiet-wait: unchanged for this long (ms).
    #[arg(long, default_value_t = RunSpec::default().quiet_stable_ms)]
    pub quiet_stable_ms: u64,
    /// Quiet-wait: at most this long (ms).
    #[arg(long, default_value_t = RunSpec::default().quiet_max_ms)]
    pub quiet_max_ms: u64,
    /// SIGTERM → SIGKILL grace at the deadline (ms).
    #[arg(long, default_value_t = RunSpec::default().grace_ms)]
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

impl MatrixArgs {
    /// The run specification of the matrix file and these flags (flags override the file's
    /// keys; what neither gives keeps [`RunSpec::default`]), and the file.
    pub fn spec(&self) -> Result<(RunSpec, MatrixFile)> {
        let file = match &self.config {
            Some(p) => MatrixFile::load(p)?,
            None => MatrixFile::default(),
        };
        let list = |flag: &Option<String>, key: &Option<Vec<String>>| {
            (flag.as_deref().map(split_list).or_else(|| key.clone())).unwrap_or_default()
        };
        let path = |p: &Option<PathBuf>| {
            p.as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let d = RunSpec::default();
        let spec = RunSpec {
            arms: list(&self.arms, &file.arms),
            models: list(&self.models, &file.models),
            tasks: list(&self.tasks, &file.tasks),
            repeats: self.repeats.or(file.repeats).unwrap_or(d.repeats),
            shard: self.shard.clone(),
            backend: (self.backend.clone().or(file.backend.clone())).unwrap_or(d.backend),
            budget_minutes: file.budget_minutes,
            budget_minutes_lh: file.budget_minutes_lh,
            retries: file.retries.unwrap_or(d.retries),
            num_ctx: file.num_ctx.unwrap_or(d.num_ctx),
            sim_seed: file.seed.unwrap_or(d.sim_seed),
            pack: path(&self.pack),
            arms_dir: path(&self.arms_dir),
            order: self.order,
            backend_api: self.backend_api,
            backend_key_env: Some(self.backend_key_env.clone()),
            ..d
        };
        // a bad backend or shard is an error before anything else is read
        run::plan::backend_spec(&spec)?;
        run::plan::shard(&spec)?;
        Ok((spec, file))
    }
}

impl Args {
    /// The run specification of a new run: the matrix and the knobs of these flags.
    fn spec(&self) -> Result<(RunSpec, MatrixFile)> {
        let (spec, file) = self.matrix.spec()?;
        let spec = RunSpec {
            budget_minutes: self.budget_minutes.or(spec.budget_minutes),
            budget_minutes_lh: self.budget_minutes_lh.or(spec.budget_minutes_lh),
            kill_at_pct: self.kill_at_pct,
            quiet_poll_ms: self.quiet_poll_ms,
            quiet_stable_ms: self.quiet_stable_ms,
            quiet_max_ms: self.quiet_max_ms,
            grace_ms: self.grace_ms,
            retries: self.retries.unwrap_or(spec.retries),
            num_ctx: self.num_ctx.unwrap_or(spec.num_ctx),
            unconfined_arms: self.unconfined_arms,
            think: self.think.unwrap_or(spec.think),
            sim_seed: self.seed.unwrap_or(spec.sim_seed),
            ..spec
        };
        Ok((spec, file))
    }

    /// How this process runs it.
    fn session(&self, file: &MatrixFile) -> Result<Session> {
        if self.backend_slots == 0 {
            bail!("--backend-slots must be at least 1");
        }
        let d = Session::default();
        Ok(Session {
            out_root: self.out.clone(),
            run_id: self.run_id.clone(),
            jobs: self.jobs.or(file.jobs).unwrap_or(d.jobs),
            fresh_backend: self.fresh_backend,
            backend_slots: self.backend_slots,
            ollama_serve: self.ollama_serve,
            quiet: self.no_progress,
            backend_wait: Duration::from_secs(self.backend_wait_secs),
            cell_backend_wait: Duration::from_secs(self.cell_backend_wait_secs),
        })
    }
}

pub fn run(a: Args) -> Result<Exit> {
    let (mut spec, file) = match &a.resume {
        // the spec the run recorded, read back unchanged
        Some(dir) => (
            run::resume::read_manifest(dir)?.matrix,
            MatrixFile::default(),
        ),
        None => a.spec()?,
    };
    for b in [a.budget_minutes, a.budget_minutes_lh]
        .into_iter()
        .flatten()
    {
        if !(b > 0.0 && b.is_finite()) {
            bail!("budgets must be positive minutes (got {b})");
        }
    }
    let session = a.session(&file)?;
    // on --resume too: the cells this session runs are unconfined (each score.json says so)
    spec.unconfined_arms |= a.unconfined_arms;
    let s = run::execute(&spec, &session, a.resume.as_deref())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// Without flags or a matrix file, a run is `RunSpec::default()` (the one home of the
    /// defaults) run by `Session::default()`.
    #[test]
    fn no_flags_give_the_defaults() {
        let a = Args::try_parse_from(["run"]).unwrap();
        let (spec, file) = a.spec().unwrap();
        let key = Some(crate::run::backend_api::DEFAULT_KEY_ENV.to_string());
        let want = RunSpec {
            backend_key_env: key,
            ..RunSpec::default()
        };
        assert_eq!(spec, want);
        let s = a.session(&file).unwrap();
        let d = Session::default();
        assert_eq!(
            (
                s.out_root,
                s.jobs,
                s.backend_slots,
                s.backend_wait,
                s.cell_backend_wait
            ),
            (
                d.out_root,
                d.jobs,
                d.backend_slots,
                d.backend_wait,
                d.cell_backend_wait
            )
        );
    }

    #[test]
    fn flags_override_the_matrix_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("m.toml");
        std::fs::write(
            &f,
            "models = [\"a\"]\nnum_ctx = 8192\nretries = 3\njobs = 2\n",
        )
        .unwrap();
        let path = f.to_str().unwrap();
        let a = Args::try_parse_from(["run", "--config", path, "--num-ctx", "4096"]).unwrap();
        let (spec, file) = a.spec().unwrap();
        assert_eq!((spec.num_ctx, spec.retries), (4096, 3));
        assert_eq!(spec.models, ["a"]);
        assert_eq!(a.session(&file).unwrap().jobs, 2);
    }
}
