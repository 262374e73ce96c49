//! Progress while a run goes (indicatif: cells done/total, current cell, elapsed, ETA; a plain
//! line per cell when stderr is not a terminal) and the final summary table of scores by
//! arm × model.

use std::collections::BTreeMap;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lrab_records::CellRow;

/// The progress display of one run.
pub struct Progress {
    bar: ProgressBar,
    interactive: bool,
    quiet: bool,
}

impl Progress {
    pub fn new(total: usize, done: usize, quiet: bool) -> Progress {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let interactive = !target.is_hidden();
        let bar = ProgressBar::with_draw_target(Some(total as u64), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} cells · {elapsed_precise} elapsed · ETA {eta} · {msg}",
            )
            .expect("static template"),
        );
        bar.set_position(done as u64);
        Progress {
            bar,
            interactive,
            quiet,
        }
    }

    pub fn start_cell(&self, label: &str) {
        self.bar.set_message(label.to_string());
    }

    /// One finished attempt.
    pub fn attempt(&self, r: &CellRow, final_attempt: bool) {
        let line = format!(
            "{} × {} × {} #{} a{} → {:.3} {} ({:.1} s){}",
            r.arm,
            r.model,
            r.task,
            r.repeat,
            r.attempt,
            r.score,
            r.failure_mode,
            r.wall_seconds,
            if final_attempt { "" } else { ", retrying" }
        );
        if final_attempt {
            self.bar.inc(1);
        }
        if self.interactive {
            self.bar.println(line);
        } else if !self.quiet {
            eprintln!(
                "[{}/{}] {line}",
                self.bar.position(),
                self.bar.length().unwrap_or(0)
            );
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Markdown table of mean scores (latest attempt per cell) by arm (rows) × model (columns),
/// with the number of cells in each. Arms and models appear in `order` (the matrix order);
/// any others follow alphabetically, so the table never depends on completion order.
pub fn summary_table(rows: &[CellRow], arm_order: &[String], model_order: &[String]) -> String {
    let latest = lrab_records::latest_cell_rows(rows);
    let mut by: BTreeMap<(String, String), (f64, usize)> = BTreeMap::new();
    let mut models: Vec<String> = model_order.to_vec();
    let mut arms: Vec<String> = arm_order.to_vec();
    // Scorer errors have no score: counted apart, never averaged in as 0.
    let mut scorer_errors: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (_, r) in latest.iter() {
        let key = (r.arm.clone(), r.model.clone());
        if r.failure_mode == lrab_records::FailureMode::ScorerError {
            *scorer_errors.entry(key.clone()).or_default() += 1;
            by.entry(key).or_insert((0.0, 0));
            continue;
        }
        let e = by.entry(key).or_insert((0.0, 0));
        e.0 += r.score;
        e.1 += 1;
    }
    for (a, m) in by.keys() {
        if !models.contains(m) {
            models.push(m.clone());
        }
        if !arms.contains(a) {
            arms.push(a.clone());
        }
    }
    let mut out = String::from("| arm |");
    for m in &models {
        out.push_str(&format!(" {m} |"));
    }
    out.push_str("\n|---|");
    for _ in &models {
        out.push_str("---:|");
    }
    out.push('\n');
    for a in &arms {
        out.push_str(&format!("| {a} |"));
        for m in &models {
            let key = (a.clone(), m.clone());
            let errs = match scorer_errors.get(&key) {
                Some(k) => format!(", {k} scorer error{}", if *k == 1 { "" } else { "s" }),
                None => String::new(),
            };
            match by.get(&key) {
                Some((_, 0)) => out.push_str(&format!(" – (n=0{errs}) |")),
                Some((s, n)) => out.push_str(&format!(" {:.3} (n={n}{errs}) |", s / *n as f64)),
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(arm: &str, model: &str, task: &str, attempt: u32, score: f64) -> CellRow {
        CellRow {
            attempt,
            ..CellRow::example(arm, model, task, score)
        }
    }

    #[test]
    fn latest_attempt_wins_and_order_is_the_matrix_order() {
        let rows = vec![
            row("h", "sim-4b", "T1", 0, 0.0),
            row("h", "sim-4b", "T1", 1, 1.0),
            row("h", "sim-4b", "T2", 0, 0.5),
            row("h", "sim-12b", "T1", 0, 0.25),
        ];
        let t = summary_table(&rows, &["h".into()], &["sim-4b".into(), "sim-12b".into()]);
        assert_eq!(
            t,
            "| arm | sim-4b | sim-12b |\n|---|---:|---:|\n| h | 0.750 (n=2) | 0.250 (n=1) |\n"
        );
    }

    #[test]
    fn scorer_errors_are_counted_apart_not_averaged_as_zero() {
        let mut err = row("h", "m", "T2", 0, 0.0);
        err.failure_mode = lrab_records::FailureMode::ScorerError;
        err.milestone_score = None;
        let mut only = row("h", "n", "T1", 0, 0.0);
        only.failure_mode = lrab_records::FailureMode::ScorerError;
        let rows = vec![row("h", "m", "T1", 0, 0.8), err, only];
        let t = summary_table(&rows, &["h".into()], &["m".into(), "n".into()]);
        assert_eq!(
            t,
            "| arm | m | n |\n|---|---:|---:|\n| h | 0.800 (n=1, 1 scorer error) | – (n=0, 1 scorer error) |\n"
        );
    }
}
