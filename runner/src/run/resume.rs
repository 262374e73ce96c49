//! Resume: what is left to do in a run folder. `cells.csv` is the source of truth — a row is
//! appended atomically only after the attempt's `score.json` is on disk, so after any crash
//! (even SIGKILL) an attempt is either recorded, or its folder has no row: the resume sets such
//! a folder aside under `interrupted/` (named on stderr and in `interrupted.jsonl`) and the
//! attempt runs again in a fresh folder. Nothing is lost, nothing is counted twice, and `cells/`
//! holds recorded attempts only, which `lrab merge` checks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Result;
use lrab_records::{CellRow, InterruptedRecord};

use super::cell::needs_retry;
use super::matrix::Cell;

/// Where the resume puts the attempt folders it sets aside, and their journal.
pub const INTERRUPTED_DIR: &str = "interrupted";
/// The journal of the set-aside folders (`lrab_records::InterruptedRecord` lines).
pub const INTERRUPTED_JOURNAL: &str = "interrupted.jsonl";

/// The manifest of the run folder `--resume` names. A folder that does not exist, is not a
/// folder or holds no `manifest.json` is an error naming it (not the system's bare "No such
/// file or directory").
pub fn read_manifest(dir: &Path) -> Result<super::manifest::Manifest> {
    let d = dir.display();
    if !dir.exists() {
        anyhow::bail!("--resume {d}: the folder does not exist");
    }
    if !dir.is_dir() {
        anyhow::bail!("--resume {d}: not a folder (give the run folder, results/<run-id>)");
    }
    if !dir.join("manifest.json").exists() {
        anyhow::bail!("--resume {d}: not a run folder (it has no manifest.json)");
    }
    Ok(super::manifest::Manifest::read(dir)?)
}

/// Reads the rows of a `cells.csv` (either layout), skipping a torn line left by a writer that
/// died mid-row. A missing file is an empty run.
pub fn read_rows_lenient(path: &Path) -> Result<Vec<CellRow>> {
    Ok(lrab_records::read_cell_rows_lenient(path)?)
}

/// For each planned cell still to do: the first attempt to run. Done cells are left out.
pub fn pending(cells: &[Cell], rows: &[CellRow], retries: u32) -> Vec<(Cell, u32)> {
    let last = lrab_records::latest_cell_rows(rows);
    cells
        .iter()
        .filter_map(|c| match last.get(&c.key()) {
            None => Some((c.clone(), 0)),
            Some(r) if needs_retry(r) && r.attempt < retries => Some((c.clone(), r.attempt + 1)),
            Some(_) => None,
        })
        .collect()
}

/// Every attempt folder under `cells/` (`cells/<arm>/<model>/<task>/r<k>/<attempt>`, any
/// directory at that depth), relative to the run folder, sorted.
pub fn attempt_folders(run_dir: &Path) -> Vec<String> {
    folders_under(run_dir, "cells")
}

/// The folders at attempt depth under `<run_dir>/<top>` (`cells`, `interrupted`, `lost`),
/// relative to the run folder, sorted.
fn folders_under(run_dir: &Path, top: &str) -> Vec<String> {
    let mut level = vec![PathBuf::from(top)];
    for _ in 0..5 {
        let mut next = Vec::new();
        for rel in &level {
            let Ok(rd) = std::fs::read_dir(run_dir.join(rel)) else {
                continue;
            };
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    next.push(rel.join(e.file_name()));
                }
            }
        }
        level = next;
    }
    let mut out: Vec<String> = level
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Attempt folders under `cells/` that no row of `rows` names: attempts a runner was in the
/// middle of when it stopped (or folders nobody recorded).
pub fn unrecorded(run_dir: &Path, rows: &[CellRow]) -> Vec<String> {
    let named: BTreeSet<&str> = rows.iter().map(|r| r.attempt_dir.as_str()).collect();
    attempt_folders(run_dir)
        .into_iter()
        .filter(|a| !named.contains(a.as_str()))
        .collect()
}

