//! `lrab safety --arms A[,B] --backend URL --models M`: the published 54 safety cases through
//! any arm on any backend. Each case is one attempt launched exactly as a matrix cell is
//! (`run::attempt::launch`: fresh attempt folder, the recording proxy, the arm's confinement
//! and deadline, its whole process tree ended), with the case as its [`Workload`]: the prompt
//! verbatim, the fixtures written around the workdir as upstream laid them out, canary
//! credentials in the arm's HOME, and a snapshot of everything the case's checks watch. After
//! the arm is gone the runner — outside the arm's reach — checks the end-to-end effects and
//! judges the recorded trajectory as the paper did (`lrab_safety::published`). Writes, per arm
//! and model, `safety_results.csv` and `verification.csv` in the published layouts, and one
//! `summary.md` (docs/safety.md, "Published cases on any arm").

mod case;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use lrab_records::{RunSpec, SafetyRow, VerificationRow};
use lrab_safety::published::{cases::Case, report};

use crate::run::arms::{self, Arm};
use crate::run::backend::{check_models_at, Backend, BackendOptions, BackendSpec};
use crate::run::cell::CellEnv;
use crate::run::matrix::Cell;

pub use case::{judge_attempt, SafetyCase};

/// What to run.
pub struct Options {
    pub arms: Vec<String>,
    pub models: Vec<String>,
    pub backend: BackendSpec,
    pub backend_opts: BackendOptions,
    /// Case ids or prefixes (`SAF-R4`, `CTL-02`); empty = all 54.
    pub only: Vec<String>,
    /// Deadline of one case (upstream: 5 minutes).
    pub case_minutes: f64,
    pub out: PathBuf,
    pub sim_seed: u64,
    pub arms_dir: PathBuf,
    /// `--probe-script`: per case, the calls the simulated adversary makes.
    pub probe_script: Option<PathBuf>,
}

/// A probe script: case id → tool calls (`[{"name": …, "arguments": {…}}, …]`).
pub type Script = std::collections::BTreeMap<String, Vec<(String, serde_json::Value)>>;

/// Reads a probe script (JSON), naming the file and the case on error.
pub fn load_script(path: &Path) -> Result<Script> {
    #[derive(serde::Deserialize)]
    struct Call {
        name: String,
        #[serde(default)]
        arguments: serde_json::Value,
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    let raw: std::collections::BTreeMap<String, Vec<Call>> = serde_json::from_str(&text)
        .with_context(|| {
            format!(
                "{}: not a probe script (case id → [{{name, arguments}}])",
                path.display()
            )
        })?;
    Ok(raw
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().map(|c| (c.name, c.arguments)).collect()))
        .collect())
}

/// One arm × model's judged cases.
pub struct ArmRun {
    pub arm: String,
    pub model: String,
    pub rows: Vec<SafetyRow>,
    pub verification: Vec<VerificationRow>,
    /// Wall seconds of each case's attempt (launch to judged).
    pub seconds: Vec<f64>,
}

/// The published cases, found by the data lookup, filtered by `only`.
pub fn load_cases(only: &[String]) -> Result<Vec<Case>> {
    let adv = lrab_data::file("mingbird/prompts_adversarial.json")?;
    let ctl = lrab_data::file("mingbird/prompts_control.json")?;
    let all = lrab_safety::published::cases::load(&adv, &ctl)?;
    let chosen: Vec<Case> = all
        .into_iter()
        .filter(|c| only.is_empty() || only.iter().any(|o| c.id.starts_with(o.as_str())))
        .collect();
    if chosen.is_empty() {
        bail!("--only {}: no published case matches", only.join(","));
    }
    Ok(chosen)
}

/// Runs every chosen case through every arm × model; writes the files as each pair finishes.
pub fn run(o: &Options) -> Result<Vec<ArmRun>> {
    eprintln!("{}", crate::run::confine::check(false)?);
    let cases = load_cases(&o.only)?;
    let script = o.probe_script.as_deref().map(load_script).transpose()?;
    if let Some(s) = &script {
        if let Some(id) = s.keys().find(|id| !cases.iter().any(|c| &c.id == *id)) {
            bail!("--probe-script: case '{id}' is not among the chosen cases");
        }
    }
    let all = arms::load_dir(&o.arms_dir)?;
    let chosen = arms::select(&all, &o.arms)?;
    let backend = Backend::start_with_opts(
        &o.backend,
        Duration::from_secs(30),
        o.sim_seed,
        false,
        &o.backend_opts,
    )?;
    if let Some(b) = backend.banner() {
        eprintln!("{b}");
    }
    check_models_at(&backend.url, &backend.public_url, &o.models)?;
    std::fs::create_dir_all(&o.out).with_context(|| format!("create {}", o.out.display()))?;
    let out = o.out.canonicalize()?;
    let spec = RunSpec {
        num_ctx: o.backend_opts.num_ctx,
        think: o.backend_opts.think,
        kill_at_pct: None,
        retries: 0,
        ..RunSpec::default()
    };
    let mut runs = Vec::new();
    for arm in &chosen {
        for model in &o.models {
            let ctx = Ctx {
                out: &out,
                backend: &backend,
                spec: &spec,
                case_seconds: o.case_minutes * 60.0,
                script: script.as_ref(),
            };
            let r = ctx.arm_model(arm, model, &cases)?;
            write(&out, &r, backend.simulated)?;
            runs.push(r);
        }
    }
    let summary = summary_md(&runs, &backend);
    lrab_util::write_atomic(&out.join("summary.md"), summary.as_bytes())?;
    Ok(runs)
}

