//! False-completion rejection: a text-only reply that *claims* the work is done is routed
//! through the finish gate instead of being believed; a text-only reply that claims nothing is
//! answered with the next executable action. The reply is read without its reasoning (the
//! same wrapper rules as the format rescue): "the task is complete" drafted in a think block is
//! not a claim, and a claim after an orphan `</think>` or in harmony's final channel is.

use super::format_rescue::strip_reasoning;
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
    claim_re().is_match(strip_reasoning(text).trim())
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

    #[test]
    fn reasoning_is_neither_claim_nor_denial() {
        assert!(!claims_completion(
            "<think>Once I write it the task is complete.</think>First I will read the data."
        ));
        assert!(!claims_completion(
            "I have finished the draft in my head.\n</think>\nNext: write the report."
        ));
        assert!(!claims_completion(
            "<|channel|>analysis<|message|>All steps are done? No.<|end|><|start|>assistant<|channel|>final<|message|>Reading the file next.<|return|>"
        ));
        assert!(claims_completion(
            "<seed:think>check</seed:think>All the files have been created."
        ));
        assert!(claims_completion(
            "<|channel|>analysis<|message|>ok<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>"
        ));
        assert!(claims_completion("[THINK]hmm[/THINK]The task is complete."));
    }
}
