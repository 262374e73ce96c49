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
mod tests {
    use super::*;
    use std::io::Write;

    fn rec(i: u32) -> CellRow {
        CellRow {
            run_id: "r1".into(),
            arm: "harness".into(),
            model: "sim-4b".into(),
            task: "WF-04".into(),
            tier: 2,
            repeat: i,
            attempt: 0,
            score: 0.5714285,
            milestone_score: Some(1.0),
            final_score: None,
            wall_seconds: 12.34,
            exit_code: Some(0),
            failure_mode: FailureMode::Completed,
            backend: "sim".into(),
            simulated: true,
            prompt_tokens: Some(10),
            completion_tokens: None,
            model_calls: Some(3),
            tool_calls: Some(2),
            attempt_dir: "cells/x, \"quoted\"".into(),
            schema_version: CellRow::SCHEMA_VERSION,
            turns: Some(3),
            cached_prompt_tokens: None,
            uncached_prompt_tokens: Some(4),
            backend_kind: Some(crate::BackendKind::Openai),
            think: Some(crate::ThinkSetting::On),
            peak_prompt_tokens: Some(9),
            fmt_arg_errors: Some(1),
            spin_events: Some(0),
            ctx_events: Some(2),
            finish_rejections: None,
            provider_errors: Some(0),
        }
    }

    #[test]
    fn header_rows_roundtrip_and_torn_line_repair() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/cells.csv");
        rec(0).append_to(&p).unwrap();
        // Simulate a writer that crashed mid-row.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"torn,row")
            .unwrap();
        rec(1).append_to(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER.join(","));
        assert!(lines[1].starts_with(
            "r1,harness,sim-4b,WF-04,2,0,0,0.571,1.000,,12.3,0,completed,sim,true,10,,3,2,"
        ));
        assert!(
            lines[1].ends_with(",4,3,,4,openai,on,9,1,0,2,,0"),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "torn,row");
        assert!(lines[3].starts_with("r1,harness,sim-4b,WF-04,2,1,"));
        assert_eq!(read_cell_rows_lenient(&p).unwrap().len(), 2);
    }

    #[test]
    fn refuses_foreign_header_and_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        rec(0).append_to(&p).unwrap();
        rec(1).append_to(&p).unwrap();
        let rows = read_cell_rows(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].repeat, 1);
        assert_eq!(rows[0].score, 0.571);
        assert_eq!(rows[0].final_score, None);
        assert_eq!(rows[0].attempt_dir, "cells/x, \"quoted\"");
        let q = d.path().join("other.csv");
        std::fs::write(&q, "harness,task,model\n").unwrap();
        assert!(matches!(
            rec(0).append_to(&q),
            Err(RecordError::Header { .. })
        ));
        assert_eq!(std::fs::read_to_string(&q).unwrap(), "harness,task,model\n");
        assert!(read_cell_rows_lenient(&q).is_err());
        assert!(read_cell_rows_lenient(&d.path().join("none.csv"))
            .unwrap()
            .is_empty());
    }

    /// A cells.csv exactly as the suite wrote it before rows carried `schema_version`.
    const LEGACY_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir
