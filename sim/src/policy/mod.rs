//! The simulated model's engine: the next assistant turn of a task's conversation through the
//! tools it offers (`work`), its failure forms (`forms`), what it reads from its own history,
//! and chat without a task (`chat`); the turn (`Turn`) and what it needs besides the
//! conversation (`Env`) for the protocols and τ² above it. Which of these answers a request is
//! decided above them (`crate::reply`).
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
pub(crate) mod strata;
pub(crate) mod work;

pub(crate) use steps::{narration, narration_re, summary_done_steps, SUMMARY_DONE};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::catalog::ModelSpec;
use crate::content;
use crate::convo::{tokens_of, Call};
use crate::dialect::Outcome;
use crate::profile::FailureForm;
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

/// FNV-1a folds conversation parts into a draw seed.
pub(crate) use lrab_util::{fnv1a as fnv, FNV1A_START as FNV0};

/// A uniform draw in [0,1) for a labelled decision.
pub(crate) fn draw(h: u64, label: &str) -> f64 {
    ChaCha8Rng::seed_from_u64(fnv(h, label.as_bytes())).gen::<f64>()
}

pub(crate) const FINISH_TEXT: &str = "All steps are done.";
