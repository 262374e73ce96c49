//! Helpers for the per-dialect unit tests: read a reply against the harness's own tools.

use super::{Catalog, Rescue};
use crate::table;
use serde_json::{json, Value};

pub(crate) fn read(text: &str) -> Rescue {
    let specs = table::specs_for(&[table::all_but_web(), table::web()].concat());
    Catalog::new(&specs).rescue(text)
}

/// The calls as `{"name", "arguments"}` values.
pub(crate) fn calls(text: &str) -> Vec<Value> {
    read(text)
        .calls
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect()
}

/// Assert the reply gives exactly these calls (name, arguments) and that the first came from
/// `dialect`.
pub(crate) fn expect(text: &str, dialect: &str, want: Value) {
    let r = read(text);
    let got: Vec<Value> = r
        .calls
        .iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    assert_eq!(Value::Array(got), want, "reply: {text:?}");
    assert_eq!(
        r.dialects.first().copied(),
        Some(dialect),
        "reply: {text:?}"
    );
}

pub(crate) fn none(text: &str) {
    let got = calls(text);
    assert!(got.is_empty(), "{text:?} gave {got:?}");
}
