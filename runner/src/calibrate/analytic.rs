//! The analytic part of the fit: an expected-score model of a third-party arm on a simulated
//! model, cheap enough to search a grid of profile parameters against the published cells
//! before any real binary runs.
//!
//! An arm like opencode or agent-mini ends its run at the first reply without a tool call (a
//! text answer, an empty reply, a call the server drops or answers with HTTP 500). So with a
//! per-turn ending hazard h(context) the number of plan steps done before the end is a
//! survival process, and the expected score of a task is Σ P(k steps done) × score(first k
//! steps) — `score(k)` measured once by applying the reference solution step by step and
//! scoring the workdir with the real scorer. Content errors shave a share of the score of the
//! files written. The arms differ only by what they send: the prompt (system text + tool
//! definitions) every turn starts from, measured on the wire.

use std::collections::BTreeMap;

use lrab_sim::logistic_from;
use lrab_sim::Step;

/// What one arm sends, as the simulator sees it (tokens, about four characters each).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArmShape {
    /// System prompt + tool definitions of every request.
    pub base_tokens: u64,
    /// Tokens the arm's tool result adds per step (besides the model's own call).
    pub result_tokens: u64,
    /// Whether the arm sends the model's earlier calls back in full (agent-mini keeps only the
    /// text of its turns and a one-line result, so its prompt grows slowly).
    pub keeps_calls: bool,
}

/// Measured on the chat requests of each arm against the simulator (the proxy log's
/// `prompt_tokens`): opencode 1.18.23 sends ~7.4k tokens of system prompt and tool schemas
/// besides the task and keeps every call; agent-mini 0.3.1 sends ~0.8k and grows by ~50
/// tokens a step.
pub fn arm_shape(arm: &str) -> ArmShape {
    match arm {
        "opencode" => ArmShape {
            base_tokens: 7_400,
            result_tokens: 10,
            keeps_calls: true,
        },
        "agent-mini" => ArmShape {
            base_tokens: 820,
            result_tokens: 45,
            keeps_calls: false,
        },
        _ => ArmShape {
            base_tokens: 1_500,
            result_tokens: 60,
            keeps_calls: true,
        },
    }
}

/// One task as the model works through it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskShape {
    pub id: String,
    pub tier: u8,
    pub prompt_tokens: u64,
    /// Tokens the model emits for each step (the written file or the command).
    pub step_tokens: Vec<u64>,
    /// Whether each step writes a file.
    pub writes: Vec<bool>,
    /// Score after the first k steps of the reference (k = 0..=N).
    pub score_after: Vec<f64>,
}

impl TaskShape {
    pub fn new(
        id: &str,
        tier: u8,
        prompt: &str,
        steps: &[Step],
        score_after: Vec<f64>,
    ) -> TaskShape {
        TaskShape {
            id: id.into(),
            tier,
            prompt_tokens: (prompt.len() as u64).div_ceil(4),
            step_tokens: steps
                .iter()
                .map(|s| match s {
                    Step::Write { bytes, .. } => (bytes.len() as u64).div_ceil(4) + 20,
                    Step::Run { command } => (command.len() as u64).div_ceil(4) + 20,
                })
                .collect(),
            writes: steps
                .iter()
                .map(|s| matches!(s, Step::Write { .. }))
                .collect(),
            score_after,
        }
    }
}

/// The parameters searched per model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Ending hazard at zero context.
    pub h_base: f64,
    /// Logit increase of the hazard per 8192 tokens of prompt.
    pub h_slope: f64,
    /// Content-error rate per write (tier 1, start of the run).
    pub content: f64,
}

/// Share of a file's score a degraded version loses (the `exists` / `python_compiles` kind of
/// check still passes, a content check does not): half, a design assumption the verification
/// run corrects.
const DEGRADED_LOSS: f64 = 0.5;

/// The predicted outcome of one (arm, task).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Prediction {
    pub score: f64,
    /// Probability that no step was done (never engaged).
    pub none: f64,
    /// Probability of ending below half the score (early stop).
    pub early: f64,
    /// Expected steps done.
    pub steps: f64,
}

/// Bucketed like the simulator's own rates (2k tokens).
fn hazard(p: &Params, ctx: u64) -> f64 {
    let c = (ctx / 2048 * 2048) as f64 / 8192.0;
    logistic_from(p.h_base, p.h_slope * c)
}

