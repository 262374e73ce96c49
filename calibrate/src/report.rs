//! The calibration report (Markdown): sim vs published per (arm, model) for the mean (over
//! the seeds, with their spread, and at the first seed alone), the failure mix and the wall
//! time, the cross-check, and our harness's held-out scores next to Mingbird's.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use super::published::{self, Published, Summary, FIT_ARMS, HELD_OUT, MODELS};
use super::verified::{Runs, Verified};
use super::{excluded, seeds_label, Fitted, Options};

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:.digits$}"))
}

/// `0.812 ± 0.031 (0.770–0.850)`: the mean over seeds, the standard deviation of the seeds'
/// means and their range.
fn spread(v: &Verified) -> String {
    let (lo, hi) = v.range();
    format!("{:.3} ± {:.3} ({lo:.3}–{hi:.3})", v.mean(), v.sd())
}

/// Published summaries, over the verification's tasks when it ran on a subset.
struct Pub<'a> {
    pubd: &'a Published,
    subset: Option<Vec<String>>,
}

impl Pub<'_> {
    fn get(&self, arm: &str, m: &str) -> Option<Summary> {
        let norm = |t: &str| t.replace('-', "");
        self.pubd.get(&(arm.to_string(), m.to_string())).map(|c| {
            let cells: Vec<published::Cell> = c
                .iter()
                .filter(|x| {
                    self.subset
                        .as_ref()
                        .is_none_or(|s| s.contains(&norm(&x.task)))
                })
                .cloned()
                .collect();
            published::summarize(&cells)
        })
    }
}

pub fn render(
    opts: &Options,
    pubd: &Published,
    fitted: &[Fitted],
    sim: &Runs,
    cross_runs: &Runs,
    runs: &[PathBuf],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Simulator calibration report\n");
    let _ = writeln!(
        s,
        "Written by `lrab sim calibrate` ({}, seeds {}). **Sim numbers are not results of real models.** \
         Published cells: `failure_forms_2609.csv` (LRAB / Mingbird benchmark data, Gustor-Wang, 2026, CC BY 4.0). \
         The fit uses the cells of the three published arms the suite runs: {}; our harness is held out and appears only in the last table, as a prediction.\n",
        if runs.is_empty() { "without a verification" } else { "verified by running the real arms" },
        seeds_label(&opts.seeds),
        FIT_ARMS.join(", ")
    );
    let norm = |t: &str| t.replace('-', "");
    let p = Pub {
        pubd,
        subset: opts
            .tasks
            .as_ref()
            .map(|ts| ts.iter().map(|t| norm(t)).collect()),
    };
    if let (Some(sub), Some(ts)) = (&p.subset, &opts.tasks) {
        let _ = writeln!(
            s,
            "The verification ran on {} of the 18 tasks ({}); every published number below is taken over the same tasks, and the fit itself used all 18.\n",
            sub.len(),
            ts.join(", ")
        );
    }
    means(&mut s, opts, &p, fitted, sim);
    corrected(&mut s, opts, &p);
    mix_and_wall(&mut s, &p, sim);
    cross(&mut s, &p, fitted, cross_runs);
    params(&mut s, fitted);
    held_out(&mut s, &p, sim);
    if !runs.is_empty() {
        let _ = writeln!(
            s,
            "\n{} evaluations (one per model, seed and arm group; cached by the profile's bytes, the seed, the simulator's sources, the pack and the arm files).",
            runs.len()
        );
    }
    s
}

