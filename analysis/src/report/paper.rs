//! `paper.md`: every table and figure of the paper, in the paper's order, each marked *from
//! this run*, *published* (computed from a published file given as input) or *not computed
//! from these inputs* with the reason — and the paper's mechanism-activation table
//! ([`activation_markdown`], upstream's `mechanism_log` layout) for the Mingbird arms.
//!
//! The paper (arXiv 2610.02001) is not published with its evidence pack; its order here is the
//! order of docs/statistics.md, *The paper's report* (the headline table and its two figures,
//! the significance tests, the pooled comparison, the failure forms, the resource table, the
//! mechanism log, Fig 9, the ablations, τ², the frontier probe, safety). The sections are the
//! report's own, picked by their headings, so paper.md and report.md never disagree.

use crate::markers::{FAMILIES, MARKERS};
use crate::model::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What kind of input an item's numbers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Per-cell scores (cells.csv: run; upstream per-cell files, annotations: published).
    Cells,
    /// Failure-form codings.
    Forms,
    /// Ablation designs.
    Ablation,
    /// τ² results (tau2.csv: run; manifests: published).
    Tau,
    /// Only ever from a run (nothing published is read for it).
    RunOnly,
}

/// Which origins the inputs hold, as (from a run, published).
#[derive(Clone, Debug, Default)]
pub(crate) struct Origins(pub(crate) BTreeMap<&'static str, (bool, bool)>);

impl Origins {
    /// From the inputs' detected formats (`Dataset::sources`) and the coded failure-form sources.
    pub(crate) fn of(sources: &[(String, String)], forms_run: bool, forms_pub: bool) -> Origins {
        let has = |k: &str| sources.iter().any(|(_, kind)| kind.starts_with(k));
        let mut m = BTreeMap::new();
        let run_cells = has("cells.csv");
        m.insert(
            "cells",
            (
                run_cells,
                has("upstream per-cell") || has("per-cell annotations"),
            ),
        );
        m.insert("forms", (forms_run, forms_pub));
        m.insert("ablation", (run_cells, has("upstream ablation")));
        m.insert("tau", (has("tau2 results"), has("tau2 manifest")));
        m.insert("run", (run_cells, false));
        Origins(m)
    }

    fn status(&self, o: Origin) -> &'static str {
        let key = match o {
            Origin::Cells => "cells",
            Origin::Forms => "forms",
            Origin::Ablation => "ablation",
            Origin::Tau => "tau",
            Origin::RunOnly => "run",
        };
        match self.0.get(key).copied().unwrap_or_default() {
            (true, true) => "from this run and published inputs",
            (true, false) => "from this run",
            (false, true) => "published (recomputed from the published files given)",
            (false, false) => "from the inputs",
        }
    }
}

/// One table or figure of the paper.
struct Item {
    kind: &'static str,
    title: &'static str,
    /// Upstream's file(s) for it.
    published: &'static str,
    /// Headings (prefixes, after `## `) of the report sections that show it.
    sections: &'static [&'static str],
    /// Figure file stem, for a figure.
    figure: Option<&'static str>,
    /// Headings of sections shown with it that hold no numbers of it (notes).
    notes: &'static [&'static str],
    origin: Origin,
    /// Why it is missing when no section or figure shows it.
    why_not: &'static str,
}

/// The heading of the note naming the arms that expose no firings.
const NO_FIRINGS: &str = "Arms without mechanism firings";

const NO_CELLS: &str = "the inputs hold no per-cell scores (give a run folder, its cells.csv or \
                        lrab_scores.csv)";

