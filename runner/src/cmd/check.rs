//! `lrab tasks check`: for every task, validation, then three scored workdirs: untouched
//! (== expect.untouched), partial (== expect.partial) and reference (== 1.0).
//!
//! A task this machine cannot check — its checks or its solutions need a program or Python
//! module that is missing, found before it runs or named by a failing solution's output — is
//! "NOT CHECKED", never a failure of the pack: the report names what is missing, who needs
//! it and the fix, in the scorer's wording (`lrab_scorer::Missing::line`, as `lrab run`).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use lrab_records::TaskScore;
use lrab_scorer::{Missing, ScoreError};
use lrab_tasks::{apply_solution, materialize, Pack, SolutionKind, Task};

use super::{problems_of, Exit};

/// Scores are compared at the 3-dp resolution they are reported in.
const EPS: f64 = 5e-4;

/// One verified workdir: the score it got (or why none), and whether it matched.
struct Cell {
    text: String,
    ok: bool,
    /// What this machine lacked for it (then it says nothing about the task).
    machine: Vec<(String, Missing)>,
}

/// Why a workdir got no score.
enum Unscored {
    /// The machine lacks something; each with who needs it.
    Machine(Vec<(String, Missing)>),
    Other(anyhow::Error),
}

impl From<anyhow::Error> for Unscored {
    fn from(e: anyhow::Error) -> Self {
        Unscored::Other(e)
    }
}

pub fn run(root: &Path, ids: &[String]) -> Result<Exit> {
    let (pack, problems) = Pack::load_lenient(root);
    // Every task folder named by a valid task or a problem.
    let mut all: BTreeSet<String> = pack.tasks.iter().map(|t| t.spec.id.clone()).collect();
    let mut global = Vec::new();
    for p in &problems {
        match p
            .file
            .strip_prefix(root)
            .ok()
            .and_then(|r| r.components().next())
        {
            Some(c) if p.file != root => {
                all.insert(c.as_os_str().to_string_lossy().into_owned());
            }
            _ => global.push(p),
        }
    }
    for p in &global {
        eprintln!("invalid: {p}");
    }
    if !global.is_empty() && all.is_empty() {
        return Ok(Exit::Usage);
    }
    let selected: Vec<String> = if ids.is_empty() {
        all.iter().cloned().collect()
    } else {
        for id in ids {
            if !all.contains(id) {
                bail!("unknown task '{id}' in pack {}", root.display());
            }
        }
        ids.to_vec()
    };

    let tmp = tempfile::tempdir().context("creating a temporary folder")?;
    lrab_util::outln!(
        "{:<10} {:<15} {:<15} {:<10} result",
        "id",
        "untouched",
        "partial",
        "reference"
    );
    let (mut passed, mut failed, mut invalid, mut unchecked) = (0, 0, 0, 0);
    let mut notes: Vec<String> = Vec::new();
    let mut lacking: Vec<(String, Missing)> = Vec::new();
    for id in &selected {
        let Some(task) = pack.get(id) else {
            invalid += 1;
            lrab_util::outln!("{id:<10} {:<15} {:<15} {:<10} INVALID", "-", "-", "-");
            for p in problems_of(root, id, &problems) {
                notes.push(format!("{id}: invalid: {p}"));
            }
            continue;
        };
        let (cells, task_notes) = check_task(&pack, task, &tmp.path().join(id));
        let machine: Vec<(String, Missing)> =
            cells.iter().flat_map(|c| c.machine.clone()).collect();
        let ok = cells.iter().all(|c| c.ok);
        let verdict = if !machine.is_empty() {
            unchecked += 1;
            lacking.extend(machine);
            "NOT CHECKED"
        } else if ok {
            passed += 1;
            "PASS"
        } else {
            failed += 1;
            "FAIL"
        };
        let [u, p, r] = &cells;
        lrab_util::outln!(
            "{id:<10} {:<15} {:<15} {:<10} {verdict}",
            u.text,
            p.text,
            r.text
        );
        notes.extend(task_notes.into_iter().map(|n| format!("{id}: {n}")));
    }
    for n in &notes {
        lrab_util::outln!("{n}");
    }
    if !lacking.is_empty() {
        lrab_util::outln!("this machine lacks what some tasks need; they were not checked:");
        for (m, who) in lrab_scorer::group_missing(lacking) {
            lrab_util::outln!("  {}", m.line(&who.join(", ")));
        }
    }
    let more = if unchecked > 0 {
        format!(", {unchecked} not checked")
    } else {
        String::new()
    };
    lrab_util::outln!("{passed} passed, {failed} failed, {invalid} invalid{more}");
    Ok(if invalid > 0 || !global.is_empty() {
        Exit::Usage
    } else if failed > 0 || unchecked > 0 {
        Exit::Failures
    } else {
        Exit::Ok
    })
}

