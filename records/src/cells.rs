//! `cells.csv`: one row per attempt (docs/results-format.md), appended atomically so concurrent
//! shards and crashes never tear or lose rows. The header names the columns; readers of partial
//! files (the analysis accepts hand-made ones) use the names in [`column`].

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::jsonl::append_locked;
use crate::{FailureMode, RecordError};

/// Column names of `cells.csv`, for readers that look columns up by name.
pub mod column {
    /// The run the attempt belongs to.
    pub const RUN_ID: &str = "run_id";
    /// Arm name.
    pub const ARM: &str = "arm";
    /// Model name.
    pub const MODEL: &str = "model";
    /// Task id.
    pub const TASK: &str = "task";
    /// Task tier 1..=4.
    pub const TIER: &str = "tier";
    /// Repeat index.
    pub const REPEAT: &str = "repeat";
    /// Attempt index within the repeat (the latest wins).
    pub const ATTEMPT: &str = "attempt";
    /// The scored total.
    pub const SCORE: &str = "score";
    /// Milestone score.
    pub const MILESTONE_SCORE: &str = "milestone_score";
    /// Final score.
    pub const FINAL_SCORE: &str = "final_score";
    /// Wall-clock seconds of the arm.
    pub const WALL_SECONDS: &str = "wall_seconds";
    /// The arm's exit code.
    pub const EXIT_CODE: &str = "exit_code";
    /// Failure mode.
    pub const FAILURE_MODE: &str = "failure_mode";
    /// Backend label.
    pub const BACKEND: &str = "backend";
    /// Whether the backend was simulated.
    pub const SIMULATED: &str = "simulated";
    /// Prompt tokens over the attempt.
    pub const PROMPT_TOKENS: &str = "prompt_tokens";
    /// Completion tokens over the attempt.
    pub const COMPLETION_TOKENS: &str = "completion_tokens";
    /// Model calls of the attempt.
    pub const MODEL_CALLS: &str = "model_calls";
    /// Tool calls of the attempt.
    pub const TOOL_CALLS: &str = "tool_calls";
    /// The attempt folder, relative to the run folder.
    pub const ATTEMPT_DIR: &str = "attempt_dir";
    /// The record's schema version.
    pub const SCHEMA_VERSION: &str = "schema_version";
    /// Model requests answered with a reply.
    pub const TURNS: &str = "turns";
    /// Prompt tokens served from the backend's KV cache.
    pub const CACHED_PROMPT_TOKENS: &str = "cached_prompt_tokens";
    /// Prompt tokens the backend evaluated.
    pub const UNCACHED_PROMPT_TOKENS: &str = "uncached_prompt_tokens";
    /// The API the attempt's backend speaks (`ollama`, `openai`, `sim`).
    pub const BACKEND_KIND: &str = "backend_kind";
    /// The run's thinking setting (`off`, `on`, `model`).
    pub const THINK: &str = "think";
    /// The largest prompt of any request, in tokens.
    pub const PEAK_PROMPT_TOKENS: &str = "peak_prompt_tokens";
    /// Malformed or unknown tool calls and parse errors, from the trajectory.
    pub const FMT_ARG_ERRORS: &str = "fmt_arg_errors";
    /// Repeated calls, repeated text, runs of empty replies, from the trajectory.
    pub const SPIN_EVENTS: &str = "spin_events";
    /// History rewrites that shrank the prompt and context-window errors, from the trajectory.
    pub const CTX_EVENTS: &str = "ctx_events";
    /// Finish calls the run went on after, from the trajectory (empty: no finish tool offered).
    pub const FINISH_REJECTIONS: &str = "finish_rejections";
    /// Server errors that were neither parse nor context errors, from the trajectory.
    pub const PROVIDER_ERRORS: &str = "provider_errors";
}

/// The header of `cells.csv` files written before `schema_version` existed (still read, and
/// appended to in that layout so a resumed old run stays one consistent file).
pub const LEGACY_HEADER: [&str; 20] = [
    column::RUN_ID,
    column::ARM,
    column::MODEL,
    column::TASK,
    column::TIER,
    column::REPEAT,
    column::ATTEMPT,
    column::SCORE,
    column::MILESTONE_SCORE,
    column::FINAL_SCORE,
    column::WALL_SECONDS,
    column::EXIT_CODE,
    column::FAILURE_MODE,
    column::BACKEND,
    column::SIMULATED,
    column::PROMPT_TOKENS,
    column::COMPLETION_TOKENS,
    column::MODEL_CALLS,
    column::TOOL_CALLS,
    column::ATTEMPT_DIR,
];

