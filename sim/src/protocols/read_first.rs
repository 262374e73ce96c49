//! Reading a file before overwriting it, where a tool's error demands it. Some agents' write
//! tools refuse to overwrite a file the model has not read in the session and say so (Qwen
//! Code: `File … has not been read in this session. Use the read_file tool first …`). A model
//! that reads such an error calls the read tool on that file, then writes it again. Nothing
//! changes where no error asks for it.

use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use crate::convo::{Call, Conv};
use crate::feedback::mentions;
use crate::policy::Turn;
use crate::toolkit::{args_for, Toolkit};

/// Whether a tool result asks to read the file first.
pub fn demanded(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)(has not|hasn't|have not|haven't) (yet )?been read|not (been )?read (it )?(yet|first|in this session|before)|(must|should|need to) (be )?read (it |the file )?(first|before)|use the \w+ tool first")
            .expect("valid regex")
    })
    .is_match(text)
}

/// The turn with a write to a file that a result asked to read first (and that the model
/// has not read since) replaced by a read of that file.
pub fn apply(conv: &Conv, mut turn: Turn) -> Turn {
    let Some(call) = turn.calls.first() else {
        return turn;
    };
    let Some(first_own) = conv.messages.iter().position(|m| m.role == "assistant") else {
        return turn;
    };
    let later = &conv.messages[first_own..];
    if !later
        .iter()
        .any(|m| m.role != "assistant" && demanded(&m.content))
    {
        return turn;
    }
    let kit = Toolkit::detect(&conv.tools);
    let (Some(read), Some(write)) = (kit.read.as_ref(), kit.write.as_ref().or(kit.edit.as_ref()))
    else {
        return turn;
    };
    if call.name != write.name {
        return turn;
    }
    let Some(path) = call.args.get(&write.main).and_then(Value::as_str) else {
        return turn;
    };
    let rel = path.rsplit('/').next().unwrap_or(path);
    let same = |p: &str| p == path || p.rsplit('/').next() == Some(rel);
    let mut pending = false;
    for m in later {
        if m.role == "assistant" {
            let reads = m.calls.iter().any(|c| {
                c.name == read.name
                    && c.args
                        .get(&read.main)
                        .and_then(Value::as_str)
                        .is_some_and(same)
            });
            pending &= !reads;
        } else if demanded(&m.content) && mentions(&m.content, rel) {
            pending = true;
        }
    }
    if !pending {
        return turn;
    }
    turn.calls = vec![Call {
        name: read.name.clone(),
        args: args_for(
            read,
            &[(&read.main, Value::from(path))],
            &format!("Read {path}"),
        ),
    }];
    turn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convo::Msg;
    use crate::protocols::tests::m;
    use serde_json::json;

    #[test]
    fn reads_before_writing_again_when_told() {
        let tools = vec![
            crate::protocols::tool("read_file", &[("file_path", "string")]),
            crate::protocols::tool(
                "write_file",
                &[("file_path", "string"), ("content", "string")],
            ),
        ];
        let write = Call {
            name: "write_file".into(),
            args: json!({"file_path": "/w/inventory.py", "content": "x = 1\n"}),
        };
        let turn = Turn {
            calls: vec![write.clone()],
            ..Default::default()
        };
        let mut conv = Conv {
            messages: vec![m("user", "task"), m("assistant", "")],
            tools,
            ..Default::default()
        };
        conv.messages
            .push(m("tool", "Successfully wrote /w/other.py."));
        assert_eq!(apply(&conv, turn.clone()).calls[0], write);
        conv.messages.push(m("assistant", ""));
        conv.messages.push(m("tool", "File /w/inventory.py has not been read in this session. Use the read_file tool first to load the current content."));
        let got = apply(&conv, turn.clone()).calls[0].clone();
        assert_eq!(got.name, "read_file");
        assert_eq!(got.args, json!({"file_path": "/w/inventory.py"}));
        // the demand was about another file
        let other = Turn {
            calls: vec![Call {
                name: "write_file".into(),
                args: json!({"file_path": "/w/notes.md", "content": "n"}),
            }],
            ..Default::default()
        };
        assert_eq!(apply(&conv, other.clone()), other);
        assert!(!demanded("Read 120 lines."));
        // a later turn of other work does not make the model forget the demand …
        conv.messages.push(m("assistant", ""));
        conv.messages.push(m("tool", "4 failed, 2 passed"));
        assert_eq!(apply(&conv, turn.clone()).calls[0].name, "read_file");
        // … and once it has read the file, it writes
        conv.messages.push(Msg {
            role: "assistant".into(),
            content: String::new(),
            calls: vec![got.clone()],
        });
        conv.messages.push(m("tool", "x = 0"));
        assert_eq!(apply(&conv, turn).calls[0], write);
    }
}
