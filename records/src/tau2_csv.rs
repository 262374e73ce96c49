//! `tau2.csv`, the per-simulation rows `lrab tau2 run` and `lrab tau2 grade` write and
//! `lrab analyze` reads: `domain,task,arm,trial,reward,components,steps,termination,simulated`.
//! Files written before `simulated` existed, and hand-made ones, may lack every column but
//! `domain,task,arm,reward` (`trial` then reads as 0, `simulated` as false).

use crate::error::RecordError;
use std::path::Path;

/// The header this build writes.
pub const TAU2_CSV_HEADER: &str =
    "domain,task,arm,trial,reward,components,steps,termination,simulated";

/// The columns a file must have.
pub const TAU2_CSV_REQUIRED: [&str; 4] = ["domain", "task", "arm", "reward"];

/// A simulation's reward as the CSV carries it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tau2Reward {
    /// Graded, 0..=1 (our runs write 1 or 0).
    Score(f64),
    /// A gating NL assertion had no judge (`ungraded`).
    Ungraded,
    /// An error cell set aside (empty).
    SetAside,
}

impl Tau2Reward {
    fn text(self) -> String {
        match self {
            Tau2Reward::Score(x) => format!("{x}"),
            Tau2Reward::Ungraded => "ungraded".into(),
            Tau2Reward::SetAside => String::new(),
        }
    }

    fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "" => Ok(Tau2Reward::SetAside),
            "ungraded" => Ok(Tau2Reward::Ungraded),
            t => match t.parse::<f64>() {
                Ok(x) if (0.0..=1.0).contains(&x) => Ok(Tau2Reward::Score(x)),
                Ok(x) => Err(format!("reward {x} outside [0, 1]")),
                Err(_) => Err(format!(
                    "`{t}` is not a reward (a number in [0, 1], `ungraded`, or empty)"
                )),
            },
        }
    }
}

