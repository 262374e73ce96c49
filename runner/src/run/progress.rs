//! Progress while a run goes (indicatif: cells done/total, current cell, elapsed, ETA; a plain
//! line per cell when stderr is not a terminal) and the final summary table of scores by
//! arm × model.

use std::collections::BTreeMap;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lrab_scorer::CellRecord;

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
    pub fn attempt(&self, r: &CellRecord, final_attempt: bool) {
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
/// with the number of cells in each.
pub fn summary_table(rows: &[CellRecord]) -> String {
    let latest = super::resume::latest(rows);
    let mut by: BTreeMap<(String, String), (f64, usize)> = BTreeMap::new();
    let mut models: Vec<String> = Vec::new();
    let mut arms: Vec<String> = Vec::new();
    for r in latest.values() {
        let e = by
            .entry((r.arm.clone(), r.model.clone()))
            .or_insert((0.0, 0));
        e.0 += r.score;
        e.1 += 1;
        if !models.contains(&r.model) {
            models.push(r.model.clone());
        }
        if !arms.contains(&r.arm) {
            arms.push(r.arm.clone());
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
            match by.get(&(a.clone(), m.clone())) {
                Some((s, n)) => out.push_str(&format!(" {:.3} (n={n}) |", s / *n as f64)),
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}
