//! Rendering an [`Analysis`] as Markdown (stdout summary and report.md) and as a
//! self-contained HTML page with the figures inlined.

use crate::analysis::Analysis;
use std::fmt::Write as _;

/// 3-decimal number or an en dash.
pub fn f3(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.3}"))
}

/// Signed 3-decimal number.
pub fn s3(x: f64) -> String {
    format!("{x:+.3}")
}

/// p-value: 4 decimals (as upstream publishes them), or 2 significant digits in scientific
/// notation below 0.0001.
pub fn fp(p: f64) -> String {
    if p >= 0.0001 {
        format!("{p:.4}")
    } else {
        // Two significant digits, e.g. 2.7e-5.
        format!("{p:.1e}")
    }
}

fn ci(i: &Option<crate::stats::bootstrap::Interval>) -> String {
    i.as_ref()
        .map_or("–".into(), |i| format!("[{}, {}]", s3(i.lo), s3(i.hi)))
}

fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header.iter().map(|_| "---|").collect::<String>()
    );
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

fn s(x: &str) -> String {
    x.to_string()
}

/// Facts for the methods paragraph.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// Input files and their detected formats.
    pub sources: Vec<(String, String)>,
    /// Crate version.
    pub version: String,
    /// Figure file names (relative to the output dir), with captions.
    pub figures: Vec<(String, String)>,
}

