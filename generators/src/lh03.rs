//! `lh03`: the ten-module buggy pipeline of LH-03.
//!
//! Files (copied flat into the workdir): `m01.py` .. `m10.py`, one function each with exactly
//! one planted bug (upstream's list: mean divisor n+1, median wrong for even n, population
//! instead of sample variance, endpoint instead of least-squares slope, interpolation leaving a
//! trailing `None`, smoothing stepping back `factor` instead of 1, normalizing by multiplying
//! with the peak, integer division in the trapezoid rule, an off-by-one that skips the first
//! zero crossing, a fit returning a slice instead of the intercept) and `test_suite.py`.
//!
//! The modules are fixed text; the seed varies the test inputs, and the expected values are
//! computed here from integer inputs (so they are exact or one rounding away from what a
//! correct Python implementation returns; the suite's tolerance is 1e-9). Every case is
//! checked to fail against the planted bug, so the untouched suite prints `0 passed, 10 failed`.

use std::collections::BTreeMap;

use crate::rng::SeededRng;
use crate::{GenError, Generated};

/// Default seed of LH-03.
pub const DEFAULT_SEED: u64 = 4303;

/// (module, function, source) of the ten buggy stages, in fix order.
pub const MODULES: [(&str, &str, &str); 10] = [
    ("m01", "calc_mean", include_str!("lh03_py/m01.py")),
    ("m02", "calc_median", include_str!("lh03_py/m02.py")),
    ("m03", "calc_variance", include_str!("lh03_py/m03.py")),
    ("m04", "calc_slope", include_str!("lh03_py/m04.py")),
    ("m05", "calc_interp", include_str!("lh03_py/m05.py")),
    ("m06", "calc_smooth", include_str!("lh03_py/m06.py")),
    ("m07", "calc_normalize", include_str!("lh03_py/m07.py")),
    ("m08", "calc_integrate", include_str!("lh03_py/m08.py")),
    ("m09", "calc_roots", include_str!("lh03_py/m09.py")),
    ("m10", "calc_fit", include_str!("lh03_py/m10.py")),
];

const SUITE_TEMPLATE: &str = include_str!("lh03_py/test_suite.py.in");
/// Relative difference that counts as "the bug is visible" (far above the 1e-9 tolerance).
const VISIBLE: f64 = 1e-6;
const MAX_ATTEMPTS: u32 = 1000;

/// A Python literal argument.
enum Arg {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Int(i64),
}

/// An expected value.
enum Expected {
    Float(f64),
    Floats(Vec<f64>),
}

struct Case {
    args: Vec<Arg>,
    expected: Expected,
}

/// Python literal of an `f64`: Rust's `{:?}` is the shortest round-trip form, which Python's
/// float parser reads back to the same double.
fn py_float(v: f64) -> String {
    format!("{v:?}")
}

