//! The per-run event log: one JSON object per line in `<workdir>/.lrab/events.jsonl` — every
//! model call (tokens, latency), every tool call, every mechanism firing — for the runner and
//! the analysis. Mechanism firings are also counted in memory for the final report.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

pub struct EventLog {
    w: Option<BufWriter<File>>,
    start: Instant,
    pub run: u32,
    pub counts: BTreeMap<String, u64>,
}

impl EventLog {
    /// Append to `path` (a relaunch continues the same file).
    pub fn open(path: &Path, run: u32) -> std::io::Result<Self> {
        let f = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(EventLog {
            w: Some(BufWriter::new(f)),
            start: Instant::now(),
            run,
            counts: BTreeMap::new(),
        })
    }
    /// A log that only counts (tests, benchmarks).
    pub fn memory() -> Self {
        EventLog {
            w: None,
            start: Instant::now(),
            run: 0,
            counts: BTreeMap::new(),
        }
    }

    pub fn emit(&mut self, kind: &str, data: Value) {
        let Some(w) = &mut self.w else { return };
        let mut m = Map::new();
        m.insert(
            "t_ms".into(),
            json!(self.start.elapsed().as_millis() as u64),
        );
        m.insert("run".into(), json!(self.run));
        m.insert("kind".into(), json!(kind));
        if let Value::Object(d) = data {
            m.extend(d);
        }
        let _ = writeln!(w, "{}", Value::Object(m));
        let _ = w.flush();
    }

    /// A mechanism fired: counted under `name` (and `name.action`) and logged.
    pub fn mechanism(&mut self, name: &str, action: &str, detail: Value) {
        *self.counts.entry(name.to_string()).or_insert(0) += 1;
        *self.counts.entry(format!("{name}.{action}")).or_insert(0) += 1;
        self.emit(
            "mechanism",
            json!({"name": name, "action": action, "detail": detail}),
        );
    }

    pub fn count(&self, key: &str) -> u64 {
        self.counts.get(key).copied().unwrap_or(0)
    }
}
