//! The tables of the report as Markdown.

use super::{ci, f3, fp, s, s3, table};
use crate::analysis::{Analysis, TauSummary};
use std::fmt::Write as _;

/// The tables and tests as Markdown (the body of report.md and of the stdout summary).
/// One function per section keeps each short; the order of the sections is the report's.
pub fn tables_markdown(a: &Analysis) -> String {
    let mut out = simulated_warnings(a);
    if !a.rows.is_empty() {
        out.push_str(&mean_scores(a));
        out.push_str(&cliffs(a));
        out.push_str(&cells_ge_half(a));
        out.push_str(&repeats(a));
    }
    out.push_str(&comparisons(a));
    out.push_str(&pooled(a));
    out.push_str(&super::ablation::section(a));
    out.push_str(&failure_modes(a));
    out.push_str(&wall_times(a));
    out.push_str(&resources(a));
    out.push_str(&extras(a));
    if let Some(f) = &a.failure_forms {
        out.push_str(&f.markdown());
    }
    if let Some(r) = &a.resource_table {
        out.push_str(&r.markdown());
    }
    out.push_str(&crate::analysis::prompt_cache::markdown(&a.prompt_cache));
    out.push_str(&mechanisms(a));
    if let Some(t) = &a.tau {
        out.push_str(&tau_means(t));
        out.push_str(&tau_mcnemar(t));
        out.push_str(&tau_pass_k(t));
        out.push_str(&crate::tau2_tables::render(t));
    }
    out
}

/// The warnings that open the tables when any row ran on the simulated backend.
fn simulated_warnings(a: &Analysis) -> String {
    let mut out = String::new();
    if a.simulated_cells > 0 {
        let _ = writeln!(
            out,
            "> **WARNING — SIMULATED BACKEND.** {} of {} cells ran on the simulated model server. \
             These numbers test the pipeline only; they are not results of any real model.\n",
            a.simulated_cells, a.total_cells
        );
    }
    if a.simulated_tau_rows > 0 {
        let _ = writeln!(
            out,
            "> **WARNING — SIMULATED BACKEND.** {} τ² rows ran on the simulated model server. \
             These numbers test the pipeline only; they are not results of any real model.\n",
            a.simulated_tau_rows
        );
    }
    out
}

/// The mean score of each arm per model, overall and per tier.
fn mean_scores(a: &Analysis) -> String {
    let mut out = String::new();
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
            v.push(r.overall.map_or("–".into(), |o| format!("**{o:.3}**")));
            v.extend(r.per_tier.iter().map(|x| f3(*x)));
            v
        })
        .collect();
    table(&mut out, &h, &rows);
    let _ = writeln!(
        out,
        "Overall = mean of the model means. Tiers pool all models' cells.\n"
    );
    out
}

/// Each arm's drop from its best model to its worst.
fn cliffs(a: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Cliff (drop from each arm's best model)\n");
    let rows: Vec<Vec<String>> = a
        .rows
        .iter()
        .map(|r| {
            let named = |x: &Option<(String, f64)>| {
                x.as_ref()
                    .map_or("not computed (no cell)".into(), |(m, v)| {
                        format!("{m} ({v:.3})")
                    })
            };
            vec![
                r.arm.clone(),
                named(&r.best),
                named(&r.worst),
                f3(r.cliff()),
            ]
        })
        .collect();
    table(
        &mut out,
        &[s("arm"), s("best model"), s("worst model"), s("cliff")],
        &rows,
    );
    out
}

/// How many cells of each arm scored at least 0.5, per model.
fn cells_ge_half(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// How much repeats of a cell disagree (only when some cell was repeated).
fn repeats(a: &Analysis) -> String {
    let mut out = String::new();
    if a.rows.iter().any(|r| r.max_repeats > 1) {
        let _ = writeln!(out, "## Repeats\n");
        let rows: Vec<Vec<String>> = a
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.arm.clone(),
                    r.max_repeats.to_string(),
                    f3(r.repeat_sd),
                    r.noise_floor
                        .map_or("not measured (needs 2 batches)".into(), |f| {
                            format!("{f:.3}")
                        }),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                s("arm"),
                s("max repeats per cell"),
                s("mean sd across repeats"),
                s("noise floor (largest shift between two repeats)"),
            ],
            &rows,
        );
    }
    out
}

/// The focal arm against each arm, per model.
fn comparisons(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// The focal arm against each arm, pooled over models.
fn pooled(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// Failure modes counted per arm.
fn failure_modes(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// Wall time per cell, per arm.
fn wall_times(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// Tokens and calls per cell, per arm.
fn resources(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// How often each harness mechanism fired, per arm with event logs.
fn mechanisms(a: &Analysis) -> String {
    let mut out = String::new();
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
    out
}

/// τ²: the mean reward per arm and domain.
fn tau_means(t: &TauSummary) -> String {
    let mut out = String::new();
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
    out
}

/// τ²: the focal arm against each arm, pooled and per domain.
fn tau_mcnemar(t: &TauSummary) -> String {
    let mut out = String::new();
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
    out
}

/// τ²: pass^k per arm (only when there are trials to count).
fn tau_pass_k(t: &TauSummary) -> String {
    let mut out = String::new();
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
    out
}

/// The extra per-cell columns of annotation files, per arm: flags as counts of cells, other
/// columns as median and mean.
fn extras(a: &Analysis) -> String {
    let mut out = String::new();
    let Some(x) = &a.extras else {
        return out;
    };
    let _ = writeln!(
        out,
        "## Extra per-cell columns (annotation files)\n\nFlags (0/1 columns): cells where set / \
         cells with a value. Other columns: median / mean over the cells with a value.\n"
    );
    let mut h = vec![s("column")];
    h.extend(x.arms.iter().cloned());
    let rows: Vec<Vec<String>> = x
        .columns
        .iter()
        .map(|c| {
            let mut v = vec![c.column.clone()];
            v.extend(c.per_arm.iter().map(|st| match st {
                None => "–".into(),
                Some(st) if c.flag => format!("{}/{}", st.sum as u64, st.n),
                Some(st) => format!("{} / {:.1}", trim(st.median), st.mean),
            }));
            v
        })
        .collect();
    table(&mut out, &h, &rows);
    out
}

/// A median without trailing zeros (33.5, 15).
fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