fn means(s: &mut String, opts: &Options, p: &Pub, fitted: &[Fitted], sim: &Runs) {
    let first = opts.seeds[0];
    let _ = writeln!(s, "## Means\n");
    let _ = writeln!(s, "Sim: the real arms on the fitted profiles; the mean over seeds {} ± the standard deviation of the seeds' means (their range), and seed {first} alone (`lrab run`'s default seed is 0).\n", seeds_label(&opts.seeds));
    let _ = writeln!(s, "| arm | model | published | sim, mean over seeds | \\|mean − published\\| | sim, seed {first} | \\|seed {first} − published\\| | analytic fit |\n|---|---|---:|---:|---:|---:|---:|---:|");
    let (mut counted, mut within_mean, mut within_first) = (0, 0, 0);
    for arm in FIT_ARMS {
        for (m, _) in MODELS {
            let Some(f) = fitted.iter().find(|f| f.model == m) else {
                continue;
            };
            let pm = p.get(arm, m).map(|x| x.mean);
            let v = sim.get(&(arm.to_string(), m.to_string()));
            let at = v.and_then(|v| v.at(first)).map(|x| x.mean);
            let dm = pm.zip(v.map(|v| v.mean())).map(|(a, b)| (a - b).abs());
            let df = pm.zip(at).map(|(a, b)| (a - b).abs());
            if let (Some(dm), Some(df)) = (dm, df) {
                counted += 1;
                within_mean += (dm <= 0.10) as usize;
                within_first += (df <= 0.10) as usize;
            }
            let n_tasks = opts.tasks.as_ref().map_or(18, |t| t.len());
            let note = match (excluded(arm, m).is_some(), v) {
                (true, _) => " (not fitted, see below)".to_string(),
                (false, Some(v)) if !v.complete(opts.seeds.len(), n_tasks) => {
                    format!(" ({} seeds so far)", v.per_seed.len())
                }
                _ => String::new(),
            };
            let _ = writeln!(
                s,
                "| {arm} | {m} | {} | {} | {}{note} | {} | {} | {} |",
                opt(pm, 3),
                v.map_or("–".into(), spread),
                opt(dm, 3),
                opt(at, 3),
                opt(df, 3),
                f.predicted.get(arm).map_or("–".into(), |x| f3(x.score))
            );
        }
    }
    if counted > 0 {
        let _ = writeln!(s, "\n{within_first} of {counted} (arm, model) means are within 0.10 of the published value at seed {first}, {within_mean} of {counted} on the mean over seeds (target: at least 10 of 12 on both).\n");
    }
    for arm in FIT_ARMS {
        for (m, _) in MODELS {
            if let Some(why) = excluded(arm, m) {
                let _ = writeln!(s, "- {arm} × {m} is not reproduced: {why}.");
            }
        }
    }
}

fn corrected(s: &mut String, opts: &Options, p: &Pub) {
    let Some(r) = &opts.residuals else {
        return;
    };
    let _ = writeln!(
        s,
        "\n## Corrected round\n\nThe fit targeted `published − (verified − predicted)`: the gap between the real arms and the analytic prediction measured by an earlier verification ({}), so that the real arms, not the analytic model, land on the published means. An (arm, model) without a measured gap is fitted as published. The failure shares and wall times are fitted as published. Our harness has no residual.\n",
        r.origin
    );
    let _ = writeln!(s, "| arm | model | published | earlier verified − predicted | target of this fit |\n|---|---|---:|---:|---:|");
    for arm in FIT_ARMS {
        for (m, _) in MODELS {
            let (Some(x), Some(g)) = (p.get(arm, m), r.gap(arm, m)) else {
                continue;
            };
            if excluded(arm, m).is_some() {
                continue;
            }
            let _ = writeln!(
                s,
                "| {arm} | {m} | {} | {:+.3} | {} |",
                f3(x.mean),
                g,
                f3(crate::residuals::corrected(x.mean, g))
            );
        }
    }
}

fn mix_and_wall(s: &mut String, p: &Pub, sim: &Runs) {
    let _ = writeln!(
        s,
        "\n## Failure mix (share of cells, every seed's cells together)\n"
    );
    let _ = writeln!(s, "Sim cells are coded like the published ones: never engaged = no tool call; early stop = score < 0.5 without crash or timeout; incomplete delivery = score < 1.\n");
    let _ = writeln!(s, "| arm | model | never engaged pub / sim | early stop pub / sim | incomplete delivery pub / sim |\n|---|---|---|---|---|");
    for arm in FIT_ARMS {
        for (m, _) in MODELS {
            let x = p.get(arm, m);
            let v = sim.get(&(arm.to_string(), m.to_string()));
            let cell = |f: &str| {
                format!(
                    "{} / {}",
                    opt(x.as_ref().map(|x| x.forms[f]), 2),
                    opt(v.map(|v| v.pooled.forms[f]), 2)
                )
            };
            let _ = writeln!(
                s,
                "| {arm} | {m} | {} | {} | {} |",
                cell("never_engaged"),
                cell("early_stop"),
                cell("incomplete_delivery")
            );
        }
    }
    let _ = writeln!(
        s,
        "\n## Wall time (median seconds per cell)\n\nSim modelled wall = the arm's own real time on the machine that ran the verification + the modelled time of the model's replies (a laptop's prefill and decode); the model's share alone is deterministic and given separately. The decode speed is fitted to opencode's and agent-mini's walls only (Mingbird's own extra calls — todo, reads, checks — are not in the analytic model of a run).\n"
    );
    let _ = writeln!(s, "| arm | model | published | sim modelled wall | sim model time | median tool calls pub / sim |\n|---|---|---:|---:|---:|---|");
    for arm in FIT_ARMS {
        for (m, _) in MODELS {
            let x = p.get(arm, m);
            let v = sim
                .get(&(arm.to_string(), m.to_string()))
                .map(|v| &v.pooled);
            let _ = writeln!(
                s,
                "| {arm} | {m} | {} | {} | {} | {} / {} |",
                opt(x.as_ref().and_then(|x| x.median_wall), 0),
                opt(v.and_then(|x| x.median_wall), 0),
                opt(v.and_then(|x| x.median_model_time), 0),
                opt(x.as_ref().and_then(|x| x.median_tool_calls), 1),
                opt(v.and_then(|x| x.median_tool_calls), 1)
            );
        }
    }
}

