//! Finding the shell, write, read, edit and finish tools among whatever a request offers,
//! by name and parameter schema, so the same policy drives every harness.

use lrab_ollama::Tool;
use serde_json::{Map, Value};

/// A recognised tool and the names of its relevant parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub name: String,
    /// Parameter carrying the main value (command / path).
    pub main: String,
    /// Second parameter (content / old text), when the role has one.
    pub second: Option<String>,
    /// Third parameter (new text for edit).
    pub third: Option<String>,
    pub tool: Tool,
}

/// The roles found in one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Toolkit {
    pub shell: Option<Bound>,
    pub write: Option<Bound>,
    pub read: Option<Bound>,
    pub edit: Option<Bound>,
    pub finish: Option<Bound>,
    pub count: usize,
    pub names: Vec<String>,
}

const PATH_PARAMS: &[&str] = &[
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "file_name",
    "target_file",
    "target",
];
const CONTENT_PARAMS: &[&str] = &["content", "contents", "text", "data", "body", "file_text"];
const COMMAND_PARAMS: &[&str] = &["command", "cmd", "script", "shell_command", "commands"];
const OLD_PARAMS: &[&str] = &[
    "old",
    "old_string",
    "oldstring",
    "old_str",
    "old_text",
    "search",
];
const NEW_PARAMS: &[&str] = &[
    "new",
    "new_string",
    "newstring",
    "new_str",
    "new_text",
    "replace",
];
const SUMMARY_PARAMS: &[&str] = &["summary", "message", "result", "answer", "text", "reason"];

/// Whether a parameter name reads as a file path.
pub fn is_path_param(name: &str) -> bool {
    PATH_PARAMS.contains(&norm(name).as_str())
}

fn norm(s: &str) -> String {
    s.to_lowercase().replace(['-', ' '], "_")
}

fn find_param(params: &[String], wanted: &[&str]) -> Option<String> {
    for w in wanted {
        if let Some(p) = params.iter().find(|p| norm(p) == *w) {
            return Some(p.clone());
        }
    }
    None
}

fn name_has(name: &str, words: &[&str]) -> bool {
    let n = norm(name);
    let last = n.rsplit(['.', '/', ':']).next().unwrap_or(&n).to_string();
    words
        .iter()
        .any(|w| last == *w || last.split('_').any(|part| part == *w) || last.starts_with(w))
}

const FINISH_NAMES: &[&str] = &[
    "finish",
    "done",
    "complete",
    "submit",
    "final",
    "attempt_completion",
    "task_complete",
];

/// Whether a tool name reads as a finish/done tool.
pub fn is_finish_name(name: &str) -> bool {
    name_has(name, FINISH_NAMES)
}

impl Toolkit {
    pub fn detect(tools: &[Tool]) -> Toolkit {
        let mut kit = Toolkit {
            count: tools.len(),
            names: tools.iter().map(|t| t.function.name.clone()).collect(),
            ..Default::default()
        };
        for t in tools {
            let name = &t.function.name;
            let params = t.param_names();
            let bound = |main: String, second: Option<String>, third: Option<String>| Bound {
                name: name.clone(),
                main,
                second,
                third,
                tool: t.clone(),
            };
            let path = find_param(&params, PATH_PARAMS);
            let content = find_param(&params, CONTENT_PARAMS);
            let command = find_param(&params, COMMAND_PARAMS);
            let old = find_param(&params, OLD_PARAMS);
            let new = find_param(&params, NEW_PARAMS);
            if kit.shell.is_none()
                && command.is_some()
                && path.is_none()
                && !name_has(name, &["python", "sql", "js", "node"])
            {
                kit.shell = Some(bound(command.clone().unwrap_or_default(), None, None));
                continue;
            }
            if kit.edit.is_none() && path.is_some() && old.is_some() && new.is_some() {
                kit.edit = Some(bound(path.clone().unwrap_or_default(), old, new));
                continue;
            }
            if kit.write.is_none()
                && path.is_some()
                && content.is_some()
                && !name_has(name, &["append", "insert", "edit", "patch"])
                && name_has(name, &["write", "create", "save", "put", "new", "file"])
            {
                kit.write = Some(bound(path.clone().unwrap_or_default(), content, None));
                continue;
            }
            if kit.read.is_none()
                && path.is_some()
                && content.is_none()
                && name_has(name, &["read", "cat", "view", "open", "show", "get"])
            {
                kit.read = Some(bound(path.clone().unwrap_or_default(), None, None));
                continue;
            }
            if kit.finish.is_none() && name_has(name, FINISH_NAMES) {
                let main = find_param(&params, SUMMARY_PARAMS).unwrap_or_default();
                kit.finish = Some(bound(main, None, None));
            }
        }
        kit
    }
}

impl Toolkit {
    /// The toolkit the task policy works with: what the request offers, and — when it offers
    /// tools but none that writes a file or runs a command — the conventional
    /// `write_file(path, content)` and `bash(command)` a model trained on tool use calls
    /// anyway: the names of the MCP reference filesystem server's tool and of the common bash
    /// tool (agents note that small models "often output the industry's common names", e.g.
    /// Mingbird's `run_tool` aliases). An agent that maps such a call onto a tool of its own
    /// runs it; the others answer it with an error.
    pub fn for_task(tools: &[Tool]) -> Toolkit {
        let mut kit = Toolkit::detect(tools);
        if kit.count == 0 || kit.write.is_some() || kit.shell.is_some() {
            return kit;
        }
        kit.write = Some(conventional("write_file", "path", Some("content")));
        kit.shell = Some(conventional("bash", "command", None));
        kit
    }
}

