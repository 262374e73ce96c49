//! Format rescue: small models often write a tool call as text instead of a native call. Three
//! malformed shapes are turned into real calls — (1) the whole reply is JSON (optionally fenced
//! or wrapped in `<tool_call>` tags), (2) the placeholder-quote form `name{key:<|"|>v<|"|>}`,
//! (3) a bare call expression `name(k="v", n=3)` — and tool-name/argument aliases are mapped.
//! Anything with prose around it is not rescued (it may be an explanation, not a call).

use crate::messages::ToolCall;
use serde_json::{Map, Value};

/// Map a tool name a model may use to ours.
pub fn canonical_name(name: &str) -> String {
    let n = name.trim();
    let n = n.rsplit(['.', ':']).next().unwrap_or(n); // functions.x, default_api.x, call:x
    let lower = n.to_lowercase();
    let mapped = match lower.as_str() {
        "create_file" | "save_file" | "write" | "write_to_file" | "create" | "writefile"
        | "file_write" => "write_file",
        "read" | "cat" | "read_text_file" | "view_file" | "open_file" | "view" | "readfile" => {
            "read_file"
        }
        "ls" | "list_directory" | "list_files" | "dir" | "listdir" => "list_dir",
        "bash" | "shell" | "run_bash" | "execute" | "exec" | "run_command" | "terminal" | "sh"
        | "execute_command" | "run" | "python" => "run_shell",
        "append" | "append_to_file" => "append_file",
        "edit" | "replace" | "str_replace" | "edit_text" | "replace_in_file" | "patch" => {
            "edit_file"
        }
        "grep" | "search" | "search_code" | "find" | "search_file" => "search_files",
        "delete" | "remove" | "rm" | "remove_file" => "delete_file",
        "plan" | "todo_write" | "todowrite" | "update_plan" | "todos" => "todo",
        "done" | "complete" | "task_complete" | "submit" | "final_answer"
        | "attempt_completion" => "finish",
        "undo" | "restore" => "rollback",
        _ => return lower,
    };
    mapped.to_string()
}

/// Map argument aliases for our tools (`file_path` → `path`, `cmd` → `command`, …).
pub fn canonical_args(tool: &str, args: Value) -> Value {
    let Value::Object(m) = args else {
        return args;
    };
    let mut out = Map::new();
    for (k, v) in m {
        let key = match (tool, k.as_str()) {
            (
                _,
                "file_path" | "filepath" | "filename" | "file" | "file_name" | "filePath" | "dir"
                | "directory",
            ) => "path",
            ("write_file" | "append_file", "text" | "contents" | "data" | "body" | "file_text") => {
                "content"
            }
            ("edit_file", "old_string" | "old_text" | "search" | "find" | "old_str") => "old",
            ("edit_file", "new_string" | "new_text" | "replace" | "replacement" | "new_str") => {
                "new"
            }
            ("run_shell", "cmd" | "script" | "code") => "command",
            ("search_files", "query" | "text" | "regex") => "pattern",
            ("finish", "message" | "result" | "answer") => "summary",
            _ => k.as_str(),
        }
        .to_string();
        out.entry(key).or_insert(v);
    }
    Value::Object(out)
}

fn strip_wrappers(text: &str) -> &str {
    let mut t = text.trim();
    for (open, close) in [
        ("```json", "```"),
        ("```", "```"),
        ("<tool_call>", "</tool_call>"),
        ("<|tool_call>", "<tool_call|>"),
        ("<function_call>", "</function_call>"),
    ] {
        if let Some(inner) = t.strip_prefix(open) {
            if let Some(inner) = inner.trim_end().strip_suffix(close) {
                t = inner.trim();
            }
        }
    }
    t
}

fn call_from_json(v: &Value, known: &[&str]) -> Option<ToolCall> {
    let obj = v.as_object()?;
    // {"function": {...}}
    if let Some(f) = obj.get("function").filter(|f| f.is_object()) {
        return call_from_json(f, known);
    }
    let name = ["name", "tool_name", "tool", "function_name"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(|x| x.as_str()));
    if let Some(name) = name {
        let args = ["arguments", "parameters", "args", "input", "params"]
            .iter()
            .find_map(|k| obj.get(*k))
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        let args = lrab_ollama::normalize_arguments(args);
        let n = canonical_name(name);
        return known
            .contains(&n.as_str())
            .then(|| ToolCall::new(&n, canonical_args(&n, args)));
    }
    // {"tool_name": {args}}
    if obj.len() == 1 {
        let (k, a) = obj.iter().next()?;
        let n = canonical_name(k);
        if known.contains(&n.as_str()) && a.is_object() {
            return Some(ToolCall::new(&n, canonical_args(&n, a.clone())));
        }
    }
    None
}

