//! Power of the paired test of a mean delta, and the repeats or tasks a delta needs.
//!
//! The test is the one-sample t-test on the per-task mean deltas (tasks are the independent
//! units; docs/statistics.md, "Power"). With T tasks and R repeats per task each task mean has
//! variance σ²_task + σ²_repeat / R ([`super::paired::Components`]), so the effect size is
//! δ / √(σ²_task + σ²_repeat / R) and the power is that of statsmodels' `TTestPower` (two-sided,
//! noncentral t with T − 1 degrees of freedom). More repeats only shrink the repeat part: when
//! σ²_task alone is too large, no number of repeats reaches the target and more tasks are needed.

use super::paired::Components;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use statrs::function::gamma::ln_gamma;

/// Significance level of the power calculations.
pub const ALPHA: f64 = 0.05;
/// Target power.
pub const TARGET: f64 = 0.8;
/// Most repeats searched.
pub const MAX_REPEATS: usize = 10_000;
/// Most tasks searched.
pub const MAX_TASKS: usize = 100_000;

/// CDF of the noncentral t distribution with `df` (≥ 1) degrees of freedom and noncentrality
/// `nc` at `t`: E[Φ(t·S − nc)] with S = √(χ²_df / df), integrated by composite Simpson over the
/// bulk of S (±12 standard deviations). Accurate to about 1e-9 (checked against scipy's `nct`).
pub fn nct_cdf(t: f64, df: f64, nc: f64) -> f64 {
    let normal = Normal::new(0.0, 1.0).expect("standard normal");
    let sd = (1.0 / (2.0 * df)).sqrt().min(1.0);
    let (lo, hi) = ((1.0 - 12.0 * sd).max(0.0), 1.0 + 12.0 * sd);
    let log_norm =
        (df / 2.0) * df.ln() - (df / 2.0 - 1.0) * std::f64::consts::LN_2 - ln_gamma(df / 2.0);
    let density = |s: f64| {
        if s <= 0.0 {
            // S^(df-1) at 0: finite only for df = 1.
            return if (df - 1.0).abs() < 1e-12 {
                log_norm.exp()
            } else {
                0.0
            };
        }
        (log_norm + (df - 1.0) * s.ln() - df * s * s / 2.0).exp()
    };
    let f = |s: f64| normal.cdf(t * s - nc) * density(s);
    let n = 4000;
    let h = (hi - lo) / n as f64;
    let mut sum = f(lo) + f(hi);
    for i in 1..n {
        let x = lo + i as f64 * h;
        sum += if i % 2 == 1 { 4.0 * f(x) } else { 2.0 * f(x) };
    }
    (sum * h / 3.0).clamp(0.0, 1.0)
}

/// Two-sided power of the one-sample t-test for standardised effect `es` with `n` (≥ 2, may be
/// fractional) observations at level `alpha`, as statsmodels `TTestPower().power` computes it.
pub fn t_test_power(es: f64, n: f64, alpha: f64) -> f64 {
    let df = n - 1.0;
    if df < 1.0 {
        return f64::NAN;
    }
    if es.is_infinite() {
        return 1.0;
    }
    let t = StudentsT::new(0.0, 1.0, df).expect("df >= 1");
    let crit = t.inverse_cdf(1.0 - alpha / 2.0);
    let nc = es * n.sqrt();
    (1.0 - nct_cdf(crit, df, nc)) + nct_cdf(-crit, df, nc)
}

