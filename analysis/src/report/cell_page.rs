//! One static page per attempt behind a cell of report.html (`cells/<name>.html` next to it):
//! the score broken down by check (`score.json`), the conversation (see [`super::conversation`]),
//! our harness's mechanism firings, and the files the attempt left (sizes; small text files
//! inline). Static files with relative links, so the report works from `file://` without a
//! server, and report.html itself only carries one link per attempt — it stays fast however many
//! cells a run has.

use super::conversation::{self, clip};
use super::html::{esc, STYLE};
use crate::model::{Cell, ScorerError};
use lrab_records::{CheckDetail, EventLog, ScoreReport};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Largest file shown inline.
pub(crate) const INLINE_MAX: u64 = 8 * 1024;
/// Inline bytes per page at most (further files are listed only).
const INLINE_BUDGET: u64 = 256 * 1024;
/// Entries listed per workdir at most.
const MAX_ENTRIES: usize = 2_000;

/// One page: its path relative to the report folder, its HTML, and what the index shows.
pub(crate) struct Page {
    /// `cells/<name>.html`.
    pub(crate) rel: String,
    /// The page.
    pub(crate) html: String,
    /// The cell's key and repeat label.
    pub(crate) arm: String,
    /// Model.
    pub(crate) model: String,
    /// Task.
    pub(crate) task: String,
    /// Batch of the repeat (`<run>/r<k>`).
    pub(crate) batch: String,
    /// The attempt is a scorer error (listed apart: it has no score).
    pub(crate) scorer_error: bool,
}

/// What a page says about the cell it belongs to.
struct Key<'a> {
    arm: &'a str,
    model: &'a str,
    task: &'a str,
    tier: u8,
    simulated: bool,
}

/// A file name from free text: `[A-Za-z0-9._-]` kept, everything else `_`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The pages of every cell's attempts, in cell order, then those of the scorer errors; names
/// are unique and deterministic.
pub(crate) fn pages(cells: &[Cell], scorer_errors: &[ScorerError]) -> Vec<Page> {
    let mut used = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    let mut add = |k: Key<'_>, batch: &str, dir: &Path, scorer_error: bool| {
        let base = slug(&format!("{}__{}__{}__{}", k.arm, k.model, k.task, batch));
        let mut name = base.clone();
        let mut n = 1;
        while !used.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        out.push(Page {
            rel: format!("cells/{name}.html"),
            html: page(&k, batch, dir),
            arm: k.arm.to_string(),
            model: k.model.to_string(),
            task: k.task.to_string(),
            batch: batch.to_string(),
            scorer_error,
        });
    };
    for c in cells {
        for (batch, dir) in &c.attempt_dirs {
            let k = Key {
                arm: &c.arm,
                model: &c.model,
                task: &c.task,
                tier: c.tier,
                simulated: c.simulated,
            };
            add(k, batch, dir, false);
        }
    }
    for e in scorer_errors {
        if let Some(dir) = &e.attempt_dir {
            let k = Key {
                arm: &e.arm,
                model: &e.model,
                task: &e.task,
                tier: e.tier,
                simulated: e.simulated,
            };
            add(k, &e.batch, dir, true);
        }
    }
    out
}

fn link(p: &Page, text: &str) -> String {
    format!("[{}]({})", text.replace(['[', ']', '|'], "_"), p.rel)
}

/// The "Cells" section of report.md: every cell with a link per attempt page.
pub(crate) fn index_markdown(cells: &[Cell], pages: &[Page]) -> String {
    if pages.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Cells\n\nEach link opens the attempt behind a repeat: its conversation, mechanism \
         firings, the score by check and the files it left.\n\n",
    );
    let header: Vec<String> = ["arm", "model", "task", "score", "failure modes", "attempts"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows: Vec<Vec<String>> = cells
        .iter()
        .filter_map(|c| {
            let links: Vec<String> = pages
                .iter()
                .filter(|p| {
                    !p.scorer_error && p.arm == c.arm && p.model == c.model && p.task == c.task
                })
                .map(|p| link(p, &p.batch))
                .collect();
            (!links.is_empty()).then(|| {
                vec![
                    c.arm.clone(),
                    c.model.clone(),
                    c.task.clone(),
                    format!("{:.3}", c.score),
                    if c.failure_modes.is_empty() {
                        "–".into()
                    } else {
                        c.failure_modes.join(", ")
                    },
                    links.join(" "),
                ]
            })
        })
        .collect();
    super::table(&mut out, &header, &rows);
    let errors: Vec<&Page> = pages.iter().filter(|p| p.scorer_error).collect();
    if !errors.is_empty() {
        out.push_str(
            "Scorer errors (the scoring machine lacked a program a check runs; no score, left \
             out of every mean):\n\n",
        );
        for p in errors {
            let label = format!("{} / {} / {} ({})", p.arm, p.model, p.task, p.batch);
            let _ = writeln!(out, "- {}", link(p, &label));
        }
        out.push('\n');
    }
    out
}

