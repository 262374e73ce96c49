//! The τ² significance tables in the paper's layout (upstream's `TAU2_SIGNIFICANCE.md`): for
//! the focal arm against each other arm, the pooled exact McNemar over every task of every
//! domain (278 tasks when retail, airline and telecom are all present) with the Wilcoxon
//! signed-rank p beside it (on pass/fail pairs it is the sign test), the "discriminating
//! subset" without telecom, the per-domain wins/ties/losses, and Holm over the comparisons.
//!
//! Everything is derived from the per-domain counts of [`TauSummary`] (pairs = each task's
//! first trial; pass = reward 1), so the tables always agree with the other τ² tables of the
//! report. The statistics are the crate's McNemar and Wilcoxon, checked against scipy.

use crate::analysis::TauSummary;
use crate::stats::holm::holm;
use crate::stats::mcnemar::{from_counts, McNemar};
use crate::stats::wilcoxon::signed_rank;
use crate::tau_pairs::domain_rank;
pub use crate::tau_pairs::{pairwise, Pair};
use serde::Serialize;
use std::fmt::Write;

/// The domain left out of the discriminating subset (nearly every arm solves it).
pub const SATURATED_DOMAIN: &str = "telecom";

/// One group of paired tasks: counts and tests.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Paired {
    /// Domains pooled.
    pub domains: Vec<String>,
    /// Number of paired tasks.
    pub tasks: u64,
    /// Exact McNemar (b = focal-only passes = wins, c = losses).
    pub mcnemar: McNemar,
    /// Two-sided Wilcoxon signed-rank p (normal approximation, zeros dropped).
    pub wilcoxon_p: f64,
}

/// The focal arm against one opponent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The other arm's name.
    pub opponent: String,
    /// All tasks of every domain together.
    pub pooled: Paired,
    /// Every domain but [`SATURATED_DOMAIN`], when both kinds are present.
    pub discriminating: Option<Paired>,
    /// Per domain, in the paper's order (retail, airline, telecom, then others).
    pub per_domain: Vec<Paired>,
    /// Holm-adjusted pooled McNemar p over all comparisons.
    pub holm_p: f64,
}

/// Wilcoxon p of binary pairs with `wins` +1, `losses` -1 and `ties` zero differences.
pub fn binary_wilcoxon_p(wins: u64, ties: u64, losses: u64) -> f64 {
    let mut d = vec![1.0; wins as usize];
    d.extend(std::iter::repeat_n(0.0, ties as usize));
    d.extend(std::iter::repeat_n(-1.0, losses as usize));
    signed_rank(&d).p_normal
}

fn pooled(groups: &[(&str, &McNemar)]) -> Paired {
    let (b, c, t) = groups.iter().fold((0, 0, 0), |(b, c, t), (_, m)| {
        (b + m.b, c + m.c, t + m.ties)
    });
    Paired {
        domains: groups.iter().map(|(d, _)| d.to_string()).collect(),
        tasks: b + c + t,
        mcnemar: from_counts(b, c, t),
        wilcoxon_p: binary_wilcoxon_p(b, t, c),
    }
}

/// The comparisons of the focal arm, from the per-domain McNemar counts.
pub fn comparisons(t: &TauSummary) -> Vec<Comparison> {
    let mut out: Vec<Comparison> = Vec::new();
    for opp in t.arms.iter().filter(|a| **a != t.focal) {
        let mut groups: Vec<(&str, &McNemar)> = t
            .per_domain
            .iter()
            .filter(|(c, _, m)| c == opp && m.b + m.c + m.ties > 0)
            .map(|(_, d, m)| (d.as_str(), m))
            .collect();
        if groups.is_empty() {
            continue;
        }
        groups.sort_by_key(|(d, _)| domain_rank(d));
        let rest: Vec<(&str, &McNemar)> = groups
            .iter()
            .copied()
            .filter(|(d, _)| *d != SATURATED_DOMAIN)
            .collect();
        let discriminating = (!rest.is_empty() && rest.len() < groups.len()).then(|| pooled(&rest));
        out.push(Comparison {
            opponent: opp.clone(),
            pooled: pooled(&groups),
            discriminating,
            per_domain: groups
                .iter()
                .map(|g| pooled(std::slice::from_ref(g)))
                .collect(),
            holm_p: 1.0,
        });
    }
    let adjusted = holm(
        &out.iter()
            .map(|c| c.pooled.mcnemar.p_exact)
            .collect::<Vec<_>>(),
    );
    for (c, p) in out.iter_mut().zip(adjusted) {
        c.holm_p = p;
    }
    out
}