run-20261129-101500,harness,sim-4b,WF-01,1,0,0,1.000,1.000,1.000,4.2,0,completed,sim,true,1200,80,3,2,cells/harness/sim-4b/WF-01/r0/a0
run-20261129-101500,goose,sim-2b,LH-03,4,0,1,0.000,,,600.0,,timeout,sim,true,,,,,cells/goose/sim-2b/LH-03/r0/a1
";

    #[test]
    fn files_in_the_legacy_layout_load_and_stay_consistent() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        std::fs::write(&p, LEGACY_FILE).unwrap();
        let rows = read_cell_rows(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].schema_version, 1);
        assert_eq!(rows[0].prompt_tokens, Some(1200));
        assert_eq!(rows[1].failure_mode, FailureMode::Timeout);
        assert_eq!(rows[1].exit_code, None);
        assert_eq!(rows[1].milestone_score, None);
        // a resumed old run appends in the old layout
        rec(5).append_to(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let last = text.lines().last().unwrap();
        let fields = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(last.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(fields.len(), LEGACY_HEADER.len(), "{last}");
        assert_eq!(&fields[19], "cells/x, \"quoted\"");
        assert_eq!(read_cell_rows_lenient(&p).unwrap().len(), 3);
    }

    /// A cells.csv as version 1 wrote it (with `schema_version`, without the trajectory counts).
    const V1_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version
run-20261130-090000,opencode,sim-4b,WF-02,1,0,0,0.500,1.000,0.000,30.0,0,completed,sim,true,5000,300,6,,cells/opencode/sim-4b/WF-02/r0/a0,1
";

    #[test]
    fn files_of_version_1_load_and_stay_consistent() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        std::fs::write(&p, V1_FILE).unwrap();
        let rows = read_cell_rows(&p).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].schema_version, 1);
        assert_eq!(rows[0].prompt_tokens, Some(5000));
        assert_eq!(rows[0].tool_calls, None);
        assert_eq!(
            (
                rows[0].turns,
                rows[0].cached_prompt_tokens,
                rows[0].uncached_prompt_tokens
            ),
            (None, None, None)
        );
        rec(7).append_to(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let last = text.lines().last().unwrap();
        assert!(last.ends_with("\"cells/x, \"\"quoted\"\"\",1"), "{last}");
        let rows = read_cell_rows_lenient(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].schema_version, 1);
        assert_eq!(rows[1].uncached_prompt_tokens, None);
        // a fresh file gets the current layout, whose counts read back
        let q = d.path().join("new.csv");
        rec(8).append_to(&q).unwrap();
        let r = &read_cell_rows(&q).unwrap()[0];
        assert_eq!(r.schema_version, CellRow::SCHEMA_VERSION);
        assert_eq!((r.turns, r.uncached_prompt_tokens), (Some(3), Some(4)));
        assert_eq!(
            (r.backend_kind, r.think),
            (
                Some(crate::BackendKind::Openai),
                Some(crate::ThinkSetting::On)
            )
        );
    }

    /// A cells.csv as version 2 wrote it (trajectory counts, without backend kind and think).
    const V2_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version,turns,cached_prompt_tokens,uncached_prompt_tokens
run-20261201-090000,harness,sim-4b,WF-02,1,0,0,0.500,1.000,0.000,30.0,0,completed,sim,true,5000,300,6,,cells/harness/sim-4b/WF-02/r0/a0,2,6,4000,1000
";

    #[test]
    fn files_of_version_2_load_and_stay_consistent() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        std::fs::write(&p, V2_FILE).unwrap();
        let rows = read_cell_rows(&p).unwrap();
        assert_eq!((rows[0].schema_version, rows[0].turns), (2, Some(6)));
        assert_eq!((rows[0].backend_kind, rows[0].think), (None, None));
        rec(9).append_to(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let last = text.lines().last().unwrap();
        assert!(last.ends_with(",2,3,,4"), "{last}");
        let rows = read_cell_rows_lenient(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].schema_version, rows[1].think), (2, None));
    }

    /// A cells.csv as version 3 wrote it (backend kind and think, without the peak prompt and
    /// the failure-form counters).
    const V3_FILE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version,turns,cached_prompt_tokens,uncached_prompt_tokens,backend_kind,think
run-20261205-090000,mingbird,sim-2b,WF-04,2,0,0,1.000,1.000,1.000,3.0,0,completed,sim,true,5000,300,6,5,cells/mingbird/sim-2b/WF-04/r0/a0,3,6,,,sim,off
";

    #[test]
    fn files_of_version_3_load_and_stay_consistent() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        std::fs::write(&p, V3_FILE).unwrap();
        let rows = read_cell_rows(&p).unwrap();
        assert_eq!((rows[0].schema_version, rows[0].tool_calls), (3, Some(5)));
        // not recorded in version 3: unknown, never 0
        assert_eq!(
            (rows[0].peak_prompt_tokens, rows[0].spin_events),
            (None, None)
        );
        rec(9).append_to(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let last = text.lines().last().unwrap();
        assert!(last.ends_with(",3,3,,4,openai,on"), "{last}");
        let rows = read_cell_rows_lenient(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].schema_version, rows[1].ctx_events), (3, None));
        // a fresh file: version 4, the counters read back (an empty finish counter stays empty)
        let q = d.path().join("new.csv");
        rec(1).append_to(&q).unwrap();
        let r = &read_cell_rows(&q).unwrap()[0];
        assert_eq!(
            (
                r.peak_prompt_tokens,
                r.fmt_arg_errors,
                r.ctx_events,
                r.finish_rejections
            ),
            (Some(9), Some(1), Some(2), None)
        );
    }

    #[test]
    fn rows_from_a_newer_suite_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        let mut r = rec(0);
        r.schema_version = CellRow::SCHEMA_VERSION + 1;
        r.append_to(&p).unwrap();
        let e = read_cell_rows(&p).unwrap_err().to_string();
        assert!(
            e.contains("cells.csv:2") && e.contains("schema_version"),
            "{e}"
        );
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        rec(t * 100 + i).append_to(&p).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(read_cell_rows(&p).unwrap().len(), 100);
    }
}
