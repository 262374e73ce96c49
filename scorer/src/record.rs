//! The cell record: one `cells.csv` row per attempt (`docs/results-format.md`), appended
//! atomically so concurrent shards and crashes never tear or lose rows.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The exact header of `cells.csv`.
pub const HEADER: [&str; 20] = [
    "run_id",
    "arm",
    "model",
    "task",
    "tier",
    "repeat",
    "attempt",
    "score",
    "milestone_score",
    "final_score",
    "wall_seconds",
    "exit_code",
    "failure_mode",
    "backend",
    "simulated",
    "prompt_tokens",
    "completion_tokens",
    "model_calls",
    "tool_calls",
    "attempt_dir",
];

/// One row of `cells.csv`. Field order is the column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    pub run_id: String,
    pub arm: String,
    pub model: String,
    pub task: String,
    pub tier: u8,
    pub repeat: u32,
    pub attempt: u32,
    #[serde(serialize_with = "ser3")]
    pub score: f64,
    #[serde(serialize_with = "ser3_opt")]
    pub milestone_score: Option<f64>,
    #[serde(serialize_with = "ser3_opt")]
    pub final_score: Option<f64>,
    #[serde(serialize_with = "ser_wall")]
    pub wall_seconds: f64,
    pub exit_code: Option<i32>,
    pub failure_mode: String,
    pub backend: String,
    pub simulated: bool,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub model_calls: Option<u64>,
    pub tool_calls: Option<u64>,
    pub attempt_dir: String,
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

/// Errors of [`append_row`].
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: existing header differs from the cells.csv format (found: {found})")]
    Header { path: String, found: String },
    #[error("{path}: {message}")]
    Csv { path: String, message: String },
}

impl CellRecord {
    /// The row as one CSV line (with trailing newline).
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
}

/// Appends one row to `path`, writing the header first when the file is new or empty. An
/// exclusive `flock` serialises writers; the row goes out in a single `write` on an `O_APPEND`
/// descriptor; a torn last line from a crashed writer is terminated before appending.
pub fn append_row(path: &Path, rec: &CellRecord) -> Result<(), RecordError> {
    let p = path.display().to_string();
    let io = |e| RecordError::Io {
        path: p.clone(),
        source: e,
    };
    let line = rec.to_csv_line().map_err(|e| RecordError::Csv {
        path: p.clone(),
        message: e.to_string(),
    })?;
    if let Some(parent) = path.parent().filter(|x| !x.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    // SAFETY: flock on a descriptor we own; released when `f` is closed.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    let mut existing = Vec::new();
    f.seek(SeekFrom::Start(0)).map_err(io)?;
    f.read_to_end(&mut existing).map_err(io)?;
    let mut out = String::new();
    if existing.is_empty() {
        out.push_str(&HEADER.join(","));
        out.push('\n');
    } else {
        let first = existing.split(|b| *b == b'\n').next().unwrap_or_default();
        let first = String::from_utf8_lossy(first);
        if first.trim_end_matches('\r') != HEADER.join(",") {
            return Err(RecordError::Header {
                path: p.clone(),
                found: first.into_owned(),
            });
        }
        if existing.last() != Some(&b'\n') {
            out.push('\n');
        }
    }
    out.push_str(&line);
    f.write_all(out.as_bytes()).map_err(io)?;
    f.sync_data().map_err(io)?;
    Ok(())
}

/// Reads every row of a `cells.csv`; errors name the line.
pub fn read_rows(path: &Path) -> Result<Vec<CellRecord>, RecordError> {
    let p = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|e| RecordError::Csv {
        path: p.clone(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for row in r.deserialize() {
        out.push(row.map_err(|e: csv::Error| RecordError::Csv {
            path: p.clone(),
            message: e.to_string(),
        })?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u32) -> CellRecord {
        CellRecord {
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
            failure_mode: "completed".into(),
            backend: "sim".into(),
            simulated: true,
            prompt_tokens: Some(10),
            completion_tokens: None,
            model_calls: Some(3),
            tool_calls: Some(2),
            attempt_dir: "cells/x, \"quoted\"".into(),
        }
    }

    #[test]
    fn header_rows_roundtrip_and_torn_line_repair() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/cells.csv");
        append_row(&p, &rec(0)).unwrap();
        // Simulate a writer that crashed mid-row.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"torn,row")
            .unwrap();
        append_row(&p, &rec(1)).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER.join(","));
        assert!(lines[1].starts_with(
            "r1,harness,sim-4b,WF-04,2,0,0,0.571,1.000,,12.3,0,completed,sim,true,10,,3,2,"
        ));
        assert_eq!(lines[2], "torn,row");
        assert!(lines[3].starts_with("r1,harness,sim-4b,WF-04,2,1,"));
    }

    #[test]
    fn refuses_foreign_header_and_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        append_row(&p, &rec(0)).unwrap();
        append_row(&p, &rec(1)).unwrap();
        let rows = read_rows(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].repeat, 1);
        assert_eq!(rows[0].score, 0.571);
        assert_eq!(rows[0].final_score, None);
        assert_eq!(rows[0].attempt_dir, "cells/x, \"quoted\"");
        let q = d.path().join("other.csv");
        std::fs::write(&q, "harness,task,model\n").unwrap();
        assert!(matches!(
            append_row(&q, &rec(0)),
            Err(RecordError::Header { .. })
        ));
        assert_eq!(std::fs::read_to_string(&q).unwrap(), "harness,task,model\n");
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
                        append_row(&p, &rec(t * 100 + i)).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(read_rows(&p).unwrap().len(), 100);
    }
}