const ITEMS: [Item; 14] = [
    Item { kind: "Table", title: "Mean score by harness and model, overall, LH-only", published: "benchmarks/README.md, lrab_scores.csv", sections: &["Mean score by arm and model"], figure: None, notes: &[], origin: Origin::Cells, why_not: NO_CELLS },
    Item { kind: "Figure", title: "Scores by model size (grouped bars)", published: "docs/assets/lrab_by_model.png", sections: &[], figure: Some("by_model"), notes: &[], origin: Origin::Cells, why_not: "no per-cell scores, or figures were switched off (--no-figures)" },
    Item { kind: "Figure", title: "Overall score per harness", published: "docs/assets/lrab_overall.png", sections: &[], figure: Some("overall"), notes: &[], origin: Origin::Cells, why_not: "no per-cell scores, or figures were switched off (--no-figures)" },
    Item { kind: "Table", title: "Paired significance per model: Wilcoxon, bootstrap CI, Holm; tier-cluster robustness", published: "benchmarks/SIGNIFICANCE.md, benchmarks/RESULTS.md", sections: &[" vs each arm, per model"], figure: None, notes: &[], origin: Origin::Cells, why_not: "it needs two arms or more scored on the same tasks and model" },
    Item { kind: "Table", title: "Pooled overall comparison", published: "benchmarks/overall_ci_2609.py", sections: &["Pooled overall comparison"], figure: None, notes: &[], origin: Origin::Cells, why_not: "it needs two arms or more scored on the same tasks" },
    Item { kind: "Table", title: "Failure forms × rate × arm", published: "benchmarks/failure_forms/failure_forms_2609.md", sections: &["Failure forms"], figure: None, notes: &[], origin: Origin::Forms, why_not: "no input carries per-cell fields to code (a run's cells.csv, or failure_forms_2609.csv)" },
    Item { kind: "Table", title: "Resources per cell (tool calls, turns, peak prompt, wall; medians)", published: "benchmarks/mechanism_log/resource_table_2609.md, turns_resource.csv", sections: &["Resources per cell"], figure: None, notes: &[], origin: Origin::Cells, why_not: "no cell records a wall time or a tool call" },
    Item { kind: "Table", title: "Mechanism activation (21 transcript markers of Mingbird, by family)", published: "benchmarks/mechanism_log/README.md, mechanism_activation.csv", sections: &["Mechanism activation (the paper's marker table)", "Mechanism activations"], figure: None, notes: &[NO_FIRINGS], origin: Origin::RunOnly, why_not: "no cell of an arm that exposes firings (a Mingbird arm's transcript, our harness's event log) is in the inputs; the published activation counts are shown beside a run's when there is one" },
    Item { kind: "Figure", title: "Fig 9: prefill cost against attached tool schemas", published: "benchmarks/failure_forms/cost_curve_data_2609.csv", sections: &[], figure: None, notes: &[], origin: Origin::RunOnly, why_not: "it is measured by `lrab bench prefill` against a backend, not from cells: its summary.md and prefill.svg plot the run's curve beside cost_curve_data_2609.csv (docs/runner.md)" },
    Item { kind: "Table", title: "Mechanism ablations (variant vs baseline, repeats)", published: "benchmarks/ablation/*.csv", sections: &["Ablations"], figure: Some("ablations"), notes: &[], origin: Origin::Ablation, why_not: "no ablation in the inputs (a variant arm `<arm>-no-<mechanism>` beside its baseline, or a published ablation file)" },
    Item { kind: "Table", title: "τ²-bench: mean reward and exact McNemar", published: "benchmarks/TAU2_SIGNIFICANCE.md, benchmarks/tau2/*_manifest.json", sections: &["τ²"], figure: None, notes: &[], origin: Origin::Tau, why_not: "no τ² results or manifests in the inputs" },
    Item { kind: "Figure", title: "τ²-bench headline", published: "docs/assets/tau2_headline.png", sections: &[], figure: None, notes: &[], origin: Origin::Tau, why_not: "lrab analyze draws no τ² figure; the τ² table has its numbers" },
    Item { kind: "Figure", title: "Frontier probe against the local models", published: "docs/assets/probe_vs_local.png, frontier_probe_scores.csv", sections: &[], figure: None, notes: &[], origin: Origin::Cells, why_not: "drawn by no command; `lrab analyze --probe-compare frontier_probe_scores.csv` writes the comparison as a table (probe_comparison.md)" },
    Item { kind: "Table", title: "Safety: adversarial cases and benign controls", published: "benchmarks/safety/results_2609/*/safety_results.csv", sections: &["Safety"], figure: None, notes: &[], origin: Origin::RunOnly, why_not: "safety cases are run and judged by `lrab safety --arms A --backend URL --models M`; safety_results CSVs given to lrab analyze (published, or a run's with its verification.csv) are tallied into safety.md beside this file (the published: 2/44 and 11/44 confirmed; docs/safety.md)" },
];

