//! The simulated model: given a conversation, produce the next assistant turn.
//!
//! Everything is derived from the conversation itself (stateless across HTTP requests): which
//! plan steps already ran is read from the model's own earlier turns and the feedback that
//! followed them. Draws come from ChaCha seeded by (seed, model, task, a hash of the model's
//! own turns and of the feedback *signals*), so the same request sequence gives the same
//! bytes, and rewording a message without changing its meaning changes nothing.

pub mod adversary;
pub mod chat;
pub(crate) mod forms;
mod history;
mod steps;
pub(crate) mod work;

pub(crate) use steps::{narration, narration_re};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::catalog::ModelSpec;
use crate::content;
use crate::convo::{tokens_of, Call, Conv};
use crate::dialect::Outcome;
use crate::profile::FailureForm;
use crate::protocols;
use crate::task::TaskIndex;

/// One generated assistant turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    pub thinking: Option<String>,
    pub content: String,
    pub calls: Vec<Call>,
    /// `stop` or `length`.
    pub done_reason: &'static str,
    /// The injected failure form, if any (for tests and logs; never sent on the wire).
    pub form: Option<FailureForm>,
    /// The degradation of a content error.
    pub content_kind: Option<content::Kind>,
    /// What the server does instead of sending the turn (a call that does not parse).
    pub outcome: Option<Outcome>,
}

impl Turn {
    pub(crate) fn text(content: impl Into<String>) -> Turn {
        Turn {
            content: content.into(),
            done_reason: "stop",
            ..Default::default()
        }
    }
    /// Generated tokens (thinking + content + calls).
    pub fn eval_tokens(&self) -> u64 {
        let calls: u64 = self
            .calls
            .iter()
            .map(|c| tokens_of(&c.name) + tokens_of(&c.args.to_string()))
            .sum();
        (tokens_of(&self.content) + self.thinking.as_deref().map_or(0, tokens_of) + calls).max(1)
    }
}

/// What the policy needs besides the conversation.
pub struct Env<'a> {
    pub model: &'a ModelSpec,
    pub seed: u64,
    pub tasks: &'a TaskIndex,
}

/// The next turn for this conversation (as the model sees it, after the server's context
/// truncation).
pub fn respond(env: &Env, conv: &Conv) -> Turn {
    if env.model.name == adversary::MODEL {
        return adversary::respond(conv);
    }
    let recognized = env.tasks.recognize(conv);
    // not an LRAB task: a τ²-bench conversation, if the request shows one
    if recognized.is_none() {
        if let Some(t) = crate::tau2::respond(env, conv) {
            return t;
        }
    }
    match recognized {
        Some((plan, at)) if protocols::summary::demanded(conv) => {
            protocols::summary::turn(conv, plan, at, &work::done_steps(env, conv, plan, at))
        }
        Some((plan, at)) if !conv.tools.is_empty() => {
            let t = protocols::abs_paths::apply(conv, work::turn(env, conv, plan, at));
            protocols::read_first::apply(conv, t)
        }
        // no tools: act through the text protocol the request documents, if any
        Some((plan, at)) => match protocols::detect(conv) {
            Some(p) => protocols::turn(env, conv, plan, at, p.as_ref()),
            None => chat::respond(env, conv),
        },
        _ => chat::respond(env, conv),
    }
}

/// FNV-1a folds conversation parts into a draw seed.
pub(crate) use lrab_util::{fnv1a as fnv, FNV1A_START as FNV0};

/// A uniform draw in [0,1) for a labelled decision.
pub(crate) fn draw(h: u64, label: &str) -> f64 {
    ChaCha8Rng::seed_from_u64(fnv(h, label.as_bytes())).gen::<f64>()
}

pub(crate) const FINISH_TEXT: &str = "All steps are done.";
