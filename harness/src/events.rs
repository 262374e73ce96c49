//! The per-run event log: one [`lrab_records::EventLine`] per line in
//! the state folder's `events.jsonl` — every model call (tokens, latency), every tool call (with
//! its typed outcome and result), every mechanism firing — for the runner, the analysis and the
//! safety glue. Mechanism firings are also counted in memory for the final report.

use lrab_records::{Event, EventLine, MechanismFiring};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

/// The writer of the event log (or a counter only, for tests and benchmarks).
pub struct EventLog {
    w: Option<BufWriter<File>>,
    start: Instant,
    /// The launch number written into every line.
    pub run: u32,
    /// Mechanism firings by `name` and `name.action`.
    pub counts: BTreeMap<String, u64>,
}

impl EventLog {
    /// Append to the log opened by the caller (beneath the state folder's handle; a relaunch
    /// continues the same file).
    pub fn open(file: std::io::Result<File>, run: u32) -> std::io::Result<Self> {
        let f = file?;
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

    /// Write one event (flushed at once: a killed harness loses at most the line being written).
    pub fn emit(&mut self, event: Event) {
        let Some(w) = &mut self.w else { return };
        let line = EventLine {
            schema_version: lrab_records::SCHEMA_VERSION,
            t_ms: self.start.elapsed().as_millis() as u64,
            run: self.run,
            event,
        };
        if let Ok(text) = serde_json::to_string(&line) {
            let _ = writeln!(w, "{text}");
            let _ = w.flush();
        }
    }

    /// A mechanism fired: counted under `name` (and `name.action`) and logged.
    pub fn mechanism(&mut self, name: &str, action: &str, detail: Value) {
        *self.counts.entry(name.to_string()).or_insert(0) += 1;
        *self.counts.entry(format!("{name}.{action}")).or_insert(0) += 1;
        self.emit(Event::Mechanism(MechanismFiring {
            name: name.to_string(),
            action: action.to_string(),
            detail,
        }));
    }

    /// Firings counted under `key` (`name` or `name.action`).
    pub fn count(&self, key: &str) -> u64 {
        self.counts.get(key).copied().unwrap_or(0)
    }
}