/// The report's `## ` sections: (heading, whole text).
fn sections(md: &str) -> Vec<(&str, &str)> {
    let mut starts: Vec<usize> = md.match_indices("\n## ").map(|(i, _)| i + 1).collect();
    if md.starts_with("## ") {
        starts.insert(0, 0);
    }
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let end = starts.get(k + 1).copied().unwrap_or(md.len());
            let body = &md[s..end];
            let head = body[3..].lines().next().unwrap_or_default();
            (head, body)
        })
        .collect()
}

/// paper.md from the report's sections (`body`), the figures drawn (relative path, caption)
/// and the inputs' origins.
pub(crate) fn paper_markdown(body: &str, figures: &[(String, String)], o: &Origins) -> String {
    let secs = sections(body);
    let mut index = String::from(
        "# The paper's tables and figures\n\nIn the paper's order (docs/statistics.md, *The \
         paper's report*). *From this run*: computed from a run's records; *published*: \
         recomputed from a published file given as input; otherwise the reason it could not be \
         computed from these inputs.\n\n| # | kind | what | status | paper's source |\n|---|---|---|---|---|\n",
    );
    let mut bodies = String::new();
    for (n, it) in ITEMS.iter().enumerate() {
        let found: Vec<&str> = secs
            .iter()
            .filter(|(h, _)| {
                it.sections
                    .iter()
                    .any(|p| h.starts_with(p) || h.contains(p))
            })
            .map(|(_, b)| *b)
            .collect();
        let fig = it.figure.and_then(|stem| {
            figures
                .iter()
                .find(|(f, _)| f.ends_with(&format!("/{stem}.svg")))
        });
        let shown = !found.is_empty() || fig.is_some();
        let notes = secs
            .iter()
            .filter(|(h, _)| it.notes.iter().any(|p| h.starts_with(p)))
            .map(|(_, b)| *b);
        let status = if shown {
            o.status(it.origin).to_string()
        } else {
            format!("not computed: {}", it.why_not)
        };
        let _ = writeln!(
            index,
            "| {} | {} | {} | {} | `{}` |",
            n + 1,
            it.kind,
            it.title,
            status,
            it.published
        );
        let _ = writeln!(
            bodies,
            "## {}. {}: {} — {}\n",
            n + 1,
            it.kind,
            it.title,
            status
        );
        for b in &found {
            // the report's own section, one level down
            bodies.push_str(&b.replacen("## ", "### ", 1));
        }
        for b in notes {
            bodies.push_str(&b.replacen("## ", "### ", 1));
        }
        if let Some((f, cap)) = fig {
            let _ = writeln!(bodies, "![{cap}]({f})\n\n*{cap}*\n");
        }
    }
    format!("{index}\n{bodies}")
}

/// Each marker's firings (sum over cells of the mean per repeat) and the cells it fired in.
type Totals = BTreeMap<&'static str, (f64, usize)>;

/// Per (arm, model) — `model` empty for the arm over all its models — the cells with a
/// transcript and the marker totals, for the arms with Mingbird's markers.
fn marker_totals(cells: &[Cell]) -> BTreeMap<(String, String), (usize, Totals)> {
    let mut out: BTreeMap<(String, String), (usize, Totals)> = BTreeMap::new();
    let with = cells
        .iter()
        .filter(|c| crate::markers::exposes(&c.arm) && c.repeats_with_events > 0);
    for c in with {
        for key in [
            (c.arm.clone(), String::new()),
            (c.arm.clone(), c.model.clone()),
        ] {
            let e = out.entry(key).or_default();
            e.0 += 1;
            for m in &MARKERS {
                let v = c.mechanisms.get(m.key).copied().unwrap_or(0.0);
                let t = e.1.entry(m.key).or_default();
                t.0 += v;
                t.1 += usize::from(v > 0.0);
            }
        }
    }
    out
}

fn num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}

/// The arms in `cells` with no firings at all (no Mingbird markers, no event log).
fn arms_without_firings(cells: &[Cell]) -> Vec<&str> {
    let mut arms: Vec<&str> = cells.iter().map(|c| c.arm.as_str()).collect();
    arms.sort_unstable();
    arms.dedup();
    arms.retain(|a| {
        !cells
            .iter()
            .any(|c| c.arm == *a && c.repeats_with_events > 0)
    });
    arms
}