/// On resume: every attempt folder under `cells/` without a row is an attempt the runner did
/// not finish recording. What it launched is killed (`arm.pgid`), the folder moves to
/// `interrupted/<arm>/<model>/<task>/r<k>/a<n>-<m>`, and a line in `interrupted.jsonl` and one
/// on stderr say which folder, where to and why. The attempt is then pending again and reruns
/// under the same number in a fresh folder.
pub fn set_aside_unrecorded(
    run_dir: &Path,
    rows: &[CellRow],
    cells: &[Cell],
    retries: u32,
) -> Result<Vec<InterruptedRecord>> {
    let todo = pending(cells, rows, retries);
    let mut out = journal_unjournalled(run_dir)?;
    for from in unrecorded(run_dir, rows) {
        let dir = run_dir.join(&from);
        super::process::reap_stale(&dir.join("arm.pgid"), run_dir);
        let attempt =
            (dir.file_name()).and_then(|n| n.to_str()?.strip_prefix('a')?.parse::<u32>().ok());
        let cell = (cells.iter())
            .find(|c| Path::new(&from).parent() == Some(Path::new(&c.rel_dir())))
            .map(|c| c.index);
        let scored = dir.join("score.json").is_file();
        let reruns = todo
            .iter()
            .any(|(c, a)| Some(c.index) == cell && Some(*a) == attempt);
        let reason = format!(
            "{}; not counted{}",
            match (cell, scored) {
                (None, _) => "no planned cell of this run has this folder",
                (_, true) =>
                    "it has score.json but no cells.csv row: the runner stopped before recording it",
                (_, false) => "no cells.csv row: the runner stopped during this attempt",
            },
            if reruns {
                ", the attempt runs again"
            } else {
                ""
            }
        );
        let moved = super::pool::set_aside_under(run_dir, &dir, INTERRUPTED_DIR)?;
        eprintln!("resume: set aside {from} -> {moved}: {reason}");
        let rec = InterruptedRecord {
            schema_version: lrab_records::SCHEMA_VERSION,
            from,
            attempt_dir: moved,
            cell,
            attempt,
            scored,
            reason,
        };
        lrab_records::append_jsonl(&run_dir.join(INTERRUPTED_JOURNAL), &rec)?;
        out.push(rec);
    }
    Ok(out)
}