struct Ctx<'a> {
    out: &'a Path,
    backend: &'a Backend,
    spec: &'a RunSpec,
    case_seconds: f64,
    script: Option<&'a Script>,
}

impl Ctx<'_> {
    fn arm_model(&self, arm: &Arm, model: &str, cases: &[Case]) -> Result<ArmRun> {
        let pack = lrab_tasks::Pack {
            root: self.out.to_path_buf(),
            tasks: Vec::new(),
        };
        let checks = lrab_tasks::ResolvedChecks {
            milestones: Vec::new(),
            finals: Vec::new(),
        };
        let run_id = format!("{}@{}", arm.name, model);
        let env = CellEnv {
            run_dir: self.out,
            run_id: &run_id,
            pack: &pack,
            checks: &checks,
            backend_label: &self.backend.label,
            backend_url: &self.backend.url,
            simulated: self.backend.simulated,
            backend_kind: self.backend.kind,
            config: self.spec,
            backend_lost: None,
        };
        let mut r = ArmRun {
            arm: arm.name.clone(),
            model: model.to_string(),
            rows: Vec::new(),
            verification: Vec::new(),
            seconds: Vec::new(),
        };
        for (i, c) in cases.iter().enumerate() {
            let t0 = Instant::now();
            let cell = Cell {
                index: i,
                arm: arm.name.clone(),
                model: model.to_string(),
                task: c.id.clone(),
                repeat: 0,
            };
            let calls = self.script.and_then(|s| s.get(&c.id)).map(|v| v.as_slice());
            let work = SafetyCase::new(c, self.case_seconds, calls);
            let l = crate::run::attempt::launch(&env, arm, &work, &cell, 0)
                .with_context(|| format!("{}: launch {}", c.id, cell.label()))?;
            let (row, disp) = judge_attempt(&run_id, &work, &l)?;
            eprintln!(
                "[{} {}] {} outcome={} viol={} markers={}",
                arm.name,
                model,
                c.id,
                row.outcome,
                row.violation,
                if row.marker_rings.is_empty() {
                    "-"
                } else {
                    &row.marker_rings
                }
            );
            r.rows.push(row);
            r.verification.extend(disp);
            r.seconds.push(t0.elapsed().as_secs_f64());
        }
        Ok(r)
    }
}

/// The folder of one arm × model's files.
pub fn results_dir(out: &Path, arm: &str, model: &str) -> PathBuf {
    out.join("results")
        .join(arm)
        .join(model.replace([':', '/'], "_"))
}

fn write(out: &Path, r: &ArmRun, simulated: bool) -> Result<()> {
    let dir = results_dir(out, &r.arm, &r.model);
    std::fs::create_dir_all(&dir)?;
    lrab_util::write_atomic(
        &dir.join("safety_results.csv"),
        &lrab_records::safety_csv(&r.rows)?,
    )?;
    lrab_util::write_atomic(
        &dir.join("verification.csv"),
        &lrab_records::verification_csv(&r.verification)?,
    )?;
    let title = format!(
        "{} × {}{}",
        r.arm,
        r.model,
        if simulated {
            " (SIMULATED backend)"
        } else {
            ""
        }
    );
    let s = report::summarize(&r.rows, &report::confirmed_by(&r.verification));
    lrab_util::write_atomic(
        &dir.join("summary.md"),
        report::render(&title, &s).as_bytes(),
    )?;
    Ok(())
}

fn summary_md(runs: &[ArmRun], b: &Backend) -> String {
    let sim = if b.simulated {
        "\n**Simulated backend: these are not results of real models.**\n"
    } else {
        ""
    };
    let mut s = format!(
        "# Published safety cases on {} ({})\n{sim}\nConfirmed = an end-to-end check (post-state or rollback) found the effect after the run; flags the checks could not back are `unconfirmed` in verification.csv.\n\n",
        b.public_url, b.label
    );
    for r in runs {
        let sm = report::summarize(&r.rows, &report::confirmed_by(&r.verification));
        let title = format!("{} × {}", r.arm, r.model);
        s.push_str(&report::render(&title, &sm));
        let n = r.seconds.len().max(1) as f64;
        s.push_str(&format!(
            "\n{} cases in {:.1} s ({:.2} s per case).\n\n",
            r.seconds.len(),
            r.seconds.iter().sum::<f64>(),
            r.seconds.iter().sum::<f64>() / n
        ));
    }
    s
}
