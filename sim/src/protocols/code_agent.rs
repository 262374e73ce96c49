//! Code actions (smolagents' CodeAgent, as its documentation and `prompts/code_agent.yaml`
//! describe them): no tools in the request; the system prompt asks for a `Thought:` and then
//! Python between the code block tags it names, offers Python functions by their `def`
//! signatures (`final_answer` among them), and lists the modules the code may import. Each
//! block runs, and what it prints comes back as the next user message (`Observation:`).
//!
//! The model calls the offered functions with keyword arguments; it writes files with
//! `pathlib` and runs commands with `subprocess` when those modules may be imported, printing
//! the command's output and exit status so that the observation shows what happened.

use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use super::{arg, pylit, tool, Action, TextProtocol};
use crate::convo::{Call, Conv};
use lrab_ollama::Tool;

/// The virtual tool that writes a file through `pathlib`.
const WRITE: &str = "pathlib.Path.write_text";
/// The virtual tool that runs a command through `subprocess`.
const RUN: &str = "subprocess.run";

#[derive(Debug, Clone, PartialEq)]
pub struct CodeAgent {
    open: String,
    close: String,
    /// The functions the prompt offers.
    functions: Vec<Tool>,
    pathlib: bool,
    subprocess: bool,
}

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("valid regex"))
}

/// A CodeAgent prompt: the Thought / Observation cycle, `final_answer`, and code block tags
/// (named in the prompt, or Markdown `py` fences).
pub fn detect(system: &str) -> Option<CodeAgent> {
    if !(system.contains("final_answer")
        && system.contains("Observation")
        && system.contains("Thought"))
    {
        return None;
    }
    static TAGS: OnceLock<Regex> = OnceLock::new();
    static IMPORTS: OnceLock<Regex> = OnceLock::new();
    static DEF: OnceLock<Regex> = OnceLock::new();
    let tags = re(
        &TAGS,
        r"opened with '([^'\n]+)', and closed with '([^'\n]+)'",
    );
    let (open, close) = match tags.captures(system) {
        Some(c) => (c[1].to_string(), c[2].to_string()),
        None if system.contains("```py") => ("```py".to_string(), "```".to_string()),
        None => return None,
    };
    let imports: Vec<String> = re(&IMPORTS, r"following list of modules: \[([^\]]*)\]")
        .captures(system)
        .map(|c| {
            c[1].split(',')
                .map(|s| s.trim().trim_matches(['\'', '"']).to_string())
                .collect()
        })
        .unwrap_or_default();
    let may = |m: &str| {
        imports
            .iter()
            .any(|i| i == m || i == "*" || i == &format!("{m}.*"))
    };
    let functions = re(&DEF, r"(?m)^\s*def (\w+)\(([^)]*)\)")
        .captures_iter(system)
        .map(|c| {
            let params: Vec<(String, &str)> = c[2]
                .split(',')
                .filter_map(|p| {
                    let (name, ty) = p.split_once(':').unwrap_or((p, "str"));
                    let name = name.trim();
                    (!name.is_empty()).then(|| (name.to_string(), json_type(ty)))
                })
                .collect();
            let refs: Vec<(&str, &str)> = params.iter().map(|(n, t)| (n.as_str(), *t)).collect();
            tool(&c[1], &refs)
        })
        .collect();
    Some(CodeAgent {
        open,
        close,
        functions,
        pathlib: may("pathlib"),
        subprocess: may("subprocess"),
    })
}

fn json_type(py: &str) -> &'static str {
    match py.trim().to_lowercase().as_str() {
        "int" | "integer" => "integer",
        "float" | "number" => "number",
        "bool" | "boolean" => "boolean",
        _ => "string",
    }
}

