//! Turning fitted numbers into profile files, and the decode-speed fit against the published
//! wall times.

use super::analytic::{self, Params, TaskShape};
use super::published::Published;
use super::Fitted;

/// How the fitted ending hazard is shared among the forms that end opencode's or agent-mini's
/// run (a design choice: the published coding does not separate them for these arms).
const ENDING: [(&str, f64); 5] = [
    ("abandon", 0.5),
    ("false_done", 0.2),
    ("empty_turn", 0.1),
    ("text_call", 0.1),
    ("malformed_call", 0.1),
];
/// Forms that cost turns but do not end the run, relative to the ending hazard's base.
const COSTLY: [(&str, f64); 5] = [
    ("repeat_call", 0.1),
    ("wrong_tool", 0.05),
    ("bad_args", 0.05),
    ("think_only", 0.02),
    ("runaway", 0.01),
];

/// Per-model constants that are not fitted: family (the published model's), parameter size,
/// thinking capability, prefill curve, load time, lost-in-the-middle rate and the reactions.
struct Fixed {
    family: &'static str,
    params_b: f64,
    thinking: bool,
    prefill: (f64, f64, f64),
    load_s: f64,
    lost: f64,
    lost_threshold: u64,
    loops: (f64, f64, f64),
    fix: (f64, f64),
}

fn fixed(model: &str) -> Fixed {
    // prefill: gemma4:e2b and qwen3.5:4b fitted to cost_curve_data_2609.csv
    // (docs/sim.md, "Calibration"); 12B = the e2b curve × 5 and 35B (MoE, ~3B active) = the 4B curve,
    // both assumptions. load: the cold loads of 2.2–4.3 s docs/sim.md cites.
    match model {
        "sim-2b" => Fixed {
            family: "gemma4",
            params_b: 2.3,
            thinking: false,
            prefill: (0.066, 3.90e-4, 7.06e-8),
            load_s: 2.2,
            lost: 0.25,
            lost_threshold: 12_000,
            loops: (0.85, 0.65, 0.25),
            fix: (0.75, 0.25),
        },
        "sim-4b" => Fixed {
            family: "qwen35",
            params_b: 4.0,
            thinking: true,
            prefill: (0.97, 2.13e-4, 0.0),
            load_s: 2.2,
            lost: 0.15,
            lost_threshold: 16_000,
            loops: (0.75, 0.5, 0.15),
            fix: (0.85, 0.35),
        },
        "sim-12b" => Fixed {
            family: "gemma4",
            params_b: 12.0,
            thinking: false,
            prefill: (0.33, 1.95e-3, 3.53e-7),
            load_s: 2.2,
            lost: 0.1,
            lost_threshold: 24_000,
            loops: (0.6, 0.4, 0.1),
            fix: (0.9, 0.45),
        },
        _ => Fixed {
            family: "qwen35",
            params_b: 35.0,
            thinking: true,
            prefill: (0.97, 2.13e-4, 0.0),
            load_s: 4.3,
            lost: 0.05,
            lost_threshold: 48_000,
            loops: (0.4, 0.25, 0.05),
            fix: (0.95, 0.6),
        },
    }
}

/// The generation speed of the 35B is cited (about 26 tok/s; docs/sim.md, "Calibration"); the
/// others are fitted.
const DECODE_35B: f64 = 26.0;

/// Modelled seconds of one (arm, task) at `tps`, for the expected number of steps.
fn wall(model: &str, p: &Params, arm: &str, t: &TaskShape, tps: f64) -> f64 {
    let f = fixed(model);
    let shape = analytic::arm_shape(arm);
    let (a, b, c) = f.prefill;
    let cost = |n: f64| b * n + c * n * n;
    let k = analytic::predict(p, shape, t).steps.round() as usize;
    let mut ctx = (shape.base_tokens + t.prompt_tokens) as f64;
    let mut s = f.load_s + a + cost(ctx);
    for step in t.step_tokens.iter().take(k) {
        let new = (if shape.keeps_calls { *step } else { 0 } + shape.result_tokens) as f64;
        s += a + cost(ctx + new) - cost(ctx) + *step as f64 / tps;
        ctx += new;
    }
    s + 30.0 / tps
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return 0.0;
    }
    v[v.len() / 2]
}

