//! Names as models write them, mapped onto the declared tools and their parameters.
//!
//! The declared tools are the input, not a fixed alias list. A written tool name maps to a
//! declared one when exactly one declared tool matches at the first rule that matches any:
//!
//! 1. the same name;
//! 2. the same after folding case and separators (`Read_File`, `run-shell`, `RunShell`,
//!    `list dir`);
//! 3. the same once a call namespace is removed (`functions.x`, `default_api.x`, Kimi's
//!    `functions.x:0`, goose's `developer__x`);
//! 4. the same *meaning*: both names reduce to the same set of concepts through a small lexicon
//!    of verbs and nouns (`create_file` and `write_file` are both {write}; `bash`,
//!    `execute_command` and `run_shell` are {run});
//! 5. the written concepts are a subset of exactly one declared tool's (`ls` → {list} ⊂
//!    `list_dir`'s {list, dir}).
//!
//! A written name with a concept the tool lacks (`get_weather`, `web_search`,
//! `delete_everything`, `container.exec`) never maps. Argument names follow the same idea
//! within one tool's parameters.

use super::Catalog;

/// Words that name the same action or object. Each group's first word is its concept label.
const TOOL_WORDS: &[&[&str]] = &[
    &["read", "cat", "view", "open", "show", "get"],
    &["write", "create", "save", "put", "overwrite"],
    &["append"],
    &["edit", "replace", "modify", "patch", "update", "change"],
    &["list", "ls"],
    &[
        "dir",
        "directory",
        "folder",
        "dirs",
        "directories",
        "folders",
    ],
    &[
        "run",
        "bash",
        "shell",
        "sh",
        "zsh",
        "exec",
        "execute",
        "terminal",
        "command",
        "cmd",
        "cli",
        "powershell",
    ],
    &["search", "grep", "find", "rg", "lookup", "locate"],
    &["delete", "remove", "rm", "del", "unlink", "erase", "trash"],
    &[
        "finish",
        "done",
        "complete",
        "completed",
        "completion",
        "submit",
        "final",
        "answer",
        "conclude",
    ],
    &["todo", "todos", "plan", "checklist"],
    &["rollback", "undo", "restore", "revert"],
];

/// Words that carry no meaning in a tool name.
const TOOL_FILLER: &[&str] = &[
    "file", "files", "text", "to", "the", "a", "an", "tool", "function", "func", "fn", "do",
    "attempt", "task", "tasks", "str", "string", "my", "of", "for", "in", "and", "content",
    "contents",
];

/// Call namespaces that are not part of the tool's name.
const NAMESPACES: &[&str] = &["functions.", "default_api.", "tools.", "tool.", "api."];

/// Words that name the same argument. A word may belong to several groups (`text` is the
/// content of a write, the pattern of a search, the summary of a finish); within one tool
/// the parameters usually leave only one reading.
const ARG_WORDS: &[&[&str]] = &[
    &[
        "path",
        "file",
        "filename",
        "filepath",
        "fname",
        "dir",
        "directory",
        "folder",
        "location",
    ],
    &["content", "contents", "text", "data", "body", "code"],
    &["command", "cmd", "script", "shell", "bash", "code"],
    &["old", "original", "before", "search", "find"],
    &["new", "replacement", "replace", "after"],
    &[
        "pattern", "query", "regex", "regexp", "search", "term", "keyword", "q", "needle", "text",
    ],
    &[
        "summary", "message", "result", "answer", "msg", "report", "text",
    ],
    &["items", "tasks", "todos", "steps", "entries"],
    &["start", "begin", "from", "first", "offset"],
    &["end", "stop", "until", "last"],
    &["url", "link", "href", "uri"],
    &["timeout", "seconds", "secs", "sec", "limit"],
    &["index", "idx", "number", "num", "position", "item"],
    &["action", "op", "operation"],
];

const ARG_FILLER: &[&str] = &[
    "string", "str", "the", "line", "lines", "value", "name", "of",
];