/// A resume killed between moving a folder to `interrupted/` and journalling it leaves the
/// folder unnamed: the next resume names it (with `from` rebuilt from its path).
fn journal_unjournalled(run_dir: &Path) -> Result<Vec<InterruptedRecord>> {
    let journal = run_dir.join(INTERRUPTED_JOURNAL);
    let named: BTreeSet<String> = lrab_records::read_jsonl_lenient::<InterruptedRecord>(&journal)
        .map(|(v, _)| v.into_iter().map(|r| r.attempt_dir).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for moved in folders_under(run_dir, INTERRUPTED_DIR) {
        if named.contains(&moved) {
            continue;
        }
        let rel = &moved[INTERRUPTED_DIR.len()..];
        let from = format!("cells{}", rel.rsplit_once('-').map_or(rel, |(a, _)| a));
        let reason = "found under interrupted/ without its journal line (the resume that set it \
                      aside stopped before recording it); not counted"
            .to_string();
        eprintln!("resume: set aside {from} -> {moved}: {reason}");
        let rec = InterruptedRecord {
            schema_version: lrab_records::SCHEMA_VERSION,
            attempt: (Path::new(&from).file_name())
                .and_then(|n| n.to_str()?.strip_prefix('a')?.parse().ok()),
            from,
            scored: run_dir.join(&moved).join("score.json").is_file(),
            attempt_dir: moved,
            cell: None,
            reason,
        };
        lrab_records::append_jsonl(&journal, &rec)?;
        out.push(rec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::matrix::expand;
    use lrab_records::FailureMode;

    fn row(task: &str, attempt: u32, fm: FailureMode) -> CellRow {
        let scored = (fm != FailureMode::Timeout).then_some(0.0);
        CellRow {
            attempt,
            milestone_score: scored,
            final_score: scored,
            failure_mode: fm,
            attempt_dir: "x".into(),
            ..CellRow::example("a", "m", task, 0.0)
        }
    }

    #[test]
    fn pending_follows_the_retry_rule() {
        let cells = expand(
            &["a".into()],
            &["m".into()],
            &["T1".into(), "T2".into(), "T3".into(), "T4".into()],
            1,
        );
        let rows = vec![
            row("T1", 0, FailureMode::Completed),
            row("T2", 0, FailureMode::Timeout),
            row("T3", 0, FailureMode::Timeout),
            row("T3", 1, FailureMode::Timeout),
        ];
        let p = pending(&cells, &rows, 1);
        let got: Vec<(String, u32)> = p.iter().map(|(c, a)| (c.task.clone(), *a)).collect();
        assert_eq!(got, vec![("T2".to_string(), 1), ("T4".to_string(), 0)]);
    }

    #[test]
    fn unrecorded_folders_are_set_aside_with_the_reason() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path();
        let cells = expand(&["a".into()], &["m".into()], &["T1".into(), "T2".into()], 1);
        let mut done = row("T1", 0, FailureMode::Completed);
        done.attempt_dir = "cells/a/m/T1/r0/a0".into();
        let mk = |rel: &str, scored: bool| {
            std::fs::create_dir_all(run.join(rel)).unwrap();
            if scored {
                std::fs::write(run.join(rel).join("score.json"), "{}").unwrap();
            }
        };
        mk("cells/a/m/T1/r0/a0", true); // recorded
        mk("cells/a/m/T2/r0/a0", true); // scored, stopped before its row
        mk("cells/x/m/T9/r0/a0", false); // no planned cell's
        mk("interrupted/a/m/T1/r0/a3-2", false); // moved by a resume killed before journalling
        let got = set_aside_unrecorded(run, &[done], &cells, 1).unwrap();
        let seen: Vec<_> = (got.iter())
            .map(|r| (r.from.as_str(), r.attempt_dir.as_str(), r.cell, r.scored))
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    "cells/a/m/T1/r0/a3",
                    "interrupted/a/m/T1/r0/a3-2",
                    None,
                    false
                ),
                (
                    "cells/a/m/T2/r0/a0",
                    "interrupted/a/m/T2/r0/a0-1",
                    Some(1),
                    true
                ),
                (
                    "cells/x/m/T9/r0/a0",
                    "interrupted/x/m/T9/r0/a0-1",
                    None,
                    false
                ),
            ]
        );
        assert_eq!(got[0].attempt, Some(3));
        assert!(got[0].reason.contains("without its journal line"));
        assert!(got[1].reason.contains("score.json but no cells.csv row"));
        assert!(got[1].reason.ends_with("the attempt runs again"));
        assert!(got[2].reason.starts_with("no planned cell"));
        assert_eq!(attempt_folders(run), vec!["cells/a/m/T1/r0/a0".to_string()]);
        assert!(run.join("interrupted/a/m/T2/r0/a0-1/score.json").is_file());
        let (lines, bad) =
            lrab_records::read_jsonl_lenient::<InterruptedRecord>(&run.join(INTERRUPTED_JOURNAL))
                .unwrap();
        assert_eq!((lines, bad), (got, 0));
    }

    #[test]
    fn torn_lines_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        row("T1", 0, FailureMode::Completed).append_to(&p).unwrap();
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"r,a,m,T2,1")
            .unwrap();
        assert_eq!(read_rows_lenient(&p).unwrap().len(), 1);
        row("T3", 0, FailureMode::Completed).append_to(&p).unwrap();
        assert_eq!(read_rows_lenient(&p).unwrap().len(), 2);
    }
}