/// Real n at which [`t_test_power`] reaches `power` (statsmodels `solve_power(nobs=None)`),
/// by bisection on [2, 1e7]; `None` when es is 0 or the target is out of that range.
pub fn solve_nobs(es: f64, power: f64, alpha: f64) -> Option<f64> {
    if es.abs() <= 0.0 || !es.is_finite() {
        return None;
    }
    let (mut lo, mut hi) = (2.0f64, 1e7f64);
    if t_test_power(es, lo, alpha) >= power {
        return Some(lo);
    }
    if t_test_power(es, hi, alpha) < power {
        return None;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if t_test_power(es, mid, alpha) >= power {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo < 1e-10 * hi {
            break;
        }
    }
    Some(hi)
}

/// How many repeats or tasks a delta needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Needed {
    /// This many (the smallest count reaching the target power).
    Count(usize),
    /// Not reachable: with repeats, the between-task variance alone keeps the power below the
    /// target at this many tasks (more tasks are needed); with tasks, past the search limit.
    Unreachable,
    /// The deltas do not vary at all, so any design "detects" them; power says nothing.
    NoVariance,
    /// A zero delta cannot be detected.
    NoEffect,
}

fn smallest(lo: usize, hi: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
    if !ok(hi) {
        return None;
    }
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// Power now: T tasks, R repeats, delta δ.
pub fn achieved(delta: f64, c: &Components, tasks: usize, repeats: usize) -> Option<f64> {
    let v = c.per_task(repeats as f64);
    (v > 0.0 && tasks >= 2).then(|| t_test_power(delta.abs() / v.sqrt(), tasks as f64, ALPHA))
}

/// Smallest R with power ≥ [`TARGET`] for δ at `tasks` tasks.
pub fn repeats_needed(delta: f64, c: &Components, tasks: usize) -> Needed {
    if delta.abs() <= 1e-12 {
        return Needed::NoEffect;
    }
    if c.task <= 0.0 && c.repeat <= 0.0 {
        return Needed::NoVariance;
    }
    let ok = |r: usize| {
        t_test_power(
            delta.abs() / c.per_task(r as f64).sqrt(),
            tasks as f64,
            ALPHA,
        ) >= TARGET
    };
    if tasks < 2 {
        return Needed::Unreachable;
    }
    smallest(1, MAX_REPEATS, ok).map_or(Needed::Unreachable, Needed::Count)
}

/// Smallest T with power ≥ [`TARGET`] for δ when each task's mean delta has variance
/// `per_task_var` (σ²_task + σ²_repeat / R, or the plain variance of single-repeat deltas).
pub fn tasks_needed(delta: f64, per_task_var: f64) -> Needed {
    if delta.abs() <= 1e-12 {
        return Needed::NoEffect;
    }
    if per_task_var <= 0.0 {
        return Needed::NoVariance;
    }
    let es = delta.abs() / per_task_var.sqrt();
    smallest(2, MAX_TASKS, |t| {
        t_test_power(es, t as f64, ALPHA) >= TARGET
    })
    .map_or(Needed::Unreachable, Needed::Count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn central_t_is_the_t_cdf() {
        let t = StudentsT::new(0.0, 1.0, 7.0).unwrap();
        for x in [-2.5, -0.3, 0.0, 1.1, 3.0] {
            assert!((nct_cdf(x, 7.0, 0.0) - t.cdf(x)).abs() < 1e-9, "{x}");
        }
    }

    #[test]
    fn power_grows_with_n_and_searches_agree() {
        assert!(t_test_power(0.5, 10.0, 0.05) < t_test_power(0.5, 30.0, 0.05));
        let n = solve_nobs(0.5, 0.8, 0.05).unwrap();
        assert!(t_test_power(0.5, n, 0.05) >= 0.8 - 1e-9);
        match tasks_needed(0.5, 1.0) {
            Needed::Count(k) => assert_eq!(k, n.ceil() as usize),
            other => panic!("{other:?}"),
        }
        let c = Components {
            task: 0.0,
            repeat: 0.04,
            tasks: 18,
            repeats: 3,
        };
        assert!(matches!(repeats_needed(0.05, &c, 18), Needed::Count(_)));
        let heavy = Components { task: 1.0, ..c };
        assert_eq!(repeats_needed(0.05, &heavy, 18), Needed::Unreachable);
        assert_eq!(repeats_needed(0.0, &c, 18), Needed::NoEffect);
        assert_eq!(tasks_needed(0.1, 0.0), Needed::NoVariance);
    }
}