fn py_arg(a: &Arg) -> String {
    match a {
        Arg::Ints(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Arg::Floats(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| py_float(*x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Arg::Int(i) => i.to_string(),
    }
}

fn py_expected(e: &Expected) -> String {
    match e {
        Expected::Float(v) => py_float(*v),
        Expected::Floats(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| py_float(*x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > VISIBLE * a.abs().max(1.0)
}

fn ints(rng: &mut SeededRng, n: usize, lo: i64, hi: i64) -> Vec<i64> {
    (0..n).map(|_| rng.int_in(lo, hi)).collect()
}

/// Strictly increasing integer positions starting at `start` with steps in 1..=max_step.
fn positions(rng: &mut SeededRng, n: usize, start: i64, max_step: i64) -> Vec<i64> {
    let mut x = start;
    (0..n)
        .map(|i| {
            if i > 0 {
                x += rng.int_in(1, max_step);
            }
            x
        })
        .collect()
}

/// `x * x`, spelled out: only IEEE basic operations, so every platform rounds alike.
fn sq(x: f64) -> f64 {
    x * x
}

fn mean(v: &[i64]) -> f64 {
    v.iter().sum::<i64>() as f64 / v.len() as f64
}

fn least_squares(xs: &[i64], ys: &[i64]) -> (f64, f64) {
    let mx = mean(xs);
    let my = mean(ys);
    let sxx: f64 = xs.iter().map(|&x| sq(x as f64 - mx)).sum();
    let sxy: f64 = xs
        .iter()
        .zip(ys)
        .map(|(&x, &y)| (x as f64 - mx) * (y as f64 - my))
        .sum();
    let slope = sxy / sxx;
    (slope, my - slope * mx)
}

/// One draw of the ten cases, in the order of `MODULES`; `None` when a planted bug would not
/// show for these inputs (the draws stop there, as the caller redraws).
fn draw_cases(rng: &mut SeededRng) -> Option<Vec<Case>> {
    CASE_DRAWS.iter().map(|draw| draw(rng)).collect()
}

/// One function per module (m01..m10): each draws its case or gives up.
const CASE_DRAWS: [fn(&mut SeededRng) -> Option<Case>; 10] = [
    mean_case,
    median_case,
    variance_case,
    slope_case,
    interp_case,
    smooth_case,
    normalize_case,
    integrate_case,
    roots_case,
    fit_case,
];

/// m01 mean: bug divides by n + 1, visible unless the sum is 0.
fn mean_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(5, 9) as usize;
    let v = ints(rng, n, -40, 160);
    let sum: i64 = v.iter().sum();
    if sum == 0 {
        return None;
    }
    Some(Case {
        expected: Expected::Float(mean(&v)),
        args: vec![Arg::Ints(v)],
    })
}

/// m02 median: even count of distinct values, so the upper middle alone is wrong.
fn median_case(rng: &mut SeededRng) -> Option<Case> {
    let n = 2 * rng.int_in(3, 5) as usize;
    let v = ints(rng, n, 0, 99);
    let mut s = v.clone();
    s.sort_unstable();
    s.dedup();
    if s.len() != n {
        return None;
    }
    let median = (s[n / 2 - 1] + s[n / 2]) as f64 / 2.0;
    Some(Case {
        expected: Expected::Float(median),
        args: vec![Arg::Ints(v)],
    })
}

/// m03 variance: sample vs population differs whenever the values are not all equal.
fn variance_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(6, 10) as usize;
    let v = ints(rng, n, 0, 60);
    let m = mean(&v);
    let ss: f64 = v.iter().map(|&x| sq(x as f64 - m)).sum();
    if ss == 0.0 {
        return None;
    }
    Some(Case {
        expected: Expected::Float(ss / (n - 1) as f64),
        args: vec![Arg::Ints(v)],
    })
}

/// m04 slope: a noisy line, so the endpoint slope differs from least squares.
fn slope_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(6, 9) as usize;
    let start = rng.int_in(0, 10);
    let xs = positions(rng, n, start, 3);
    let a = rng.int_in(-5, 5);
    let b = rng.int_in(-20, 20);
    let ys: Vec<i64> = xs.iter().map(|&x| a * x + b + rng.int_in(-6, 6)).collect();
    let (slope, _) = least_squares(&xs, &ys);
    let endpoint = (ys[n - 1] - ys[0]) as f64 / (xs[n - 1] - xs[0]) as f64;
    if !differs(slope, endpoint) {
        return None;
    }
    Some(Case {
        expected: Expected::Float(slope),
        args: vec![Arg::Ints(xs), Arg::Ints(ys)],
    })
}

/// m05 interp: queries at 1/4, 1/2, 3/4 of chosen segments, always including the last one
/// (the bug leaves it None).
fn interp_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(5, 7) as usize;
    let start = rng.int_in(0, 10);
    let xs = positions(rng, n, start, 4);
    let ys = ints(rng, n, -30, 30);
    let mut segs: Vec<usize> = (0..3).map(|_| rng.below((n - 2) as u64) as usize).collect();
    segs.push(n - 2);
    segs.sort_unstable();
    let mut queries = Vec::new();
    let mut values = Vec::new();
    for seg in segs {
        let frac = [0.25, 0.5, 0.75][rng.below(3) as usize];
        let (x0, x1) = (xs[seg] as f64, xs[seg + 1] as f64);
        let (y0, y1) = (ys[seg] as f64, ys[seg + 1] as f64);
        let q = x0 + frac * (x1 - x0);
        let t = (q - x0) / (x1 - x0);
        queries.push(q);
        values.push(y0 + t * (y1 - y0));
    }
    Some(Case {
        expected: Expected::Floats(values),
        args: vec![Arg::Ints(xs), Arg::Ints(ys), Arg::Floats(queries)],
    })
}

/// m06 smooth: factor >= 2, so stepping back `factor` reads a different earlier output.
fn smooth_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(6, 9) as usize;
    let v = ints(rng, n, 0, 50);
    let factor = rng.int_in(2, 3);
    let smooth = |back: &dyn Fn(usize) -> usize| {
        let mut out = vec![v[0] as f64];
        for i in 1..n {
            let prev = out[back(i)];
            out.push((v[i] as f64 + factor as f64 * prev) / (factor + 1) as f64);
        }
        out
    };
    let good = smooth(&|i| i - 1);
    let bad = smooth(&|i| i.saturating_sub(factor as usize));
    if !good.iter().zip(&bad).any(|(g, b)| differs(*g, *b)) {
        return None;
    }
    Some(Case {
        expected: Expected::Floats(good),
        args: vec![Arg::Ints(v), Arg::Int(factor)],
    })
}

/// m07 normalize: peak magnitude >= 2, so multiplying by it is visibly wrong.
fn normalize_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(5, 8) as usize;
    let v = ints(rng, n, -20, 50);
    let peak = v.iter().map(|x| x.abs()).max().unwrap_or(0);
    if peak < 2 {
        return None;
    }
    Some(Case {
        expected: Expected::Floats(v.iter().map(|&x| x as f64 / peak as f64).collect()),
        args: vec![Arg::Ints(v)],
    })
}