pub fn predict(p: &Params, arm: ArmShape, t: &TaskShape) -> Prediction {
    let n = t.step_tokens.len();
    let mut alive = 1.0;
    let mut ctx = arm.base_tokens + t.prompt_tokens;
    let mut out = Prediction::default();
    let writes_total = t.writes.iter().filter(|w| **w).count().max(1) as f64;
    let mut writes_done = 0usize;
    for k in 0..=n {
        let h = if k == n { 1.0 } else { hazard(p, ctx) };
        let p_end = alive * h;
        let cr = logistic_from(p.content, 0.2 * (t.tier.max(1) - 1) as f64);
        let s = t.score_after[k] * (1.0 - cr * DEGRADED_LOSS * writes_done as f64 / writes_total);
        out.score += p_end * s;
        out.steps += p_end * k as f64;
        if k == 0 {
            out.none = p_end;
        }
        if s < 0.5 {
            out.early += p_end;
        }
        alive -= p_end;
        if k < n {
            ctx += if arm.keeps_calls { t.step_tokens[k] } else { 0 } + arm.result_tokens;
            writes_done += t.writes[k] as usize;
        }
    }
    out
}

/// Mean prediction over tasks.
pub fn predict_all(p: &Params, arm: ArmShape, tasks: &[TaskShape]) -> Prediction {
    let mut m = Prediction::default();
    for t in tasks {
        let x = predict(p, arm, t);
        m.score += x.score;
        m.none += x.none;
        m.early += x.early;
        m.steps += x.steps;
    }
    let n = tasks.len().max(1) as f64;
    Prediction {
        score: m.score / n,
        none: m.none / n,
        early: m.early / n,
        steps: m.steps / n,
    }
}

/// What one arm's published cells say about one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub mean: f64,
    pub never_engaged: f64,
    pub early_stop: f64,
}

/// Grid search of the three parameters against the targets of the given arms (squared errors;
/// the failure shares weigh half as much as the mean).
pub fn fit(tasks: &[TaskShape], targets: &BTreeMap<String, Target>) -> (Params, f64) {
    let mut best = (
        Params {
            h_base: 0.01,
            h_slope: 0.0,
            content: 0.0,
        },
        f64::INFINITY,
    );
    for bi in 0..=36 {
        let h_base = logistic_from(0.5, -9.0 + 0.25 * bi as f64);
        for si in 0..=32 {
            let h_slope = 0.25 * si as f64;
            for ci in 0..=10 {
                let p = Params {
                    h_base,
                    h_slope,
                    content: 0.05 * ci as f64,
                };
                let mut loss = 0.0;
                for (arm, t) in targets {
                    let x = predict_all(&p, arm_shape(arm), tasks);
                    loss += (x.score - t.mean).powi(2)
                        + 0.5 * (x.none - t.never_engaged).powi(2)
                        + 0.5 * (x.early - t.early_stop).powi(2);
                }
                if loss < best.1 {
                    best = (p, loss);
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> TaskShape {
        TaskShape {
            id: "T".into(),
            tier: 2,
            prompt_tokens: 600,
            step_tokens: vec![400; 4],
            writes: vec![true; 4],
            score_after: vec![0.0, 0.25, 0.5, 0.75, 1.0],
        }
    }

    #[test]
    fn a_longer_prompt_ends_runs_sooner_and_the_fit_recovers_its_inputs() {
        let p = Params {
            h_base: 0.05,
            h_slope: 2.0,
            content: 0.0,
        };
        let oc = predict(&p, arm_shape("opencode"), &task());
        let am = predict(&p, arm_shape("agent-mini"), &task());
        assert!(oc.score < am.score && oc.none > am.none);
        let tasks = vec![task()];
        let mut targets = BTreeMap::new();
        targets.insert(
            "opencode".to_string(),
            Target {
                mean: oc.score,
                never_engaged: oc.none,
                early_stop: oc.early,
            },
        );
        targets.insert(
            "agent-mini".to_string(),
            Target {
                mean: am.score,
                never_engaged: am.none,
                early_stop: am.early,
            },
        );
        let (q, loss) = fit(&tasks, &targets);
        assert!(loss < 1e-3, "{q:?} {loss}");
        let oc2 = predict(&q, arm_shape("opencode"), &task());
        assert!((oc2.score - oc.score).abs() < 0.03);
    }
}
