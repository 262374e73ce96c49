//! `proxy.jsonl`: the trajectory of an arm as the normalizing proxy saw it, one line per model
//! request (docs/runner.md, *Proxy*). The runner reads token counts of arms other than ours
//! from it.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One model request through the proxy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryEntry {
    /// Schema version of the line.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Request path (`/api/chat`, `/v1/chat/completions`).
    #[serde(default)]
    pub path: String,
    /// Model named in the request.
    #[serde(default)]
    pub model: String,
    /// HTTP status of the backend's answer.
    #[serde(default)]
    pub status: u16,
    /// The answer was streamed.
    #[serde(default)]
    pub stream: bool,
    /// An OpenAI request was rewritten onto the native API (to pin the context length).
    #[serde(default)]
    pub rewritten_to_native: bool,
    /// Prompt tokens the backend counted.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens the backend counted.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
}

/// The entries of a proxy log (a torn last line is skipped); `None` when there is no log.
pub fn read_trajectory(path: &Path) -> Option<Vec<TrajectoryEntry>> {
    crate::jsonl::read_jsonl_lenient(path).map(|(v, _)| v)
}

#[cfg(test)]
mod tests {
    #[test]
    fn legacy_lines_load() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("proxy.jsonl");
        std::fs::write(
            &p,
            "{\"path\":\"/api/chat\",\"model\":\"m\",\"status\":200,\"stream\":true,\"rewritten_to_native\":false,\"prompt_tokens\":12,\"completion_tokens\":3}\n{\"path\":",
        )
        .unwrap();
        let v = super::read_trajectory(&p).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].schema_version, 1);
        assert_eq!(v[0].prompt_tokens, Some(12));
    }
}
