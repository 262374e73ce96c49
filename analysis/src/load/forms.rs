//! Failure-form sources: a published coding (`failure_forms_2609.csv`: the ten flag columns
//! beside the fields they were coded from), whose fields become [`Inputs`] for our coder and
//! whose flags are kept to compare with; and our `cells.csv`, whose winning attempts are coded
//! from what the run recorded. The counters come from the arm's own printed markers where it
//! has them (Mingbird: the paper's scale), else from the trajectory (cells.csv version 4, or an
//! older run's `proxy.jsonl`); an attempt with neither leaves those forms unknown.

use super::table::Table;
use crate::error::{input, Result};
use crate::failure_forms::{
    Budget, Checks, Coding, Exit, Field, Form, FormCell, Inputs, Source, SourceKind,
};
use crate::model::normalize_task;
use lrab_records::{column, FailureMode, ScoreReport};
use std::collections::{BTreeMap, BTreeSet};

/// Whether `t` carries a published coding: every one of the ten flag columns.
pub(crate) fn is_coding(t: &Table) -> bool {
    Form::ALL.iter().all(|f| t.has(&[f.name()]))
}

fn count(t: &Table, col: &str, i: usize) -> Result<Option<u64>> {
    t.get(col, i)
        .map(|s| {
            s.parse::<u64>().map_err(|_| {
                input!(
                    "{}: column `{col}`: `{s}` is not a non-negative integer",
                    t.origin(i)
                )
            })
        })
        .transpose()
}

fn published(t: &Table, i: usize) -> Result<Coding> {
    let mut c = Coding::default();
    for f in Form::ALL {
        let v = match t.get(f.name(), i) {
            None => None,
            Some("0") => Some(false),
            Some("1") => Some(true),
            Some(s) => {
                return Err(input!(
                    "{}: column `{}`: `{s}` is not 0, 1 or empty",
                    t.origin(i),
                    f.name()
                ))
            }
        };
        c.set(f, v);
    }
    Ok(c)
}

/// The fields row `i` records. The four marker counters are the harness's own (Mingbird's
/// printed markers: a row with `spin_events`); another arm's `fmt_arg_errors` counts its
/// generic error words, a different scale that upstream leaves uncoded, so it is not read as
/// one.
fn inputs(t: &Table, i: usize, task: &str) -> Result<Inputs> {
    let own = t.get("spin_events", i).is_some();
    let marker =
        |col: &str| -> Result<Option<u64>> { Ok(if own { count(t, col, i)? } else { None }) };
    let checks = match (
        count(t, "artifact_checks_ok", i)?,
        count(t, "artifact_checks_total", i)?,
    ) {
        (Some(passed), Some(total)) => Some(Checks { passed, total }),
        _ => None,
    };
    let exit = match t.get("exit_code", i) {
        None => None,
        Some(s) => Some(Exit::Code(s.parse().map_err(|_| {
            input!(
                "{}: column `exit_code`: `{s}` is not an integer",
                t.origin(i)
            )
        })?)),
    };
    Ok(Inputs {
        score: t.score("score", i)?,
        wall_seconds: t.num("wall_seconds", i)?,
        // The paper's protocol (the coding script's budgets), not a column.
        budget: Some(Budget::paper(task)),
        failure_mode: t.get("failure_mode", i).map(str::to_string),
        exit,
        tool_calls: count(t, "tool_calls", i)?,
        checks,
        spin_events: marker("spin_events")?,
        fmt_arg_errors: marker("fmt_arg_errors")?,
        ctx_events: marker("ctx_events")?,
        finish_rejections: marker("finish_rejections")?,
        provider_errors: count(t, "provider_errors", i)?,
    })
}

