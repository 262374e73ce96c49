//! `lrab score --task ID [--seed N] <workdir>`: score a workdir and write `score.json` into it.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use lrab_records::ScoreReport;

use super::{load_task, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Task id.
    #[arg(long)]
    pub task: String,
    /// Seed the workdir was materialized with (generated tasks).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Task pack folder (default: $LRAB_PACK, else the built-in pack).
    #[arg(long)]
    pub pack: Option<PathBuf>,
    /// Do not write score.json.
    #[arg(long)]
    pub no_write: bool,
    pub workdir: PathBuf,
}

pub fn run(a: Args) -> Result<Exit> {
    if !a.workdir.is_dir() {
        bail!(
            "workdir {} does not exist or is not a folder",
            a.workdir.display()
        );
    }
    let (pack, task) = load_task(a.pack.as_deref(), &a.task)?;
    let checks = lrab_tasks::resolve_checks(&task, a.seed)?;
    // A check whose program is missing here must not read as the workdir's failure: say what
    // is missing and the fix (as `lrab run` does) before scoring anything.
    refuse_if_lacking(&task, &checks, &a.workdir)?;
    // Standalone scoring knows no attempt: treat it as a clean exit of unknown duration.
    let mut inputs = input_names(&pack, &task, a.seed);
    inputs.push("score.json".into());
    let end = lrab_scorer::Ending {
        timed_out: false,
        exit_code: Some(0),
        wall_seconds: f64::INFINITY,
        read_task_file: false,
    };
    let pause = lrab_scorer::ENVIRONMENT_RETRY_PAUSE;
    let rep = lrab_scorer::score_attempt(&task, &checks, &a.workdir, &inputs, &end, pause)?;
    print_breakdown(&rep);
    lrab_util::outln!("failure_mode: {}", rep.failure_mode);
    if !a.no_write {
        lrab_records::write_score_json(&a.workdir, &rep)
            .with_context(|| format!("writing {}/score.json", a.workdir.display()))?;
        eprintln!("wrote {}", a.workdir.join("score.json").display());
    }
    Ok(Exit::Ok)
}

/// An error naming every program or Python module the task's checks run that this machine
/// lacks (looked up from the workdir, as the checks will run), with the fix.
fn refuse_if_lacking(
    task: &lrab_tasks::Task,
    checks: &lrab_tasks::ResolvedChecks,
    workdir: &std::path::Path,
) -> Result<()> {
    let lacking = lrab_scorer::missing_in(
        &lrab_scorer::needs_of_checks(checks.milestones.iter().chain(&checks.finals)),
        workdir,
    );
    if lacking.is_empty() {
        return Ok(());
    }
    let who = format!("the checks of {}", task.spec.id);
    let lines: Vec<String> = lacking
        .iter()
        .map(|m| format!("  {}", m.line(&who)))
        .collect();
    bail!(
        "cannot score {} on this machine (nothing was written):\n{}",
        task.spec.id,
        lines.join("\n")
    )
}

/// Workdir-relative names of what materialize writes (inputs, generated files, the prompt).
fn input_names(pack: &lrab_tasks::Pack, task: &lrab_tasks::Task, seed: Option<u64>) -> Vec<String> {
    let mut out = vec![lrab_tasks::TASK_INPUT.to_string()];
    for i in &task.spec.inputs {
        let base = lrab_tasks::basename(i).to_string();
        let src = pack.fixtures_dir().join(i);
        if src.is_dir() {
            for f in lrab_tasks::walk_files(&src).unwrap_or_default() {
                out.push(format!("{base}/{f}"));
            }
        } else {
            out.push(base);
        }
    }
    if let Ok(Some((_, g))) = lrab_tasks::generated(task, seed) {
        out.extend(g.files.into_keys());
    }
    out
}

/// Human-readable breakdown of a score.
pub fn print_breakdown(s: &ScoreReport) {
    lrab_util::outln!("task {} (tier {}, {})", s.task_id, s.tier, s.domain);
    for (name, group, details) in [
        ("milestones", s.milestone_score, &s.milestone_details),
        ("finals", s.final_score, &s.final_details),
    ] {
        let group = group.unwrap_or_default();
        lrab_util::outln!("{name}: {group:.3}");
        for d in details {
            let mark = if d.ok { "ok " } else { "NO " };
            lrab_util::outln!(
                "  {mark} {:.3}  {:<16} {:<28} {}",
                d.score,
                d.check,
                d.artifact,
                d.detail
            );
        }
    }
    lrab_util::outln!("total: {:.3}", s.total.unwrap_or_default());
}
