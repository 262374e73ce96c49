//! Token and call counts of an attempt: from our harness's event log (`lrab_records::EventLog`:
//! `model_call` and `tool_call` events) or, for other arms, from the normalizing proxy's
//! trajectory (`lrab_records::TrajectoryEntry`). Absent logs give empty columns, never zeros.

use std::path::Path;

/// Counts for the cells.csv columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub model_calls: Option<u64>,
    pub tool_calls: Option<u64>,
}

/// From the harness event log.
pub fn from_events(path: &Path) -> Option<Usage> {
    let log = lrab_records::read_events(path)?;
    let calls: Vec<_> = log.model_calls().collect();
    Some(Usage {
        prompt_tokens: Some(calls.iter().map(|c| c.prompt_tokens.unwrap_or(0)).sum()),
        completion_tokens: Some(calls.iter().map(|c| c.completion_tokens.unwrap_or(0)).sum()),
        model_calls: Some(calls.len() as u64),
        tool_calls: Some(log.tool_calls().count() as u64),
    })
}

/// From the proxy's trajectory; tool calls are not visible there.
pub fn from_proxy_log(path: &Path) -> Option<Usage> {
    let t = lrab_records::read_trajectory(path)?;
    Some(Usage {
        prompt_tokens: Some(t.iter().map(|e| e.prompt_tokens.unwrap_or(0)).sum()),
        completion_tokens: Some(t.iter().map(|e| e.completion_tokens.unwrap_or(0)).sum()),
        model_calls: Some(t.len() as u64),
        tool_calls: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_event_log() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.jsonl");
        std::fs::write(
            &p,
            concat!(
                "{\"kind\":\"run_start\"}\n",
                "{\"kind\":\"model_call\",\"prompt_tokens\":100,\"completion_tokens\":7}\n",
                "{\"kind\":\"tool_call\",\"name\":\"write_file\"}\n",
                "{\"kind\":\"model_call\",\"prompt_tokens\":150,\"completion_tokens\":null}\n",
                "torn line"
            ),
        )
        .unwrap();
        let u = from_events(&p).unwrap();
        assert_eq!(u.prompt_tokens, Some(250));
        assert_eq!(u.completion_tokens, Some(7));
        assert_eq!(u.model_calls, Some(2));
        assert_eq!(u.tool_calls, Some(1));
        assert!(from_events(&d.path().join("none")).is_none());
    }
}