/// One row.
#[derive(Clone, Debug, PartialEq)]
pub struct Tau2Row {
    /// Domain (`retail`, …).
    pub domain: String,
    /// Task id.
    pub task: String,
    /// Arm name.
    pub arm: String,
    /// Trial, from 0.
    pub trial: u64,
    /// Reward.
    pub reward: Tau2Reward,
    /// `DB=1;ENV_ASSERTION=1;…`.
    pub components: String,
    /// Messages in the trajectory.
    pub steps: u64,
    /// Upstream's termination reason.
    pub termination: String,
    /// The run used the simulated backend.
    pub simulated: bool,
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Tau2Row {
    /// The row as a CSV line (no newline), in [`TAU2_CSV_HEADER`]'s order.
    pub fn line(&self) -> String {
        [
            field(&self.domain),
            field(&self.task),
            field(&self.arm),
            self.trial.to_string(),
            self.reward.text(),
            field(&self.components),
            self.steps.to_string(),
            field(&self.termination),
            self.simulated.to_string(),
        ]
        .join(",")
    }
}

/// The whole file: header and rows, each line ending in a newline.
pub fn tau2_csv_text(rows: &[Tau2Row]) -> String {
    let mut out = String::from(TAU2_CSV_HEADER);
    out.push('\n');
    for r in rows {
        out.push_str(&r.line());
        out.push('\n');
    }
    out
}

/// Reads a `tau2.csv`; an error names the file, the line and the column.
pub fn read_tau2_csv(path: &Path) -> Result<Vec<Tau2Row>, RecordError> {
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| RecordError::invalid(path, None, e.to_string()))?;
    let header: Vec<String> = r
        .headers()
        .map_err(|e| RecordError::invalid(path, Some(1), e.to_string()))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    for name in TAU2_CSV_REQUIRED {
        if col(name).is_none() {
            let msg = format!("no `{name}` column: not a tau2.csv");
            return Err(RecordError::invalid(path, Some(1), msg));
        }
    }
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| RecordError::invalid(path, Some(line), e.to_string()))?;
        let get = |name: &str| col(name).and_then(|c| rec.get(c)).map(str::trim);
        let bad = |name: &str, what: String| {
            RecordError::invalid(path, Some(line), format!("column `{name}`: {what}"))
        };
        let text = |name: &str| -> Result<String, RecordError> {
            match get(name) {
                Some(v) if !v.is_empty() => Ok(v.to_string()),
                _ if TAU2_CSV_REQUIRED.contains(&name) => Err(bad(name, "empty".into())),
                _ => Ok(String::new()),
            }
        };
        let int = |name: &str| -> Result<u64, RecordError> {
            match get(name) {
                None | Some("") => Ok(0),
                Some(v) => v
                    .parse()
                    .map_err(|_| bad(name, format!("`{v}` is not a non-negative integer"))),
            }
        };
        let simulated = match get("simulated").map(str::to_ascii_lowercase).as_deref() {
            None | Some("") | Some("false") | Some("0") | Some("no") => false,
            Some("true") | Some("1") | Some("yes") => true,
            Some(_) => {
                let v = get("simulated").unwrap_or_default();
                return Err(bad("simulated", format!("`{v}` is not true/false")));
            }
        };
        rows.push(Tau2Row {
            domain: text("domain")?,
            task: text("task")?,
            arm: text("arm")?,
            trial: int("trial")?,
            reward: Tau2Reward::parse(get("reward").unwrap_or_default())
                .map_err(|w| bad("reward", w))?,
            components: text("components")?,
            steps: int("steps")?,
            termination: text("termination")?,
            simulated,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(reward: Tau2Reward) -> Tau2Row {
        Tau2Row {
            domain: "retail".into(),
            task: "t,1".into(),
            arm: "plain".into(),
            trial: 2,
            reward,
            components: "DB=1;ACTION=0".into(),
            steps: 9,
            termination: "user_stop".into(),
            simulated: true,
        }
    }

    #[test]
    fn rows_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tau2.csv");
        let rows = vec![
            row(Tau2Reward::Score(1.0)),
            row(Tau2Reward::Score(0.0)),
            row(Tau2Reward::Ungraded),
            row(Tau2Reward::SetAside),
        ];
        let text = tau2_csv_text(&rows);
        assert!(text.contains("\nretail,\"t,1\",plain,2,1,DB=1;ACTION=0,9,user_stop,true\n"));
        assert!(text.contains(",2,,DB=1"), "set aside: empty reward");
        std::fs::write(&p, text).unwrap();
        assert_eq!(read_tau2_csv(&p).unwrap(), rows);
    }

    #[test]
    fn old_files_and_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.csv");
        std::fs::write(&p, "domain,task,arm,reward\nmock,0,a,1\n").unwrap();
        let r = &read_tau2_csv(&p).unwrap()[0];
        assert_eq!(
            (r.trial, r.simulated, r.reward),
            (0, false, Tau2Reward::Score(1.0))
        );
        for (body, want) in [
            (
                "mock,0,a,0,2,,,,false",
                "old.csv:2: column `reward`: reward 2 outside [0, 1]",
            ),
            (
                "mock,0,a,x,1,,,,false",
                "old.csv:2: column `trial`: `x` is not a non-negative",
            ),
            (
                "mock,0,a,0,1,,,,maybe",
                "old.csv:2: column `simulated`: `maybe` is not true/false",
            ),
            (
                "mock,0,a,0,pass,,,,false",
                "column `reward`: `pass` is not a reward",
            ),
        ] {
            std::fs::write(&p, format!("{TAU2_CSV_HEADER}\n{body}\n")).unwrap();
            let e = read_tau2_csv(&p).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        std::fs::write(&p, "domain,task,reward\n").unwrap();
        let e = read_tau2_csv(&p).unwrap_err().to_string();
        assert!(e.contains("old.csv:1: no `arm` column"), "{e}");
    }
}