/// Shape 1: the whole reply is JSON (object or list of objects).
fn rescue_json(t: &str, known: &[&str]) -> Option<Vec<ToolCall>> {
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    let v: Value = serde_json::from_str(t).ok()?;
    let calls: Vec<ToolCall> = match &v {
        Value::Array(a) => a
            .iter()
            .map(|x| call_from_json(x, known))
            .collect::<Option<Vec<_>>>()?,
        _ => vec![call_from_json(&v, known)?],
    };
    (!calls.is_empty()).then_some(calls)
}

const PLACEHOLDER: &str = "<|\"|>";

/// A tiny parser over the call-expression shapes (2) and (3).
struct P<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> P<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }
    fn ws(&mut self) {
        while let Some(c) = self.rest().chars().next() {
            if c.is_whitespace() {
                self.i += c.len_utf8();
            } else {
                break;
            }
        }
    }
    fn eat(&mut self, t: &str) -> bool {
        if self.rest().starts_with(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> Option<&'a str> {
        let start = self.i;
        while let Some(c) = self.rest().chars().next() {
            if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' {
                self.i += c.len_utf8();
            } else {
                break;
            }
        }
        (self.i > start).then(|| &self.s[start..self.i])
    }
    fn quoted(&mut self, q: char) -> Option<String> {
        // after the opening quote
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((off, c)) = chars.next() {
            if c == '\\' {
                let (_, e) = chars.next()?;
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                });
            } else if c == q {
                self.i += off + c.len_utf8();
                return Some(out);
            } else {
                out.push(c);
            }
        }
        None
    }
    fn value(&mut self) -> Option<Value> {
        self.ws();
        if self.eat(PLACEHOLDER) {
            let end = self.rest().find(PLACEHOLDER)?;
            let v = self.rest()[..end].to_string();
            self.i += end + PLACEHOLDER.len();
            return Some(Value::String(v));
        }
        if self.eat("\"\"\"") {
            let end = self.rest().find("\"\"\"")?;
            let v = self.rest()[..end].to_string();
            self.i += end + 3;
            return Some(Value::String(v));
        }
        if self.eat("\"") {
            return self.quoted('"').map(Value::String);
        }
        if self.eat("'") {
            return self.quoted('\'').map(Value::String);
        }
        let start = self.i;
        while let Some(c) = self.rest().chars().next() {
            if c.is_alphanumeric() || c == '.' || c == '-' || c == '+' {
                self.i += c.len_utf8();
            } else {
                break;
            }
        }
        let tok = &self.s[start..self.i];
        match tok {
            "true" | "True" => Some(Value::Bool(true)),
            "false" | "False" => Some(Value::Bool(false)),
            "null" | "None" => Some(Value::Null),
            _ => {
                if let Ok(n) = tok.parse::<i64>() {
                    Some(Value::from(n))
                } else {
                    tok.parse::<f64>().ok().map(Value::from)
                }
            }
        }
    }
}

/// Shapes 2 and 3: `name(k=v, …)`, `name(k: v)`, `name{k:<|"|>v<|"|>}`; the expression must be
/// the entire reply.
fn rescue_expr(t: &str, known: &[&str]) -> Option<Vec<ToolCall>> {
    let mut p = P { s: t, i: 0 };
    p.eat("call:");
    let name = canonical_name(p.ident()?);
    if !known.contains(&name.as_str()) {
        return None;
    }
    p.ws();
    let close = if p.eat("(") {
        ')'
    } else if p.eat("{") {
        '}'
    } else {
        return None;
    };
    let mut args = Map::new();
    loop {
        p.ws();
        if p.eat(&close.to_string()) {
            break;
        }
        let key = p.ident()?.to_string();
        p.ws();
        if !(p.eat("=") || p.eat(":")) {
            return None;
        }
        let v = p.value()?;
        args.insert(key, v);
        p.ws();
        if p.eat(",") {
            continue;
        }
        if p.eat(&close.to_string()) {
            break;
        }
        return None;
    }
    p.ws();
    if !p.rest().is_empty() {
        return None; // prose after the call: not a call
    }
    Some(vec![ToolCall::new(
        &name,
        canonical_args(&name, Value::Object(args)),
    )])
}

