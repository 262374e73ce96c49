//! Rings 1 and 5 as helpers the tool layer calls.

use crate::{Ring, Verdict};
use std::path::Path;

/// Tools a sub-agent may keep: reading and writing inside the workdir. No shell (a sub-agent's
/// commands are not reviewed), no deletes, no further dispatch (depth lock), no finish.
pub const SUB_AGENT_TOOLS: &[&str] = &[
    "read_file",
    "write_file",
    "edit_file",
    "append_file",
    "list_dir",
    "search_files",
    "todo",
];

/// Ring 1: narrow a tool list for a sub-agent at `depth` (1 = first level). Returns the kept
/// tools in their original order; at depth > 1 nothing that could dispatch is kept either.
pub fn narrow_tools<T: Clone>(tools: &[T], name_of: impl Fn(&T) -> &str, depth: u32) -> Vec<T> {
    if depth == 0 {
        return tools.to_vec();
    }
    tools
        .iter()
        .filter(|t| SUB_AGENT_TOOLS.contains(&name_of(t)))
        .cloned()
        .collect()
}

/// Ring 1: the verdict for a sub-agent calling a tool it does not have.
pub fn sub_agent_call(tool: &str, depth: u32) -> Verdict {
    if depth == 0 || SUB_AGENT_TOOLS.contains(&tool) {
        Verdict::Allow
    } else {
        Verdict::Deny {
            ring: Ring::SubAgent,
            reason: format!("sub-agents cannot use '{tool}'"),
            alternative: Some("report back to the main agent, which decides".into()),
        }
    }
}

/// Files at least this large are "large" for the overwrite guard.
pub const LARGE_BYTES: u64 = 1024;

/// Ring 5: refuse replacing a large existing file with much smaller content unless the caller
/// says it means it (`replace`), because that is how work silently disappears.
pub fn overwrite_guard(path: &Path, new_len: u64, replace: bool) -> Verdict {
    let Ok(m) = std::fs::metadata(path) else {
        return Verdict::Allow;
    };
    if !m.is_file() || replace || m.len() < LARGE_BYTES || new_len * 2 >= m.len() {
        return Verdict::Allow;
    }
    Verdict::Deny {
        ring: Ring::Reversibility,
        reason: format!("{} has {} bytes and would be replaced by {new_len}", path.display(), m.len()),
        alternative: Some("edit the file in place, write a new file, or pass replace=true if replacing it is intended".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_keeps_file_tools_only() {
        let tools = vec![
            "read_file",
            "run_shell",
            "write_file",
            "delete_file",
            "finish",
            "dispatch",
            "list_dir",
        ];
        assert_eq!(
            narrow_tools(&tools, |t| t, 1),
            vec!["read_file", "write_file", "list_dir"]
        );
        assert_eq!(narrow_tools(&tools, |t| t, 0), tools);
        assert!(matches!(
            sub_agent_call("run_shell", 1),
            Verdict::Deny {
                ring: Ring::SubAgent,
                ..
            }
        ));
        assert!(sub_agent_call("read_file", 2).is_allow());
    }

    #[test]
    fn overwrite_guard_and_trash() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("big.csv");
        std::fs::write(&f, "x".repeat(2000)).unwrap();
        assert!(matches!(
            overwrite_guard(&f, 10, false),
            Verdict::Deny {
                ring: Ring::Reversibility,
                ..
            }
        ));
        assert!(overwrite_guard(&f, 10, true).is_allow());
        assert!(overwrite_guard(&f, 1500, false).is_allow());
        assert!(overwrite_guard(&d.path().join("new"), 1, false).is_allow());
    }
}
