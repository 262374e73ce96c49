//! The per-round state line: one short line at the end of the round's last tool result —
//! what is done and which deliverables are still missing — so a small model that has lost the
//! thread in a long history sees where it stands in the newest message.
//!
//! It goes into the newest message, never into the system prompt: the system prompt and the
//! history stay byte-identical from one request to the next, so the server can reuse its
//! cached prefix, and a tool result (not a new user message) keeps templates that re-render
//! earlier turns after each user message from doing so.

use crate::shaping::Verdict;

/// The facts one state line shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub turn: u32,
    pub max_turns: u32,
    /// Plan items done and in total.
    pub plan: (usize, usize),
    /// Deliverables the task names: how many, and those still missing (or empty).
    pub named: usize,
    pub missing: Vec<String>,
    /// The latest test verdict.
    pub last_test: Option<Verdict>,
    /// Minutes left of the time budget.
    pub minutes_left: Option<f64>,
}

/// Rounds after which an unchanged line is shown again, as a reminder.
pub const REMIND_EVERY: u32 = 5;

/// Whether the line for `now` is worth showing after the one shown last (`shown`): when
/// something other than the turn counter and the minutes left changed, and otherwise every
/// [`REMIND_EVERY`] rounds. A line that says what the previous one said is paid for in every
/// later request and tells the model nothing new.
pub fn worth_showing(shown: Option<&Facts>, now: &Facts) -> bool {
    let Some(prev) = shown else {
        return true;
    };
    let same = Facts {
        turn: prev.turn,
        minutes_left: prev.minutes_left,
        ..now.clone()
    } == *prev;
    !same || now.turn >= prev.turn + REMIND_EVERY
}

/// Missing deliverables named in one line at most.
pub const SHOWN: usize = 3;

/// The line, e.g. `[state: turn 7/200 · plan 2/4 done · deliverables 1/3, missing report.md,
/// data.csv · last test FAILED]`.
pub fn render(f: &Facts) -> String {
    let mut parts = vec![format!("turn {}/{}", f.turn + 1, f.max_turns)];
    parts.push(match f.plan {
        (_, 0) => "no plan yet".to_string(),
        (d, t) if d == t => format!("plan {d}/{t} done"),
        (d, t) => format!("plan {d}/{t} done, next item {}", d + 1),
    });
    if f.named > 0 {
        let have = f.named - f.missing.len().min(f.named);
        if f.missing.is_empty() {
            parts.push(format!("deliverables {have}/{} written", f.named));
        } else {
            let mut shown: Vec<&str> = f.missing.iter().take(SHOWN).map(String::as_str).collect();
            if f.missing.len() > SHOWN {
                shown.push("…");
            }
            parts.push(format!(
                "deliverables {have}/{}, missing {}",
                f.named,
                shown.join(", ")
            ));
        }
    }
    if let Some(v) = f.last_test {
        parts.push(format!("last test {}", v.as_str()));
    }
    if let Some(m) = f.minutes_left {
        parts.push(format!("{m:.0} min left"));
    }
    format!("[state: {}]", parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_short_and_names_what_is_missing() {
        let f = Facts {
            turn: 6,
            max_turns: 200,
            plan: (2, 4),
            named: 5,
            missing: vec!["a.md".into(), "b.md".into(), "c.md".into(), "d.md".into()],
            last_test: Some(Verdict::Failed),
            minutes_left: Some(12.4),
        };
        let l = render(&f);
        assert_eq!(
            l,
            "[state: turn 7/200 · plan 2/4 done, next item 3 · deliverables 1/5, missing a.md, b.md, c.md, … · last test FAILED · 12 min left]"
        );
        assert!(crate::estimate::estimate_str(&l) < 40);
        let done = render(&Facts {
            max_turns: 10,
            plan: (3, 3),
            named: 1,
            ..Default::default()
        });
        assert_eq!(
            done,
            "[state: turn 1/10 · plan 3/3 done · deliverables 1/1 written]"
        );
        assert!(render(&Facts::default()).contains("no plan yet"));
    }

    #[test]
    fn an_unchanged_line_is_shown_again_only_as_a_reminder() {
        let f = |turn, done, missing: &[&str], left| Facts {
            turn,
            max_turns: 200,
            plan: (done, 3),
            named: 2,
            missing: missing.iter().map(|s| s.to_string()).collect(),
            last_test: None,
            minutes_left: Some(left),
        };
        let first = f(3, 1, &["b.md"], 80.0);
        assert!(worth_showing(None, &first));
        // the turn and the clock moved, nothing else
        assert!(!worth_showing(Some(&first), &f(4, 1, &["b.md"], 79.0)));
        assert!(!worth_showing(Some(&first), &f(7, 1, &["b.md"], 70.0)));
        assert!(worth_showing(Some(&first), &f(8, 1, &["b.md"], 69.0)));
        // a plan item done, a deliverable written, a test verdict
        assert!(worth_showing(Some(&first), &f(4, 2, &["b.md"], 79.0)));
        assert!(worth_showing(Some(&first), &f(4, 1, &[], 79.0)));
        let tested = Facts {
            last_test: Some(Verdict::Passed),
            ..f(4, 1, &["b.md"], 79.0)
        };
        assert!(worth_showing(Some(&first), &tested));
    }
}
