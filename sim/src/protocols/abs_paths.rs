//! Absolute paths where a tool's error demands them. Some agents' file tools take only
//! absolute paths and answer a relative one with an error saying so (Qwen Code's
//! `File path must be absolute: …`); their prompt tells the model its working directory
//! (`I'm currently working in the directory: /…`). A model that has read such an error
//! writes that directory in front of its relative paths from then on. Nothing changes
//! for tools that accept relative paths: no error asks for it.

use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use crate::convo::Conv;
use crate::policy::Turn;
use crate::toolkit::is_path_param;

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("valid regex"))
}

/// Whether a tool result demands an absolute path.
pub fn demanded(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    re(
        &RE,
        r"(?i)must be (an )?absolute|absolute path (is )?required|relative paths? (is |are )?not (supported|allowed)|must provide an absolute path|is not an absolute path|not absolute",
    )
    .is_match(text)
}

/// The working directory the conversation names (an absolute path after "working
/// directory", "current directory", "cwd" …).
pub fn workdir(conv: &Conv) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let r = re(
        &RE,
        r"(?i)(?:(?:working|current|workspace|project)(?:\s+in)?(?:\s+the)?\s+(?:directory|dir|folder)|\bcwd\b)(?:\s+is)?\s*[:=]?\s*[`'\x22]?(/[^\s`'\x22,;)]*[^\s`'\x22,;).])",
    );
    conv.messages
        .iter()
        .filter(|m| m.role == "system" || m.role == "user")
        .find_map(|m| r.captures(&m.content).map(|c| c[1].to_string()))
}

/// The turn with its relative path arguments made absolute, once a result in the
/// conversation has demanded it.
pub fn apply(conv: &Conv, mut turn: Turn) -> Turn {
    if turn.calls.is_empty() {
        return turn;
    }
    // a result after the model's first turn, or the model's own summary of earlier work
    // (which quotes the errors it met)
    let first_own = conv
        .messages
        .iter()
        .position(|m| m.role == "assistant")
        .unwrap_or(conv.messages.len());
    let asked = conv.messages.iter().enumerate().any(|(i, m)| {
        let result = i > first_own && m.role != "assistant" && m.role != "system";
        let summary = m.role == "user" && m.content.contains("<state_snapshot>");
        (result || summary) && demanded(&m.content)
    });
    if !asked {
        return turn;
    }
    let Some(dir) = workdir(conv) else {
        return turn;
    };
    for c in &mut turn.calls {
        if let Value::Object(m) = &mut c.args {
            for (k, v) in m.iter_mut() {
                if let Some(p) = v
                    .as_str()
                    .filter(|p| is_path_param(k) && !p.starts_with('/'))
                {
                    let rel = p.trim_start_matches("./");
                    *v = Value::from(format!("{}/{rel}", dir.trim_end_matches('/')));
                }
            }
        }
    }
    turn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convo::Call;
    use crate::protocols::tests::m;
    use serde_json::json;

    #[test]
    fn reads_the_demand_and_the_directory() {
        assert!(demanded("File path must be absolute: build_tables.py"));
        assert!(demanded("File path must be absolute, but was relative: a.md. You must provide an absolute path."));
        assert!(!demanded("Wrote file successfully."));
        let conv = Conv {
            messages: vec![m("system", "x"), m("user", "Today's date is Monday.\nI'm currently working in the directory: /tmp/run/w1\nHere is the folder structure")],
            ..Default::default()
        };
        assert_eq!(workdir(&conv).as_deref(), Some("/tmp/run/w1"));
    }

    #[test]
    fn paths_become_absolute_only_after_the_demand() {
        let call = Call {
            name: "write_file".into(),
            args: json!({"file_path": "out/a.md", "content": "relative/words"}),
        };
        let turn = Turn {
            calls: vec![call.clone()],
            ..Default::default()
        };
        let mut conv = Conv {
            messages: vec![
                m("system", "Working directory: /w/x"),
                m("user", "task"),
                m("assistant", ""),
            ],
            ..Default::default()
        };
        conv.messages.push(m("tool", "Wrote it."));
        assert_eq!(apply(&conv, turn.clone()).calls[0], call);
        conv.messages
            .push(m("tool", "File path must be absolute: out/a.md"));
        let got = apply(&conv, turn).calls[0].args.clone();
        assert_eq!(
            got,
            json!({"file_path": "/w/x/out/a.md", "content": "relative/words"})
        );
    }
}
