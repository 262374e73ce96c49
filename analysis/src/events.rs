//! Mechanism activations from our harness's event logs (the state folder's `events.jsonl`, found
//! with `lrab_records::layout::attempt_events` and read through `lrab_records::EventLog`; a
//! `mechanism` event marks a firing). Logs are looked up from a cell's `attempt_dir` (relative
//! to the folder of its cells.csv); result folders of the older layout are still read. A process killed mid-write
//! can leave a truncated line, so unparsable lines are skipped and counted, never guessed at.
//! A Mingbird arm has no event log: its firings are the markers it prints ([`read_markers`]).

use std::collections::BTreeMap;
use std::path::Path;

/// Firings per mechanism name in one log, plus the number of unparsable lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Activations {
    /// name -> firings.
    pub counts: BTreeMap<String, u64>,
    /// Lines that were not events.
    pub bad_lines: usize,
}

/// Count mechanism firings in the log text.
pub fn count(text: &str) -> Activations {
    let log = lrab_records::EventLog::parse(text);
    let mut a = Activations {
        bad_lines: log.bad_lines,
        ..Default::default()
    };
    for m in log.mechanisms() {
        let name = if m.name.is_empty() {
            "unnamed"
        } else {
            &m.name
        };
        *a.counts.entry(name.to_string()).or_default() += 1;
    }
    a
}

/// Read the first existing log for `attempt_dir`; `None` when there is none.
pub fn read(attempt_dir: &Path) -> Option<Activations> {
    lrab_records::layout::event_candidates(attempt_dir)
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| count(&t))
}

/// Mingbird's printed markers in the arm output of `attempt_dir/transcript.txt`, by marker key
/// (every one of the 21, fired or not); `None` without a transcript.
pub fn read_markers(attempt_dir: &Path) -> Option<Activations> {
    let text = std::fs::read(attempt_dir.join("transcript.txt")).ok()?;
    let text = String::from_utf8_lossy(&text);
    let counts = crate::markers::count(crate::markers::arm_output(&text));
    Some(Activations {
        counts: crate::markers::MARKERS
            .iter()
            .zip(counts)
            .map(|(m, n)| (m.key.to_string(), n))
            .collect(),
        bad_lines: 0,
    })
}

/// The first existing log for `attempt_dir`, whole (the cell pages show every event).
pub fn read_log(attempt_dir: &Path) -> Option<lrab_records::EventLog> {
    lrab_records::layout::event_candidates(attempt_dir)
        .iter()
        .find_map(|p| lrab_records::read_events(p))
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_mechanisms_and_skips_truncated_lines() {
        let log = concat!(
            "{\"t_ms\":1,\"run\":0,\"kind\":\"model_call\",\"prompt_tokens\":10}\n",
            "{\"t_ms\":2,\"run\":0,\"kind\":\"mechanism\",\"name\":\"finish_gate\",\"action\":\"reject\"}\n",
            "{\"t_ms\":3,\"run\":0,\"kind\":\"mechanism\",\"name\":\"finish_gate\",\"action\":\"reject\"}\n",
            "{\"t_ms\":4,\"run\":1,\"kind\":\"mechanism\",\"name\":\"anti_loop\",\"action\":\"nudge\"}\n",
            "{\"t_ms\":5,\"run\":1,\"kind\":\"mecha"
        );
        let a = super::count(log);
        assert_eq!(a.counts["finish_gate"], 2);
        assert_eq!(a.counts["anti_loop"], 1);
        assert_eq!(a.bad_lines, 1);
    }
}
