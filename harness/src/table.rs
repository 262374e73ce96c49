//! The tool table: every tool the harness has, defined once — its name, one short line, its
//! parameters (flat: no per-parameter descriptions, since every byte is paid on every call),
//! where it is handled, whether it changes the workdir, whether a success counts as progress,
//! and when it is offered. The specs sent to the model, the dispatch, the routing and the
//! static prefill are all read from here (docs/harness.md, *Tools*). It sits below the tools
//! and the mechanisms, which both read it; the toolbox method of each tool the toolbox handles
//! is named beside the toolbox (`tools/mod.rs`).

use crate::messages::ToolSpec;
use serde_json::{json, Value};

/// Where a call is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler {
    /// In the toolbox (files, shell, web): the toolbox method of that name (`tools/mod.rs`).
    Toolbox,
    /// The plan, kept in the agent's state.
    Plan,
    /// Ending the run, through the finish gate.
    Finish,
}

/// When a tool is offered to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Always in task mode (part of the static prefill).
    Base,
    /// In task mode when the task text contains one of these lower-case words (routing).
    Routed(&'static [&'static str]),
    /// Only when a web search endpoint is configured, and then routed by the web words.
    Web,
}

/// One tool.
pub struct ToolDef {
    /// The name the model calls.
    pub name: &'static str,
    /// One short line for the model.
    pub description: &'static str,
    params: fn() -> Value,
    /// Where a call is handled.
    pub handler: Handler,
    /// A successful call changes the workdir (backed up, bumps the change counter).
    pub mutates: bool,
    /// A successful call is a productive step (the finish gate's first check).
    pub progress: bool,
    /// Also offered in chat mode (read-only tools).
    pub chat: bool,
    /// When it is offered in task mode.
    pub offer: Offer,
}

impl ToolDef {
    /// The definition sent to the model.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.to_string(),
            description: self.description.to_string(),
            parameters: (self.params)(),
        }
    }
}

fn obj(props: &[(&str, &str)], required: &[&str]) -> Value {
    let mut p = serde_json::Map::new();
    for (k, t) in props {
        p.insert(k.to_string(), json!({ "type": t }));
    }
    json!({"type": "object", "properties": Value::Object(p), "required": required})
}

