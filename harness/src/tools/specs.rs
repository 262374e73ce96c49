//! Flat tool definitions: a name, one short line, and a schema without per-parameter
//! descriptions (the names say enough, and every byte is paid on every call).

use crate::messages::ToolSpec;
use serde_json::{json, Value};

pub const ALL_TOOLS: [&str; 11] = [
    "read_file",
    "write_file",
    "edit_file",
    "append_file",
    "list_dir",
    "run_shell",
    "todo",
    "finish",
    "search_files",
    "rollback",
    "delete_file",
];

/// Optional web tools: never in [`ALL_TOOLS`], offered only when a search endpoint is set.
pub const WEB_TOOLS: [&str; 2] = ["web_search", "web_fetch"];

fn obj(props: &[(&str, &str)], required: &[&str]) -> Value {
    let mut p = serde_json::Map::new();
    for (k, t) in props {
        p.insert(k.to_string(), json!({ "type": t }));
    }
    json!({"type": "object", "properties": Value::Object(p), "required": required})
}

pub fn spec(name: &str) -> Option<ToolSpec> {
    let (d, params) = match name {
        "read_file" => (
            "Read a text file, optionally lines start_line..end_line.",
            obj(
                &[
                    ("path", "string"),
                    ("start_line", "integer"),
                    ("end_line", "integer"),
                ],
                &["path"],
            ),
        ),
        "write_file" => (
            "Create or overwrite a file with content.",
            obj(
                &[
                    ("path", "string"),
                    ("content", "string"),
                    ("replace", "boolean"),
                ],
                &["path", "content"],
            ),
        ),
        "edit_file" => (
            "Replace the exact unique text old with new in a file.",
            obj(
                &[("path", "string"), ("old", "string"), ("new", "string")],
                &["path", "old", "new"],
            ),
        ),
        "append_file" => (
            "Append content to a file.",
            obj(
                &[("path", "string"), ("content", "string")],
                &["path", "content"],
            ),
        ),
        "list_dir" => ("List a directory.", obj(&[("path", "string")], &[])),
        "run_shell" => (
            "Run a shell command here (timeout in seconds, default 120).",
            obj(
                &[("command", "string"), ("timeout", "integer")],
                &["command"],
            ),
        ),
        "todo" => (
            "Plan: action create (items), done (index), done_all, or list.",
            json!({"type": "object", "properties": {"action": {"type": "string", "enum": ["create", "done", "done_all", "list"]}, "items": {"type": "array", "items": {"type": "string"}}, "index": {"type": "integer"}}, "required": ["action"]}),
        ),
        "finish" => (
            "End the task when all is done and checked.",
            obj(&[("summary", "string")], &["summary"]),
        ),
        "search_files" => (
            "Find lines containing pattern in files under path.",
            obj(&[("pattern", "string"), ("path", "string")], &["pattern"]),
        ),
        "rollback" => (
            "Undo your last change to a file.",
            obj(&[("path", "string")], &["path"]),
        ),
        "delete_file" => (
            "Delete a file (kept recoverable).",
            obj(&[("path", "string")], &["path"]),
        ),
        "web_search" => (
            "Search the web; returns titles, URLs and snippets.",
            obj(
                &[("query", "string"), ("max_results", "integer")],
                &["query"],
            ),
        ),
        "web_fetch" => (
            "Fetch a web page (http/https) as plain text.",
            obj(&[("url", "string")], &["url"]),
        ),
        _ => return None,
    };
    Some(ToolSpec {
        name: name.to_string(),
        description: d.to_string(),
        parameters: params,
    })
}

/// Tools that change the workdir or run code (a "productive" step).
pub fn is_productive(name: &str) -> bool {
    matches!(
        name,
        "write_file" | "edit_file" | "append_file" | "run_shell" | "delete_file" | "rollback"
    )
}