fn cross(s: &mut String, p: &Pub, fitted: &[Fitted], cross_runs: &Runs) {
    let _ = writeln!(
        s,
        "\n## Cross-check: fitted on two arms, predicted for the third\n"
    );
    let real = !cross_runs.is_empty();
    let _ = writeln!(
        s,
        "Each model's profile fitted to the published cells of the two other arms only (same residuals and exclusions as the main fit); the third arm's mean predicted analytically{}. Errors as they come out.\n",
        if real { " and by running that arm on those profiles (mean over the seeds)" } else { " (`--cross-check` also runs the arm on those profiles)" }
    );
    let _ = writeln!(s, "| model | predicted arm | fitted on | published mean | analytic prediction | error | real arm on the sim | error |\n|---|---|---|---:|---:|---:|---:|---:|");
    let mut errs: BTreeMap<&str, (f64, usize, usize)> = BTreeMap::new();
    for f in fitted {
        for left in FIT_ARMS {
            let Some(c) = f.cross.get(left) else { continue };
            let pm = p.get(left, &f.model).map(|x| x.mean);
            let r = cross_runs.get(&(left.to_string(), f.model.clone()));
            let err = |v: Option<f64>| pm.zip(v).map(|(a, b)| (a - b).abs());
            if let Some(e) = err(r.map(|r| r.mean())) {
                let x = errs.entry(left).or_default();
                x.0 += e;
                x.1 += 1;
                x.2 += (e <= 0.10) as usize;
            }
            let _ = writeln!(
                s,
                "| {} | {left} | {}{} | {} | {} | {} | {} | {} |",
                f.model,
                c.fit.fit_arms.join(" + "),
                if excluded(left, &f.model).is_some() {
                    " (a target the main fit leaves out)"
                } else {
                    ""
                },
                opt(pm, 3),
                f3(c.predicted.score),
                opt(err(Some(c.predicted.score)), 3),
                r.map_or("–".into(), spread),
                opt(err(r.map(|r| r.mean())), 3)
            );
        }
    }
    for (arm, (sum, n, within)) in errs {
        let _ = writeln!(
            s,
            "\n- {arm} predicted from the other two: mean error {:.3} over {n} models, {within} within 0.10.",
            sum / n as f64
        );
    }
}

fn params(s: &mut String, fitted: &[Fitted]) {
    let _ = writeln!(s, "\n## Fitted parameters\n");
    let _ = writeln!(s, "| model | ending hazard, opening < 2k tokens | logit slope per 8k of opening | content errors per write | goes on when an ending is answered | decode tok/s | loss |\n|---|---:|---:|---:|---:|---:|---:|");
    for f in fitted {
        let _ = writeln!(
            s,
            "| {} | {:.4} | {:.2} | {:.2} | {:.2} | {:.2} | {:.4} |",
            f.model,
            f.params.h_base,
            f.params.h_slope,
            f.params.content,
            f.params.go_on,
            f.decode_tps,
            f.loss
        );
    }
}

fn held_out(s: &mut String, p: &Pub, sim: &Runs) {
    let _ = writeln!(
        s,
        "\n## Held out: our harness next to Mingbird (a prediction, simulated)\n"
    );
    let _ = writeln!(s, "Our harness was never in the fit; its row is what the calibrated simulator predicts for it. Mingbird's sim column is the fitted arm on the same profiles.\n");
    let _ = writeln!(s, "| model | harness on the sim (predicted) | Mingbird on the sim | Mingbird published |\n|---|---:|---:|---:|");
    for (m, _) in MODELS {
        let h = sim.get(&(HELD_OUT.to_string(), m.to_string()));
        let mb = sim.get(&("mingbird".to_string(), m.to_string()));
        let _ = writeln!(
            s,
            "| {m} | {} | {} | {} |",
            h.map_or("–".into(), spread),
            mb.map_or("–".into(), spread),
            opt(p.get("mingbird", m).map(|x| x.mean), 3)
        );
    }
}