fn opt3(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.3}"))
}

fn checks_table(out: &mut String, group: &str, details: &[CheckDetail]) {
    for d in details {
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td>{group}</td><td><code>{}</code></td><td class=\"check\">{}</td><td>{:.3}</td><td>{}</td><td class=\"detail\">{}</td></tr>",
            if d.ok { "pass" } else { "fail" },
            esc(&d.artifact),
            esc(&d.check),
            d.score,
            if d.ok { "pass" } else { "fail" },
            esc(&clip(&d.detail, 2_000)),
        );
    }
}

fn score_section(out: &mut String, attempt: &Path) {
    out.push_str("<h2 id=\"score\">Score by check</h2>\n");
    let r = match ScoreReport::read(&attempt.join("score.json")) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(out, "<p class=\"err\">{}</p>", esc(&e.to_string()));
            return;
        }
    };
    let _ = writeln!(
        out,
        "<p>total <b class=\"total\">{}</b> · milestones {} · finals {} · failure mode <b>{}</b></p>",
        opt3(r.total),
        opt3(r.milestone_score),
        opt3(r.final_score),
        esc(r.failure_mode.as_str())
    );
    if let Some(run) = &r.run {
        for (what, v) in [
            ("scoring failed", &run.score_error),
            ("note", &run.failure_note),
        ] {
            if let Some(v) = v {
                let _ = writeln!(out, "<p class=\"err\">{what}: {}</p>", esc(v));
            }
        }
    }
    if r.milestone_details.is_empty() && r.final_details.is_empty() {
        out.push_str("<p>No check ran.</p>\n");
        return;
    }
    out.push_str(
        "<table class=\"checks\"><tr><th>group</th><th>artifact</th><th>check</th><th>score</th><th>ok</th><th>detail</th></tr>\n",
    );
    checks_table(out, "milestone", &r.milestone_details);
    checks_table(out, "final", &r.final_details);
    out.push_str("</table>\n");
}

fn mechanisms_section(out: &mut String, log: Option<&EventLog>) {
    out.push_str("<h2 id=\"mechanisms\">Mechanism firings</h2>\n");
    let Some(log) = log else {
        out.push_str("<p>No harness event log (mechanisms are our harness's own).</p>\n");
        return;
    };
    let rows: Vec<_> = log
        .lines
        .iter()
        .filter_map(|l| match &l.event {
            lrab_records::Event::Mechanism(m) => Some((l, m)),
            _ => None,
        })
        .collect();
    if rows.is_empty() {
        out.push_str("<p>None fired.</p>\n");
        return;
    }
    let _ = writeln!(
        out,
        "<table class=\"mech\"><tr><th>t (ms)</th><th>launch</th><th>mechanism</th><th>action</th><th>detail</th></tr>"
    );
    for (l, m) in rows {
        let detail = if m.detail.is_null() {
            String::new()
        } else {
            m.detail.to_string()
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"detail\"><code>{}</code></td></tr>",
            l.t_ms,
            l.run,
            esc(&m.name),
            esc(&m.action),
            esc(&clip(&detail, 1_000))
        );
    }
    out.push_str("</table>\n");
}

/// Every entry under `root`, sorted, without following symbolic links.
fn walk(root: &Path) -> Vec<(String, std::fs::Metadata)> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries.into_iter().rev() {
            let r = rel.join(e.file_name());
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if m.is_dir() {
                stack.push(r.clone());
            }
            out.push((r.to_string_lossy().into_owned(), m));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Bytes that read as text: UTF-8 without NUL.
fn as_text(b: &[u8]) -> Option<&str> {
    if b.contains(&0) {
        return None;
    }
    std::str::from_utf8(b).ok()
}

fn files_section(out: &mut String, workdir: &Path) {
    out.push_str("<h2 id=\"files\">Files left in the workdir</h2>\n");
    if !workdir.is_dir() {
        out.push_str("<p>The workdir is not there.</p>\n");
        return;
    }
    let all = walk(workdir);
    let _ = writeln!(
        out,
        "<table class=\"files\"><tr><th>path</th><th>bytes</th></tr>"
    );
    let mut budget = INLINE_BUDGET;
    let mut inline = String::new();
    for (rel, m) in all.iter().take(MAX_ENTRIES) {
        let (size, kind) = if m.is_dir() {
            (String::from("–"), "dir")
        } else if m.file_type().is_symlink() {
            let to = std::fs::read_link(workdir.join(rel))
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            (format!("→ {}", esc(&to)), "link")
        } else {
            (m.len().to_string(), "file")
        };
        let _ = writeln!(
            out,
            "<tr class=\"{kind}\"><td class=\"path\">{}{}</td><td>{size}</td></tr>",
            esc(rel),
            if kind == "dir" { "/" } else { "" }
        );
        if kind == "file" && m.len() <= INLINE_MAX && m.len() <= budget {
            if let Ok(b) = std::fs::read(workdir.join(rel)) {
                if let Some(t) = as_text(&b) {
                    budget -= b.len() as u64;
                    let _ = writeln!(
                        inline,
                        "<details><summary><code>{}</code> ({} bytes)</summary><pre class=\"file\">{}</pre></details>",
                        esc(rel),
                        b.len(),
                        esc(t)
                    );
                }
            }
        }
    }
    out.push_str("</table>\n");
    if all.len() > MAX_ENTRIES {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} more entries not listed.</p>",
            all.len() - MAX_ENTRIES
        );
    }
    if !inline.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Small text files</h3>\n<p class=\"note\">Text files up to {INLINE_MAX} bytes, \
             {INLINE_BUDGET} bytes per page at most.</p>\n{inline}"
        );
    }
}