/// The needs of the task's checks and of the commands of its solutions (what their command
/// lines run) that this machine lacks, each with who needs it: looked up before anything runs.
fn lacking_before(task: &Task) -> Vec<(String, Missing)> {
    let id = &task.spec.id;
    let mut out: Vec<(String, Missing)> = lrab_scorer::missing_for_task(&task.spec)
        .into_iter()
        .map(|m| (format!("the checks of {id}"), m))
        .collect();
    for kind in [SolutionKind::Partial, SolutionKind::Reference] {
        let Ok(sol) = task.solution(kind) else {
            continue;
        };
        let needs: Vec<_> = sol
            .commands
            .iter()
            .flat_map(|c| lrab_scorer::needs_of_shell(c))
            .collect();
        let who = format!("the {} solution of {id}", kind.name());
        out.extend(
            lrab_scorer::missing(&needs)
                .into_iter()
                .map(|m| (who.clone(), m)),
        );
    }
    out
}

/// The untouched, partial and reference cells of one task, and the notes on them. When the
/// machine lacks something the task needs, nothing is run and every cell says so.
fn check_task(pack: &Pack, task: &Task, base: &Path) -> ([Cell; 3], Vec<String>) {
    let before = lacking_before(task);
    if !before.is_empty() {
        let cell = |machine| Cell {
            text: "-".into(),
            ok: false,
            machine,
        };
        return (
            [cell(before), cell(Vec::new()), cell(Vec::new())],
            Vec::new(),
        );
    }
    let mut notes = Vec::new();
    let u = verify(
        pack,
        task,
        &base.join("untouched"),
        None,
        Some(task.spec.expect.untouched),
        &mut notes,
    );
    let p = match task.spec.expect.partial {
        Some(exp) => verify(
            pack,
            task,
            &base.join("partial"),
            Some(SolutionKind::Partial),
            Some(exp),
            &mut notes,
        ),
        None => Cell {
            text: "(none)".into(),
            ok: true,
            machine: Vec::new(),
        },
    };
    let r = verify(
        pack,
        task,
        &base.join("reference"),
        Some(SolutionKind::Reference),
        None,
        &mut notes,
    );
    ([u, p, r], notes)
}

/// Materializes, optionally applies a solution, scores, compares with `expect` (reference: 1.0).
fn verify(
    pack: &Pack,
    task: &Task,
    workdir: &Path,
    kind: Option<SolutionKind>,
    expect: Option<f64>,
    notes: &mut Vec<String>,
) -> Cell {
    let label = kind.map(|k| k.name()).unwrap_or("untouched");
    let want = expect.unwrap_or(1.0);
    match score_once(pack, task, workdir, kind) {
        Ok(s) => {
            let ok = (s.total - want).abs() < EPS;
            if !ok {
                notes.push(format!(
                    "{label}: scored {:.3}, expected {want:.3}",
                    s.total
                ));
                for d in s.milestone_details.iter().chain(&s.final_details) {
                    notes.push(format!(
                        "    {:.3} {} {}: {}",
                        d.score, d.check, d.artifact, d.detail
                    ));
                }
            }
            let text = if expect.is_some() {
                format!("{:.3}/{want:.3}", s.total)
            } else {
                format!("{:.3}", s.total)
            };
            Cell {
                text,
                ok,
                machine: Vec::new(),
            }
        }
        Err(Unscored::Machine(machine)) => Cell {
            text: "-".into(),
            ok: false,
            machine,
        },
        Err(Unscored::Other(e)) => {
            notes.push(format!("{label}: {}", lrab_util::error_chain(e.as_ref())));
            Cell {
                text: "error".into(),
                ok: false,
                machine: Vec::new(),
            }
        }
    }
}

fn score_once(
    pack: &Pack,
    task: &Task,
    workdir: &Path,
    kind: Option<SolutionKind>,
) -> Result<TaskScore, Unscored> {
    let id = &task.spec.id;
    let m = materialize(pack, task, workdir, None).map_err(anyhow::Error::from)?;
    if let Some(k) = kind {
        let sol = task.solution(k).map_err(anyhow::Error::from)?;
        if let Err(e) = apply_solution(workdir, &sol) {
            // a script the solution runs may need what its command line does not show
            let said = e.to_string();
            let found = lrab_scorer::missing_in_output(&sol.commands.join("; "), &said);
            if found.is_empty() {
                return Err(anyhow::Error::from(e).into());
            }
            let who = format!("the {} solution of {id}", k.name());
            return Err(Unscored::Machine(
                found.into_iter().map(|m| (who.clone(), m)).collect(),
            ));
        }
    }
    match lrab_scorer::score_checked(
        task,
        &m.checks,
        workdir,
        lrab_scorer::ENVIRONMENT_RETRY_PAUSE,
    ) {
        Ok(s) => Ok(s),
        Err(ScoreError::Environment(v)) => Err(Unscored::Machine(
            v.into_iter()
                .map(|m| (format!("the checks of {id}"), m))
                .collect(),
        )),
        Err(e) => Err(anyhow::Error::from(e).into()),
    }
}
