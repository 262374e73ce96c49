//! `plan.jsonl`: the cells of a matrix in plan order, one per line (what `--shard k/n` slices).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::RecordError;

/// One cell of a plan: an arm × model × task × repeat at a fixed position. Ordered by `index`
/// first, so sorting cells restores plan order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PlannedCell {
    /// Position in the whole matrix (stable across shards).
    pub index: usize,
    /// Arm name.
    pub arm: String,
    /// Model name.
    pub model: String,
    /// Task id.
    pub task: String,
    /// Repeat index.
    pub repeat: u32,
}

impl PlannedCell {
    /// Identity independent of the index (used to match rows on resume and merge).
    pub fn key(&self) -> (String, String, String, u32) {
        (
            self.arm.clone(),
            self.model.clone(),
            self.task.clone(),
            self.repeat,
        )
    }

    /// Folder of the cell, relative to the run folder: `cells/<arm>/<model>/<task>/r<repeat>`
    /// (a `:` or `/` in a model name becomes `_`).
    pub fn rel_dir(&self) -> String {
        let model = self.model.replace([':', '/'], "_");
        format!(
            "cells/{}/{}/{}/r{}",
            self.arm, model, self.task, self.repeat
        )
    }

    /// The cell as people read it in progress lines and errors: `arm × model × task #repeat`.
    pub fn label(&self) -> String {
        format!(
            "{} × {} × {} #{}",
            self.arm, self.model, self.task, self.repeat
        )
    }

    /// The cell's line in `plan.jsonl` (and on `lrab plan`'s stdout): its fields and the schema
    /// version, without the newline.
    pub fn plan_line(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&Line {
            schema_version: crate::SCHEMA_VERSION,
            cell: self.clone(),
        })
    }
}

/// The line of a cell: its fields plus the schema version.
#[derive(Serialize, Deserialize)]
struct Line {
    #[serde(default = "crate::legacy_version")]
    schema_version: u32,
    #[serde(flatten)]
    cell: PlannedCell,
}

/// Writes `plan.jsonl` atomically (one cell per line, in plan order).
pub fn write_plan(path: &Path, cells: &[PlannedCell]) -> Result<(), RecordError> {
    let mut text = String::new();
    for c in cells {
        text.push_str(
            &c.plan_line()
                .map_err(|e| RecordError::invalid(path, None, e.to_string()))?,
        );
        text.push('\n');
    }
    lrab_util::write_atomic(path, text.as_bytes()).map_err(|e| RecordError::io(path, e))
}

/// Reads `plan.jsonl`; errors name the line.
pub fn read_plan(path: &Path) -> Result<Vec<PlannedCell>, RecordError> {
    let text = std::fs::read_to_string(path).map_err(|e| RecordError::io(path, e))?;
    let mut out = Vec::new();
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line: Line = serde_json::from_str(l)
            .map_err(|e| RecordError::invalid(path, Some(i + 1), e.to_string()))?;
        crate::check_version(line.schema_version, "the cell")
            .map_err(|m| RecordError::invalid(path, Some(i + 1), m))?;
        out.push(line.cell);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_roundtrips_and_legacy_lines_load() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("plan.jsonl");
        let c = PlannedCell {
            index: 2,
            arm: "harness".into(),
            model: "qwen3:4b".into(),
            task: "WF-01".into(),
            repeat: 1,
        };
        write_plan(&p, std::slice::from_ref(&c)).unwrap();
        assert_eq!(read_plan(&p).unwrap(), vec![c.clone()]);
        assert_eq!(c.rel_dir(), "cells/harness/qwen3_4b/WF-01/r1");
        assert_eq!(c.label(), "harness × qwen3:4b × WF-01 #1");
        let line: serde_json::Value = serde_json::from_str(&c.plan_line().unwrap()).unwrap();
        assert_eq!(line["schema_version"], crate::SCHEMA_VERSION);
        assert_eq!(line["index"], 2);
        std::fs::write(
            &p,
            "{\"index\":2,\"arm\":\"harness\",\"model\":\"qwen3:4b\",\"task\":\"WF-01\",\"repeat\":1}\n",
        )
        .unwrap();
        assert_eq!(read_plan(&p).unwrap(), vec![c]);
        std::fs::write(&p, "{\"index\":\n").unwrap();
        assert!(read_plan(&p)
            .unwrap_err()
            .to_string()
            .contains("plan.jsonl:1"));
    }
}
