//! One published case as an attempt's [`Workload`] (fixtures, canaries and the snapshot made
//! before the arm starts), and its judging once the attempt's arm is gone.

use std::cell::RefCell;
use std::path::Path;

use anyhow::{Context, Result};
use lrab_records::{CallOutcome, Event, SafetyRow, VerificationRow};
use lrab_safety::published::cases::Case;
use lrab_safety::published::effects::{self, Snapshot};
use lrab_safety::published::fixtures::{self, Places};
use lrab_safety::published::judge;
use lrab_safety::published::report::{self, Ending};
use lrab_tasks::{Materialized, ResolvedChecks};

use crate::run::attempt::{Launched, Workload};
use crate::run::cell::CellEnv;

/// A case and, once materialized, where its bases are and what they held.
pub struct SafetyCase<'a> {
    pub case: &'a Case,
    /// The case's prompt, with the scripted adversary's block when one was given.
    prompt: String,
    seconds: f64,
    prepared: RefCell<Option<(Places, Snapshot)>>,
}

impl<'a> SafetyCase<'a> {
    /// `script`: tool calls the simulated adversary (`sim-adversary`) is to make, appended to
    /// the prompt as its script block (`--probe-script`).
    pub fn new(
        case: &'a Case,
        seconds: f64,
        script: Option<&[(String, serde_json::Value)]>,
    ) -> SafetyCase<'a> {
        let prompt = match script {
            Some(calls) => format!(
                "{}\n\n{}",
                case.prompt,
                lrab_sim::adversary::script_block(calls)
            ),
            None => case.prompt.clone(),
        };
        SafetyCase {
            case,
            prompt,
            seconds,
            prepared: RefCell::new(None),
        }
    }
}

impl Workload for SafetyCase<'_> {
    /// The workdir is `<attempt>/workdir`, so `outside` is the attempt folder (readable by the
    /// confined arm, not writable) and `runroot` the cell folder (neither).
    fn materialize(&self, _env: &CellEnv<'_>, dir: &Path, workdir: &Path) -> Result<Materialized> {
        std::fs::create_dir_all(workdir)?;
        let mut p = Places::around(workdir, &dir.join("home"), &dir.join("tmp"));
        let state = lrab_records::layout::attempt_state(dir);
        p.trash.push(state.join(lrab_records::layout::TRASH));
        p.backups.push(state.join(lrab_records::layout::BACKUPS));
        for d in &self.case.setup.runroot_dirs {
            let at = p.runroot.join(&d.path);
            if at.exists() {
                std::fs::remove_dir_all(&at).with_context(|| format!("remove {}", at.display()))?;
            }
        }
        fixtures::prepare(self.case, &p, &self.prompt).with_context(|| {
            format!(
                "{}: write fixtures around {}",
                self.case.id,
                workdir.display()
            )
        })?;
        let snap = effects::snapshot(self.case, &p);
        *self.prepared.borrow_mut() = Some((p, snap));
        let mut files: Vec<String> = walkdir::WalkDir::new(workdir)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                Some(
                    e.path()
                        .strip_prefix(workdir)
                        .ok()?
                        .to_string_lossy()
                        .into_owned(),
                )
            })
            .collect();
        files.sort();
        Ok(Materialized {
            workdir: workdir.to_path_buf(),
            seed: None,
            files,
            checks: ResolvedChecks {
                milestones: Vec::new(),
                finals: Vec::new(),
            },
        })
    }
    fn prompt(&self) -> String {
        self.prompt.clone()
    }
    fn budget(&self, _cfg: &lrab_records::RunSpec) -> f64 {
        self.seconds
    }
    fn kill_at_pct(&self) -> Option<u8> {
        None
    }
}

/// The rings of the refusals our harness logged (other arms log none).
fn refusal_rings(attempt_dir: &Path) -> Vec<u8> {
    let Some(log) = lrab_records::layout::attempt_events(attempt_dir)
        .and_then(|p| lrab_records::read_events(&p))
    else {
        return Vec::new();
    };
    log.lines
        .iter()
        .filter_map(|l| match &l.event {
            Event::ToolCall(t) => match &t.outcome {
                Some(CallOutcome::Refused(r)) => Some(r.ring),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The arm's own output of every phase (Mingbird prints its markers there too).
fn phase_output(dir: &Path, phases: usize) -> String {
    let mut s = String::new();
    for n in 1..=phases {
        for ext in ["stdout", "stderr"] {
            if let Ok(b) = std::fs::read(dir.join(format!("phase{n}.{ext}"))) {
                s.push_str(&String::from_utf8_lossy(&b));
                s.push('\n');
            }
        }
    }
    s
}

/// Judges a launched case: effects checked now (the arm's tree is gone), the trajectory and
/// output judged; the row and, when flagged, its disposition.
pub fn judge_attempt(
    run_id: &str,
    work: &SafetyCase<'_>,
    l: &Launched,
) -> Result<(SafetyRow, Option<VerificationRow>)> {
    let prepared = work.prepared.borrow();
    let (places, snap) = prepared
        .as_ref()
        .context("the case was launched without its fixtures")?;
    let fx = effects::check(work.case, places, snap);
    let trajectory = lrab_records::read_trajectory(&l.proxy_log).unwrap_or_default();
    let events = judge::tool_events(&trajectory);
    let text = judge::all_text(&trajectory) + &phase_output(&l.dir, l.phases.len());
    let mut j = judge::judge(work.case, &events, &text, &refusal_rings(&l.dir));
    j.dispatch = judge::dispatch(&text, &l.workdir);
    let last = l.last();
    let end = Ending {
        wall_seconds: l.phases.iter().map(|e| e.wall.as_secs_f64()).sum(),
        exit_code: last.code,
        timed_out: last.timed_out,
    };
    // a control passes only when it also completed, which the row decides
    let pass = effects::passes(work.case, places, true);
    let row = report::row(run_id, work.case, &j, &fx, end, pass);
    let disp = report::disposition(&row, &fx);
    Ok((row, disp))
}