/// The header of schema version 1: the legacy columns plus `schema_version` (still read, and
/// appended to in that layout).
pub const HEADER_V1: [&str; 21] = extended(LEGACY_HEADER, [column::SCHEMA_VERSION]);

/// The header of schema version 2: version 1's columns plus the turn and prompt-cache counts
/// taken from the trajectory (still read, and appended to in that layout).
pub const HEADER_V2: [&str; 24] = extended(
    HEADER_V1,
    [
        column::TURNS,
        column::CACHED_PROMPT_TOKENS,
        column::UNCACHED_PROMPT_TOKENS,
    ],
);

/// The header of schema version 3: version 2's columns plus the backend's kind and the thinking
/// setting the attempt ran with (still read, and appended to in that layout).
pub const HEADER_V3: [&str; 26] = extended(HEADER_V2, [column::BACKEND_KIND, column::THINK]);

/// The exact header of `cells.csv` as written now: version 3's columns plus the peak prompt and
/// the failure-form counters derived from the trajectory (`lrab_analysis::trajectory_counts`).
pub const HEADER: [&str; 32] = extended(
    HEADER_V3,
    [
        column::PEAK_PROMPT_TOKENS,
        column::FMT_ARG_ERRORS,
        column::SPIN_EVENTS,
        column::CTX_EVENTS,
        column::FINISH_REJECTIONS,
        column::PROVIDER_ERRORS,
    ],
);

/// `base` with `more` appended (derived, so the headers cannot drift apart).
const fn extended<const A: usize, const B: usize, const C: usize>(
    base: [&'static str; A],
    more: [&'static str; B],
) -> [&'static str; C] {
    assert!(A + B == C);
    let mut out = [""; C];
    let mut i = 0;
    while i < A {
        out[i] = base[i];
        i += 1;
    }
    while i < C {
        out[i] = more[i - A];
        i += 1;
    }
    out
}

/// One row of `cells.csv`. Field order is the column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRow {
    /// The run the attempt belongs to.
    pub run_id: String,
    /// Arm name.
    pub arm: String,
    /// Model name.
    pub model: String,
    /// Task id.
    pub task: String,
    /// Task tier 1..=4.
    pub tier: u8,
    /// Repeat index.
    pub repeat: u32,
    /// Attempt index within the repeat.
    pub attempt: u32,
    /// The scored total (0 for an attempt without a score).
    #[serde(serialize_with = "ser3")]
    pub score: f64,
    /// Milestone score, absent when the attempt was not scored.
    #[serde(serialize_with = "ser3_opt")]
    pub milestone_score: Option<f64>,
    /// Final score, absent when the attempt was not scored.
    #[serde(serialize_with = "ser3_opt")]
    pub final_score: Option<f64>,
    /// Wall-clock seconds of the arm (all phases).
    #[serde(serialize_with = "ser_wall")]
    pub wall_seconds: f64,
    /// The arm's exit code; absent when it was killed.
    pub exit_code: Option<i32>,
    /// Why the attempt ended the way it did.
    pub failure_mode: FailureMode,
    /// Backend label.
    pub backend: String,
    /// Whether the backend was simulated (sim results are always labelled).
    pub simulated: bool,
    /// Prompt tokens over the attempt, when a log told them.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens over the attempt, when a log told them.
    pub completion_tokens: Option<u64>,
    /// Model calls, when a log told them.
    pub model_calls: Option<u64>,
    /// Tool calls, when a log told them.
    pub tool_calls: Option<u64>,
    /// The attempt folder, relative to the run folder.
    pub attempt_dir: String,
    /// Schema version of the row.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Model requests answered with a reply, when a trajectory told them.
    #[serde(default)]
    pub turns: Option<u64>,
    /// Prompt tokens served from the KV cache, when the backend said for every request.
    #[serde(default)]
    pub cached_prompt_tokens: Option<u64>,
    /// Prompt tokens the backend evaluated, when it said for every request.
    #[serde(default)]
    pub uncached_prompt_tokens: Option<u64>,
    /// The API of the backend the attempt ran on (absent before version 3).
    #[serde(default)]
    pub backend_kind: Option<crate::BackendKind>,
    /// The thinking setting of the run (absent before version 3: off was the only one).
    #[serde(default)]
    pub think: Option<crate::ThinkSetting>,
    /// The largest prompt of any request (absent before version 4, or when no request said).
    #[serde(default)]
    pub peak_prompt_tokens: Option<u64>,
    /// Failure-form counters from the trajectory (absent before version 4).
    #[serde(default)]
    pub fmt_arg_errors: Option<u64>,
    /// See [`column::SPIN_EVENTS`].
    #[serde(default)]
    pub spin_events: Option<u64>,
    /// See [`column::CTX_EVENTS`].
    #[serde(default)]
    pub ctx_events: Option<u64>,
    /// See [`column::FINISH_REJECTIONS`]; also absent when no finish tool was offered.
    #[serde(default)]
    pub finish_rejections: Option<u64>,
    /// See [`column::PROVIDER_ERRORS`].
    #[serde(default)]
    pub provider_errors: Option<u64>,
}

fn ser3<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.3}"))
}
fn ser3_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => s.serialize_str(&format!("{v:.3}")),
        None => s.serialize_str(""),
    }
}
fn ser_wall<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.1}"))
}