impl CodeAgent {
    /// Python statements for one call.
    fn statement(&self, c: &Call) -> String {
        match c.name.as_str() {
            WRITE => {
                let path = arg(c, "path").map(pylit::string).unwrap_or_default();
                let content = arg(c, "content").map(pylit::string).unwrap_or_default();
                let mkdir = match arg(c, "path") {
                    Some(p) if p.contains('/') => {
                        format!("pathlib.Path({path}).parent.mkdir(parents=True, exist_ok=True)\n")
                    }
                    _ => String::new(),
                };
                format!("{mkdir}pathlib.Path({path}).write_text({content})\n")
            }
            RUN => {
                let cmd = arg(c, "command").map(pylit::string).unwrap_or_default();
                format!(
                    "result = subprocess.run({cmd}, shell=True, capture_output=True, text=True)\n\
                     print(result.stdout + result.stderr)\nprint(\"exit status\", result.returncode)\n"
                )
            }
            name => {
                let args: Vec<String> = match &c.args {
                    Value::Object(m) => m
                        .iter()
                        .map(|(k, v)| format!("{k}={}", pylit::value(v)))
                        .collect(),
                    _ => vec![],
                };
                format!("{name}({})\n", args.join(", "))
            }
        }
    }

    /// The code of a reply (the text between its tags, before any `Calling tools:` record).
    fn code<'a>(&self, content: &'a str) -> Vec<&'a str> {
        let content = content.split("\nCalling tools:").next().unwrap_or(content);
        let mut out = Vec::new();
        let mut rest = content;
        while let Some(a) = rest.find(&self.open) {
            let body = &rest[a + self.open.len()..];
            let body = body.strip_prefix("thon").unwrap_or(body);
            let end = body.find(&self.close).unwrap_or(body.len());
            out.push(&body[..end]);
            rest = &body[end..];
            if rest.is_empty() {
                break;
            }
            rest = &rest[self.close.len()..];
        }
        out
    }
}

impl TextProtocol for CodeAgent {
    fn tools(&self) -> Vec<Tool> {
        let mut t = self.functions.clone();
        if self.pathlib {
            t.push(tool(WRITE, &[("path", "string"), ("content", "string")]));
        }
        if self.subprocess {
            t.push(tool(RUN, &[("command", "string")]));
        }
        t
    }

    fn one_shot(&self) -> bool {
        false
    }

    fn render(&self, _conv: &Conv, actions: &[Action], tail: &str) -> String {
        if actions.is_empty() {
            return tail.to_string();
        }
        let notes: Vec<&str> = actions
            .iter()
            .map(|a| a.note.as_str())
            .filter(|n| !n.is_empty())
            .collect();
        let mut code = String::new();
        for (module, name) in [("pathlib", WRITE), ("subprocess", RUN)] {
            if actions.iter().any(|a| a.call.name == name) {
                code.push_str(&format!("import {module}\n"));
            }
        }
        for a in actions {
            if let Some(first) = a.note.lines().next().filter(|l| !l.is_empty()) {
                code.push_str(&format!("# {first}\n"));
            }
            code.push_str(&self.statement(&a.call));
        }
        let thought = if notes.is_empty() {
            "I will carry on with the task.".to_string()
        } else {
            notes.join(" ")
        };
        let mut out = format!("Thought: {thought}\n{}\n{code}{}", self.open, self.close);
        if !tail.is_empty() {
            out.push('\n');
            out.push_str(tail);
        }
        out
    }

    fn parse(&self, _conv: &Conv, _at: usize, content: &str) -> Vec<Action> {
        let names: Vec<&str> = self
            .functions
            .iter()
            .map(|t| t.function.name.as_str())
            .collect();
        let mut out = Vec::new();
        for code in self.code(content) {
            let mut note = String::new();
            let mut i = 0;
            while i < code.len() {
                let line_end = code[i..].find('\n').map_or(code.len(), |n| i + n);
                let line = &code[i..line_end];
                let (call, used) = read_statement(line, &code[i..], &names);
                if let Some(c) = call {
                    out.push(Action {
                        note: std::mem::take(&mut note),
                        call: c,
                    });
                } else if let Some(n) = line.strip_prefix("# ") {
                    note = n.to_string();
                }
                i = (i + used.max(line.len())).min(code.len());
                i += code[i..].starts_with('\n') as usize;
            }
        }
        out
    }
}

