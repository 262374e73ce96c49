//! `lh02`: the large process corpus of LH-02 (`process_corpus.txt`).
//!
//! 6000 original lines `[topic] w1 .. wn refNNNNN.` — 10 topics cycled, 8..16 words drawn from a
//! 20-word weighted vocabulary, `refNNNNN` the 1-based original line number — then 5 exact
//! copies of earlier lines inserted so that they sit at fixed 1-based line numbers
//! [`DUPLICATE_LINES`] of the final 6005-line file. The default seed gives ≈ 600 KB.
//!
//! Counting rule (upstream's): a line's words are its whitespace-separated tokens minus the
//! first (`[topic]`) and the last (`refNNNNN.`); totals count every line, duplicates included.
//!
//! Planted properties, enforced by re-drawing: the top-8 counts are pairwise distinct and the
//! 8th beats the 9th by a wide margin, so "the top 8" is a well-defined set with exact counts.

use std::collections::BTreeMap;

use crate::rng::SeededRng;
use crate::text::thousands;
use crate::{GenError, Generated};

/// Default seed of LH-02.
pub const DEFAULT_SEED: u64 = 4202;
/// The generated file.
pub const FILE: &str = "process_corpus.txt";
/// Original (distinct) lines.
pub const ORIGINAL_LINES: usize = 6000;
/// 1-based line numbers, in the final file, of the inserted duplicate copies.
pub const DUPLICATE_LINES: [usize; 5] = [137, 1954, 3707, 5222, 5888];
/// Topics, cycled in this order.
pub const TOPICS: [&str; 10] = [
    "aging",
    "creep",
    "fatigue",
    "corrosion",
    "welding",
    "casting",
    "sintering",
    "coating",
    "forging",
    "quenching",
];
/// Vocabulary with integer weights. The first eight are the intended top 8 (weights within
/// 7 % of each other so ranks are close; the seed decides their order), the rest trail far
/// behind. Word lengths are chosen so the default corpus is about 600 KB.
pub const VOCABULARY: [(&str, u64); 20] = [
    ("grain", 100),
    ("stress", 99),
    ("the", 98),
    ("phase", 97),
    ("sample", 96),
    ("strain", 95),
    ("rate", 94),
    ("load", 93),
    ("hardness", 62),
    ("annealing", 60),
    ("fraction", 58),
    ("interface", 56),
    ("texture", 54),
    ("crack", 52),
    ("matrix", 50),
    ("alloy", 48),
    ("solute", 46),
    ("defect", 44),
    ("vacancy", 42),
    ("lattice", 40),
];
const TOP: usize = 8;
/// Minimum count gap between the 8th and the 9th word.
const TOP_GAP: u64 = 300;
const MAX_ATTEMPTS: u32 = 1000;

struct Draw {
    lines: Vec<String>,
    /// (final 1-based line number of the copy, 1-based final line number of its original)
    duplicates: Vec<(usize, usize)>,
    counts: [u64; 20],
    total: u64,
    total_unique: u64,
}

