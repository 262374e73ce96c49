//! Typed form of `task.toml` (see `docs/task-format.md`).
//!
//! Checks are parsed in two steps (the `artifact` key, then the rest as a `kind`-tagged enum) so
//! that unknown kinds and unknown/missing parameters are reported per check, naming the field,
//! instead of aborting the whole file at the first bad check.

use serde::{Deserialize, Serialize};

use crate::CheckTableError;

/// One task as written in `task.toml`, checks already typed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSpec {
    /// Task id (`WF-01`, `LH-03`, …), also its folder name.
    pub id: String,
    /// Difficulty tier (1–4).
    pub tier: u8,
    /// Domain label (`data-cleaning-pipeline`, `release-planning`, …).
    pub domain: String,
    /// One-line title.
    pub title: String,
    /// Time budget of one attempt.
    pub budget_minutes: u32,
    /// Pack-relative input files copied flat into the workdir.
    pub inputs: Vec<String>,
    /// The plan steps the prompt lists.
    pub plan_steps: Vec<String>,
    /// Kill-and-resume point in percent of the budget (LH-03).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_at_pct: Option<u8>,
    /// The generator of the inputs, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorSpec>,
    /// Milestone checks (scored separately from the finals).
    pub milestones: Vec<CheckSpec>,
    /// Final checks.
    pub finals: Vec<CheckSpec>,
    /// The reference solution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<SolutionSpec>,
    /// The partial solution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<SolutionSpec>,
    /// The scores `lrab tasks check` asserts.
    pub expect: Expect,
}

impl TaskSpec {
    /// Tier 4 is the pack's long-horizon class (`LH-*`): its budget override is
    /// `--budget-minutes-lh`, the others' `--budget-minutes`.
    pub const LONG_HORIZON_TIER: u8 = 4;

    /// The task is of the long-horizon budget class (read from its tier, not its id).
    pub fn long_horizon(&self) -> bool {
        self.tier >= Self::LONG_HORIZON_TIER
    }
}

/// `[generator]`: which generator of `lrab-generators` makes the inputs, and its default seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSpec {
    /// Generator name (`lh01`, `lh02`, `lh03`).
    pub name: String,
    /// Default seed.
    pub seed: u64,
}

/// `[reference]` / `[partial]`: commands run after the solution files are copied.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolutionSpec {
    /// Commands run in the workdir, in order.
    #[serde(default)]
    pub commands: Vec<String>,
    /// `[partial]` only: files taken unchanged from `reference/files/` (a partial solution is
    /// mostly a subset of the reference, so its shared files are named here, not copied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_reference: Vec<String>,
}

/// `[expect]`: the scores `lrab tasks check` asserts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Score of the untouched workdir.
    pub untouched: f64,
    /// Score of the partial solution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<f64>,
}

/// One check: the artifact (path relative to the workdir) and what to check about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckSpec {
    /// Path of the checked file, relative to the workdir.
    pub artifact: String,
    /// What is checked.
    #[serde(flatten)]
    pub check: Check,
}

fn default_ratio() -> f64 {
    1.0
}
fn one() -> u32 {
    1
}
fn t120() -> u64 {
    120
}
fn t180() -> u64 {
    180
}

/// The 14 upstream check kinds with their typed parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The path exists (file or folder).
    Exists {},
    /// Any of the strings is present.
    ContainsAny {
        /// The strings, one of which must be present.
        any_of: Vec<String>,
    },
    /// None of the strings is present (and the file exists).
    NotContains {
        /// The strings that must all be absent.
        none_of: Vec<String>,
    },
    /// Enough groups have a variant present.
    ContainsGroups {
        /// Groups of variants; a group counts when any variant is present.
        groups: Vec<Vec<String>>,
        /// Share of groups needed for full marks (default 1.0).
        #[serde(default = "default_ratio")]
        min_ratio: f64,
    },
    /// All strings present, first occurrences in order.
    ContainsOrdered {
        /// The strings, in the order they must first appear.
        ordered: Vec<String>,
    },
    /// At least this many words (half marks from 85 %).
    MinWords {
        /// Word count needed (Python `str.split()`).
        min_words: u64,
    },
    /// Every section name appears (case-insensitive).
    Structure {
        /// Section names that must appear.
        required_sections: Vec<String>,
        /// Carried by upstream WF-01 and ignored by its scorer; accepted and ignored here too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_words: Option<u64>,
    },
    /// The file compiles with `python3 -m py_compile`.
    PythonCompiles {},
    /// The file has at least this many bytes.
    FileMinBytes {
        /// Size needed.
        min_bytes: u64,
    },
    /// At least this many `http(s)://` occurrences.
    MinUrls {
        /// Occurrences needed.
        min_urls: u64,
    },
    /// A PNG that decodes, at least this size.
    ImageValid {
        /// Minimum width in pixels (default 1).
        #[serde(default = "one")]
        min_width: u32,
        /// Minimum height in pixels (default 1).
        #[serde(default = "one")]
        min_height: u32,
    },
    /// A shell command in the workdir passes.
    ScriptPass {
        /// The `sh -c` command.
        command: String,
        /// Substring expected in stdout+stderr (else exit 0 passes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect_stdout: Option<String>,
        /// Timeout in seconds (default 120).
        #[serde(default = "t120")]
        timeout_s: u64,
    },
    /// The workdir copy of a seed file is unchanged.
    SeedUnchanged {
        /// Pack-relative seed file.
        seed_rel: String,
    },
    /// The seed spec is unchanged and its test command passes.
    SpecPytest {
        /// Pack-relative seed spec, which must stay unchanged.
        seed_rel: String,
        /// The `sh -c` test command.
        command: String,
        /// Substring expected in stdout+stderr.
        expect_stdout: String,
        /// Timeout in seconds (default 180).
        #[serde(default = "t180")]
        timeout_s: u64,
    },
}