/// The every-pair table as Markdown (empty with fewer than two arms).
pub fn render_pairwise(pairs: &[Pair]) -> String {
    let mut out = String::new();
    if pairs.is_empty() {
        return out;
    }
    let _ = writeln!(out, "## τ²: McNemar for every pair of arms\n");
    let _ = writeln!(
        out,
        "Per-task pass/fail (first trial, reward 1) on the tasks both arms have a reward for; \
         exact McNemar, not adjusted for the number of pairs.\n"
    );
    let _ = writeln!(
        out,
        "| arm A | arm B | domains | tasks | A only | B only | both/neither | McNemar exact p | unpaired |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|");
    for p in pairs {
        let m = &p.mcnemar;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p.a,
            p.b,
            p.domains.join("+"),
            m.b + m.c + m.ties,
            m.b,
            m.c,
            m.ties,
            g4(m.p_exact),
            p.unpaired
        );
    }
    out.push('\n');
    out
}

/// Python's `format(x, ".4g")`, the precision the paper prints p-values with.
pub fn g4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let sci = format!("{x:.3e}");
    let (mant, exp) = sci.split_once('e').expect("scientific form");
    let e: i32 = exp.parse().expect("exponent");
    let strip = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..4).contains(&e) {
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant.to_string()), e.abs())
    } else {
        strip(format!("{x:.*}", (3 - e) as usize))
    }
}

fn wtl(m: &McNemar) -> String {
    format!("{}W / {}T / {}L", m.b, m.ties, m.c)
}

/// The tables as Markdown, in the paper's layout.
pub fn render(t: &TauSummary) -> String {
    let cmp = comparisons(t);
    let mut out = String::new();
    if cmp.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "## τ²: paired significance, {} vs each arm (exact McNemar primary)\n",
        t.focal
    );
    let _ = writeln!(
        out,
        "Per-task pass/fail (first trial, reward 1). Exact McNemar on the discordant pairs is the \
         primary test; the Wilcoxon signed-rank p (normal approximation, zeros dropped) reduces to \
         the sign test on binary pairs. Holm k={} across the comparisons.\n",
        cmp.len()
    );
    for c in &cmp {
        let p = &c.pooled;
        let _ = writeln!(out, "### {} vs {}\n", t.focal, c.opponent);
        let _ = writeln!(
            out,
            "- pooled ({} tasks): {}  \n  McNemar exact p = {} | Wilcoxon p = {}",
            p.tasks,
            wtl(&p.mcnemar),
            g4(p.mcnemar.p_exact),
            g4(p.wilcoxon_p)
        );
        if let Some(d) = &c.discriminating {
            let _ = writeln!(
                out,
                "- discriminating subset {} ({} tasks): {}, McNemar p = {}",
                d.domains.join("+"),
                d.tasks,
                wtl(&d.mcnemar),
                g4(d.mcnemar.p_exact)
            );
        }
        let per: Vec<String> = c
            .per_domain
            .iter()
            .map(|d| {
                format!(
                    "{} {}/{}/{}",
                    d.domains[0], d.mcnemar.b, d.mcnemar.ties, d.mcnemar.c
                )
            })
            .collect();
        let _ = writeln!(out, "- per-domain: {}\n", per.join(", "));
    }
    for c in &cmp {
        let verdict = if c.holm_p < 0.05 {
            "  <- significant at 0.05"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "Holm-adjusted (k={}) McNemar p, vs {}: {}{verdict}  ",
            cmp.len(),
            c.opponent,
            g4(c.holm_p)
        );
    }
    out.push('\n');
    out.push_str(&render_pairwise(&t.pairwise));
    out
}

#[cfg(test)]
mod tests {
    use super::g4;

    #[test]
    fn g4_is_pythons_4g() {
        for (x, want) in [
            (0.030015864349067285, "0.03002"),
            (2.7191876822818543e-05, "2.719e-05"),
            (0.22030, "0.2203"),
            (5.438375364563709e-05, "5.438e-05"),
            (1.0, "1"),
            (0.0001, "0.0001"),
            (0.5, "0.5"),
            (12345.0, "1.234e+04"),
        ] {
            assert_eq!(g4(x), want, "{x}");
        }
    }
}
