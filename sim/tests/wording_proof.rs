//! Wording-proof feedback: every message of a group of the paraphrase corpus (written
//! independently of the simulator: originals from every arm we ship, and paraphrases of them)
//! is read the same way, and groups whose meanings must be told apart are told apart.

use std::collections::BTreeMap;

use lrab_sim::{read_feedback, Meaning};
use serde::Deserialize;

#[derive(Deserialize)]
struct Corpus {
    group: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    id: String,
    meaning: String,
    #[serde(default)]
    tool: String,
    #[allow(dead_code)]
    origin: String,
    messages: Vec<String>,
}

fn label(m: &str) -> Meaning {
    match m {
        "success" => Meaning::Success,
        "success_noop" => Meaning::SuccessNoop,
        "failure_precise" => Meaning::FailurePrecise,
        "failure_generic" => Meaning::FailureGeneric,
        "refused" => Meaning::Refused,
        "nudge_continue" => Meaning::NudgeContinue,
        "finish_rejected_precise" => Meaning::FinishRejectedPrecise,
        "finish_rejected_generic" => Meaning::FinishRejectedGeneric,
        other => panic!("corpus: unknown meaning `{other}`"),
    }
}

fn corpus() -> Corpus {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/feedback_paraphrases.toml"
    );
    let text = std::fs::read_to_string(path).expect("the paraphrase corpus exists");
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Pairs of meanings a model must not confuse.
const APART: [(&str, &str); 6] = [
    ("failure_precise", "failure_generic"),
    ("success", "failure_precise"),
    ("success", "failure_generic"),
    ("success_noop", "success"),
    ("finish_rejected_precise", "finish_rejected_generic"),
    ("success", "refused"),
];

#[test]
fn every_group_reads_the_same_and_different_meanings_stay_apart() {
    let c = corpus();
    assert!(c.group.len() >= 20, "corpus too small");
    let mut problems = Vec::new();
    let mut reading_of: BTreeMap<&str, Vec<(&str, Meaning)>> = BTreeMap::new();
    for g in &c.group {
        let readings: Vec<Meaning> = g
            .messages
            .iter()
            .map(|m| read_feedback(m, &g.tool))
            .collect();
        let first = readings[0];
        for (m, r) in g.messages.iter().zip(&readings) {
            if *r != first {
                problems.push(format!(
                    "{}: {:?} vs {:?} for {:?}",
                    g.id,
                    r,
                    first,
                    m.chars().take(120).collect::<String>()
                ));
            }
        }
        if first != label(&g.meaning) {
            problems.push(format!(
                "{}: read as {first:?}, labelled {}",
                g.id, g.meaning
            ));
        }
        reading_of
            .entry(g.meaning.as_str())
            .or_default()
            .push((g.id.as_str(), first));
    }
    for (a, b) in APART {
        for (ga, ra) in reading_of.get(a).into_iter().flatten() {
            for (gb, rb) in reading_of.get(b).into_iter().flatten() {
                if ra == rb {
                    problems.push(format!("{ga} ({a}) and {gb} ({b}) both read as {ra:?}"));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