/// All kind names, in the order of the table in `docs/task-format.md`.
pub const KINDS: [&str; 14] = [
    "exists",
    "contains_any",
    "not_contains",
    "contains_groups",
    "contains_ordered",
    "min_words",
    "structure",
    "python_compiles",
    "file_min_bytes",
    "min_urls",
    "image_valid",
    "script_pass",
    "seed_unchanged",
    "spec_pytest",
];

impl Check {
    /// The `kind` string of this check.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Exists {} => "exists",
            Check::ContainsAny { .. } => "contains_any",
            Check::NotContains { .. } => "not_contains",
            Check::ContainsGroups { .. } => "contains_groups",
            Check::ContainsOrdered { .. } => "contains_ordered",
            Check::MinWords { .. } => "min_words",
            Check::Structure { .. } => "structure",
            Check::PythonCompiles {} => "python_compiles",
            Check::FileMinBytes { .. } => "file_min_bytes",
            Check::MinUrls { .. } => "min_urls",
            Check::ImageValid { .. } => "image_valid",
            Check::ScriptPass { .. } => "script_pass",
            Check::SeedUnchanged { .. } => "seed_unchanged",
            Check::SpecPytest { .. } => "spec_pytest",
        }
    }

    /// The string lists in which truth placeholders may appear, mutable so they can be expanded.
    pub fn string_lists_mut(&mut self) -> Vec<&mut Vec<String>> {
        match self {
            Check::ContainsAny { any_of } => vec![any_of],
            Check::NotContains { none_of } => vec![none_of],
            Check::ContainsGroups { groups, .. } => groups.iter_mut().collect(),
            Check::ContainsOrdered { ordered } => vec![ordered],
            _ => Vec::new(),
        }
    }

    /// Read-only view of [`Check::string_lists_mut`].
    pub fn string_lists(&self) -> Vec<&Vec<String>> {
        match self {
            Check::ContainsAny { any_of } => vec![any_of],
            Check::NotContains { none_of } => vec![none_of],
            Check::ContainsGroups { groups, .. } => groups.iter().collect(),
            Check::ContainsOrdered { ordered } => vec![ordered],
            _ => Vec::new(),
        }
    }

    /// The pack-relative seed file this check compares against, if any.
    pub fn seed_rel(&self) -> Option<&str> {
        match self {
            Check::SeedUnchanged { seed_rel } | Check::SpecPytest { seed_rel, .. } => {
                Some(seed_rel)
            }
            _ => None,
        }
    }
}

/// `task.toml` as parsed before the checks are typed (top-level keys are still strict).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTask {
    pub id: String,
    pub tier: i64,
    pub domain: String,
    pub title: String,
    pub budget_minutes: u32,
    #[serde(default)]
    pub inputs: Vec<String>,
    pub plan_steps: Vec<String>,
    #[serde(default)]
    pub kill_at_pct: Option<u8>,
    #[serde(default)]
    pub generator: Option<GeneratorSpec>,
    #[serde(default)]
    pub milestones: Vec<toml::Table>,
    #[serde(default)]
    pub finals: Vec<toml::Table>,
    #[serde(default)]
    pub reference: Option<SolutionSpec>,
    #[serde(default)]
    pub partial: Option<SolutionSpec>,
    pub expect: Expect,
}

/// Types one check table; the error names the offending key where it can.
pub fn parse_check_table(table: &toml::Table) -> Result<CheckSpec, CheckTableError> {
    let mut rest = table.clone();
    let artifact = match rest.remove("artifact") {
        Some(toml::Value::String(s)) => s,
        Some(other) => return Err(CheckTableError::ArtifactType(other.type_str())),
        None => return Err(CheckTableError::NoArtifact),
    };
    match rest.get("kind") {
        Some(toml::Value::String(k)) if !KINDS.contains(&k.as_str()) => {
            return Err(CheckTableError::UnknownKind(k.clone()))
        }
        Some(toml::Value::String(_)) => {}
        Some(other) => return Err(CheckTableError::KindType(other.type_str())),
        None => return Err(CheckTableError::NoKind),
    }
    let kind = rest["kind"].as_str().unwrap_or_default().to_string();
    let check: Check = toml::Value::Table(rest)
        .try_into()
        .map_err(|e: toml::de::Error| CheckTableError::Params {
            message: e.message().trim().to_string(),
            kind,
        })?;
    Ok(CheckSpec { artifact, check })
}