/// The fields the file has columns for (the budget is the protocol's, always known).
fn fields(t: &Table) -> BTreeSet<Field> {
    let cols: [(Field, &[&str]); 11] = [
        (Field::Score, &["score"]),
        (Field::Wall, &["wall_seconds"]),
        (Field::FailureMode, &["failure_mode"]),
        (Field::Exit, &["exit_code"]),
        (Field::ToolCalls, &["tool_calls"]),
        (
            Field::Checks,
            &["artifact_checks_ok", "artifact_checks_total"],
        ),
        (Field::SpinEvents, &["spin_events"]),
        (Field::FmtArgErrors, &["fmt_arg_errors", "spin_events"]),
        (Field::CtxEvents, &["ctx_events"]),
        (Field::FinishRejections, &["finish_rejections"]),
        (Field::ProviderErrors, &["provider_errors"]),
    ];
    let mut set: BTreeSet<Field> = cols
        .iter()
        .filter(|(_, c)| t.has(c))
        .map(|(f, _)| *f)
        .collect();
    set.insert(Field::Budget);
    set
}

/// Every row of a published coding.
pub(crate) fn read(t: &Table) -> Result<Source> {
    let arm = super::cells::arm_column(t);
    let mut cells = Vec::with_capacity(t.rows);
    for i in 0..t.rows {
        let task = normalize_task(t.req("task", i)?);
        let mut c = FormCell::new(
            t.req(arm, i)?,
            t.req("model", i)?,
            &task,
            inputs(t, i, &task)?,
        );
        c.published = Some(published(t, i)?);
        cells.push(c);
    }
    Ok(Source {
        file: t.path.clone(),
        kind: SourceKind::Published,
        fields: fields(t),
        cells,
    })
}

/// The scorer's checks of an attempt folder's `score.json`; `None` when it cannot be read or
/// lists no check (the folder was moved, or the attempt was never scored).
fn checks_of(attempt: &std::path::Path) -> Option<Checks> {
    let r = ScoreReport::read(&attempt.join("score.json")).ok()?;
    let all: Vec<_> = r.milestone_details.iter().chain(&r.final_details).collect();
    (!all.is_empty()).then(|| Checks {
        passed: all.iter().filter(|d| d.ok).count() as u64,
        total: all.len() as u64,
    })
}

/// The five counters of an attempt (spin, fmt/arg, context, finish rejections, provider).
type RunCounters = [Option<u64>; 5];

/// Where the counters of row `i` come from, first that has them: a Mingbird arm's markers in
/// its transcript (counted as the paper counted them); the row's own columns (version 4); the
/// attempt's `proxy.jsonl` (an older run). `None` everywhere when none is there.
fn run_counters(t: &Table, i: usize, arm: &str) -> Result<RunCounters> {
    let dir = t.get(column::ATTEMPT_DIR, i).map(|d| t.dir.join(d));
    if crate::markers::exposes(arm) {
        if let Some(text) = dir
            .as_ref()
            .and_then(|d| std::fs::read(d.join("transcript.txt")).ok())
        {
            let text = String::from_utf8_lossy(&text);
            let m = crate::markers::counters(crate::markers::arm_output(&text));
            return Ok([
                m.spin_events,
                m.fmt_arg_errors,
                m.ctx_events,
                m.finish_rejections,
                m.provider_errors,
            ]
            .map(Some));
        }
    }
    let cols = [
        column::SPIN_EVENTS,
        column::FMT_ARG_ERRORS,
        column::CTX_EVENTS,
        column::FINISH_REJECTIONS,
        column::PROVIDER_ERRORS,
    ];
    if t.has(&cols) {
        let mut out = [None; 5];
        for (slot, c) in out.iter_mut().zip(cols) {
            *slot = count(t, c, i)?;
        }
        return Ok(out);
    }
    let Some(traj) = dir.and_then(|d| lrab_records::read_trajectory(&d.join("proxy.jsonl"))) else {
        return Ok([None; 5]);
    };
    let c = crate::trajectory_counts::from_trajectory(&traj);
    Ok([
        Some(c.spin_events),
        Some(c.fmt_arg_errors),
        Some(c.ctx_events),
        c.finish_rejections,
        Some(c.provider_errors),
    ])
}

