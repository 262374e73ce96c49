//! Resilience: an atomic checkpoint after every turn and resume on relaunch (a corrupt
//! checkpoint is set aside, never trusted); think-only replies count as empty; replies cut at
//! the output cap get skeleton-then-append feedback.

use crate::messages::{Message, Role};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// The per-reply output cap.
pub const OUTPUT_CAP: u32 = 8192;

/// Save `state` to `path` atomically (a killed harness leaves the previous checkpoint or this
/// one). Not fsynced: it is rewritten after every turn, and a machine crash costs one turn.
pub fn save<T: Serialize>(path: &Path, state: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(state).map_err(std::io::Error::other)?;
    lrab_util::write_atomic_unsynced(path, &bytes)
}

#[derive(Debug)]
pub enum Loaded<T> {
    Fresh,
    Resumed(Box<T>),
    /// The checkpoint could not be read; it was moved to `moved_to`.
    Corrupt {
        moved_to: PathBuf,
        error: String,
    },
}

/// Load a checkpoint. A corrupt one is renamed aside (`checkpoint.corrupt-N.json`) so the run can
/// start fresh without losing the evidence.
pub fn load<T: DeserializeOwned>(path: &Path) -> Loaded<T> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(_) => return Loaded::Fresh,
    };
    match serde_json::from_slice::<T>(&bytes) {
        Ok(s) => Loaded::Resumed(Box::new(s)),
        Err(e) => {
            let mut n = 1;
            let moved_to = loop {
                let p = path.with_extension(format!("corrupt-{n}.json"));
                if !p.exists() {
                    break p;
                }
                n += 1;
            };
            let _ = fs::rename(path, &moved_to);
            Loaded::Corrupt {
                moved_to,
                error: e.to_string(),
            }
        }
    }
}

/// Remove `<think>…</think>` blocks and an unclosed `<think>` prefix.
pub fn strip_think(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        match rest.find("<think>") {
            Some(i) => {
                out.push_str(&rest[..i]);
                match rest[i..].find("</think>") {
                    Some(j) => rest = &rest[i + j + "</think>".len()..],
                    None => break,
                }
            }
            None => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}

/// A reply with no call and no text outside thinking is empty.
pub fn is_empty_reply(content: &str, has_calls: bool) -> bool {
    !has_calls && strip_think(content).trim().is_empty()
}

/// Feedback after a reply was cut at the output cap.
/// The first message after a resume.
pub fn resume_nudge(next: &str) -> String {
    format!("[The run was interrupted and has been resumed; files you wrote are still there.] Continue where you left off. Next action: {next}")
}

pub fn truncation_feedback() -> String {
    format!(
        "Your last reply hit the output limit ({OUTPUT_CAP} tokens) and was cut off, so nothing from it was saved. Write long files in parts: first write_file a short skeleton (headings and the first section), then append_file one section per call, each well under 1500 words."
    )
}

/// After a resume: drop a trailing assistant message whose tool calls have no results, and
/// trailing empty assistant messages.
pub fn sanitize(messages: &mut Vec<Message>) {
    while let Some(last) = messages.last() {
        let dangling = last.role == Role::Assistant
            && (!last.tool_calls.is_empty() || last.content.trim().is_empty());
        if dangling {
            messages.pop();
        } else {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ToolCall;
    use serde_json::json;

    #[test]
    fn atomic_save_load_and_corrupt_set_aside() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("checkpoint.json");
        assert!(matches!(load::<Vec<u32>>(&p), Loaded::Fresh));
        save(&p, &vec![1u32, 2, 3]).unwrap();
        match load::<Vec<u32>>(&p) {
            Loaded::Resumed(v) => assert_eq!(*v, vec![1, 2, 3]),
            other => panic!("{other:?}"),
        }
        fs::write(&p, b"{not json").unwrap();
        match load::<Vec<u32>>(&p) {
            Loaded::Corrupt { moved_to, .. } => {
                assert!(moved_to.exists());
                assert!(!p.exists());
                assert_eq!(fs::read(&moved_to).unwrap(), b"{not json");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn think_only_is_empty() {
        assert!(is_empty_reply("<think>hmm</think>\n  ", false));
        assert!(is_empty_reply("<think>still thinking", false));
        assert!(!is_empty_reply("<think>x</think>answer", false));
        assert!(!is_empty_reply("", true));
        assert_eq!(strip_think("a<think>b</think>c"), "ac");
    }

    #[test]
    fn sanitize_drops_dangling_calls() {
        let mut m = vec![
            Message::user("t"),
            Message::assistant("ok", vec![]),
            Message::assistant("", vec![ToolCall::new("x", json!({}))]),
        ];
        sanitize(&mut m);
        assert_eq!(m.len(), 2);
    }
}