impl CheckSpec {
    /// The check as a TOML table (used when writing packs: import, held-out variants).
    pub fn to_toml_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert(
            "artifact".into(),
            toml::Value::String(self.artifact.clone()),
        );
        if let Ok(toml::Value::Table(rest)) = toml::Value::try_from(&self.check) {
            for (k, v) in rest {
                t.insert(k, v);
            }
        }
        t
    }
}

/// Writes a spec as `task.toml` text in the documented key order (used by importers and
/// held-out variants; deterministic).
pub fn to_toml_string(spec: &TaskSpec) -> String {
    use std::fmt::Write;
    let v = |x: toml::Value| x.to_string();
    let strs = |xs: &[String]| {
        if xs.is_empty() {
            return "[]".to_string();
        }
        let mut s = String::from("[\n");
        for x in xs {
            let _ = writeln!(s, "  {},", v(toml::Value::String(x.clone())));
        }
        s.push(']');
        s
    };
    let mut s = String::new();
    let _ = writeln!(s, "id = {}", v(toml::Value::String(spec.id.clone())));
    let _ = writeln!(s, "tier = {}", spec.tier);
    let _ = writeln!(
        s,
        "domain = {}",
        v(toml::Value::String(spec.domain.clone()))
    );
    let _ = writeln!(s, "title = {}", v(toml::Value::String(spec.title.clone())));
    let _ = writeln!(s, "budget_minutes = {}", spec.budget_minutes);
    let _ = writeln!(s, "inputs = {}", strs(&spec.inputs));
    let _ = writeln!(s, "plan_steps = {}", strs(&spec.plan_steps));
    if let Some(k) = spec.kill_at_pct {
        let _ = writeln!(s, "kill_at_pct = {k}");
    }
    if let Some(g) = &spec.generator {
        let _ = writeln!(
            s,
            "\n[generator]\nname = {}\nseed = {}",
            v(toml::Value::String(g.name.clone())),
            g.seed
        );
    }
    for (group, checks) in [("milestones", &spec.milestones), ("finals", &spec.finals)] {
        for c in checks {
            let _ = writeln!(s, "\n[[{group}]]");
            let t = c.to_toml_table();
            for key in ["artifact", "kind"] {
                if let Some(x) = t.get(key) {
                    let _ = writeln!(s, "{key} = {}", v(x.clone()));
                }
            }
            for (k, x) in &t {
                if k != "artifact" && k != "kind" {
                    let _ = writeln!(s, "{k} = {}", v(x.clone()));
                }
            }
        }
    }
    for (name, sol) in [("reference", &spec.reference), ("partial", &spec.partial)] {
        if let Some(sol) = sol {
            let _ = writeln!(s, "\n[{name}]\ncommands = {}", strs(&sol.commands));
            if !sol.from_reference.is_empty() {
                let _ = writeln!(s, "from_reference = {}", strs(&sol.from_reference));
            }
        }
    }
    let _ = writeln!(
        s,
        "\n[expect]\nuntouched = {}",
        v(toml::Value::Float(spec.expect.untouched))
    );
    if let Some(p) = spec.expect.partial {
        let _ = writeln!(s, "partial = {}", v(toml::Value::Float(p)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(src: &str) -> toml::Table {
        src.parse().unwrap()
    }

    #[test]
    fn check_tables_fail_with_a_kind_and_the_keys_message() {
        let e = |src: &str| parse_check_table(&table(src)).unwrap_err();
        assert_eq!(e("kind = 'exists'"), CheckTableError::NoArtifact);
        assert_eq!(
            e("artifact = 3\nkind = 'exists'").to_string(),
            "artifact: expected a string, found integer"
        );
        assert_eq!(e("artifact = 'a'"), CheckTableError::NoKind);
        assert_eq!(
            e("artifact = 'a'\nkind = true").to_string(),
            "kind: expected a string, found boolean"
        );
        let u = e("artifact = 'a'\nkind = 'judge_me'");
        assert_eq!(u, CheckTableError::UnknownKind("judge_me".into()));
        assert!(u
            .to_string()
            .starts_with("kind: unknown check kind 'judge_me' (known: exists, "));
        let p = e("artifact = 'a'\nkind = 'min_words'");
        assert!(
            matches!(&p, CheckTableError::Params { kind, .. } if kind == "min_words"),
            "{p:?}"
        );
        assert!(p.to_string().starts_with("min_words: "), "{p}");
        let ok = parse_check_table(&table("artifact = 'a.md'\nkind = 'exists'")).unwrap();
        assert_eq!(ok.artifact, "a.md");
    }
}