/// Lowercase with every separator removed: the case/separator-insensitive form of a name.
pub(crate) fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Split a name into lowercase words: `snake_case`, `kebab-case`, `dotted.name`, spaces and
/// `camelCase`/`PascalCase` boundaries.
pub(crate) fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The concept set of a tool name (sorted, deduplicated; unknown words stand for themselves).
pub(crate) fn tool_concepts(name: &str) -> Vec<String> {
    let mut v: Vec<String> = words(name)
        .into_iter()
        .filter(|w| !TOOL_FILLER.contains(&w.as_str()))
        .map(|w| {
            TOOL_WORDS
                .iter()
                .find(|g| g.contains(&w.as_str()))
                .map(|g| g[0].to_string())
                .unwrap_or(w)
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The name without a call namespace or a trailing call index (`functions.x:0` → `x`).
pub(crate) fn bare(name: &str) -> &str {
    let mut n = name.trim();
    if let Some(rest) = n.strip_prefix("call:") {
        n = rest;
    }
    for ns in NAMESPACES {
        if n.len() > ns.len()
            && n.get(..ns.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(ns))
        {
            n = &n[ns.len()..];
            break;
        }
    }
    // goose names a tool `extension__tool` (`developer__shell`)
    if let Some((ext, tool)) = n.rsplit_once("__") {
        if !ext.is_empty() && !tool.is_empty() && !ext.starts_with('_') {
            n = tool;
        }
    }
    if let Some((head, idx)) = n.rsplit_once(':') {
        if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) {
            n = head;
        }
    }
    n
}

/// Index of the declared tool a written name means, if exactly one fits.
pub(crate) fn resolve_tool(cat: &Catalog, written: &str) -> Option<usize> {
    let tools = &cat.tools;
    let unique = |pred: &dyn Fn(usize) -> bool| -> Option<Option<usize>> {
        let mut hit = None;
        for i in 0..tools.len() {
            if pred(i) {
                if hit.is_some() {
                    return Some(None); // ambiguous: stop, map nothing
                }
                hit = Some(i);
            }
        }
        hit.map(Some)
    };
    let w = written.trim();
    if w.is_empty() || w.len() > 128 {
        return None;
    }
    for cand in [w, bare(w)] {
        if let Some(r) = unique(&|i| tools[i].name == cand) {
            return r;
        }
        let f = fold(cand);
        if f.is_empty() {
            return None;
        }
        if let Some(r) = unique(&|i| tools[i].fold == f) {
            return r;
        }
    }
    let c = tool_concepts(bare(w));
    if c.is_empty() {
        return None;
    }
    if let Some(r) = unique(&|i| tools[i].concepts == c) {
        return r;
    }
    unique(&|i| c.iter().all(|x| tools[i].concepts.contains(x))).flatten()
}

/// The concepts of an argument name, with the head word (the last) weighted double. Empty
/// when a word is unknown: `exit_code` is not a kind of `code`.
fn arg_concepts(name: &str) -> Vec<(&'static str, u32)> {
    let ws: Vec<String> = words(name)
        .into_iter()
        .filter(|w| !ARG_FILLER.contains(&w.as_str()))
        .collect();
    let mut out = Vec::new();
    for (k, w) in ws.iter().enumerate() {
        let weight = if k + 1 == ws.len() { 2 } else { 1 };
        let before = out.len();
        for g in ARG_WORDS {
            if g.contains(&w.as_str()) {
                out.push((g[0], weight));
            }
        }
        if out.len() == before {
            return Vec::new();
        }
    }
    out
}

/// The declared parameter an argument name means, among `params`, if exactly one fits best.
/// `taken` are parameters already given under their own name.
pub(crate) fn resolve_param(
    params: &[String],
    taken: &dyn Fn(&str) -> bool,
    written: &str,
) -> Option<usize> {
    if let Some(i) = params.iter().position(|p| p == written) {
        return Some(i);
    }
    let f = fold(written);
    let hits: Vec<usize> = (0..params.len())
        .filter(|&i| fold(&params[i]) == f && !taken(&params[i]))
        .collect();
    if hits.len() == 1 {
        return Some(hits[0]);
    }
    let wc = arg_concepts(written);
    if wc.is_empty() {
        return None;
    }
    let mut best = (0u32, None, false);
    for (i, p) in params.iter().enumerate() {
        if taken(p) {
            continue;
        }
        let pc = arg_concepts(p);
        let score: u32 = wc
            .iter()
            .filter(|(c, _)| pc.iter().any(|(d, _)| d == c))
            .map(|(_, w)| w)
            .sum();
        if score > best.0 {
            best = (score, Some(i), false);
        } else if score == best.0 && score > 0 {
            best.2 = true;
        }
    }
    match best {
        (s, Some(i), false) if s > 0 => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> Catalog {
        Catalog::from_names(&[
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
        ])
    }

    fn r(n: &str) -> Option<&'static str> {
        let c = cat();
        resolve_tool(&c, n).map(|i| {
            [
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
            ][i]
        })
    }

    #[test]
    fn names_map_by_rule_not_by_list() {
        for (w, d) in [
            ("read_file", "read_file"),
            ("Read_File", "read_file"),
            ("run-shell", "run_shell"),
            ("RunShell", "run_shell"),
            ("readFile", "read_file"),
            ("list dir", "list_dir"),
            ("functions.read_file", "read_file"),
            ("functions.Run_Shell:0", "run_shell"),
            ("default_api.list_dir", "list_dir"),
            ("create_file", "write_file"),
            ("bash", "run_shell"),
            ("execute_command", "run_shell"),
            ("ls", "list_dir"),
            ("cat", "read_file"),
            ("str_replace", "edit_file"),
            ("grep", "search_files"),
            ("rm", "delete_file"),
            ("task_complete", "finish"),
            ("undo", "rollback"),
        ] {
            assert_eq!(r(w), Some(d), "{w}");
        }
        for w in [
            "get_weather",
            "web_search",
            "send_email",
            "fetch_url",
            "delete_everything",
            "container.exec",
            "browser.open",
            "python",
            "example_function_name",
            "brave_search.call",
            "file",
            "",
        ] {
            assert_eq!(r(w), None, "{w}");
        }
    }

    #[test]
    fn ambiguous_names_map_to_nothing() {
        let c = Catalog::from_names(&["get_user_details", "get_order_details", "cancel_order"]);
        assert_eq!(resolve_tool(&c, "get_details"), None);
        assert_eq!(resolve_tool(&c, "get_user"), Some(0));
        assert_eq!(resolve_tool(&c, "Cancel-Order"), Some(2));
    }

    #[test]
    fn argument_names() {
        let p = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let none = |_: &str| false;
        let w = p(&["path", "content", "replace"]);
        assert_eq!(resolve_param(&w, &none, "file_path"), Some(0));
        assert_eq!(resolve_param(&w, &none, "filePath"), Some(0));
        assert_eq!(resolve_param(&w, &none, "text"), Some(1));
        assert_eq!(resolve_param(&w, &none, "file_text"), Some(1));
        let e = p(&["path", "old", "new"]);
        assert_eq!(resolve_param(&e, &none, "old_string"), Some(1));
        assert_eq!(resolve_param(&e, &none, "new_str"), Some(2));
        assert_eq!(resolve_param(&e, &none, "replacement"), Some(2));
        let s = p(&["command", "timeout"]);
        assert_eq!(resolve_param(&s, &none, "cmd"), Some(0));
        assert_eq!(resolve_param(&s, &none, "status"), None);
        assert_eq!(resolve_param(&s, &none, "exit_code"), None);
        assert_eq!(resolve_param(&s, &none, "timeout_seconds"), Some(1));
        let f = p(&["pattern", "path"]);
        assert_eq!(resolve_param(&f, &none, "query"), Some(0));
        assert_eq!(resolve_param(&f, &none, "directory"), Some(1));
    }
}
