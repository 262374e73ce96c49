//! One module per mechanism. Each is a plain type or pure function, testable without a model,
//! and (except the security boundary) can be switched off with `--ablate name` or
//! `LRAB_ABLATION=name,…` to measure what it contributes.

pub mod anti_loop;
pub mod bad_input;
pub mod clock;
pub mod context;
pub mod crawl_guard;
pub mod edit_safety;
pub mod failed_run;
pub mod false_completion;
pub mod finish_gate;
pub mod format_rescue;
pub mod prefill;
pub mod repeat_guard;
pub mod reply_failures;
pub mod report;
pub mod resilience;
pub mod security;
pub mod state_line;
pub mod text_protocol;
pub mod tiering;

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The ablatable mechanisms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    FlatPrefill,
    Tiering,
    FinishGate,
    VerifyFeedback,
    AntiLoop,
    FormatRescue,
    EditSafety,
    Resilience,
    Clock,
    Context,
    CrawlGuard,
    Report,
    StateLine,
}

impl Mechanism {
    pub const ALL: [Mechanism; 13] = [
        Mechanism::FlatPrefill,
        Mechanism::Tiering,
        Mechanism::FinishGate,
        Mechanism::VerifyFeedback,
        Mechanism::AntiLoop,
        Mechanism::FormatRescue,
        Mechanism::EditSafety,
        Mechanism::Resilience,
        Mechanism::Clock,
        Mechanism::Context,
        Mechanism::CrawlGuard,
        Mechanism::Report,
        Mechanism::StateLine,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mechanism::FlatPrefill => "flat_prefill",
            Mechanism::Tiering => "tiering",
            Mechanism::FinishGate => "finish_gate",
            Mechanism::VerifyFeedback => "verify_feedback",
            Mechanism::AntiLoop => "anti_loop",
            Mechanism::FormatRescue => "format_rescue",
            Mechanism::EditSafety => "edit_safety",
            Mechanism::Resilience => "resilience",
            Mechanism::Clock => "clock",
            Mechanism::Context => "context",
            Mechanism::CrawlGuard => "crawl_guard",
            Mechanism::Report => "report",
            Mechanism::StateLine => "state_line",
        }
    }

    /// What switching it off does (printed by `lrab-harness mechanisms`).
    pub fn ablation_effect(self) -> &'static str {
        match self {
            Mechanism::FlatPrefill => "send every tool on every call instead of the routed set",
            Mechanism::Tiering => "treat every prompt as a task (no chat tier)",
            Mechanism::FinishGate => "accept finish and completion claims without checks",
            Mechanism::VerifyFeedback => {
                "report failing tests generically instead of file/line/error"
            }
            Mechanism::AntiLoop => {
                "execute repeated identical calls and reruns of failed ones; no empty-turn ladder, stall watch, failure counters or edit-convergence guard"
            }
            Mechanism::FormatRescue => "ignore tool calls written as text; no tool-name aliases",
            Mechanism::EditSafety => "no backups, deletes are permanent, no rollback",
            Mechanism::Resilience => {
                "no checkpoint/resume, no feedback on unparsable or cut-off replies"
            }
            Mechanism::Clock => "no time-budget warnings",
            Mechanism::Context => "no token check, no pruning, no compaction",
            Mechanism::CrawlGuard => "no read_file byte budget",
            Mechanism::Report => "no final verification report",
            Mechanism::StateLine => "no per-round state line (plan done, missing deliverables)",
        }
    }

    pub fn from_name(s: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Why a list of mechanisms to switch off was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AblationError {
    /// `security`: the boundary is not an experimental variable.
    #[error("the security boundary cannot be ablated")]
    Security,
    #[error("unknown mechanism '{name}' (known: {})", Mechanism::ALL.map(|m| m.name()).join(", "))]
    Unknown { name: String },
}

/// The set of switched-off mechanisms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ablations(pub BTreeSet<Mechanism>);

impl Ablations {
    pub fn none() -> Self {
        Self::default()
    }
    /// Parse a comma-separated list; unknown names are an error naming them. `security` is
    /// refused on purpose: the boundary is not an experimental variable.
    pub fn parse(list: &str) -> Result<Self, AblationError> {
        let mut set = BTreeSet::new();
        for raw in list.split(',') {
            let n = raw.trim();
            if n.is_empty() {
                continue;
            }
            if n == "security" {
                return Err(AblationError::Security);
            }
            match Mechanism::from_name(n) {
                Some(m) => {
                    set.insert(m);
                }
                None => {
                    return Err(AblationError::Unknown {
                        name: n.to_string(),
                    })
                }
            }
        }
        Ok(Ablations(set))
    }
    pub fn merge(mut self, other: Ablations) -> Self {
        self.0.extend(other.0);
        self
    }
    pub fn off(&self, m: Mechanism) -> bool {
        self.0.contains(&m)
    }
    pub fn on(&self, m: Mechanism) -> bool {
        !self.off(m)
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|m| m.name()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ablations() {
        let a = Ablations::parse("anti_loop, finish_gate,").unwrap();
        assert!(a.off(Mechanism::AntiLoop) && a.off(Mechanism::FinishGate));
        assert!(a.on(Mechanism::Clock));
        let e = Ablations::parse("clock, bogus").unwrap_err();
        assert_eq!(
            e,
            AblationError::Unknown {
                name: "bogus".into()
            }
        );
        assert!(
            e.to_string()
                .starts_with("unknown mechanism 'bogus' (known: flat_prefill, "),
            "{e}"
        );
        let e = Ablations::parse("security").unwrap_err();
        assert_eq!(e, AblationError::Security);
        assert_eq!(e.to_string(), "the security boundary cannot be ablated");
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::from_name(m.name()), Some(m));
        }
    }
}