/// Try to turn a text-only reply into tool calls. `known` are the tool names on offer.
pub fn rescue(text: &str, known: &[&str]) -> Option<Vec<ToolCall>> {
    let t = strip_wrappers(text);
    if t.is_empty() {
        return None;
    }
    rescue_json(t, known).or_else(|| rescue_expr(t, known))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const K: &[&str] = &[
        "read_file",
        "write_file",
        "run_shell",
        "finish",
        "todo",
        "edit_file",
    ];

    #[test]
    fn shape1_whole_reply_json_in_its_variants() {
        let c = rescue(
            r#"{"name": "write_file", "arguments": {"path": "a.md", "content": "x"}}"#,
            K,
        )
        .unwrap();
        assert_eq!(c[0].name, "write_file");
        assert_eq!(c[0].arguments, json!({"path": "a.md", "content": "x"}));
        let c = rescue("```json\n{\"run_shell\": {\"cmd\": \"ls\"}}\n```", K).unwrap();
        assert_eq!(c[0].name, "run_shell");
        assert_eq!(c[0].arguments, json!({"command": "ls"}));
        let c = rescue(r#"<tool_call>{"name": "create_file", "arguments": "{\"file_path\": \"b.py\", \"text\": \"print(1)\"}"}</tool_call>"#, K).unwrap();
        assert_eq!(c[0].name, "write_file");
        assert_eq!(
            c[0].arguments,
            json!({"path": "b.py", "content": "print(1)"})
        );
        let c = rescue(r#"[{"name":"read_file","parameters":{"path":"a"}},{"name":"read_file","parameters":{"path":"b"}}]"#, K).unwrap();
        assert_eq!(c.len(), 2);
        assert!(rescue(r#"{"name": "launch_rocket", "arguments": {}}"#, K).is_none());
        assert!(rescue(r#"{"result": 42}"#, K).is_none());
    }

    #[test]
    fn shape2_placeholder_quote_form() {
        let c = rescue("read_file(path:<|\"|>data.csv<|\"|>)", K).unwrap();
        assert_eq!(c[0].arguments, json!({"path": "data.csv"}));
        let c = rescue(
            "call:write_file{path:<|\"|>n.md<|\"|>,content:<|\"|>a, b: \"c\"<|\"|>}",
            K,
        )
        .unwrap();
        assert_eq!(c[0].name, "write_file");
        assert_eq!(
            c[0].arguments,
            json!({"path": "n.md", "content": "a, b: \"c\""})
        );
    }

    #[test]
    fn shape3_bare_call_expression() {
        let c = rescue("run_shell(command=\"python3 a.py\", timeout=30)", K).unwrap();
        assert_eq!(
            c[0].arguments,
            json!({"command": "python3 a.py", "timeout": 30})
        );
        let c = rescue("finish(summary='all done\\nok', verified=True)", K).unwrap();
        assert_eq!(
            c[0].arguments,
            json!({"summary": "all done\nok", "verified": true})
        );
        // prose around it, unknown tool, nested structure: not rescued
        assert!(rescue("I will now call read_file(path=\"a\") to look.", K).is_none());
        assert!(rescue("read_file(path=\"a\") and then more", K).is_none());
        assert!(rescue("open_door(key=\"x\")", K).is_none());
        assert!(rescue("todo(items=[\"a\"])", K).is_none());
    }

    #[test]
    fn aliases() {
        assert_eq!(canonical_name("functions.bash"), "run_shell");
        assert_eq!(canonical_name("create_file"), "write_file");
        assert_eq!(canonical_name("read_file"), "read_file");
        assert_eq!(
            canonical_args(
                "edit_file",
                json!({"file_path": "a", "old_string": "x", "new_string": "y"})
            ),
            json!({"path": "a", "old": "x", "new": "y"})
        );
    }
}