/// m08 integrate: at least one odd pair sum, so floor division loses a half.
fn integrate_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(5, 8) as usize;
    let xs = positions(rng, n, 0, 3);
    let ys = ints(rng, n, 0, 40);
    if !(0..n - 1).any(|i| (ys[i] + ys[i + 1]) % 2 != 0) {
        return None;
    }
    let area: f64 = (0..n - 1)
        .map(|i| (ys[i] + ys[i + 1]) as f64 / 2.0 * (xs[i + 1] - xs[i]) as f64)
        .sum();
    Some(Case {
        expected: Expected::Float(area),
        args: vec![Arg::Ints(xs), Arg::Ints(ys)],
    })
}

/// m09 roots: a sign change in the first interval (skipped by the off-by-one), no zeros.
fn roots_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(6, 9) as usize;
    let xs = positions(rng, n, 0, 2);
    let mut ys: Vec<i64> = Vec::with_capacity(n);
    let mut sign = if rng.below(2) == 0 { 1 } else { -1 };
    for i in 0..n {
        if i == 1 || (i > 1 && rng.below(3) == 0) {
            sign = -sign;
        }
        ys.push(sign * rng.int_in(1, 25));
    }
    let roots: Vec<f64> = (0..n - 1)
        .filter(|&i| (ys[i] < 0) != (ys[i + 1] < 0))
        .map(|i| xs[i] as f64 - (ys[i] * (xs[i + 1] - xs[i])) as f64 / (ys[i + 1] - ys[i]) as f64)
        .collect();
    Some(Case {
        expected: Expected::Floats(roots),
        args: vec![Arg::Ints(xs), Arg::Ints(ys)],
    })
}

/// m10 fit: the bug returns a one-element list, never a number.
fn fit_case(rng: &mut SeededRng) -> Option<Case> {
    let n = rng.int_in(6, 9) as usize;
    let start = rng.int_in(0, 10);
    let xs = positions(rng, n, start, 3);
    let a = rng.int_in(1, 6);
    let b = rng.int_in(-30, 30);
    let ys: Vec<i64> = xs.iter().map(|&x| a * x + b + rng.int_in(-5, 5)).collect();
    let (_, intercept) = least_squares(&xs, &ys);
    Some(Case {
        expected: Expected::Float(intercept),
        args: vec![Arg::Ints(xs), Arg::Ints(ys)],
    })
}

fn render_suite(seed: u64, cases: &[Case]) -> String {
    let lines: Vec<String> = MODULES
        .iter()
        .zip(cases)
        .map(|((module, func, _), case)| {
            let args: Vec<String> = case.args.iter().map(py_arg).collect();
            format!(
                "    (\"{module}\", \"{func}\", ({},), {}),",
                args.join(", "),
                py_expected(&case.expected)
            )
        })
        .collect();
    SUITE_TEMPLATE
        .replace("@SEED@", &seed.to_string())
        .replace("@CASES@", &lines.join("\n"))
}

/// Generates LH-03's input for `seed`.
pub fn generate(seed: u64) -> Result<Generated, GenError> {
    let mut rng = SeededRng::new(seed);
    for _ in 0..MAX_ATTEMPTS {
        let Some(cases) = draw_cases(&mut rng) else {
            continue;
        };
        let mut files = BTreeMap::new();
        let mut truth = BTreeMap::new();
        for (module, func, source) in MODULES {
            files.insert(format!("{module}.py"), source.as_bytes().to_vec());
            truth.insert(format!("function_{module}"), vec![func.to_string()]);
        }
        files.insert(
            "test_suite.py".to_string(),
            render_suite(seed, &cases).into_bytes(),
        );
        truth.insert(
            "suite_pass_line".into(),
            vec![format!("{} passed, 0 failed", MODULES.len())],
        );
        truth.insert(
            "suite_untouched_line".into(),
            vec![format!("0 passed, {} failed", MODULES.len())],
        );
        return Ok(Generated { files, truth });
    }
    Err(GenError::Exhausted {
        name: "lh03",
        seed,
        attempts: MAX_ATTEMPTS,
    })
}