/// The call a statement makes (one the model writes, see [`CodeAgent::statement`]) and the
/// bytes it spans.
fn read_statement(line: &str, from: &str, functions: &[&str]) -> (Option<Call>, usize) {
    let call = |name: &str, args: Value| {
        Some(Call {
            name: name.into(),
            args,
        })
    };
    if let Some(rest) = from.strip_prefix("pathlib.Path(") {
        let Some((path, n)) = pylit::read(rest) else {
            return (None, line.len());
        };
        let after = &rest[n..];
        if let Some(w) = after.strip_prefix(").write_text(") {
            if let Some((content, m)) = pylit::read(w) {
                let used = "pathlib.Path(".len() + n + ").write_text(".len() + m + 1;
                let args = serde_json::json!({"path": path, "content": content});
                return (call(WRITE, args), used);
            }
        }
        return (None, line.len());
    }
    if let Some(rest) = from.strip_prefix("result = subprocess.run(") {
        if let Some((cmd, n)) = pylit::read(rest) {
            let used = "result = subprocess.run(".len() + n;
            let rest_line = rest[n..].find('\n').unwrap_or(rest.len() - n);
            return (
                call(RUN, serde_json::json!({ "command": cmd })),
                used + rest_line,
            );
        }
    }
    for f in functions {
        if let Some(rest) = from.strip_prefix(&format!("{f}(")) {
            if let Some((m, n)) = pylit::kwargs(rest) {
                return (call(f, Value::Object(m)), f.len() + 1 + n);
            }
        }
    }
    (None, line.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The parts of smolagents' CodeAgent system prompt the model reads (code_agent.yaml,
    /// with its defaults filled in).
    pub const PROMPT: &str = "You are an expert assistant who can solve any task using code blobs.\n\
At each step, in the 'Thought:' sequence, you should first explain your reasoning.\n\
Then in the Code sequence you should write the code in simple Python. The code sequence must be opened with '<code>', and closed with '</code>'.\n\
These print outputs will then appear in the 'Observation:' field.\n\
In the end you have to return a final answer using the `final_answer` tool.\n\
<code>\ndef final_answer(answer: any) -> any:\n    \"\"\"Provides a final answer to the given problem.\"\"\"\n</code>\n\
9. You can use imports in your code, but only from the following list of modules: ['collections', 'pathlib', 'subprocess']\n";

    #[test]
    fn detects_the_documented_prompt() {
        let p = detect(PROMPT).unwrap();
        assert_eq!((p.open.as_str(), p.close.as_str()), ("<code>", "</code>"));
        assert!(p.pathlib && p.subprocess);
        assert_eq!(p.functions[0].function.name, "final_answer");
        assert_eq!(p.functions[0].required_params(), vec!["answer".to_string()]);
        let names: Vec<String> = p.tools().iter().map(|t| t.function.name.clone()).collect();
        assert_eq!(names, ["final_answer", WRITE, RUN]);
        assert!(detect("You are a helpful assistant.").is_none());
        let no_imports = PROMPT.replace("'pathlib', 'subprocess'", "'math'");
        assert_eq!(detect(&no_imports).unwrap().tools().len(), 1);
    }

    #[test]
    fn replies_parse_back_into_their_calls() {
        let p = detect(PROMPT).unwrap();
        let acts = vec![
            Action {
                note: "Step 1/3: writing docs/a.md.".into(),
                call: Call {
                    name: WRITE.into(),
                    args: json!({"path": "docs/a.md", "content": "# A\n'''quoted'''\n"}),
                },
            },
            Action {
                note: "Step 2/3: running `python3 x.py`.".into(),
                call: Call {
                    name: RUN.into(),
                    args: json!({"command": "python3 x.py && echo 'ok'"}),
                },
            },
            Action {
                note: String::new(),
                call: Call {
                    name: "final_answer".into(),
                    args: json!({"answer": "All steps are done."}),
                },
            },
        ];
        let text = p.render(&Conv::default(), &acts, "");
        assert!(text.starts_with("Thought: Step 1/3"), "{text}");
        assert!(
            text.contains("<code>\nimport pathlib\nimport subprocess\n"),
            "{text}"
        );
        assert!(text.ends_with("final_answer(answer='''All steps are done.''')\n</code>"));
        assert!(!text.contains("Observation:") && !text.contains("Calling tools:"));
        // smolagents keeps the reply and appends its own record of the call
        let stored = format!("{text}\nCalling tools:\n[{{'id': 'call_1', 'type': 'function', 'function': {{'name': 'python_interpreter', 'arguments': 'x = 1'}}}}]");
        assert_eq!(p.parse(&Conv::default(), 0, &stored), acts);
    }
}