fn draw(rng: &mut SeededRng) -> Draw {
    let weights: Vec<u64> = VOCABULARY.iter().map(|&(_, w)| w).collect();
    let weight_sum: u64 = weights.iter().sum();
    let mut originals: Vec<(String, Vec<usize>)> = Vec::with_capacity(ORIGINAL_LINES);
    for i in 0..ORIGINAL_LINES {
        let n = rng.int_in(8, 16) as usize;
        let words: Vec<usize> = (0..n).map(|_| rng.weighted(&weights, weight_sum)).collect();
        let body: Vec<&str> = words.iter().map(|&w| VOCABULARY[w].0).collect();
        let line = format!(
            "[{}] {} ref{:05}.",
            TOPICS[i % TOPICS.len()],
            body.join(" "),
            i + 1
        );
        originals.push((line, words));
    }
    let mut counts = [0u64; 20];
    let mut total_unique = 0u64;
    for (_, words) in &originals {
        for &w in words {
            counts[w] += 1;
        }
        total_unique += words.len() as u64;
    }
    let mut total = total_unique;
    // Interleave: the copy for final line p duplicates a distinct, earlier original line.
    let mut lines = Vec::with_capacity(ORIGINAL_LINES + DUPLICATE_LINES.len());
    let mut final_no_of_original = Vec::with_capacity(ORIGINAL_LINES);
    let mut used: Vec<usize> = Vec::new();
    let mut duplicates = Vec::new();
    let mut next_original = 0usize;
    while next_original < ORIGINAL_LINES || lines.len() < ORIGINAL_LINES + DUPLICATE_LINES.len() {
        let final_no = lines.len() + 1;
        if DUPLICATE_LINES.contains(&final_no) {
            let src = loop {
                let s = rng.below(next_original as u64) as usize;
                if !used.contains(&s) {
                    break s;
                }
            };
            used.push(src);
            lines.push(originals[src].0.clone());
            duplicates.push((final_no, final_no_of_original[src]));
            for &w in &originals[src].1 {
                counts[w] += 1;
            }
            total += originals[src].1.len() as u64;
        } else {
            lines.push(originals[next_original].0.clone());
            final_no_of_original.push(final_no);
            next_original += 1;
        }
    }
    Draw {
        lines,
        duplicates,
        counts,
        total,
        total_unique,
    }
}

/// Word indices sorted by count, descending (ties by vocabulary order, never reached for the
/// top 9 of a valid draw).
fn ranked(counts: &[u64; 20]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..counts.len()).collect();
    idx.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
    idx
}

fn valid(d: &Draw) -> bool {
    let r = ranked(&d.counts);
    let distinct = (0..TOP).all(|k| d.counts[r[k]] > d.counts[r[k + 1]]);
    distinct && d.counts[r[TOP - 1]] >= d.counts[r[TOP]] + TOP_GAP
}

fn truths(d: &Draw) -> BTreeMap<String, Vec<String>> {
    let mut truth = BTreeMap::new();
    let r = ranked(&d.counts);
    for (k, &w) in r.iter().take(TOP).enumerate() {
        let c = d.counts[w] as i64;
        truth.insert(
            format!("top_word_{}", k + 1),
            vec![VOCABULARY[w].0.to_string()],
        );
        let mut variants = vec![c.to_string()];
        if c >= 1000 {
            variants.push(thousands(c));
        }
        truth.insert(format!("top_count_{}", k + 1), variants);
    }
    let total = d.total as i64;
    truth.insert(
        "total_words".into(),
        vec![total.to_string(), format!("{total}.0"), thousands(total)],
    );
    let unique = d.total_unique as i64;
    truth.insert(
        "total_words_unique_lines".into(),
        vec![unique.to_string(), thousands(unique)],
    );
    truth.insert("line_count".into(), vec![d.lines.len().to_string()]);
    truth.insert("unique_line_count".into(), vec![ORIGINAL_LINES.to_string()]);
    truth.insert(
        "duplicate_count".into(),
        vec![d.duplicates.len().to_string()],
    );
    let positions: Vec<String> = d.duplicates.iter().map(|(p, _)| p.to_string()).collect();
    truth.insert(
        "duplicate_lines".into(),
        vec![positions.join(", "), positions.join(",")],
    );
    for (k, (p, orig)) in d.duplicates.iter().enumerate() {
        truth.insert(format!("duplicate_line_{}", k + 1), vec![p.to_string()]);
        truth.insert(
            format!("duplicate_source_{}", k + 1),
            vec![orig.to_string()],
        );
    }
    truth.insert("topic_count".into(), vec![TOPICS.len().to_string()]);
    truth
}

/// Generates LH-02's input for `seed`.
pub fn generate(seed: u64) -> Result<Generated, GenError> {
    let mut rng = SeededRng::new(seed);
    for _ in 0..MAX_ATTEMPTS {
        let d = draw(&mut rng);
        if valid(&d) {
            let mut text = d.lines.join("\n");
            text.push('\n');
            let mut files = BTreeMap::new();
            files.insert(FILE.to_string(), text.into_bytes());
            return Ok(Generated {
                files,
                truth: truths(&d),
            });
        }
    }
    Err(GenError::Exhausted {
        name: "lh02",
        seed,
        attempts: MAX_ATTEMPTS,
    })
}