/// The tables and tests as Markdown (the body of report.md and of the stdout summary).
pub fn tables_markdown(a: &Analysis) -> String {
    let mut out = String::new();
    if a.simulated_cells > 0 {
        let _ = writeln!(
            out,
            "> **WARNING — SIMULATED BACKEND.** {} of {} cells ran on the simulated model server. \
             These numbers test the pipeline only; they are not results of any real model.\n",
            a.simulated_cells, a.total_cells
        );
    }
    if !a.rows.is_empty() {
        let _ = writeln!(out, "## Mean score by arm and model\n");
        let mut h = vec![s("arm")];
        h.extend(a.models.iter().cloned());
        h.extend([s("overall"), s("T1"), s("T2"), s("T3"), s("LH-only (T4)")]);
        let rows: Vec<Vec<String>> = a
            .rows
            .iter()
            .map(|r| {
                let mut v = vec![if r.arm == a.focal {
                    format!("**{}**", r.arm)
                } else {
                    r.arm.clone()
                }];
                v.extend(r.per_model.iter().map(|x| f3(*x)));
                v.push(format!("**{:.3}**", r.overall));
                v.extend(r.per_tier.iter().map(|x| f3(*x)));
                v
            })
            .collect();
        table(&mut out, &h, &rows);
        let _ = writeln!(
            out,
            "Overall = mean of the model means. Tiers pool all models' cells.\n"
        );

        let _ = writeln!(out, "## Cliff (drop from each arm's best model)\n");
        let rows: Vec<Vec<String>> = a
            .rows
            .iter()
            .map(|r| {
                let b = r.best.clone().unwrap_or_default();
                let w = r.worst.clone().unwrap_or_default();
                vec![
                    r.arm.clone(),
                    format!("{} ({:.3})", b.0, b.1),
                    format!("{} ({:.3})", w.0, w.1),
                    f3(r.cliff()),
                ]
            })
            .collect();
        table(
            &mut out,
            &[s("arm"), s("best model"), s("worst model"), s("cliff")],
            &rows,
        );

        let _ = writeln!(out, "## Cells scoring ≥ 0.5\n");
        let mut h = vec![s("arm")];
        h.extend(a.models.iter().cloned());
        h.push(s("total"));
        let rows: Vec<Vec<String>> = a
            .rows
            .iter()
            .map(|r| {
                let mut v = vec![r.arm.clone()];
                v.extend(
                    r.ge_half
                        .iter()
                        .zip(&r.n_per_model)
                        .map(|(g, n)| format!("{g}/{n}")),
                );
                v.push(format!(
                    "{}/{}",
                    r.ge_half.iter().sum::<usize>(),
                    r.n_per_model.iter().sum::<usize>()
                ));
                v
            })
            .collect();
        table(&mut out, &h, &rows);
        if a.rows.iter().any(|r| r.max_repeats > 1) {
            let _ = writeln!(out, "## Repeats\n");
            let rows: Vec<Vec<String>> = a
                .rows
                .iter()
                .map(|r| vec![r.arm.clone(), r.max_repeats.to_string(), f3(r.repeat_sd)])
                .collect();
            table(
                &mut out,
                &[
                    s("arm"),
                    s("max repeats per cell"),
                    s("mean sd across repeats"),
                ],
                &rows,
            );
        }
    }
    if !a.comparisons.is_empty() {
        let _ = writeln!(out, "## {} vs each arm, per model\n", a.focal);
        let rows: Vec<Vec<String>> = a
            .comparisons
            .iter()
            .map(|c| {
                vec![
                    c.model.clone(),
                    c.competitor.clone(),
                    format!("{}/{}/{}", c.wins, c.ties, c.losses),
                    s3(c.mean_diff),
                    ci(&c.ci),
                    c.wilcoxon.n.to_string(),
                    format!("{}", c.wilcoxon.w_plus),
                    fp(c.wilcoxon.p_normal),
                    c.wilcoxon.p_exact.map_or("–".into(), fp),
                    fp(c.holm_p),
                    ci(&c.cluster_ci),
                    fp(c.perm.p),
                    fp(c.perm_holm_p),
                    if c.unpaired.is_empty() {
                        "–".into()
                    } else {
                        c.unpaired.join(" ")
                    },
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("model"),
                s("vs"),
                s("W/T/L"),
                s("mean Δ"),
                s("bootstrap CI"),
                s("n≠0"),
                s("W+"),
                s("p (normal)"),
                s("p (exact)"),
                s("Holm p"),
                s("tier-cluster CI"),
                s("strat. perm p"),
                s("perm Holm p"),
                s("unpaired"),
            ],
            &rows,
        );
    }
    if !a.pooled.is_empty() {
        let _ = writeln!(
            out,
            "## Pooled overall comparison (per-task mean Δ over models)\n"
        );
        let rows: Vec<Vec<String>> = a
            .pooled
            .iter()
            .map(|p| {
                vec![
                    format!("{} − {}", a.focal, p.competitor),
                    p.n_tasks.to_string(),
                    p.models.len().to_string(),
                    p.ci.as_ref().map_or("–".into(), |i| s3(i.estimate)),
                    ci(&p.ci),
                    fp(p.perm.p),
                    format!("{}/{} vs {}/{}", p.ge_half.0, p.cells, p.ge_half.1, p.cells),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("comparison"),
                s("tasks"),
                s("models"),
                s("mean Δ"),
                s("bootstrap CI"),
                s("sign-flip p"),
                s("cells ≥ 0.5"),
            ],
            &rows,
        );
    }
    if !a.ablations.is_empty() {
        let _ = writeln!(out, "## Ablations (variant − baseline)\n");
        let rows: Vec<Vec<String>> = a
            .ablations
            .iter()
            .map(|r| {
                vec![
                    r.source.clone(),
                    r.variant.clone(),
                    r.n.to_string(),
                    format!("{:.3}", r.baseline_mean),
                    format!("{:.3}", r.variant_mean),
                    s3(r.variant_mean - r.baseline_mean),
                    ci(&r.ci),
                    fp(r.wilcoxon.p_normal),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("source"),
                s("variant"),
                s("n"),
                s("baseline"),
                s("variant mean"),
                s("Δ"),
                s("bootstrap CI"),
                s("Wilcoxon p"),
            ],
            &rows,
        );
    }
    if !a.failure_modes.is_empty() {
        let _ = writeln!(out, "## Failure modes (cells × repeats)\n");
        let modes: std::collections::BTreeSet<&String> =
            a.failure_modes.values().flat_map(|m| m.keys()).collect();
        let mut h = vec![s("arm")];
        h.extend(modes.iter().map(|m| m.to_string()));
        let rows: Vec<Vec<String>> = a
            .failure_modes
            .iter()
            .map(|(arm, m)| {
                let mut v = vec![arm.clone()];
                v.extend(
                    modes
                        .iter()
                        .map(|k| m.get(*k).copied().unwrap_or(0).to_string()),
                );
                v
            })
            .collect();
        table(&mut out, &h, &rows);
    }
    if !a.wall.is_empty() {
        let _ = writeln!(out, "## Wall time (seconds per cell)\n");
        let rows: Vec<Vec<String>> = a
            .wall
            .iter()
            .map(|w| {
                vec![
                    w.arm.clone(),
                    w.n.to_string(),
                    w.missing.to_string(),
                    format!("{:.1}", w.median),
                    format!("{:.1}", w.mean),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("arm"),
                s("cells"),
                s("no wall time"),
                s("median"),
                s("mean"),
            ],
            &rows,
        );
    }
    if !a.resources.is_empty() {
        let _ = writeln!(
            out,
            "## Tokens and calls (mean per cell, cells that report them)\n"
        );
        let rows: Vec<Vec<String>> = a
            .resources
            .iter()
            .map(|r| {
                let mut v = vec![r.arm.clone(), r.n.to_string()];
                v.extend(
                    r.means
                        .iter()
                        .map(|x| x.map_or("–".into(), |v| format!("{v:.1}"))),
                );
                v
            })
            .collect();
        table(
            &mut out,
            &[
                s("arm"),
                s("cells"),
                s("prompt tokens"),
                s("completion tokens"),
                s("model calls"),
                s("tool calls"),
            ],
            &rows,
        );
    }
    for m in &a.mechanisms {
        if m.by_mechanism.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "## Mechanism activations: {} ({} cells with event logs)\n",
            m.arm, m.cells
        );
        let rows: Vec<Vec<String>> = m
            .by_mechanism
            .iter()
            .map(|(k, (mean, cells))| {
                vec![
                    k.clone(),
                    format!("{mean:.2}"),
                    format!("{cells}/{}", m.cells),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("mechanism"),
                s("firings per cell"),
                s("cells with ≥ 1 firing"),
            ],
            &rows,
        );
    }
    if let Some(t) = &a.tau {
        let _ = writeln!(out, "## τ²: mean reward (first trial)\n");
        let mut h = vec![s("arm")];
        h.extend(t.domains.iter().cloned());
        h.push(s("all tasks"));
        let rows: Vec<Vec<String>> = t
            .means
            .iter()
            .map(|(arm, per, all)| {
                let mut v = vec![arm.clone()];
                v.extend(per.iter().map(|x| f3(*x)));
                v.push(f3(*all));
                v
            })
            .collect();
        table(&mut out, &h, &rows);
        let _ = writeln!(
            out,
            "## τ²: exact McNemar, {} vs each arm (all domains pooled)\n",
            t.focal
        );
        let rows: Vec<Vec<String>> = t
            .mcnemar
            .iter()
            .map(|(c, m, h)| {
                vec![
                    c.clone(),
                    format!("{}W/{}T/{}L", m.b, m.ties, m.c),
                    fp(m.p_exact),
                    format!("{:.3}", m.z),
                    fp(*h),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("vs"),
                s("wins/ties/losses"),
                s("exact p"),
                s("sign-test z"),
                s("Holm p"),
            ],
            &rows,
        );
        let rows: Vec<Vec<String>> = t
            .per_domain
            .iter()
            .map(|(c, d, m)| {
                vec![
                    c.clone(),
                    d.clone(),
                    format!("{}W/{}T/{}L", m.b, m.ties, m.c),
                    fp(m.p_exact),
                ]
            })
            .collect();
        table(
            &mut out,
            &[s("vs"), s("domain"), s("W/T/L"), s("exact p")],
            &rows,
        );
        let kmax = t.pass_k.iter().map(|p| p.1.len()).max().unwrap_or(0);
        if kmax > 0 {
            let mut h = vec![s("arm")];
            h.extend((1..=kmax).map(|k| format!("pass^{k}")));
            let rows: Vec<Vec<String>> = t
                .pass_k
                .iter()
                .map(|(a, v)| {
                    let mut r = vec![a.clone()];
                    r.extend((0..kmax).map(|i| f3(v.get(i).copied())));
                    r
                })
                .collect();
            table(&mut out, &h, &rows);
        }
    }
    if let Some(t) = &a.tau {
        out.push_str(&crate::tau2_tables::render(t));
    }
    out
}

/// The methods paragraph.
pub fn methods(a: &Analysis, p: &Provenance) -> String {
    let c = &a.config;
    let mut out = String::new();
    let _ = writeln!(out, "## Methods\n");
    let _ = writeln!(
        out,
        "Generated by lrab-analysis {} from {} input file(s): {}. A cell is one (arm, model, task); \
         within a repeat the highest attempt wins, repeats are averaged (their spread is reported), \
         a timeout scores 0. Per model, {} is compared with every other arm on paired tasks: \
         wins/ties/losses (ties: |Δ| ≤ 1e-12), the Wilcoxon signed-rank test (zeros dropped, average \
         ranks, ties only on exactly equal floats, tie-corrected variance, two-sided normal \
         approximation without continuity correction; exact null distribution for n ≤ 50), Holm \
         step-down within each model, a percentile bootstrap CI of the mean difference ({} resamples, \
         seed {}, a fresh source per comparison, bounds at sorted indices ⌊0.025·B⌋ and ⌊0.975·B⌋), \
         a tier-cluster bootstrap (seed {} + i) and a tier-stratified sign-flip permutation \
         (seed {} + i, p = (count + 1)/(B + 1)), i numbering the comparisons in table order. \
         The pooled overall comparison bootstraps per-task mean differences over the models \
         (seed {}, one source for all comparisons in table order: bootstrap, then sign-flip). \
         τ² pairs are tested with the exact McNemar test (pass = reward 1) and Holm. \
         Random source: `{}`{}.",
        p.version,
        p.sources.len(),
        p.sources.iter().map(|(f, k)| format!("`{f}` ({k})")).collect::<Vec<_>>().join(", "),
        a.focal,
        c.resamples,
        c.seed,
        c.seed,
        c.perm_seed,
        c.pooled_seed,
        c.rng.name(),
        match c.rng {
            crate::rng::RngKind::Cpython => " (bit-exact port of CPython's Mersenne Twister `random.Random`, used to reproduce upstream's published intervals)",
            crate::rng::RngKind::Chacha => " (ChaCha20 from rand_chacha; a CPython-compatible source is available with `--rng cpython`)",
        }
    );
    out.push('\n');
    out
}

/// Caveats section.
pub fn caveats(a: &Analysis) -> String {
    let mut out = String::from("## Caveats\n\n");
    if a.caveats.is_empty() {
        out.push_str("- none detected\n");
    }
    for c in &a.caveats {
        let _ = writeln!(out, "- {c}");
    }
    out.push('\n');
    out
}

/// The full report.md.
pub fn markdown(a: &Analysis, p: &Provenance) -> String {
    let mut out = String::from("# LRAB analysis report\n\n");
    out.push_str(&methods(a, p));
    out.push_str(&tables_markdown(a));
    if !p.figures.is_empty() {
        out.push_str("## Figures\n\n");
        for (f, cap) in &p.figures {
            let _ = writeln!(out, "![{cap}]({f})\n\n*{cap}*\n");
        }
    }
    out.push_str(&caveats(a));
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Inline Markdown subset used by our tables: `**bold**` and `code`.
fn inline(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    let mut bold = false;
    let mut code = false;
    let mut it = e.chars().peekable();
    while let Some(c) = it.next() {
        if c == '*' && it.peek() == Some(&'*') {
            it.next();
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
        } else if c == '`' {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        } else {
            out.push(c);
        }
    }
    out
}

/// Convert our generated Markdown (headings, paragraphs, pipe tables, lists, block quotes) to HTML.
/// Images are replaced by the inline SVG documents given in `svgs` (file name -> SVG text).
pub fn markdown_to_html(md: &str, svgs: &[(String, String)]) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(h) = l.strip_prefix("## ") {
            let _ = writeln!(out, "<h2>{}</h2>", inline(h));
        } else if let Some(h) = l.strip_prefix("# ") {
            let _ = writeln!(out, "<h1>{}</h1>", inline(h));
        } else if l.starts_with('|') {
            out.push_str("<table>\n");
            let mut first = true;
            while i < lines.len() && lines[i].starts_with('|') {
                let row = lines[i];
                if row.starts_with("|---") {
                    i += 1;
                    continue;
                }
                let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
                let tag = if first { "th" } else { "td" };
                out.push_str("<tr>");
                for c in cells {
                    let _ = write!(out, "<{tag}>{}</{tag}>", inline(c.trim()));
                }
                out.push_str("</tr>\n");
                first = false;
                i += 1;
            }
            out.push_str("</table>\n");
            continue;
        } else if let Some(q) = l.strip_prefix("> ") {
            let _ = writeln!(out, "<div class=\"warn\">{}</div>", inline(q));
        } else if let Some(item) = l.strip_prefix("- ") {
            out.push_str("<ul>\n");
            let _ = writeln!(out, "<li>{}</li>", inline(item));
            while i + 1 < lines.len() && lines[i + 1].starts_with("- ") {
                i += 1;
                let _ = writeln!(out, "<li>{}</li>", inline(&lines[i][2..]));
            }
            out.push_str("</ul>\n");
        } else if l.starts_with("![") {
            let file = l
                .split("](")
                .nth(1)
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or("");
            if let Some((_, svg)) = svgs.iter().find(|(f, _)| f == file) {
                let body = svg.find("<svg").map_or(svg.as_str(), |k| &svg[k..]);
                let _ = writeln!(out, "<figure>{body}</figure>");
            }
        } else if l.len() > 2 && l.starts_with('*') && l.ends_with('*') && !l.starts_with("**") {
            let _ = writeln!(out, "<p><em>{}</em></p>", inline(&l[1..l.len() - 1]));
        } else if !l.trim().is_empty() {
            let _ = writeln!(out, "<p>{}</p>", inline(l));
        }
        i += 1;
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>LRAB analysis report</title>\n\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.45;color:#222}}\
         table{{border-collapse:collapse;margin:1em 0;font-size:0.9em}}td,th{{border:1px solid #bbb;padding:3px 7px;text-align:right}}\
         th{{background:#eee}}td:first-child,th:first-child{{text-align:left}}figure{{margin:1.5em 0}}\
         .warn{{background:#fde2e1;border:2px solid #c0392b;padding:0.8em;font-weight:bold}}</style></head>\n<body>\n{out}</body></html>\n"
    )
}
