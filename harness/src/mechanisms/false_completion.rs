//! False-completion rejection: a text-only reply that *claims* the work is done is routed
//! through the finish gate instead of being believed; a text-only reply that claims nothing is
//! answered with the next executable action.

use regex::Regex;
use std::sync::OnceLock;

fn claim_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)(task (is )?(now )?(complete|completed|done|finished)|all (the )?(steps|tasks|files|deliverables) (are |have been )?(now )?(done|complete|completed|created|written|finished)|i have (now )?(completed|finished|created|written|implemented|fixed|done)|i've (completed|finished|created|written)|everything (is|has been) (done|complete|completed)|work is (done|complete)|successfully (completed|created|implemented)|===== ?task complete|^done\.?$|✅)")
            .expect("static regex")
    })
}

/// The answer to a text-only reply that claims nothing: act.
pub fn text_only_nudge(next: &str) -> String {
    format!(
        "Reply with a tool call, not text: nothing happens until a tool runs. Next action: {next}"
    )
}

/// Whether a reply claims the task is finished.
pub fn claims_completion(text: &str) -> bool {
    claim_re().is_match(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_completion_claims() {
        assert!(claims_completion(
            "I have created all the files. The task is complete."
        ));
        assert!(claims_completion("All steps are done."));
        assert!(claims_completion("Done."));
        assert!(claims_completion("✅ review_report.md written"));
        assert!(!claims_completion(
            "First I will read the data file and then write the report."
        ));
        assert!(!claims_completion("Here is my plan: 1. read 2. write"));
    }
}
