//! The analytic part of the fit: an expected-score model of a published arm on a simulated
//! model, cheap enough to search a grid of profile parameters against the published cells
//! before any real binary runs.
//!
//! The simulated model ends a turn without a step (a text answer, an empty reply, a false
//! completion claim, a call the server drops) with a per-turn hazard that depends on the
//! request's opening: the system text, tool definitions and task it starts from (the profile
//! rates' `opening_slope`), not on how long the conversation has grown. opencode and agent-mini
//! end their run at the first such turn. Mingbird answers it (a message asking to go on, a
//! turned-down finish naming what is missing) a few times before it lets the run end, and the
//! model goes on with a fitted chance (`go_on`, the profiles' `nudge_continue`). So the number
//! of plan steps done is a survival process, and the expected score of a task is
//! Σ P(k steps done) × score(first k steps) — `score(k)` measured once by applying the
//! reference solution step by step and scoring the workdir with the real scorer. Content errors
//! shave a share of the score of the files written. The arms differ only by what they send
//! (the opening, measured on the wire) and by how many ending turns they answer.

use std::collections::BTreeMap;

use lrab_sim::logistic_from;
use lrab_sim::Step;

/// What one arm sends, as the simulator sees it (tokens, about four characters each).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArmShape {
    /// System prompt + tool definitions of every request (the opening besides the task).
    pub base_tokens: u64,
    /// Tokens the arm's tool result adds per step (besides the model's own call).
    pub result_tokens: u64,
    /// Whether the arm sends the model's earlier calls back in full (agent-mini keeps only the
    /// text of its turns and a one-line result, so its prompt grows slowly).
    pub keeps_calls: bool,
    /// Ending turns the arm answers (asks to go on, turns a finish down) before a further one
    /// ends the run.
    pub answers: u32,
}