/// The paper's activation table for the Mingbird arms in the inputs, with the published
/// totals (72 cells) beside; and a note naming the arms that expose no firings at all.
pub(crate) fn activation_markdown(cells: &[Cell]) -> String {
    let mut out = String::new();
    let none = arms_without_firings(cells);
    if !none.is_empty() {
        let _ = writeln!(
            out,
            "## {NO_FIRINGS}\n\nArms that expose no mechanism firings in these inputs (neither \
             Mingbird's printed markers nor our harness's event log): {}.\n",
            none.join(", ")
        );
    }
    let totals = marker_totals(cells);
    if totals.is_empty() {
        return out;
    }
    out.push_str(
        "## Mechanism activation (the paper's marker table)\n\nMingbird's 21 printed markers, \
         counted in each winning attempt's own output as upstream's `extract_p1.py` counts them \
         (exact texts, non-overlapping). Cells: cells with a transcript. *Published*: the 72 \
         Mingbird cells of the paper's matrix (`mechanism_log/README.md`, CC BY 4.0), a \
         reference, not this run; shown for the arm `mingbird` (v1.5.0, the paper's), `–` for \
         other versions and variants.\n\n",
    );
    for ((arm, _), (n, by)) in totals.iter().filter(|((_, m), _)| m.is_empty()) {
        let _ = writeln!(out, "### {arm}, all models ({n} cells)\n");
        out.push_str(
            "| family | marker | firings | cells fired | published (72 cells, 4 models) |\n\
             |---|---|---|---|---|\n",
        );
        let paper_arm = arm.eq_ignore_ascii_case("mingbird");
        for fam in FAMILIES {
            family_rows(&mut out, fam, by, paper_arm);
        }
        out.push('\n');
        let models: Vec<_> = totals
            .iter()
            .filter(|((a, m), _)| a == arm && !m.is_empty())
            .collect();
        let _ = writeln!(out, "Per model, firings by family ({arm}):\n");
        let _ = writeln!(
            out,
            "| model | cells | {} |\n|---|---|{}",
            FAMILIES.join(" | "),
            "---|".repeat(FAMILIES.len())
        );
        for ((_, m), (k, t)) in models {
            let fams: Vec<String> = FAMILIES
                .iter()
                .map(|f| {
                    num(MARKERS
                        .iter()
                        .filter(|x| x.family == *f)
                        .map(|x| t[x.key].0)
                        .sum())
                })
                .collect();
            let _ = writeln!(out, "| {m} | {k} | {} |", fams.join(" | "));
        }
        out.push('\n');
    }
    out
}

/// A published count, or `–` for an arm the paper did not publish counts of.
fn shown(n: u64, paper_arm: bool) -> String {
    if paper_arm {
        n.to_string()
    } else {
        "–".into()
    }
}

/// One family's total row and its markers' rows.
fn family_rows(out: &mut String, fam: &str, by: &Totals, paper_arm: bool) {
    let ms: Vec<_> = MARKERS.iter().filter(|m| m.family == fam).collect();
    let sum: f64 = ms.iter().map(|m| by[m.key].0).sum();
    let pubsum: u64 = ms.iter().map(|m| m.published).sum();
    let _ = writeln!(
        out,
        "| **{fam}** | (family) | **{}** | | **{}** |",
        num(sum),
        shown(pubsum, paper_arm)
    );
    for m in ms {
        let (v, k) = by[m.key];
        let _ = writeln!(
            out,
            "| {fam} | {} (`{}`) | {} | {k} | {} |",
            m.key,
            m.text,
            num(v),
            shown(m.published, paper_arm)
        );
    }
}

/// `mechanism_activation.csv` in upstream's layout (harness, model, task, marker, marker_zh,
/// count; a count is the mean over a cell's repeats), for the Mingbird cells; `None` without.
pub(crate) fn activation_csv(cells: &[Cell]) -> Option<String> {
    let rows: Vec<&Cell> = cells
        .iter()
        .filter(|c| crate::markers::exposes(&c.arm) && c.repeats_with_events > 0)
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut out = String::from("harness,model,task,marker,marker_zh,count\n");
    for c in rows {
        for m in &MARKERS {
            let v = c.mechanisms.get(m.key).copied().unwrap_or(0.0);
            let _ = writeln!(
                out,
                "{},{},{},{},{},{}",
                csv(&c.arm),
                csv(&c.model),
                csv(&c.task),
                m.key,
                csv(m.text),
                num(v)
            );
        }
    }
    Some(out)
}

fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
