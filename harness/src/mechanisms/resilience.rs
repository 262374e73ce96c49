//! Resilience: a checkpoint after every turn (a line appended to its journal, see
//! `agent::state_journal`) and resume on relaunch (a corrupt checkpoint is set aside, never
//! trusted); a record in the checkpoint before every call that
//! changes the workdir, so a call cut off by a kill is neither lost nor repeated after the
//! resume; think-only replies count as empty; replies the server lost get the feedback of
//! [`super::reply_failures`].

use crate::messages::{Message, Role, ToolCall};
use crate::state_dir::io_err;
use lrab_safety::Beneath;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// The per-reply output cap.
pub const OUTPUT_CAP: u32 = 8192;

/// Save `state` as `name` beneath the state folder's handle, atomically (a killed harness
/// leaves the previous file or this one). Not fsynced: a machine crash costs at most the
/// latest version.
pub fn save<T: Serialize>(dir: &Beneath, name: &str, state: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(state).map_err(std::io::Error::other)?;
    dir.write(name, &bytes).map(|_| ()).map_err(io_err)
}

/// Files larger than this are compared by size and modification time instead of content.
pub const PROBE_BYTES: u64 = 8 << 20;

/// What the file a call changes looked like just before the call ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileProbe {
    pub path: String,
    pub exists: bool,
    pub len: u64,
    /// sha256 of the content (stable across builds), or `len:mtime` for large files.
    pub digest: String,
}

/// Probe a file (`rel` is the workdir-relative name the call used).
pub fn probe(abs: &Path, rel: &str) -> FileProbe {
    let md = fs::metadata(abs).ok().filter(|m| m.is_file());
    let (exists, len) = md.as_ref().map_or((false, 0), |m| (true, m.len()));
    let digest = match &md {
        None => String::new(),
        Some(m) if m.len() > PROBE_BYTES => {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{len}:{t}")
        }
        Some(_) => fs::read(abs)
            .map(|b| lrab_util::sha256_hex(&b))
            .unwrap_or_default(),
    };
    FileProbe {
        path: rel.to_string(),
        exists,
        len,
        digest,
    }
}

/// A call recorded in the checkpoint just before it ran (cleared when it returns).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inflight {
    pub turn: u32,
    /// Its position among the calls of its reply.
    pub index: usize,
    pub call: ToolCall,
    /// The file it changes, as it was before (file tools).
    pub target: Option<FileProbe>,
    /// The call is a file tool (its effect can be read from the file).
    pub file_tool: bool,
}

/// What became of a recorded call whose run was cut off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Its file changed since the record: the call took effect; it is not run again.
    TookEffect,
    /// Its file is as it was: the call never took effect; it is run now, once.
    NotYet,
    /// A command: its effect cannot be read; it is not run again, the model is told.
    Unknown,
}

/// Decide from the record and the file as it is now.
pub fn resolve(rec: &Inflight, now: Option<&FileProbe>) -> Resolution {
    if !rec.file_tool {
        return Resolution::Unknown;
    }
    match (&rec.target, now) {
        (Some(before), Some(now)) if before != now => Resolution::TookEffect,
        _ => Resolution::NotYet,
    }
}

/// The result given to a call that took effect before the interruption.
pub fn took_effect_text(rec: &Inflight, now: Option<&FileProbe>) -> String {
    let path = rec.target.as_ref().map_or("the file", |p| p.path.as_str());
    let state = match now {
        Some(p) if p.exists => format!("it is now {} bytes", p.len),
        _ => "it no longer exists".to_string(),
    };
    format!("{} completed before the run was interrupted: {path} changed ({state}), so the call took effect and is not run again.", rec.call.name)
}

/// The result given to a command cut off by the interruption.
pub fn interrupted_command_text() -> String {
    "interrupted: the run was stopped while this command ran, so it may have run partly or fully; it is not run again. Check its effect (list_dir, read_file) before running it again.".to_string()
}

/// The result given to a call of the same reply that had not started.
pub fn not_started_text() -> String {
    "not run: the run was interrupted before this call started. Call it again if it is still needed.".to_string()
}

/// A reply with no call and no text outside its reasoning (every wrapper the format rescue
/// knows: `<think>`, an orphan `</think>`, `<thinking>`, `<seed:think>`, harmony analysis) is
/// empty.
pub fn is_empty_reply(content: &str, has_calls: bool) -> bool {
    !has_calls
        && super::format_rescue::strip_reasoning(content)
            .trim()
            .is_empty()
}

/// The first message after a resume.
pub fn resume_nudge(next: &str) -> String {
    format!("[The run was interrupted and has been resumed; files you wrote are still there.] Continue where you left off. Next action: {next}")
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
    fn atomic_save_never_follows_a_planted_symlink() {
        let d = tempfile::tempdir().unwrap();
        let b = Beneath::open(d.path()).unwrap();
        let p = d.path().join("report.json");
        save(&b, "report.json", &vec![1u32, 2, 3]).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"[1,2,3]");
        // a symlink planted under the file's name is neither followed nor replaced
        fs::remove_file(&p).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("bashrc");
        fs::write(&secret, b"keep").unwrap();
        std::os::unix::fs::symlink(&secret, &p).unwrap();
        assert!(save(&b, "report.json", &vec![4u32]).is_err());
        assert_eq!(fs::read(&secret).unwrap(), b"keep");
    }

    #[test]
    fn think_only_is_empty() {
        assert!(is_empty_reply("<think>hmm</think>\n  ", false));
        assert!(is_empty_reply("<think>still thinking", false));
        assert!(!is_empty_reply("<think>x</think>answer", false));
        assert!(!is_empty_reply("", true));
        // the template opened the block: only its end is in the reply
        assert!(is_empty_reply(
            "reasoning the template opened</think>\n",
            false
        ));
        assert!(is_empty_reply("<thinking>plan</thinking>", false));
    }

    #[test]
    fn a_cut_off_call_is_resolved_from_its_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("notes.md");
        fs::write(&f, "part 1\n").unwrap();
        let rec = Inflight {
            turn: 3,
            index: 0,
            call: ToolCall::new(
                "append_file",
                json!({"path": "notes.md", "content": "part 2"}),
            ),
            target: Some(probe(&f, "notes.md")),
            file_tool: true,
        };
        assert_eq!(rec.target.as_ref().unwrap().digest.len(), 64);
        assert_eq!(
            resolve(&rec, Some(&probe(&f, "notes.md"))),
            Resolution::NotYet
        );
        fs::write(&f, "part 1\npart 2").unwrap();
        let now = probe(&f, "notes.md");
        assert_eq!(resolve(&rec, Some(&now)), Resolution::TookEffect);
        assert!(
            took_effect_text(&rec, Some(&now)).contains("notes.md changed (it is now 13 bytes)")
        );
        // a file the call created, or deleted, counts as changed too
        let new = Inflight {
            target: Some(probe(&d.path().join("new.md"), "new.md")),
            ..rec.clone()
        };
        assert!(!new.target.as_ref().unwrap().exists);
        fs::write(d.path().join("new.md"), "").unwrap();
        assert_eq!(
            resolve(&new, Some(&probe(&d.path().join("new.md"), "new.md"))),
            Resolution::TookEffect
        );
        let cmd = Inflight {
            file_tool: false,
            target: None,
            ..rec
        };
        assert_eq!(resolve(&cmd, None), Resolution::Unknown);
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
