//! What the model is offered: the tools of a tier and the system prompt that goes with them.
//! Below both the state (a fresh run's first message) and the turn (the tool list of every
//! call, the text protocol's prompt), so neither imports the other.

use super::AgentConfig;
use crate::mechanisms::prefill::{self, SYSTEM_CHAT, SYSTEM_TASK};
use crate::mechanisms::text_protocol;
use crate::mechanisms::tiering::Tier;
use crate::mechanisms::Mechanism;
use crate::table;

/// The tools a run offers in a tier (stable for the run, so the prompt prefix stays
/// cacheable; a paused tool stays listed and its calls are answered "paused").
pub(super) fn offered(cfg: &AgentConfig, tier: Tier) -> Vec<&'static str> {
    let flat = cfg.ablations.on(Mechanism::FlatPrefill);
    let mut names: Vec<&str> = if tier == Tier::Chat {
        prefill::chat_tools()
    } else if flat {
        prefill::route(&cfg.task)
    } else {
        prefill::all_tools()
    };
    // web tools only when configured, and (when routing) only for tasks that call for them
    if cfg.web_search.is_some() && tier != Tier::Chat && (!flat || prefill::wants_web(&cfg.task)) {
        names.extend(table::web());
    }
    names
}

/// The system prompt of a tier, under the protocol in use.
pub(super) fn system_prompt(cfg: &AgentConfig, tier: Tier, text: bool) -> String {
    let base = if tier == Tier::Chat {
        SYSTEM_CHAT
    } else {
        SYSTEM_TASK
    };
    if text {
        let names = offered(cfg, tier);
        text_protocol::system_prompt(base, &table::specs_for(&names))
    } else {
        base.to_string()
    }
}
