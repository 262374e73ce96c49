//! Which part of the simulated model answers a conversation: the safety suite's scripted
//! adversary, a τ²-bench conversation, an LRAB task through the offered tools (`policy::work`,
//! wrapped by the protocols its tool errors demand) or through the text protocol the request
//! documents (`protocols`), a summary when one is asked for, else plain chat. Above the policy,
//! the protocols and τ², so that none of them names another's caller.

use crate::convo::Conv;
use crate::policy::{adversary, chat, work, Env, Turn};
use crate::protocols;

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