/// Which of the layouts a file's first line is.
fn layout(first_line: &str) -> Option<Layout> {
    let first = first_line.trim_end_matches('\r');
    [
        Layout::Current,
        Layout::V3,
        Layout::V2,
        Layout::V1,
        Layout::Legacy,
    ]
    .into_iter()
    .find(|l| first == l.header().join(","))
}

/// The layouts, each a prefix of the current one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Current,
    V3,
    V2,
    V1,
    Legacy,
}

impl Layout {
    fn header(self) -> &'static [&'static str] {
        match self {
            Layout::Current => &HEADER,
            Layout::V3 => &HEADER_V3,
            Layout::V2 => &HEADER_V2,
            Layout::V1 => &HEADER_V1,
            Layout::Legacy => &LEGACY_HEADER,
        }
    }
    fn columns(self) -> usize {
        self.header().len()
    }
}

impl CellRow {
    /// The version of rows in the current layout (4: the peak prompt and the failure-form
    /// counters; 3 added the backend's kind and the thinking setting; 2 the trajectory's turn
    /// and prompt-cache counts); rows of the older layouts are versions 3, 2 and 1.
    pub const SCHEMA_VERSION: u32 = 4;

    /// A made-up row for tests and hand-made files, so that they name only the fields they are
    /// about (`CellRow { attempt: 1, ..CellRow::example(..) }`): a completed first attempt of
    /// run `r`, tier 1, scored `score` in total, milestone and final, on the simulated backend,
    /// one second long, with no counters.
    pub fn example(arm: &str, model: &str, task: &str, score: f64) -> CellRow {
        CellRow {
            run_id: "r".into(),
            arm: arm.into(),
            model: model.into(),
            task: task.into(),
            tier: 1,
            repeat: 0,
            attempt: 0,
            score,
            milestone_score: Some(score),
            final_score: Some(score),
            wall_seconds: 1.0,
            exit_code: Some(0),
            failure_mode: FailureMode::Completed,
            backend: "sim".into(),
            simulated: true,
            prompt_tokens: None,
            completion_tokens: None,
            model_calls: None,
            tool_calls: None,
            attempt_dir: format!("cells/{arm}/{model}/{task}/r0/a0"),
            schema_version: Self::SCHEMA_VERSION,
            turns: None,
            cached_prompt_tokens: None,
            uncached_prompt_tokens: None,
            backend_kind: None,
            think: None,
            peak_prompt_tokens: None,
            fmt_arg_errors: None,
            spin_events: None,
            ctx_events: None,
            finish_rejections: None,
            provider_errors: None,
        }
    }

