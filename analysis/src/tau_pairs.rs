//! τ² pass/fail pairs of two arms: what a pass is, the paper's domain order, and McNemar for
//! every pair of arms — below both the τ² summary (`analysis`) and its tables (`tau2_tables`),
//! which read them.

use crate::model::TauData;
use crate::stats::mcnemar::{mcnemar, McNemar};
use serde::Serialize;

/// A τ² task counts as passed when its reward is 1 (τ²'s success criterion).
pub fn tau_pass(r: f64) -> bool {
    r >= 1.0 - 1e-9
}

/// The paper's order of the τ² domains (others after them, by name).
pub(crate) fn domain_rank(d: &str) -> (usize, &str) {
    let known = ["retail", "airline", "telecom"];
    (known.iter().position(|k| *k == d).unwrap_or(known.len()), d)
}

/// Two arms on the tasks both have a first-trial reward for (any two arms of the inputs:
/// two arms of one run, or a run's arm and a published arm).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pair {
    /// The first arm (b counts its wins).
    pub a: String,
    /// The second arm.
    pub b: String,
    /// The domains with paired tasks, in the paper's order.
    pub domains: Vec<String>,
    /// Exact McNemar over the paired tasks of every domain.
    pub mcnemar: McNemar,
    /// Tasks that one arm has a reward for and the other not (left out).
    pub unpaired: u64,
}

/// McNemar for every pair of arms (names in sorted order; pairs with no task in common are
/// left out). Pairs = each task's first trial; pass = reward 1.
pub fn pairwise(tau: &TauData) -> Vec<Pair> {
    let arms: std::collections::BTreeSet<&String> = tau
        .values()
        .flat_map(|d| d.values().flat_map(|t| t.keys()))
        .collect();
    let arms: Vec<&String> = arms.into_iter().collect();
    let mut doms: Vec<&String> = tau.keys().collect();
    doms.sort_by_key(|d| domain_rank(d));
    let mut out = Vec::new();
    for (i, a) in arms.iter().enumerate() {
        for b in &arms[i + 1..] {
            let (mut pairs, mut domains, mut unpaired) = (Vec::new(), Vec::new(), 0);
            for d in &doms {
                let before = pairs.len();
                for arms_of in tau[*d].values() {
                    let first = |x: &String| arms_of.get(x).and_then(|v| v.first().copied());
                    match (first(a), first(b)) {
                        (Some(x), Some(y)) => pairs.push((tau_pass(x), tau_pass(y))),
                        (None, None) => {}
                        _ => unpaired += 1,
                    }
                }
                if pairs.len() > before {
                    domains.push(d.to_string());
                }
            }
            if !pairs.is_empty() {
                out.push(Pair {
                    a: a.to_string(),
                    b: b.to_string(),
                    domains,
                    mcnemar: mcnemar(&pairs),
                    unpaired,
                });
            }
        }
    }
    out
}
