//! Truth placeholders: `"{{truth:KEY}}"` in a check's string list expands to the generator's
//! variants for KEY, so generated tasks' checks follow the data for every seed.

use std::collections::BTreeMap;

use crate::spec::CheckSpec;
use crate::MissingTruth;

/// The key of a placeholder element, if `s` is exactly `{{truth:KEY}}`.
pub fn placeholder_key(s: &str) -> Option<&str> {
    s.strip_prefix("{{truth:")?
        .strip_suffix("}}")
        .map(str::trim)
}

/// Every placeholder key used by the checks, with the field where it appears.
pub fn placeholders(checks: &[CheckSpec], group: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, c) in checks.iter().enumerate() {
        for list in c.check.string_lists() {
            for s in list {
                if let Some(k) = placeholder_key(s) {
                    out.push((format!("{group}[{i}]"), k.to_string()));
                }
            }
        }
    }
    out
}

/// Expands placeholders in place; fails on the first key missing from `truth`.
pub fn expand(
    checks: &mut [CheckSpec],
    truth: &BTreeMap<String, Vec<String>>,
) -> Result<(), MissingTruth> {
    for c in checks.iter_mut() {
        for list in c.check.string_lists_mut() {
            let mut out = Vec::with_capacity(list.len());
            for s in list.iter() {
                match placeholder_key(s) {
                    Some(k) => match truth.get(k) {
                        Some(vs) => out.extend(vs.iter().cloned()),
                        None => return Err(MissingTruth(k.to_string())),
                    },
                    None => out.push(s.clone()),
                }
            }
            *list = out;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Check;

    #[test]
    fn expands_into_all_variants() {
        let mut checks = vec![CheckSpec {
            artifact: "a.md".into(),
            check: Check::ContainsAny {
                any_of: vec!["x".into(), "{{truth:peak}}".into()],
            },
        }];
        let mut truth = BTreeMap::new();
        truth.insert(
            "peak".to_string(),
            vec!["1263.1".to_string(), "1263".to_string()],
        );
        expand(&mut checks, &truth).unwrap();
        assert_eq!(
            checks[0].check,
            Check::ContainsAny {
                any_of: vec!["x".into(), "1263.1".into(), "1263".into()]
            }
        );
        let mut again = vec![CheckSpec {
            artifact: "a".into(),
            check: Check::ContainsOrdered {
                ordered: vec!["{{truth:nope}}".into()],
            },
        }];
        assert_eq!(
            expand(&mut again, &truth).unwrap_err(),
            MissingTruth("nope".into())
        );
    }
}
