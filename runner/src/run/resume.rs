//! Resume: what is left to do in a run folder. `cells.csv` is the source of truth — a row is
//! appended atomically only after the attempt's `score.json` is on disk, so after any crash
//! (even SIGKILL) a cell is either recorded or rerun from a fresh attempt folder, never lost
//! and never counted twice.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use lrab_records::CellRow;

use super::cell::needs_retry;
use super::matrix::Cell;

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

/// Latest attempt row per (arm, model, task, repeat).
pub fn latest(rows: &[CellRow]) -> BTreeMap<(String, String, String, u32), CellRow> {
    let mut m: BTreeMap<_, CellRow> = BTreeMap::new();
    for r in rows {
        let k = (r.arm.clone(), r.model.clone(), r.task.clone(), r.repeat);
        match m.get(&k) {
            Some(x) if x.attempt >= r.attempt => {}
            _ => {
                m.insert(k, r.clone());
            }
        }
    }
    m
}

/// For each planned cell still to do: the first attempt to run. Done cells are left out.
pub fn pending(cells: &[Cell], rows: &[CellRow], retries: u32) -> Vec<(Cell, u32)> {
    let last = latest(rows);
    cells
        .iter()
        .filter_map(|c| match last.get(&c.key()) {
            None => Some((c.clone(), 0)),
            Some(r) if needs_retry(r) && r.attempt < retries => Some((c.clone(), r.attempt + 1)),
            Some(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::matrix::expand;
    use lrab_records::FailureMode;

    fn row(task: &str, attempt: u32, fm: FailureMode) -> CellRow {
        CellRow {
            run_id: "r".into(),
            arm: "a".into(),
            model: "m".into(),
            task: task.into(),
            tier: 1,
            repeat: 0,
            attempt,
            score: 0.0,
            milestone_score: (fm != FailureMode::Timeout).then_some(0.0),
            final_score: (fm != FailureMode::Timeout).then_some(0.0),
            wall_seconds: 1.0,
            exit_code: Some(0),
            failure_mode: fm,
            backend: "sim".into(),
            simulated: true,
            prompt_tokens: None,
            completion_tokens: None,
            model_calls: None,
            tool_calls: None,
            attempt_dir: "x".into(),
            schema_version: CellRow::SCHEMA_VERSION,
            turns: None,
            cached_prompt_tokens: None,
            uncached_prompt_tokens: None,
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