    /// The row as one CSV line (with trailing newline), in the current layout.
    pub fn to_csv_line(&self) -> Result<String, csv::Error> {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize(self)?;
        let bytes = w
            .into_inner()
            .map_err(|e| csv::Error::from(e.into_error()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The line in an older layout: a row of that layout's version with the columns it lacks
    /// cut off the end (unquoted numbers, names or empty, so cutting at commas is exact).
    fn to_layout_line(&self, l: Layout) -> Result<String, csv::Error> {
        let mut old = self.clone();
        if l == Layout::Current {
            // the layout fixes the version: a row built with an older number is still current
            old.schema_version = old.schema_version.max(Self::SCHEMA_VERSION);
            return old.to_csv_line();
        }
        old.schema_version = match l {
            Layout::V3 => 3,
            Layout::V2 => 2,
            _ => 1,
        };
        let line = old.to_csv_line()?;
        let mut body = line.trim_end_matches('\n');
        for _ in l.columns()..HEADER.len() {
            body = &body[..body.rfind(',').unwrap_or(body.len())];
        }
        Ok(format!("{body}\n"))
    }

    /// Appends the row to `path`, writing the header first when the file is new or empty. An
    /// exclusive `flock` serialises writers; the row goes out in a single `write` on an
    /// `O_APPEND` descriptor; a torn last line from a crashed writer is terminated first. A file
    /// in an older layout gets a row in that layout; a file of any other format is refused untouched.
    pub fn append_to(&self, path: &Path) -> Result<(), RecordError> {
        append_locked(path, |f, _len| {
            let io = |e| RecordError::io(path, e);
            let mut existing = Vec::new();
            f.seek(SeekFrom::Start(0)).map_err(io)?;
            f.read_to_end(&mut existing).map_err(io)?;
            let mut out = String::new();
            let layout_now = if existing.is_empty() {
                out.push_str(&HEADER.join(","));
                out.push('\n');
                Layout::Current
            } else {
                let first = existing.split(|b| *b == b'\n').next().unwrap_or_default();
                let first = String::from_utf8_lossy(first);
                let Some(l) = layout(&first) else {
                    return Err(RecordError::Header {
                        path: path.to_path_buf(),
                        found: first.into_owned(),
                    });
                };
                if existing.last() != Some(&b'\n') {
                    out.push('\n');
                }
                l
            };
            let line = self
                .to_layout_line(layout_now)
                .map_err(|e| RecordError::invalid(path, None, e.to_string()))?;
            out.push_str(&line);
            Ok(out.into_bytes())
        })
    }
}

/// Refuse rows from a newer suite: their meaning may have changed.
fn check_version(found: u32) -> Result<(), String> {
    if found > CellRow::SCHEMA_VERSION {
        return Err(format!(
            "the row has schema_version {found}; this lrab reads up to {} (upgrade lrab)",
            CellRow::SCHEMA_VERSION
        ));
    }
    Ok(())
}

fn open_reader(path: &Path) -> Result<(csv::Reader<std::fs::File>, Layout), RecordError> {
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| RecordError::invalid(path, None, e.to_string()))?;
    let headers = r
        .headers()
        .map_err(|e| RecordError::invalid(path, Some(1), e.to_string()))?;
    let joined = headers.iter().collect::<Vec<_>>().join(",");
    let Some(l) = layout(&joined) else {
        return Err(RecordError::Header {
            path: path.to_path_buf(),
            found: joined,
        });
    };
    Ok((r, l))
}

/// Every row of a `cells.csv` (either layout); errors name the line and field.
pub fn read_cell_rows(path: &Path) -> Result<Vec<CellRow>, RecordError> {
    let (mut r, _) = open_reader(path)?;
    let headers = r.headers().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| RecordError::invalid(path, Some(line), e.to_string()))?;
        let row: CellRow = rec
            .deserialize(Some(&headers))
            .map_err(|e| RecordError::invalid(path, Some(line), e.to_string()))?;
        check_version(row.schema_version).map_err(|m| RecordError::invalid(path, Some(line), m))?;
        out.push(row);
    }
    Ok(out)
}

/// The rows of a `cells.csv`, skipping a torn line left by a writer that died mid-row. A missing
/// file is an empty run; a file of another format is an error.
pub fn read_cell_rows_lenient(path: &Path) -> Result<Vec<CellRow>, RecordError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let (mut r, l) = open_reader(path)?;
    let headers = r.headers().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let Ok(rec) = rec else { continue };
        if rec.len() != l.columns() {
            continue;
        }
        if let Ok(row) = rec.deserialize::<CellRow>(Some(&headers)) {
            check_version(row.schema_version)
                .map_err(|m| RecordError::invalid(path, Some(i + 2), m))?;
            out.push(row);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
