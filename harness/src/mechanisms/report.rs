//! An honest final report: the verification level reached since the last write (tested,
//! exercised, inspected, unchecked, failed) and what was not done.

use crate::shaping::Verdict;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A test run passed after the last write.
    Tested,
    /// Code written in the run was executed successfully after the last write.
    Exercised,
    /// Files were read back after the last write.
    Inspected,
    /// Nothing checked the last writes.
    Unchecked,
    /// The latest test run after the last write failed.
    Failed,
}

impl Level {
    /// The name used in the report and the event log.
    pub fn name(self) -> &'static str {
        match self {
            Level::Tested => "tested",
            Level::Exercised => "exercised",
            Level::Inspected => "inspected",
            Level::Unchecked => "unchecked",
            Level::Failed => "failed",
        }
    }
}

/// Tracks the order of writes and checks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VerificationTracker {
    seq: u64,
    last_write: u64,
    last_test: Option<(u64, Verdict)>,
    last_exec_ok: u64,
    last_read: u64,
}

impl VerificationTracker {
    fn tick(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    pub fn on_write(&mut self) {
        self.last_write = self.tick();
    }
    pub fn on_test(&mut self, v: Verdict) {
        let s = self.tick();
        if v != Verdict::Unknown {
            self.last_test = Some((s, v));
        }
    }
    pub fn on_exec_ok(&mut self) {
        self.last_exec_ok = self.tick();
    }
    pub fn on_read(&mut self) {
        self.last_read = self.tick();
    }
    pub fn level(&self) -> Level {
        if let Some((s, v)) = self.last_test {
            if s > self.last_write {
                return if v == Verdict::Passed {
                    Level::Tested
                } else {
                    Level::Failed
                };
            }
        }
        if self.last_exec_ok > self.last_write && self.last_write > 0 {
            return Level::Exercised;
        }
        if self.last_read > self.last_write && self.last_write > 0 {
            return Level::Inspected;
        }
        Level::Unchecked
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FinalReport {
    pub status: String,
    pub verification: Level,
    pub turns: u32,
    pub tool_calls: u32,
    pub missing_artifacts: Vec<String>,
    pub open_plan_items: Vec<String>,
    pub tests: Vec<(String, Verdict)>,
    pub mechanism_counts: std::collections::BTreeMap<String, u64>,
    /// Totals over the run (all launches), from the server's counts.
    #[serde(default)]
    pub model_calls: u32,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
}

impl FinalReport {
    /// Human-readable lines for stdout (the transcript).
    pub fn lines(&self) -> Vec<String> {
        let mut v = vec![
            format!("[lrab-harness] status: {}", self.status),
            format!(
                "[lrab-harness] verification: {}",
                serde_json::to_value(self.verification)
                    .ok()
                    .and_then(|x| x.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
            format!(
                "[lrab-harness] turns: {}, tool calls: {}",
                self.turns, self.tool_calls
            ),
        ];
        for (c, verdict) in &self.tests {
            v.push(format!("[lrab-harness] test `{c}`: {}", verdict.as_str()));
        }
        if self.missing_artifacts.is_empty() && self.open_plan_items.is_empty() {
            v.push("[lrab-harness] not done: nothing known".into());
        } else {
            for a in &self.missing_artifacts {
                v.push(format!("[lrab-harness] not done: missing {a}"));
            }
            for p in &self.open_plan_items {
                v.push(format!("[lrab-harness] not done: plan item '{p}'"));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_order_of_writes_and_checks() {
        let mut t = VerificationTracker::default();
        assert_eq!(t.level(), Level::Unchecked);
        t.on_write();
        assert_eq!(t.level(), Level::Unchecked);
        t.on_read();
        assert_eq!(t.level(), Level::Inspected);
        t.on_exec_ok();
        assert_eq!(t.level(), Level::Exercised);
        t.on_test(Verdict::Failed);
        assert_eq!(t.level(), Level::Failed);
        t.on_write();
        assert_eq!(t.level(), Level::Unchecked);
        t.on_test(Verdict::Passed);
        assert_eq!(t.level(), Level::Tested);
        t.on_test(Verdict::Unknown);
        assert_eq!(t.level(), Level::Tested);
    }
}
