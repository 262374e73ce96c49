//! Deterministic artifact scorer: the 14 LRAB check kinds, score formula, failure modes, cell records.
