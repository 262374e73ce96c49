//! The second fit round: the gap between a real-binary verification and the analytic
//! prediction for the same profiles, per (arm, model), fed back into the targets.
//!
//! The analytic model of a cell (`analytic.rs`) does not know everything a real arm does (its
//! own call caps, retries, prompt growth); the verification measures what it misses. Round
//! `k + 1` fits `published − (verified − predicted)` instead of `published`, so that the real
//! binaries, not the analytic model, land on the published mean. The residuals are data: a
//! TOML file (`sim/calibration/residuals.toml`) written by `--residuals-out` from a
//! verification and read by `--residuals`, so the fit stays reproducible without rerunning
//! the arms. Only third-party arms ever have residuals; our harness is held out.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// One measured gap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Residual {
    /// The fitted arm.
    pub arm: String,
    /// The simulated model.
    pub model: String,
    /// Mean score of the real binary on the profiles of the round that was verified.
    pub verified: f64,
    /// The analytic prediction for the same profiles.
    pub predicted: f64,
}

/// A residual file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Residuals {
    /// Where the numbers come from (the verification that measured them).
    pub origin: String,
    /// The gaps, one per (arm, model).
    #[serde(default, rename = "residual")]
    pub residuals: Vec<Residual>,
}

impl Residuals {
    /// Reads and validates a residual file; errors name the file and the entry.
    pub fn load(path: &Path) -> Result<Residuals> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--residuals: cannot read {}", path.display()))?;
        let r: Residuals = toml::from_str(&text)
            .with_context(|| format!("{}: not a residual file", path.display()))?;
        let mut seen = BTreeMap::new();
        for (i, x) in r.residuals.iter().enumerate() {
            if x.arm == crate::published::HELD_OUT {
                bail!(
                    "{}: residual #{}: `{}` is held out of the fit and has no residual",
                    path.display(),
                    i + 1,
                    x.arm
                );
            }
            for (f, v) in [("verified", x.verified), ("predicted", x.predicted)] {
                if !(0.0..=1.0).contains(&v) {
                    bail!(
                        "{}: residual #{} ({} × {}): `{f}` = {v} is not a mean score in [0, 1]",
                        path.display(),
                        i + 1,
                        x.arm,
                        x.model
                    );
                }
            }
            if seen.insert((x.arm.clone(), x.model.clone()), i).is_some() {
                bail!(
                    "{}: residual #{}: {} × {} appears twice",
                    path.display(),
                    i + 1,
                    x.arm,
                    x.model
                );
            }
        }
        Ok(r)
    }

    /// `verified − predicted` of one (arm, model), if measured.
    pub fn gap(&self, arm: &str, model: &str) -> Option<f64> {
        self.residuals
            .iter()
            .find(|x| x.arm == arm && x.model == model)
            .map(|x| x.verified - x.predicted)
    }

    /// The TOML text of these residuals (what `--residuals-out` writes).
    pub fn render(&self) -> String {
        let mut s = String::from(
            "# Residuals of a real-binary verification of the simulator's profiles, per (arm, model):\n\
             # `verified` = the real binary's mean score on the sim, `predicted` = the analytic\n\
             # prediction for the same profiles. `lrab sim calibrate --residuals FILE` fits\n\
             # published − (verified − predicted). Third-party arms only; written by\n\
             # `lrab sim calibrate --residuals-out`. Sim numbers are not results of real models.\n",
        );
        s.push_str(&format!("origin = {:?}\n", self.origin));
        for x in &self.residuals {
            s.push_str(&format!(
                "\n[[residual]]\narm = {:?}\nmodel = {:?}\nverified = {:.3}\npredicted = {:.3}\n",
                x.arm, x.model, x.verified, x.predicted
            ));
        }
        s
    }
}

/// The corrected target mean (kept inside the score range).
pub fn corrected(published: f64, gap: f64) -> f64 {
    (published - gap).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_and_load_round_trip() {
        let r = Residuals {
            origin: "a test".into(),
            residuals: vec![Residual {
                arm: "opencode".into(),
                model: "sim-4b".into(),
                verified: 0.349,
                predicted: 0.472,
            }],
        };
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.toml");
        std::fs::write(&p, r.render()).unwrap();
        assert_eq!(Residuals::load(&p).unwrap(), r);
        let g = r.gap("opencode", "sim-4b").unwrap();
        assert!((g + 0.123).abs() < 1e-9);
        assert!((corrected(0.465, g) - 0.588).abs() < 1e-9);
        assert_eq!(corrected(0.95, -0.2), 1.0);
        assert_eq!(r.gap("agent-mini", "sim-4b"), None);
    }

    #[test]
    fn bad_files_name_the_entry() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.toml");
        let entry = |arm: &str, v: f64| {
            format!("\n[[residual]]\narm = \"{arm}\"\nmodel = \"sim-2b\"\nverified = {v}\npredicted = 0.2\n")
        };
        std::fs::write(&p, format!("origin = \"x\"\n{}", entry("opencode", 1.5))).unwrap();
        let e = format!("{:#}", Residuals::load(&p).unwrap_err());
        assert!(
            e.contains("r.toml") && e.contains("residual #1") && e.contains("verified"),
            "{e}"
        );
        std::fs::write(&p, format!("origin = \"x\"\n{}", entry("harness", 0.5))).unwrap();
        let e = format!("{:#}", Residuals::load(&p).unwrap_err());
        assert!(e.contains("held out"), "{e}");
        std::fs::write(
            &p,
            format!(
                "origin = \"x\"\n{}{}",
                entry("opencode", 0.5),
                entry("opencode", 0.4)
            ),
        )
        .unwrap();
        let e = format!("{:#}", Residuals::load(&p).unwrap_err());
        assert!(e.contains("twice"), "{e}");
        std::fs::write(&p, "origin = \"x\"\nbogus = 1\n").unwrap();
        assert!(Residuals::load(&p).is_err());
    }
}