/// Every tool, in the order they are offered (the base tools first: their order is the static
/// prefill's).
pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "read_file",
        description: "Read a text file, optionally lines start_line..end_line.",
        params: || {
            obj(
                &[
                    ("path", "string"),
                    ("start_line", "integer"),
                    ("end_line", "integer"),
                ],
                &["path"],
            )
        },
        handler: Handler::Toolbox,
        mutates: false,
        progress: false,
        chat: true,
        offer: Offer::Base,
    },
    ToolDef {
        name: "write_file",
        description: "Create or overwrite a file with content.",
        params: || {
            obj(
                &[
                    ("path", "string"),
                    ("content", "string"),
                    ("replace", "boolean"),
                ],
                &["path", "content"],
            )
        },
        handler: Handler::Toolbox,
        mutates: true,
        progress: true,
        chat: false,
        offer: Offer::Base,
    },
    ToolDef {
        name: "edit_file",
        description: "Replace the exact unique text old with new in a file.",
        params: || {
            obj(
                &[("path", "string"), ("old", "string"), ("new", "string")],
                &["path", "old", "new"],
            )
        },
        handler: Handler::Toolbox,
        mutates: true,
        progress: true,
        chat: false,
        offer: Offer::Base,
    },
    ToolDef {
        name: "append_file",
        description: "Append content to a file.",
        params: || {
            obj(
                &[("path", "string"), ("content", "string")],
                &["path", "content"],
            )
        },
        handler: Handler::Toolbox,
        mutates: true,
        progress: true,
        chat: false,
        offer: Offer::Base,
    },
    ToolDef {
        name: "list_dir",
        description: "List a directory.",
        params: || obj(&[("path", "string")], &[]),
        handler: Handler::Toolbox,
        mutates: false,
        progress: false,
        chat: true,
        offer: Offer::Base,
    },
    ToolDef {
        name: "run_shell",
        description: "Run a shell command here (timeout in seconds, default 120).",
        params: || {
            obj(
                &[("command", "string"), ("timeout", "integer")],
                &["command"],
            )
        },
        handler: Handler::Toolbox,
        mutates: true,
        progress: true,
        chat: false,
        offer: Offer::Base,
    },
    ToolDef {
        name: "todo",
        description: "Plan: action create (items), done (index), done_all, or list.",
        params: || json!({"type": "object", "properties": {"action": {"type": "string", "enum": ["create", "done", "done_all", "list"]}, "items": {"type": "array", "items": {"type": "string"}}, "index": {"type": "integer"}}, "required": ["action"]}),
        handler: Handler::Plan,
        mutates: false,
        progress: false,
        chat: false,
        offer: Offer::Base,
    },
    ToolDef {
        name: "finish",
        description: "End the task when all is done and checked.",
        params: || obj(&[("summary", "string")], &["summary"]),
        handler: Handler::Finish,
        mutates: false,
        progress: false,
        chat: false,
        offer: Offer::Base,
    },
    ToolDef {
        name: "search_files",
        description: "Find lines containing pattern in files under path.",
        params: || obj(&[("pattern", "string"), ("path", "string")], &["pattern"]),
        handler: Handler::Toolbox,
        mutates: false,
        progress: false,
        chat: false,
        offer: Offer::Routed(&[
            "search",
            "grep",
            "find ",
            "locate",
            "corpus",
            "occurrence",
            "codebase",
            "where ",
        ]),
    },
    ToolDef {
        name: "rollback",
        description: "Undo your last change to a file.",
        params: || obj(&[("path", "string")], &["path"]),
        handler: Handler::Toolbox,
        mutates: true,
        progress: true,
        chat: false,
        offer: Offer::Routed(&[
            "fix", "bug", "refactor", "modify", "patch", "edit ", "repair", "optimi",
        ]),
    },
    ToolDef {
        name: "delete_file",
        description: "Delete a file (kept recoverable).",
        params: || obj(&[("path", "string")], &["path"]),
        handler: Handler::Toolbox,
        mutates: true,
        progress: true,
        chat: false,
        offer: Offer::Routed(&["delete", "remove", "clean up", "cleanup", "rename", "move "]),
    },
    ToolDef {
        name: "web_search",
        description: "Search the web; returns titles, URLs and snippets.",
        params: || {
            obj(
                &[("query", "string"), ("max_results", "integer")],
                &["query"],
            )
        },
        handler: Handler::Toolbox,
        mutates: false,
        progress: false,
        chat: false,
        offer: Offer::Web,
    },
    ToolDef {
        name: "web_fetch",
        description: "Fetch a web page (http/https) as plain text.",
        params: || obj(&[("url", "string")], &["url"]),
        handler: Handler::Toolbox,
        mutates: false,
        progress: false,
        chat: false,
        offer: Offer::Web,
    },
];

/// The tool of that name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Names of the tools offered under `pred`, in table order.
pub fn names(pred: impl Fn(&ToolDef) -> bool) -> Vec<&'static str> {
    TOOLS.iter().filter(|t| pred(t)).map(|t| t.name).collect()
}

/// Every tool but the optional web tools (what the `flat_prefill` ablation sends).
pub fn all_but_web() -> Vec<&'static str> {
    names(|t| t.offer != Offer::Web)
}

/// The optional web tools.
pub fn web() -> Vec<&'static str> {
    names(|t| t.offer == Offer::Web)
}

/// The specs of `names` (unknown names are left out).
pub fn specs_for(names: &[&str]) -> Vec<ToolSpec> {
    names
        .iter()
        .filter_map(|n| find(n))
        .map(ToolDef::spec)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_base_set_is_stable() {
        let mut seen = std::collections::BTreeSet::new();
        assert!(TOOLS.iter().all(|t| seen.insert(t.name)));
        assert_eq!(
            names(|t| t.offer == Offer::Base),
            [
                "read_file",
                "write_file",
                "edit_file",
                "append_file",
                "list_dir",
                "run_shell",
                "todo",
                "finish"
            ]
        );
        assert_eq!(all_but_web().len(), 11);
        assert_eq!(web(), ["web_search", "web_fetch"]);
        assert_eq!(names(|t| t.chat), ["read_file", "list_dir"]);
        // a tool that changes nothing cannot count as progress
        assert!(TOOLS.iter().all(|t| !t.progress || t.mutates));
        for t in TOOLS {
            assert_eq!(t.spec().parameters["type"], "object", "{}", t.name);
        }
    }
}