/// The fields of our cells.csv row `i`. The runner enforces the budget and records the
/// attempts it stopped as `timeout`; it leaves `exit_code` empty when it killed the arm.
fn run_inputs(t: &Table, i: usize, arm: &str) -> Result<Inputs> {
    let [spin_events, fmt_arg_errors, ctx_events, finish_rejections, provider_errors] =
        run_counters(t, i, arm)?;
    let exit = if t.has(&[column::EXIT_CODE]) {
        Some(match t.get(column::EXIT_CODE, i) {
            None => Exit::Killed,
            Some(s) => Exit::Code(s.parse().map_err(|_| {
                input!(
                    "{}: column `{}`: `{s}` is not an integer",
                    t.origin(i),
                    column::EXIT_CODE
                )
            })?),
        })
    } else {
        None
    };
    Ok(Inputs {
        score: t.score(column::SCORE, i)?,
        wall_seconds: t.num(column::WALL_SECONDS, i)?,
        budget: Some(Budget::Enforced),
        failure_mode: t.get(column::FAILURE_MODE, i).map(str::to_string),
        exit,
        tool_calls: t.num(column::TOOL_CALLS, i)?.map(|n| n as u64),
        checks: t
            .get(column::ATTEMPT_DIR, i)
            .and_then(|d| checks_of(&t.dir.join(d))),
        spin_events,
        fmt_arg_errors,
        ctx_events,
        finish_rejections,
        provider_errors,
    })
}

/// The winning attempt of every repeat of our cells.csv, coded (scorer errors left out: the
/// scorer's failure, not the arm's).
pub(crate) fn read_run(t: &Table) -> Result<Source> {
    type Key = (String, String, String, String, u64);
    let mut best: BTreeMap<Key, (u64, usize)> = BTreeMap::new();
    for i in 0..t.rows {
        let key = (
            t.req(column::ARM, i)?.to_string(),
            t.req(column::MODEL, i)?.to_string(),
            normalize_task(t.req(column::TASK, i)?),
            t.req(column::RUN_ID, i)?.to_string(),
            t.int(column::REPEAT, i)?,
        );
        let attempt = t.int(column::ATTEMPT, i)?;
        let e = best.entry(key).or_insert((attempt, i));
        if attempt > e.0 {
            *e = (attempt, i);
        }
    }
    let mut cells = Vec::new();
    for ((arm, model, task, _, _), (_, i)) in best {
        if t.get(column::FAILURE_MODE, i) == Some(FailureMode::ScorerError.as_str()) {
            continue;
        }
        cells.push(FormCell::new(&arm, &model, &task, run_inputs(t, i, &arm)?));
    }
    let mut fields: BTreeSet<Field> = [Field::Budget].into();
    for (f, c) in [
        (Field::Score, column::SCORE),
        (Field::Wall, column::WALL_SECONDS),
        (Field::FailureMode, column::FAILURE_MODE),
        (Field::Exit, column::EXIT_CODE),
        (Field::ToolCalls, column::TOOL_CALLS),
        (Field::Checks, column::ATTEMPT_DIR),
    ] {
        if t.has(&[c]) {
            fields.insert(f);
        }
    }
    let counted = |get: fn(&Inputs) -> Option<u64>| cells.iter().any(|c| get(&c.inputs).is_some());
    for (f, get) in [
        (
            Field::SpinEvents,
            (|x: &Inputs| x.spin_events) as fn(&Inputs) -> Option<u64>,
        ),
        (Field::FmtArgErrors, |x: &Inputs| x.fmt_arg_errors),
        (Field::CtxEvents, |x: &Inputs| x.ctx_events),
        (Field::FinishRejections, |x: &Inputs| x.finish_rejections),
        (Field::ProviderErrors, |x: &Inputs| x.provider_errors),
    ] {
        if counted(get) {
            fields.insert(f);
        }
    }
    Ok(Source {
        file: t.path.clone(),
        kind: SourceKind::Run,
        fields,
        cells,
    })
}