/// A tool the request does not offer, by its conventional name and string parameters.
fn conventional(name: &str, main: &str, second: Option<&str>) -> Bound {
    let params: Vec<&str> = std::iter::once(main).chain(second).collect();
    let props: Map<String, Value> = params
        .iter()
        .map(|p| (p.to_string(), serde_json::json!({"type": "string"})))
        .collect();
    let schema = serde_json::json!({"type": "object", "properties": props, "required": params});
    Bound {
        name: name.into(),
        main: main.into(),
        second: second.map(str::to_string),
        third: None,
        tool: Tool::function(name, "", schema),
    }
}

/// Builds arguments for a bound tool: the given values, plus placeholder values for other
/// required parameters (a description string, a number, false) so schema checks pass.
pub fn args_for(b: &Bound, values: &[(&str, Value)], describe: &str) -> Value {
    let mut m = Map::new();
    for (k, v) in values {
        if !k.is_empty() {
            m.insert((*k).to_string(), v.clone());
        }
    }
    let props = b
        .tool
        .function
        .parameters
        .as_ref()
        .and_then(|p| p.get("properties"))
        .cloned()
        .unwrap_or(Value::Null);
    for req in b.tool.required_params() {
        if m.contains_key(&req) {
            continue;
        }
        let ty = props
            .get(&req)
            .and_then(|p| p.get("type"))
            .and_then(|t| t.as_str())
            .unwrap_or("string");
        let v = match ty {
            "integer" | "number" => Value::from(120),
            "boolean" => Value::Bool(false),
            "array" => Value::Array(vec![]),
            "object" => Value::Object(Map::new()),
            _ => Value::String(describe.to_string()),
        };
        m.insert(req, v);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(name: &str, props: &[&str], required: &[&str]) -> Tool {
        let mut p = Map::new();
        for k in props {
            p.insert((*k).to_string(), json!({"type": "string"}));
        }
        Tool::function(
            name,
            "",
            json!({"type": "object", "properties": p, "required": required}),
        )
    }

    #[test]
    fn opencode_like_tools() {
        let kit = Toolkit::detect(&[
            t(
                "bash",
                &["command", "timeout", "description"],
                &["command", "description"],
            ),
            t(
                "edit",
                &["filePath", "oldString", "newString"],
                &["filePath", "oldString", "newString"],
            ),
            t("glob", &["pattern", "path"], &["pattern"]),
            t("read", &["filePath", "offset", "limit"], &["filePath"]),
            t("write", &["content", "filePath"], &["content", "filePath"]),
        ]);
        assert_eq!(kit.shell.as_ref().unwrap().name, "bash");
        assert_eq!(kit.write.as_ref().unwrap().main, "filePath");
        assert_eq!(
            kit.write.as_ref().unwrap().second.as_deref(),
            Some("content")
        );
        assert_eq!(kit.read.as_ref().unwrap().name, "read");
        assert_eq!(
            kit.edit.as_ref().unwrap().third.as_deref(),
            Some("newString")
        );
        assert!(kit.finish.is_none());
        let a = args_for(
            kit.shell.as_ref().unwrap(),
            &[("command", json!("ls"))],
            "list",
        );
        assert_eq!(a, json!({"command": "ls", "description": "list"}));
    }

    #[test]
    fn agent_mini_and_mingbird_like_tools() {
        let kit = Toolkit::detect(&[
            t("shell_exec", &["command"], &["command"]),
            t("read_file", &["path"], &["path"]),
            t("write_file", &["path", "content"], &["path", "content"]),
            t("append_file", &["path", "content"], &["path", "content"]),
            t("list_dir", &["path"], &[]),
        ]);
        assert_eq!(kit.shell.unwrap().name, "shell_exec");
        assert_eq!(kit.write.unwrap().name, "write_file");
        assert_eq!(kit.read.unwrap().name, "read_file");
        let kit = Toolkit::detect(&[
            t("run_bash", &["command"], &["command"]),
            t("create_file", &["path", "content"], &["path", "content"]),
            t(
                "edit_file",
                &["path", "old", "new"],
                &["path", "old", "new"],
            ),
            t("finish", &["summary"], &["summary"]),
        ]);
        assert_eq!(kit.write.unwrap().name, "create_file");
        assert_eq!(kit.edit.unwrap().name, "edit_file");
        assert_eq!(kit.finish.unwrap().main, "summary");
        let kit = Toolkit::detect(&[t("run_python", &["code"], &["code"])]);
        assert!(kit.shell.is_none());
    }

    #[test]
    fn a_task_without_a_write_or_shell_tool_writes_through_the_common_name() {
        let reading = [
            t("read_file", &["path"], &["path"]),
            t("finish", &["summary"], &[]),
        ];
        let kit = Toolkit::for_task(&reading);
        let w = kit.write.expect("the conventional write tool");
        assert_eq!((w.name.as_str(), w.main.as_str()), ("write_file", "path"));
        assert_eq!(w.second.as_deref(), Some("content"));
        assert_eq!(kit.shell.expect("the conventional shell").name, "bash");
        assert_eq!(
            kit.count, 2,
            "the request's own tools are still what it offers"
        );
        // an offered write or shell tool is used as it is; no tools at all: no call is made up
        let own = Toolkit::for_task(&[t("bash", &["command"], &["command"])]);
        assert!(own.write.is_none() && own.shell.is_some());
        assert!(Toolkit::for_task(&[]).write.is_none());
    }
}
