//! Tool results that echo the call. Some agents return a structured result that repeats the
//! request beside the outcome (Cline's `run_commands`: `[{"query": "<the command, maybe cut>",
//! "result": "", "success": true}]`). The repeated text is the model's own (a heredoc that
//! writes "4 failed, 2 passed" into a report), not what happened: a model reads the outcome
//! fields and skips the echo.

use serde_json::Value;
use std::borrow::Cow;

use crate::convo::Call;

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

/// Whether a result field only repeats one of the call's own string arguments (whole, or its
/// first line when the echo was cut).
fn is_echo(v: &str, calls: &[Call]) -> bool {
    let line = first_line(v);
    calls.iter().any(|c| match &c.args {
        Value::Object(m) => m.values().filter_map(Value::as_str).any(|a| {
            a.len() >= 2
                && (v == a || (line.len() >= 12 && v.contains('\n') && first_line(a) == line))
        }),
        _ => false,
    })
}

fn drop_echo(v: &mut Value, calls: &[Call]) -> bool {
    match v {
        Value::Object(m) => {
            let before = m.len();
            m.retain(|_, x| !x.as_str().is_some_and(|s| is_echo(s, calls)));
            let mut changed = m.len() != before;
            for x in m.values_mut() {
                changed |= drop_echo(x, calls);
            }
            changed
        }
        Value::Array(a) => a.iter_mut().fold(false, |acc, x| drop_echo(x, calls) | acc),
        _ => false,
    }
}

/// A JSON tool result without the fields that echo the call; any other text unchanged.
pub fn strip<'a>(text: &'a str, calls: &[Call]) -> Cow<'a, str> {
    let t = text.trim();
    if calls.is_empty() || !(t.starts_with('{') || t.starts_with('[')) {
        return Cow::Borrowed(text);
    }
    let Ok(mut v) = serde_json::from_str::<Value>(t) else {
        return Cow::Borrowed(text);
    };
    if drop_echo(&mut v, calls) {
        Cow::Owned(v.to_string())
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(cmd: &str) -> Vec<Call> {
        vec![Call {
            name: "run_commands".into(),
            args: json!({ "commands": cmd }),
        }]
    }

    #[test]
    fn the_echoed_command_is_not_the_outcome() {
        let cmd = "cat > 'bug_report.md' <<'EOF'\n# Bugs\nBaseline: 4 failed, 2 passed\nEOF";
        let result = "[{\"query\":\"cat > 'bug_report.md' <<'EOF'\\n# Bugs\\nBaseline: 4 failed ... [command truncated: 40 more chars]\",\"result\":\"\",\"success\":true}]";
        let got = strip(result, &run(cmd));
        assert_eq!(got, "[{\"result\":\"\",\"success\":true}]");
        assert!(!crate::feedback::classify(&got).error);
        assert!(
            crate::feedback::classify(result).error,
            "the echo alone reads as a failure"
        );
        // the same command failing keeps its outcome
        let failed =
            "[{\"query\":\"python3 -m pytest -q\",\"result\":\"1 failed\",\"success\":false}]";
        let got = strip(failed, &run("python3 -m pytest -q"));
        assert_eq!(got, "[{\"result\":\"1 failed\",\"success\":false}]");
    }

    #[test]
    fn other_results_are_untouched() {
        let calls = run("ls");
        for t in [
            "Wrote file successfully.",
            "{\"output\": \"a.md\"}",
            "[1, 2]",
            "{not json",
        ] {
            assert!(matches!(strip(t, &calls), Cow::Borrowed(_)), "{t}");
        }
        assert!(matches!(strip("{\"query\":\"ls\"}", &[]), Cow::Borrowed(_)));
    }
}
