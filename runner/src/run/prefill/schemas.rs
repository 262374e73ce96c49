//! Deterministic, realistic tool schemas for the prefill benchmark: N distinct functions (name,
//! one-sentence description, 1–5 typed parameters with descriptions, some required), drawn
//! from a seed, so two runs with the same seed attach byte-identical tools. The paper's
//! microbenchmark attached real harness schemas (duplicated up to 256); distinct synthetic
//! ones keep a server from sharing any work between them.

use lrab_ollama::Tool;
use lrab_util::SplitMix64;
use serde_json::{json, Map, Value};

const VERBS: [&str; 16] = [
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "find",
    "send",
    "fetch",
    "archive",
    "export",
    "import",
    "validate",
    "schedule",
    "summarize",
    "rename",
];
const NOUNS: [&str; 24] = [
    "file",
    "issue",
    "invoice",
    "user",
    "calendar_event",
    "email",
    "ticket",
    "order",
    "contact",
    "repository",
    "branch",
    "report",
    "document",
    "payment",
    "shipment",
    "task",
    "comment",
    "project",
    "dataset",
    "record",
    "note",
    "folder",
    "booking",
    "alert",
];
const PARAMS: [(&str, &str, &str); 20] = [
    ("id", "string", "The unique identifier of the {n}."),
    ("name", "string", "Human-readable name of the {n}."),
    (
        "path",
        "string",
        "Path of the {n}, relative to the workspace root.",
    ),
    (
        "query",
        "string",
        "Free-text search query matched against the {n} fields.",
    ),
    (
        "limit",
        "integer",
        "Maximum number of {n} items to return (1-100).",
    ),
    (
        "offset",
        "integer",
        "Number of {n} items to skip before returning results.",
    ),
    (
        "include_archived",
        "boolean",
        "Whether archived {n} items are included.",
    ),
    ("tags", "array", "Tags to attach to or filter the {n} by."),
    ("owner", "string", "Username or e-mail of the {n} owner."),
    (
        "due_date",
        "string",
        "Due date of the {n} in ISO 8601 format (YYYY-MM-DD).",
    ),
    ("priority", "enum", "Priority of the {n}."),
    (
        "status",
        "enum",
        "Status the {n} must have or will be set to.",
    ),
    (
        "description",
        "string",
        "Longer description of the {n}, in Markdown.",
    ),
    (
        "amount",
        "number",
        "Amount in the account currency for the {n}.",
    ),
    (
        "dry_run",
        "boolean",
        "If true, report what would change without changing the {n}.",
    ),
    ("format", "enum", "Output format for the {n}."),
    (
        "recipients",
        "array",
        "E-mail addresses notified about the {n}.",
    ),
    (
        "timezone",
        "string",
        "IANA time zone used for dates of the {n}, e.g. Europe/Paris.",
    ),
    (
        "version",
        "integer",
        "Expected version of the {n}, for optimistic locking.",
    ),
    ("notes", "string", "Optional notes recorded with the {n}."),
];

fn property(kind: &str, desc: &str, pname: &str) -> Value {
    match kind {
        "enum" => {
            let values: &[&str] = match pname {
                "priority" => &["low", "normal", "high", "urgent"],
                "status" => &["open", "in_progress", "blocked", "done"],
                _ => &["json", "csv", "markdown"],
            };
            json!({"type": "string", "enum": values, "description": desc})
        }
        "array" => json!({"type": "array", "items": {"type": "string"}, "description": desc}),
        k => json!({"type": k, "description": desc}),
    }
}

/// Tool `i` of the set: a verb–noun name unique within the first 384 (16 × 24), suffixed with
/// its index past that, and 1–5 distinct parameters.
fn tool(i: usize, rng: &mut SplitMix64) -> Tool {
    let verb = VERBS[i % VERBS.len()];
    let noun = NOUNS[(i / VERBS.len() + i) % NOUNS.len()];
    let mut name = format!("{verb}_{noun}");
    if i >= VERBS.len() * NOUNS.len() {
        name = format!("{name}_{i}");
    }
    let noun_words = noun.replace('_', " ");
    let n_params = 1 + rng.below(5);
    let mut props = Map::new();
    let mut required = Vec::new();
    while props.len() < n_params {
        let (pname, kind, desc) = PARAMS[rng.below(PARAMS.len())];
        if props.contains_key(pname) {
            continue;
        }
        let desc = desc.replace("{n}", &noun_words);
        props.insert(pname.to_string(), property(kind, &desc, pname));
        if required.is_empty() || rng.below(3) == 0 {
            required.push(pname.to_string());
        }
    }
    let description = format!(
        "{} {} in the workspace and return the result as JSON. Use it when the user asks to {} a {}.",
        capitalize(verb),
        if verb.starts_with("list") { format!("{noun_words} items") } else { format!("a {noun_words}") },
        verb,
        noun_words
    );
    Tool::function(
        &name,
        &description,
        json!({"type": "object", "properties": props, "required": required}),
    )
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The first `n` tools of the set drawn from `seed` (the first `k` of a larger set are the
/// same tools, so the curve's points are nested like the paper's).
pub fn schemas(n: usize, seed: u64) -> Vec<Tool> {
    (0..n)
        .map(|i| {
            tool(
                i,
                &mut SplitMix64(seed ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_deterministic_nested() {
        let a = schemas(256, 7);
        let names: std::collections::BTreeSet<_> = a.iter().map(|t| &t.function.name).collect();
        assert_eq!(names.len(), 256);
        assert_eq!(a, schemas(256, 7));
        assert_eq!(a[..8], schemas(8, 7)[..]);
        assert_ne!(a, schemas(256, 8));
        for t in &a {
            let p = t.function.parameters.as_ref().unwrap();
            let n = p["properties"].as_object().unwrap().len();
            assert!((1..=5).contains(&n), "{}", t.function.name);
            assert!(!p["required"].as_array().unwrap().is_empty());
        }
    }
}
