//! Clock: with `--time-budget`, warnings at 60 % and 85 % of the budget ask that every
//! deliverable exist now (a short version beats a missing file); at 100 % the run stops cleanly.

use serde::{Deserialize, Serialize};

pub const THRESHOLDS: [u32; 2] = [60, 85];

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Clock {
    pub budget_s: Option<f64>,
    pub fired: Vec<u32>,
}

impl Clock {
    pub fn new(budget_minutes: Option<f64>) -> Self {
        Clock {
            budget_s: budget_minutes.map(|m| m * 60.0),
            fired: Vec::new(),
        }
    }

    /// The warning due at `elapsed_s`, if any (each threshold fires once; when several are due
    /// at once only the latest is sent).
    pub fn check(&mut self, elapsed_s: f64) -> Option<String> {
        let budget = self.budget_s?;
        if budget <= 0.0 {
            return None;
        }
        let pct = elapsed_s / budget * 100.0;
        let due: Vec<u32> = THRESHOLDS
            .iter()
            .copied()
            .filter(|t| pct >= *t as f64 && !self.fired.contains(t))
            .collect();
        let last = *due.last()?;
        self.fired.extend(due);
        let left_min = ((budget - elapsed_s) / 60.0).max(0.0);
        Some(format!(
            "Time check: {last}% of the time budget is used, about {left_min:.0} min left. Make sure every required output file exists now, even in a short form, then improve them; finish before the time runs out."
        ))
    }

    /// A warning from [`Clock::check`] with the deliverables still missing named.
    pub fn with_missing(warning: &str, missing: &[String]) -> String {
        if missing.is_empty() {
            warning.to_string()
        } else {
            format!("{warning} Still missing: {}.", missing.join(", "))
        }
    }

    pub fn expired(&self, elapsed_s: f64) -> bool {
        self.budget_s.is_some_and(|b| elapsed_s >= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_fire_once_at_60_and_85() {
        let mut c = Clock::new(Some(10.0));
        assert_eq!(c.check(100.0), None);
        let w = c.check(361.0).unwrap();
        assert!(w.contains("60%") && w.contains("every required output"));
        assert_eq!(c.check(400.0), None);
        assert!(c.check(520.0).unwrap().contains("85%"));
        assert_eq!(c.check(590.0), None);
        assert!(!c.expired(599.0) && c.expired(600.0));
        let mut c = Clock::new(None);
        assert_eq!(c.check(1e9), None);
        // both due at once (e.g. after a resume): one message, the later threshold
        let mut c = Clock::new(Some(1.0));
        assert!(c.check(55.0).unwrap().contains("85%"));
        assert_eq!(c.fired, vec![60, 85]);
    }
}