/// Decode speed that makes the median modelled wall of the given arms' cells match the
/// published median (bisection; the prediction falls as the speed rises).
pub fn fit_decode(
    model: &str,
    p: &Params,
    pubd: &Published,
    tasks: &[TaskShape],
    arms: &[&str],
) -> f64 {
    if model == "sim-35b" {
        return DECODE_35B;
    }
    let mut walls = Vec::new();
    for arm in arms {
        if let Some(cells) = pubd.get(&(arm.to_string(), model.to_string())) {
            walls.extend(cells.iter().filter_map(|c| c.wall));
        }
    }
    let target = median(walls);
    let pred = |tps: f64| {
        median(
            arms.iter()
                .flat_map(|arm| tasks.iter().map(move |t| (arm, t)))
                .map(|(arm, t)| wall(model, p, arm, t, tps))
                .collect(),
        )
    };
    let (mut lo, mut hi) = (0.5f64, 500.0f64);
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if pred(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ((lo * hi).sqrt() * 100.0).round() / 100.0
}

fn r4(x: f64) -> String {
    let v = (x * 1e4).round() / 1e4;
    if v == 0.0 && x > 0.0 {
        format!("{x:.6}")
    } else {
        format!("{v}")
    }
}

/// The profile file of a fitted model.
pub fn render(f: &Fitted, seeds: &str) -> String {
    let x = fixed(&f.model);
    let p = &f.params;
    let mut s = format!(
        "# Profile of {m} (family {fam}). Written by `lrab sim calibrate`; hand edits are overwritten.\n\
         name = \"{m}\"\nfamily = \"{fam}\"\nparams_b = {pb}\nthinking = {th}\n\
         origin = \"fitted by lrab sim calibrate (verified at seeds {seeds}) to the {arms} cells of failure_forms_2609.csv{ex}: ending hazard {hb} below 2k tokens of opening, logit slope {hs} per 8k of opening, content errors {ce} per write, goes on when an ending is answered {go}, decode {tps} tok/s (loss {loss})\"\n\n",
        m = f.model,
        arms = f.fit_arms.join(", "),
        fam = x.family,
        pb = x.params_b,
        th = x.thinking,
        ex = if f.excluded.is_empty() { String::new() } else { format!(" (without {})", f.excluded.join(", ")) },
        hb = r4(p.h_base),
        hs = p.h_slope,
        ce = r4(p.content),
        go = r4(p.go_on),
        tps = f.decode_tps,
        loss = r4(f.loss),
    );
    s.push_str(&format!(
        "[speed]\nprefill_a = {}\nprefill_b = {:e}\nprefill_c = {:e}\ndecode_tps = {}\nload_s = {}\n\n",
        x.prefill.0, x.prefill.1, x.prefill.2, f.decode_tps, x.load_s
    ));
    // (form, base, slope per 8k of opening)
    let mut forms: Vec<(String, f64, f64)> = ENDING
        .iter()
        .map(|(n, share)| (n.to_string(), share * p.h_base, p.h_slope))
        .collect();
    forms.extend(
        COSTLY
            .iter()
            .map(|(n, share)| (n.to_string(), share * p.h_base, 0.0)),
    );
    forms.push(("lost_in_middle".into(), x.lost, 0.0));
    forms.sort_by(|a, b| a.0.cmp(&b.0));
    for (n, base, slope) in forms {
        s.push_str(&format!(
            "[forms.{n}]\nbase = {}\nopening_slope = {slope}\n\n",
            r4(base)
        ));
    }
    s.push_str(&format!(
        "[content]\nbase = {}\ntier_slope = 0.2\nprogress_slope = 0.5\n\n",
        r4(p.content)
    ));
    s.push_str(&format!(
        "[reactions]\nloop_stay_plain = {}\nloop_stay_warned = {}\nloop_stay_blocked = {}\nfix_precise = {}\nfix_generic = {}\npersist = 0.3\nnudge_continue = {}\nlost_ctx_threshold = {}\n",
        x.loops.0, x.loops.1, x.loops.2, x.fix.0, x.fix.1, r4(p.go_on), x.lost_threshold
    ));
    s
}