/// Measured on the chat requests of each arm against the simulator (the proxy log's
/// `prompt_tokens` of a first request minus the task's): opencode 1.18.23 sends ~7.4k tokens
/// of system prompt and tool schemas and keeps every call; agent-mini 0.3.1 sends ~0.8k and
/// grows by ~50 tokens a step; Mingbird v1.5.0 sends ~1.1k (its system prompt and the tools of
/// its default categories) and keeps every call. Mingbird's answers: its finish gate turns
/// down a claim naming missing files twice and re-reads the task once, and its repeated-output
/// check lets two like text turns pass and ends the run at the third. Three answered endings:
/// with four the fit put more of sim-2b's failures into content errors, which the real Mingbird
/// recovers from less than the analytic model assumes (seed means 0.59–0.76 against 0.80–0.89
/// with three; docs/sim.md, "Calibration").
pub fn arm_shape(arm: &str) -> ArmShape {
    match arm {
        "opencode" => ArmShape {
            base_tokens: 7_400,
            result_tokens: 10,
            keeps_calls: true,
            answers: 0,
        },
        "agent-mini" => ArmShape {
            base_tokens: 820,
            result_tokens: 45,
            keeps_calls: false,
            answers: 0,
        },
        "mingbird" => ArmShape {
            base_tokens: 1_100,
            result_tokens: 15,
            keeps_calls: true,
            answers: 3,
        },
        _ => ArmShape {
            base_tokens: 1_500,
            result_tokens: 60,
            keeps_calls: true,
            answers: 0,
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
    /// Ending hazard of a request whose opening is under 2k tokens.
    pub h_base: f64,
    /// Logit increase of the hazard per 8192 tokens of opening.
    pub h_slope: f64,
    /// Content-error rate per write (tier 1, start of the run).
    pub content: f64,
    /// Chance that the model goes on when an ending turn is answered.
    pub go_on: f64,
}

/// `go_on` when no fitted arm answers an ending turn (nothing identifies it then): the value
/// the profiles carried before Mingbird joined the fit.
pub const GO_ON_PRIOR: f64 = 0.5;

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
pub fn hazard(p: &Params, opening: u64) -> f64 {
    let c = (opening / 2048 * 2048) as f64 / 8192.0;
    logistic_from(p.h_base, p.h_slope * c)
}

/// The chance that the run ends at step `k` (alive mass per answered ending in `alive`, moved
/// on to step `k + 1` in place): an ending turn answered goes on with `go_on`, else it is a
/// further ending turn; the one after the arm's last answer ends the run.
fn ends_at(alive: &mut [f64], h: f64, go_on: f64) -> f64 {
    let r = alive.len() - 1;
    let mut ending = 0.0;
    let mut ended = 0.0;
    for e in 0..=r {
        let here = alive[e] * h + ending;
        alive[e] *= 1.0 - h;
        if e == r {
            ended = here;
        } else {
            alive[e + 1] += here * go_on;
            ending = here * (1.0 - go_on);
        }
    }
    ended
}

pub fn predict(p: &Params, arm: ArmShape, t: &TaskShape) -> Prediction {
    let n = t.step_tokens.len();
    let mut alive = vec![0.0; arm.answers as usize + 1];
    alive[0] = 1.0;
    let h = hazard(p, arm.base_tokens + t.prompt_tokens);
    let mut out = Prediction::default();
    let writes_total = t.writes.iter().filter(|w| **w).count().max(1) as f64;
    let mut writes_done = 0usize;
    let cr = logistic_from(p.content, 0.2 * (t.tier.max(1) - 1) as f64);
    for k in 0..=n {
        let p_end = if k == n {
            alive.iter().sum()
        } else {
            ends_at(&mut alive, h, p.go_on)
        };
        let s = t.score_after[k] * (1.0 - cr * DEGRADED_LOSS * writes_done as f64 / writes_total);
        out.score += p_end * s;
        out.steps += p_end * k as f64;
        if k == 0 {
            out.none = p_end;
        }
        if s < 0.5 {
            out.early += p_end;
        }
        if k < n {
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

fn arm_loss(x: &Prediction, t: &Target) -> f64 {
    (x.score - t.mean).powi(2)
        + 0.5 * (x.none - t.never_engaged).powi(2)
        + 0.5 * (x.early - t.early_stop).powi(2)
}

/// Grid search of the parameters against the targets of the given arms (squared errors; the
/// failure shares weigh half as much as the mean). `go_on` only moves arms that answer ending
/// turns: it is searched for them alone, and kept at [`GO_ON_PRIOR`] when none is a target.
pub fn fit(tasks: &[TaskShape], targets: &BTreeMap<String, Target>) -> (Params, f64) {
    let (answering, plain): (Vec<_>, Vec<_>) = targets
        .iter()
        .partition(|(arm, _)| arm_shape(arm).answers > 0);
    let go_ons: Vec<f64> = if answering.is_empty() {
        vec![GO_ON_PRIOR]
    } else {
        (0..=20).map(|i| 0.05 * i as f64).collect()
    };
    let mut best = (
        Params {
            h_base: 0.01,
            h_slope: 0.0,
            content: 0.0,
            go_on: GO_ON_PRIOR,
        },
        f64::INFINITY,
    );
    for bi in 0..=36 {
        let h_base = logistic_from(0.5, -9.0 + 0.25 * bi as f64);
        for si in 0..=32 {
            let h_slope = 0.25 * si as f64;
            for ci in 0..=10 {
                let mut p = Params {
                    h_base,
                    h_slope,
                    content: 0.05 * ci as f64,
                    go_on: go_ons[0],
                };
                let base: f64 = plain
                    .iter()
                    .map(|(arm, t)| arm_loss(&predict_all(&p, arm_shape(arm), tasks), t))
                    .sum();
                if base >= best.1 {
                    continue;
                }
                for &g in &go_ons {
                    p.go_on = g;
                    let loss = base
                        + answering
                            .iter()
                            .map(|(arm, t)| arm_loss(&predict_all(&p, arm_shape(arm), tasks), t))
                            .sum::<f64>();
                    if loss < best.1 {
                        best = (p, loss);
                    }
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
            go_on: 0.5,
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

    #[test]
    fn answered_endings_let_the_run_go_on_and_the_fit_finds_how_often() {
        // a hazard on the fit's grid (logit −1.25, about 0.22)
        let p = |go_on| Params {
            h_base: logistic_from(0.5, -1.25),
            h_slope: 0.0,
            content: 0.0,
            go_on,
        };
        let mb = |g| predict(&p(g), arm_shape("mingbird"), &task());
        let am = predict(&p(0.9), arm_shape("agent-mini"), &task());
        // an arm that ends at the first ending turn does not see go_on; one that answers does
        assert_eq!(am, predict(&p(0.1), arm_shape("agent-mini"), &task()));
        assert!(mb(0.9).score > mb(0.5).score && mb(0.5).score > am.score);
        // with no answer left, the process is the plain one
        let plain = ArmShape {
            answers: 0,
            ..arm_shape("mingbird")
        };
        assert!((predict(&p(0.9), plain, &task()).score - am.score).abs() < 1e-12);
        // probabilities add up
        let x = mb(0.7);
        assert!(x.none >= 0.0 && x.none <= 1.0 && x.score <= 1.0);
        let tasks = vec![task()];
        let target = |x: Prediction| Target {
            mean: x.score,
            never_engaged: x.none,
            early_stop: x.early,
        };
        let mut targets = BTreeMap::new();
        targets.insert("agent-mini".to_string(), target(am));
        targets.insert("mingbird".to_string(), target(mb(0.7)));
        let (q, loss) = fit(&tasks, &targets);
        assert!(loss < 1e-3 && (q.go_on - 0.7).abs() < 0.11, "{q:?} {loss}");
        // without an answering arm go_on is not identified and keeps its prior
        targets.remove("mingbird");
        assert_eq!(fit(&tasks, &targets).0.go_on, GO_ON_PRIOR);
    }
}
