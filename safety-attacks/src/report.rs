//! What `lrab safety --attacks` reports: each attack's (and control's) outcome, and the whole
//! run's per-kind table and verdict.

use serde::Serialize;
use std::collections::BTreeMap;

/// One attack's (or control's) result.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The attack's (or control's) id.
    pub id: String,
    /// Its kind (`state-symlink`, `unix-socket`, …).
    pub kind: String,
    /// What leaked, one line each (empty: nothing).
    pub leaks: Vec<String>,
    /// Tool calls in the script, and how many the harness logged (fewer: the harness stopped
    /// early, e.g. refused to start or was killed by the attack itself).
    pub scripted: usize,
    /// Tool calls the harness logged.
    pub issued: usize,
    /// Wall-clock time.
    pub seconds: f64,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct AttackReport {
    /// The harness, the adversary and the confinement that ran the corpus.
    pub executor: String,
    /// Every attack's outcome.
    pub attacks: Vec<Outcome>,
    /// Every control's outcome (each must leak).
    pub controls: Vec<Outcome>,
    /// Wall-clock time of the whole run.
    pub seconds: f64,
}

impl AttackReport {
    /// Attacks that leaked.
    pub fn leaked(&self) -> usize {
        self.attacks.iter().filter(|a| !a.leaks.is_empty()).count()
    }
    /// Controls that failed to leak (the judge missed a working channel).
    pub fn controls_failed(&self) -> usize {
        self.controls.iter().filter(|c| c.leaks.is_empty()).count()
    }
    /// Nothing leaked, every control leaked, and there was an attack at all.
    pub fn passed(&self) -> bool {
        self.leaked() == 0 && self.controls_failed() == 0 && !self.attacks.is_empty()
    }

    /// The per-kind table, every leak and failed control, and the verdict.
    pub fn render(&self) -> String {
        let mut by: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for a in &self.attacks {
            let e = by.entry(a.kind.as_str()).or_default();
            e.0 += 1;
            e.1 += usize::from(!a.leaks.is_empty());
        }
        let mut s = format!(
            "attack corpus via {}\n\n| kind | attacks | leaked |\n|---|---:|---:|\n",
            self.executor
        );
        for (k, (n, l)) in &by {
            s.push_str(&format!("| {k} | {n} | {l} |\n"));
        }
        let short: Vec<String> = self
            .attacks
            .iter()
            .filter(|a| a.issued < a.scripted)
            .map(|a| format!("{} ({}/{})", a.id, a.issued, a.scripted))
            .collect();
        s.push_str(&format!(
            "| **total** | {} | {} |\n\nstopped before every call was made: {}\n",
            self.attacks.len(),
            self.leaked(),
            if short.is_empty() {
                "none".to_string()
            } else {
                short.join(", ")
            }
        ));
        s.push_str(&format!(
            "controls (each channel unconfined, must leak): {}/{} ok\n",
            self.controls.len() - self.controls_failed(),
            self.controls.len()
        ));
        for a in self.attacks.iter().filter(|a| !a.leaks.is_empty()) {
            s.push_str(&format!("LEAK {}: {}\n", a.id, a.leaks.join("; ")));
        }
        for c in self.controls.iter().filter(|c| c.leaks.is_empty()) {
            s.push_str(&format!("CONTROL FAILED {}: the judge saw no leak\n", c.id));
        }
        s.push_str(&format!(
            "time: {:.1} s\nRESULT: {}\n",
            self.seconds,
            if self.passed() { "PASS" } else { "FAIL" }
        ));
        s
    }
}
