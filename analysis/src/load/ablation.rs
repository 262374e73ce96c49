//! Published ablation files in their two repeat layouts:
//!
//! * long — `variant,task_id,total`, optionally `repeat` (one row per variant × task × repeat;
//!   without `repeat` the file is one repeat, numbered 1);
//! * wide — `task,<variant>_r1,<variant>_r2,…` (one row per task, one column per variant and
//!   repeat).
//!
//! The baseline is the variant named `baseline` or `baseline_…`; every other variant is compared
//! with it. Whether every task has every repeat is checked where the design is built
//! (`analysis::ablation`), so both layouts give the same message.

use super::table::Table;
use crate::error::{input, Error, Result};
use crate::model::{normalize_task, AblationFile};
use std::collections::BTreeMap;

/// Columns of the long layout.
pub const LONG_REQUIRED: &[&str] = &["variant", "task_id", "total"];

/// `<variant>_r<k>` → (variant, k).
pub(crate) fn wide_column(name: &str) -> Option<(&str, u32)> {
    let (v, k) = name.rsplit_once("_r")?;
    let k: u32 = k.parse().ok()?;
    (!v.is_empty() && k >= 1).then_some((v, k))
}

/// Whether the header is the wide layout: a `task` column and `<variant>_r<k>` columns for a
/// baseline and at least one other variant.
pub(crate) fn is_wide(t: &Table) -> bool {
    let variants: std::collections::BTreeSet<&str> = t
        .header
        .iter()
        .filter_map(|h| wide_column(h).map(|x| x.0))
        .collect();
    t.has(&["task"]) && variants.len() >= 2 && variants.iter().any(|v| is_baseline(v))
}

fn is_baseline(v: &str) -> bool {
    v == "baseline" || v.starts_with("baseline_")
}

fn baseline_of(
    path: &str,
    variants: &BTreeMap<String, BTreeMap<String, BTreeMap<u32, f64>>>,
) -> Result<String> {
    let names: Vec<&String> = variants.keys().collect();
    let bases: Vec<&&String> = names.iter().filter(|v| is_baseline(v)).collect();
    match bases.as_slice() {
        [b] => Ok((**b).clone()),
        [] => Err(Error::Design(format!(
            "{path}: no baseline variant (one named `baseline` or `baseline_…`) among: {}",
            names
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        many => Err(Error::Design(format!(
            "{path}: more than one baseline variant ({}); keep one per file",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

pub(crate) fn read_long(t: &Table) -> Result<AblationFile> {
    let mut variants: BTreeMap<String, BTreeMap<String, BTreeMap<u32, f64>>> = BTreeMap::new();
    let has_repeat = t.has(&["repeat"]);
    for i in 0..t.rows {
        let variant = t.req("variant", i)?.to_string();
        let task = normalize_task(t.req("task_id", i)?);
        let repeat = if has_repeat {
            u32::try_from(t.int("repeat", i)?)
                .map_err(|_| input!("{}: column `repeat`: too large", t.origin(i)))?
        } else {
            1
        };
        let score = t
            .score("total", i)?
            .ok_or_else(|| input!("{}: column `total` is empty", t.origin(i)))?;
        if variants
            .entry(variant.clone())
            .or_default()
            .entry(task.clone())
            .or_default()
            .insert(repeat, score)
            .is_some()
        {
            return Err(input!(
                "{}: duplicate row for variant `{variant}`, task `{task}`{}",
                t.origin(i),
                if has_repeat {
                    format!(", repeat {repeat}")
                } else {
                    String::new()
                }
            ));
        }
    }
    Ok(AblationFile {
        path: t.path.clone(),
        layout: "long".into(),
        baseline: baseline_of(&t.path, &variants)?,
        variants,
    })
}

pub(crate) fn read_wide(t: &Table) -> Result<AblationFile> {
    let mut variants: BTreeMap<String, BTreeMap<String, BTreeMap<u32, f64>>> = BTreeMap::new();
    let cols: Vec<(&String, &str, u32)> = t
        .header
        .iter()
        .filter_map(|h| wide_column(h).map(|(v, k)| (h, v, k)))
        .collect();
    let mut seen_tasks = BTreeMap::new();
    for i in 0..t.rows {
        let task = normalize_task(t.req("task", i)?);
        if let Some(first) = seen_tasks.insert(task.clone(), t.origin(i)) {
            return Err(input!(
                "{}: duplicate row for task `{task}`; first seen at {first}",
                t.origin(i)
            ));
        }
        for (col, variant, k) in &cols {
            let score = t.score(col, i)?.ok_or_else(|| {
                Error::Design(format!(
                    "{}: task `{task}` has no score in `{col}`: repeat {k} of variant \
                     `{variant}` is missing (every task needs every repeat for per-repeat deltas)",
                    t.origin(i)
                ))
            })?;
            variants
                .entry(variant.to_string())
                .or_default()
                .entry(task.clone())
                .or_default()
                .insert(*k, score);
        }
    }
    Ok(AblationFile {
        path: t.path.clone(),
        layout: "wide".into(),
        baseline: baseline_of(&t.path, &variants)?,
        variants,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn wide_columns() {
        assert_eq!(super::wide_column("baseline_r1"), Some(("baseline", 1)));
        assert_eq!(super::wide_column("text_only_r3"), Some(("text_only", 3)));
        assert_eq!(super::wide_column("task"), None);
        assert_eq!(super::wide_column("x_r0"), None);
        assert_eq!(super::wide_column("_r2"), None);
    }
}
