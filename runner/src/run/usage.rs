//! Token and call counts of an attempt: from our harness's event log
//! (`<workdir>/.lrab/events.jsonl`: `model_call` and `tool_call` events) or, for other arms,
//! from the normalizing proxy's per-request log. Absent logs give empty columns, never zeros.

use std::path::Path;

use serde_json::Value;

/// Counts for the cells.csv columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub model_calls: Option<u64>,
    pub tool_calls: Option<u64>,
}

fn lines(path: &Path) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect(),
    )
}

/// From the harness event log.
pub fn from_events(path: &Path) -> Option<Usage> {
    let evs = lines(path)?;
    let mut u = Usage {
        prompt_tokens: Some(0),
        completion_tokens: Some(0),
        model_calls: Some(0),
        tool_calls: Some(0),
    };
    for e in &evs {
        match e["kind"].as_str() {
            Some("model_call") => {
                *u.model_calls.as_mut().unwrap() += 1;
                *u.prompt_tokens.as_mut().unwrap() += e["prompt_tokens"].as_u64().unwrap_or(0);
                *u.completion_tokens.as_mut().unwrap() +=
                    e["completion_tokens"].as_u64().unwrap_or(0);
            }
            Some("tool_call") => *u.tool_calls.as_mut().unwrap() += 1,
            _ => {}
        }
    }
    Some(u)
}

/// From the proxy log (one JSON object per request with `prompt_tokens`,
/// `completion_tokens`); tool calls are not visible there.
pub fn from_proxy_log(path: &Path) -> Option<Usage> {
    let evs = lines(path)?;
    let mut u = Usage {
        prompt_tokens: Some(0),
        completion_tokens: Some(0),
        model_calls: Some(evs.len() as u64),
        tool_calls: None,
    };
    for e in &evs {
        *u.prompt_tokens.as_mut().unwrap() += e["prompt_tokens"].as_u64().unwrap_or(0);
        *u.completion_tokens.as_mut().unwrap() += e["completion_tokens"].as_u64().unwrap_or(0);
    }
    Some(u)
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
