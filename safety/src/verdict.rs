//! The rings' vocabulary: the five rings ([`Ring`]), what they decide about an action
//! ([`Verdict`], with its message and event-log forms) and what a decision depends on
//! ([`Context`]).

use std::path::{Path, PathBuf};

use crate::paths;

/// The five rings. The number is the ring's position in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Ring {
    /// Sub-agents get a reduced tool list and cannot dispatch further.
    SubAgent = 1,
    /// Operations that cannot be undone are refused.
    Irreversible = 2,
    /// System-mutating operations need a person watching.
    SystemMutation = 3,
    /// Reads and writes stay inside the workdir; secrets are never touched.
    Boundary = 4,
    /// Large overwrites need an explicit flag.
    Reversibility = 5,
}

impl Ring {
    /// The ring's position, 1..=5 (what refusal messages print).
    pub fn number(self) -> u8 {
        self as u8
    }
    /// The ring of a number 1..=5.
    pub fn from_number(n: u8) -> Option<Ring> {
        [
            Ring::SubAgent,
            Ring::Irreversible,
            Ring::SystemMutation,
            Ring::Boundary,
            Ring::Reversibility,
        ]
        .into_iter()
        .find(|r| r.number() == n)
    }
    /// The ring's name in refusal messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            Ring::SubAgent => "sub-agent narrowing",
            Ring::Irreversible => "irreversible operations",
            Ring::SystemMutation => "system mutation (unattended)",
            Ring::Boundary => "workdir boundary",
            Ring::Reversibility => "reversibility",
        }
    }
}

/// What the rings decide about one action.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Verdict {
    /// The action may run.
    Allow,
    /// Refused.
    Deny {
        /// The ring that refused.
        ring: Ring,
        /// Why, for the model.
        reason: String,
        /// What to do instead, if there is a safe way.
        alternative: Option<String>,
    },
    /// Allowed only with a person confirming; the harness refuses it in benchmark runs.
    NeedsAttended {
        /// The ring that asks.
        ring: Ring,
        /// Why, for the person.
        reason: String,
    },
}

impl Verdict {
    /// The action may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Verdict::Allow)
    }
    /// The ring that refused or asks (`None` for an allowed action).
    pub fn ring(&self) -> Option<Ring> {
        match self {
            Verdict::Allow => None,
            Verdict::Deny { ring, .. } | Verdict::NeedsAttended { ring, .. } => Some(*ring),
        }
    }
    /// One line for the model: why, and what to do instead.
    pub fn message(&self) -> String {
        match self {
            Verdict::Allow => "allowed".into(),
            Verdict::Deny {
                ring,
                reason,
                alternative,
            } => {
                let mut s = format!(
                    "[safety ring {}: {}] refused: {reason}",
                    ring.number(),
                    ring.name()
                );
                if let Some(a) = alternative {
                    s.push_str(" — instead: ");
                    s.push_str(a);
                }
                s
            }
            Verdict::NeedsAttended { ring, reason } => {
                format!(
                    "[safety ring {}: {}] needs a person to confirm: {reason}",
                    ring.number(),
                    ring.name()
                )
            }
        }
    }

    /// The refusal as the harness event log records it (`None` for [`Verdict::Allow`]).
    pub fn to_refusal(&self) -> Option<lrab_records::Refusal> {
        match self {
            Verdict::Allow => None,
            Verdict::Deny {
                ring,
                reason,
                alternative,
            } => Some(lrab_records::Refusal {
                ring: ring.number(),
                reason: reason.clone(),
                alternative: alternative.clone(),
                needs_attended: false,
            }),
            Verdict::NeedsAttended { ring, reason } => Some(lrab_records::Refusal {
                ring: ring.number(),
                reason: reason.clone(),
                alternative: None,
                needs_attended: true,
            }),
        }
    }

    /// The verdict of a recorded refusal; `None` for a ring number that does not exist.
    pub fn from_refusal(r: &lrab_records::Refusal) -> Option<Verdict> {
        let ring = Ring::from_number(r.ring)?;
        Some(if r.needs_attended {
            Verdict::NeedsAttended {
                ring,
                reason: r.reason.clone(),
            }
        } else {
            Verdict::Deny {
                ring,
                reason: r.reason.clone(),
                alternative: r.alternative.clone(),
            }
        })
    }

    /// The verdict stated in a tool result: the inverse of [`Verdict::message`] for the first
    /// `[safety ring N: ...]` marker in `text`. Lets a harness transcript be graded per ring
    /// without the harness and the grader sharing anything but the message format.
    pub fn from_message(text: &str) -> Option<Verdict> {
        let at = text.find("[safety ring ")?;
        let rest = &text[at + "[safety ring ".len()..];
        let ring = match rest.chars().next()? {
            '1' => Ring::SubAgent,
            '2' => Ring::Irreversible,
            '3' => Ring::SystemMutation,
            '4' => Ring::Boundary,
            '5' => Ring::Reversibility,
            _ => return None,
        };
        let rest = &rest[rest.find("] ")? + 2..];
        let line = rest.lines().next().unwrap_or("");
        let cut = |s: &str| -> String {
            let end = [" — instead: ", " — next: "]
                .iter()
                .filter_map(|m| s.find(m))
                .min()
                .unwrap_or(s.len());
            s[..end].to_string()
        };
        if let Some(r) = line.strip_prefix("needs a person to confirm: ") {
            return Some(Verdict::NeedsAttended {
                ring,
                reason: cut(r),
            });
        }
        let r = line.strip_prefix("refused: ")?;
        let alternative = r
            .find(" — instead: ")
            .map(|i| cut(&r[i + " — instead: ".len()..]));
        Some(Verdict::Deny {
            ring,
            reason: cut(r),
            alternative,
        })
    }
}

/// Everything a decision depends on. Paths are canonicalized once in [`Context::new`].
#[derive(Clone, Debug)]
pub struct Context {
    /// The only tree the model may write (besides `extra_writable`).
    pub workdir: PathBuf,
    /// The HOME whose secrets are off limits (the operator's real one).
    pub home: PathBuf,
    /// Other places writes may go (the run's private temp dir).
    pub extra_writable: Vec<PathBuf>,
    /// Inside the workdir but read-only to the model (harness state, its config).
    pub protected: Vec<PathBuf>,
    /// A person is watching and can confirm ring-3 operations.
    pub attended: bool,
    /// Explicit opt-in: system-mutating operations are allowed (ring 3 off).
    pub allow_system_mutation: bool,
}

impl Context {
    /// A context for `workdir` and `home`, unattended, with the harness's state folder protected.
    pub fn new(workdir: &Path, home: &Path) -> Context {
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| paths::lexical(p));
        let workdir = canon(workdir);
        Context {
            protected: vec![workdir.join(".lrab")],
            home: canon(home),
            workdir,
            extra_writable: Vec::new(),
            attended: false,
            allow_system_mutation: false,
        }
    }
    /// Also allow writes under `p` (the private temp dir).
    pub fn with_writable(mut self, p: &Path) -> Context {
        self.extra_writable
            .push(p.canonicalize().unwrap_or_else(|_| paths::lexical(p)));
        self
    }
}