const PAGE_STYLE: &str = ".turn{border-left:3px solid #ccd;padding-left:0.8em;margin:1em 0}\
    .msg{margin:0.4em 0}.msg.user b{color:#245}.msg.reply b,.msg.assistant b{color:#352}\
    .msg.tool b{color:#633}pre{background:#f6f6f6;padding:0.5em;white-space:pre-wrap;\
    word-break:break-word;margin:0.2em 0}.call pre{background:#eef3fb}.err{color:#a00}\
    .note{color:#666;font-size:0.9em}tr.fail td{background:#fdf0ef}tr.pass td{background:#eff8ee}\
    td.detail,td.path{text-align:left}nav a{margin-right:1em}";

fn page(c: &Key<'_>, batch: &str, attempt: &Path) -> String {
    let log = crate::events::read_log(attempt);
    let (conv, source) = conversation::section(attempt, log.as_ref());
    let mut body = String::new();
    let title = format!("{} · {} · {} · {}", c.arm, c.model, c.task, batch);
    let _ = writeln!(
        body,
        "<nav><a href=\"../report.html\">← report</a><a href=\"#score\">score</a><a href=\"#conversation\">conversation</a><a href=\"#mechanisms\">mechanisms</a><a href=\"#files\">files</a></nav>\n<h1>{}</h1>",
        esc(&title)
    );
    let _ = writeln!(
        body,
        "<p>arm <b>{}</b> · model <b>{}</b> · task <b>{}</b> (tier {}) · repeat {}{}</p>\n<p class=\"note\">attempt folder <code>{}</code></p>",
        esc(c.arm),
        esc(c.model),
        esc(c.task),
        c.tier,
        esc(batch),
        if c.simulated {
            " · <b>SIMULATED backend</b>: not a result of a real model"
        } else {
            ""
        },
        esc(&attempt.display().to_string())
    );
    score_section(&mut body, attempt);
    let _ = writeln!(
        body,
        "<h2 id=\"conversation\">Conversation</h2>\n<p class=\"note\">from {source}</p>\n{conv}"
    );
    mechanisms_section(&mut body, log.as_ref());
    files_section(&mut body, &attempt.join("workdir"));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{STYLE}{PAGE_STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        esc(&title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("a/b c:ü.x"), "a_b_c__.x");
    }

    #[test]
    fn files_are_listed_with_sizes_and_small_text_inline_escaped() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/notes.md"), "<b>hi</b>").unwrap();
        std::fs::write(d.path().join("big.bin"), vec![0u8; 10]).unwrap();
        std::fs::write(
            d.path().join("large.txt"),
            "x".repeat(INLINE_MAX as usize + 1),
        )
        .unwrap();
        let mut h = String::new();
        files_section(&mut h, d.path());
        assert!(h.contains("<td class=\"path\">sub/</td>"), "{h}");
        assert!(
            h.contains("<td class=\"path\">sub/notes.md</td><td>9</td>"),
            "{h}"
        );
        assert!(h.contains("&lt;b&gt;hi&lt;/b&gt;"), "{h}");
        assert!(!h.contains("<b>hi</b>"), "{h}");
        assert!(
            !h.contains("<code>big.bin</code>"),
            "binary not inline: {h}"
        );
        assert!(
            !h.contains("<code>large.txt</code>"),
            "large not inline: {h}"
        );
        assert!(h.contains("large.txt</td><td>8193</td>"), "{h}");
    }
}
