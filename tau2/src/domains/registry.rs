//! What a domain is, as a value: its row in the table ([`super::TABLE`]) names it, lists
//! its tools, loads its policy and pristine state, and gives its tools' schemas; the state
//! answers the tool calls. Adding a domain is one folder with one such row.

use crate::args::{ToolError, ToolResult};
use crate::error::{fail, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// A side's tools by upstream's `ToolType`; only WRITE tools are replayed when grading.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolLists {
    pub read: &'static [&'static str],
    pub write: &'static [&'static str],
    pub generic: &'static [&'static str],
}

impl ToolLists {
    /// A side without tools (the user side of a single-control domain).
    pub const NONE: ToolLists = ToolLists {
        read: &[],
        write: &[],
        generic: &[],
    };

    pub const fn of(
        read: &'static [&'static str],
        write: &'static [&'static str],
        generic: &'static [&'static str],
    ) -> ToolLists {
        ToolLists {
            read,
            write,
            generic,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.write.is_empty() && self.generic.is_empty()
    }
}

/// One domain's row.
pub(crate) struct DomainDef {
    /// Its folder under `domains/` and the value of `--domain`.
    pub name: &'static str,
    /// One of upstream's benchmark domains (graded by `replay-gold` by default), not a test
    /// domain.
    pub benchmark: bool,
    /// The agent's tools.
    pub agent: ToolLists,
    /// The simulated user's own tools (dual control); [`ToolLists::NONE`] if none.
    pub user: ToolLists,
    /// The agent policy, from the domain's folder.
    pub policy: fn(&Path) -> Result<String>,
    /// The pristine state (the DBs every environment starts from), from the domain's folder.
    pub load: fn(&Path) -> Result<Box<dyn DomainState>>,
    /// The function schema of one of its tools, agent or user side.
    pub schema: fn(&str) -> Option<lrab_ollama::Tool>,
}

impl DomainDef {
    /// A benchmark domain's row: agent tools only, the policy in `policy.md`.
    pub const fn new(
        name: &'static str,
        agent: ToolLists,
        load: fn(&Path) -> Result<Box<dyn DomainState>>,
        schema: fn(&str) -> Option<lrab_ollama::Tool>,
    ) -> DomainDef {
        DomainDef {
            name,
            benchmark: true,
            agent,
            user: ToolLists::NONE,
            policy: super::policy_md,
            load,
            schema,
        }
    }

    /// The simulated user has these tools too (dual control).
    pub const fn with_user(self, user: ToolLists) -> DomainDef {
        DomainDef { user, ..self }
    }

    /// The policy is read another way than from `policy.md`.
    pub const fn with_policy(self, policy: fn(&Path) -> Result<String>) -> DomainDef {
        DomainDef { policy, ..self }
    }

    /// A test domain (upstream's `mock`), not one of the benchmark's.
    pub const fn test_domain(self) -> DomainDef {
        DomainDef {
            benchmark: false,
            ..self
        }
    }
}

/// A domain's live databases and how its tools act on them; one per environment (made by
/// cloning the pristine state, which shares records until a tool changes them).
pub(crate) trait DomainState: Send + Sync {
    /// A fresh copy for a new environment.
    fn fresh(&self) -> Box<dyn DomainState>;
    /// An agent-side function (a tool or a function tasks use to set up or check).
    fn call_agent(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult;
    /// A user-side function; single-control domains have none.
    fn call_user(&mut self, _name: &str, _args: &Map<String, Value>) -> ToolResult {
        Err("User tools not available".into())
    }
    /// Upstream's `sync_tools` after every call (dual control); nothing by default.
    fn sync(&mut self) -> Result<(), ToolError> {
        Ok(())
    }
    /// Canonical text of the agent DB, which its hash is taken of.
    fn db_canonical(&self) -> String;
    /// The agent DB's hash (a domain may keep a faster way to the same value).
    fn db_hash(&self) -> String {
        crate::canon::sha256_hex(self.db_canonical().as_bytes())
    }
    /// Canonical text of the user DB, for the domains that have one.
    fn user_db_canonical(&self) -> Option<String> {
        None
    }
    /// Deep-merge a task's `initialization_data.agent_data` into the agent DB.
    fn merge_agent_data(&mut self, data: &Value) -> Result<()>;
    /// As [`DomainState::merge_agent_data`] for `user_data`; `None` when there is no user
    /// DB.
    fn merge_user_data(&mut self, _data: &Value) -> Option<Result<()>> {
        None
    }
    /// For reports and tests that look into one domain's state (telecom's phone).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A τ² domain (a row of the table); also the value of `--domain`.
#[derive(Clone, Copy)]
pub struct DomainKind(pub(crate) &'static DomainDef);

impl DomainKind {
    /// Every domain, in table order.
    pub fn all() -> &'static [DomainKind] {
        &super::TABLE
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn parse(s: &str) -> Result<DomainKind> {
        if let Some(k) = Self::all().iter().find(|k| k.name() == s) {
            return Ok(*k);
        }
        // the benchmark domains first, then the test domains
        let (bench, test): (Vec<&DomainKind>, Vec<&DomainKind>) =
            Self::all().iter().partition(|k| k.0.benchmark);
        let names: Vec<&str> = bench.iter().chain(&test).map(|k| k.name()).collect();
        let (last, first) = names.split_last().unwrap_or((&"", &[]));
        fail!(
            Data,
            "unknown domain {s:?} (expected {} or {last})",
            first.join(", ")
        )
    }

    pub(crate) fn def(self) -> &'static DomainDef {
        self.0
    }
}

impl PartialEq for DomainKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for DomainKind {}

impl std::fmt::Debug for DomainKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl clap::ValueEnum for DomainKind {
    fn value_variants<'a>() -> &'a [Self] {
        Self::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}
