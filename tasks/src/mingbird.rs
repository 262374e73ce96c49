//! Importing upstream's task format: the Mingbird task JSONs (keys `id, domain, prompt,
//! plan_steps, fixtures, milestones, final_artifacts, …`; each check `{artifact, check,
//! …params}`) become task folders of a pack. Fixtures are looked up under the source folder,
//! its `fixtures/` and next to the JSON, and copied into `<pack>/fixtures/`. Upstream has no
//! reference solutions, so imported tasks have none; `expect.untouched` is written as 0 and
//! measured by the caller (scoring lives in lrab-scorer, which depends on this crate).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::spec::CheckSpec;
use crate::{fsutil, Expect, TaskError, TaskSpec};

/// Upstream keys we read or knowingly drop (anything else is reported as ignored).
const KNOWN: [&str; 16] = [
    "id",
    "tier",
    "domain",
    "title",
    "prompt",
    "required_plan_steps_min",
    "plan_steps",
    "fixtures",
    "milestones",
    "final_artifacts",
    "max_wall_minutes",
    "kill_at_pct",
    "resume_test",
    "judge",
    "rubric",
    "weights",
];

/// One task JSON converted and written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The task id (and folder name in the pack).
    pub id: String,
    /// Top-level keys of the JSON this importer does not know (dropped).
    pub ignored_keys: Vec<String>,
}

/// The task JSONs under `dir` (relative paths, sorted; files below `fixtures/` are inputs, not
/// tasks). An error names the folder when it is not one or holds no task JSON.
pub fn task_jsons(dir: &Path) -> Result<Vec<String>, TaskError> {
    if !dir.is_dir() {
        return Err(TaskError::Invalid(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    let jsons: Vec<String> = fsutil::walk_files(dir)?
        .into_iter()
        .filter(|rel| rel.ends_with(".json") && !rel.starts_with("fixtures/"))
        .collect();
    if jsons.is_empty() {
        return Err(TaskError::Invalid(format!(
            "no task JSON files under {}",
            dir.display()
        )));
    }
    Ok(jsons)
}

/// Converts the task JSON at `path` (below the source folder `root`) into `<out>/<id>/`
/// (`task.toml`, `prompt.md`) and copies its fixtures and seed files into the pack `out`. An
/// existing task folder is never overwritten. Errors name the key (`milestones[0]: kind: …`).
pub fn import_task(root: &Path, path: &Path, out: &Path) -> Result<Imported, TaskError> {
    let invalid = TaskError::Invalid;
    let text = std::fs::read_to_string(path).map_err(|e| TaskError::io(path, e))?;
    let j: Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
    let obj = j
        .as_object()
        .ok_or_else(|| invalid("top level is not an object".into()))?;
    let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let id = s("id").ok_or_else(|| invalid("id: missing".into()))?;
    if !fsutil::is_safe_relative(&id) || id.contains('/') {
        return Err(invalid(format!("id: '{id}' cannot be a folder name")));
    }
    let ignored_keys: Vec<String> = obj
        .keys()
        .filter(|k| !KNOWN.contains(&k.as_str()))
        .cloned()
        .collect();
    let domain = s("domain").ok_or_else(|| invalid("domain: missing".into()))?;
    let prompt = s("prompt").ok_or_else(|| invalid("prompt: missing".into()))?;
    let tier = match obj.get("tier").and_then(Value::as_u64) {
        Some(t) => u8::try_from(t).map_err(|_| invalid(format!("tier: {t} is out of range")))?,
        None => tier_of(&id, path)
            .ok_or_else(|| invalid(format!("tier: missing and not derivable from '{id}'")))?,
    };
    let plan_steps =
        strings(obj.get("plan_steps")).map_err(|e| invalid(format!("plan_steps: {e}")))?;
    let fixtures = strings(obj.get("fixtures")).map_err(|e| invalid(format!("fixtures: {e}")))?;
    let task_dir = out.join(&id);
    if task_dir.exists() {
        return Err(invalid(format!(
            "{} already exists; not overwriting",
            task_dir.display()
        )));
    }

    let json_dir = path.parent().unwrap_or(root);
    let mut inputs = Vec::new();
    for (i, f) in fixtures.iter().enumerate() {
        let rel = f
            .trim_start_matches("./")
            .trim_start_matches("fixtures/")
            .to_string();
        if !fsutil::is_safe_relative(&rel) {
            return Err(invalid(format!("fixtures[{i}]: unsafe path '{f}'")));
        }
        let src = find(root, json_dir, f).ok_or_else(|| {
            invalid(format!(
                "fixtures[{i}]: '{f}' not found under {}",
                root.display()
            ))
        })?;
        copy_fixture(&src, &out.join("fixtures").join(&rel))?;
        inputs.push(rel);
    }
    let mut groups = Vec::new();
    for key in ["milestones", "final_artifacts"] {
        let arr = obj
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| invalid(format!("{key}: missing or not a list")))?;
        let mut checks = Vec::new();
        for (i, c) in arr.iter().enumerate() {
            let spec = convert_check(c).map_err(|e| invalid(format!("{key}[{i}]: {e}")))?;
            if let Some(seed) = spec.check.seed_rel() {
                let src = find(root, json_dir, seed)
                    .ok_or_else(|| invalid(format!("{key}[{i}].seed_rel: '{seed}' not found")))?;
                copy_fixture(&src, &out.join(seed))?;
            }
            checks.push(spec);
        }
        groups.push(checks);
    }
    let finals = groups.pop().unwrap_or_default();
    let milestones = groups.pop().unwrap_or_default();
    let body = prompt_body(&prompt);
    let spec = TaskSpec {
        id: id.clone(),
        tier,
        domain: domain.clone(),
        title: s("title").unwrap_or(domain),
        budget_minutes: small(obj, "max_wall_minutes")
            .map_err(invalid)?
            .unwrap_or(60),
        inputs,
        plan_steps,
        kill_at_pct: small(obj, "kill_at_pct").map_err(invalid)?,
        generator: None,
        milestones,
        finals,
        reference: None,
        partial: None,
        expect: Expect {
            untouched: 0.0,
            partial: None,
        },
    };
    fsutil::write_file(&task_dir.join("prompt.md"), body.as_bytes())?;
    fsutil::write_file(
        &task_dir.join("task.toml"),
        crate::to_toml_string(&spec).as_bytes(),
    )?;
    Ok(Imported { id, ignored_keys })
}

/// One upstream check → our typed check (`check` → `kind`, params kept, validated).
fn convert_check(c: &Value) -> Result<CheckSpec, String> {
    let o = c.as_object().ok_or("not an object")?;
    let mut t = toml::Table::new();
    for (k, v) in o {
        let key = if k == "check" {
            "kind".to_string()
        } else {
            k.clone()
        };
        t.insert(
            key,
            json_to_toml(v).ok_or_else(|| format!("{k}: null is not representable"))?,
        );
    }
    crate::spec::parse_check_table(&t).map_err(|e| e.to_string())
}

fn json_to_toml(v: &Value) -> Option<toml::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(a.iter().map(json_to_toml).collect::<Option<_>>()?),
        Value::Object(o) => {
            let mut t = toml::Table::new();
            for (k, x) in o {
                t.insert(k.clone(), json_to_toml(x)?);
            }
            toml::Value::Table(t)
        }
    })
}

/// An optional non-negative integer key that must fit the target type.
fn small<T: TryFrom<u64>>(
    obj: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<T>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let n = v
                .as_u64()
                .ok_or_else(|| format!("{key}: expected a non-negative integer, found {v}"))?;
            T::try_from(n)
                .map(Some)
                .map_err(|_| format!("{key}: {n} is out of range"))
        }
    }
}

fn strings(v: Option<&Value>) -> Result<Vec<String>, String> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("[{i}] is not a string"))
            })
            .collect(),
        Some(_) => Err("not a list".into()),
    }
}

/// Upstream's tier split (docs/tasks.md): WF-01/02 → 1, WF-03..06 → 2, WF-07..15 → 3, LH → 4; else
/// from a `tierN_*` parent folder.
fn tier_of(id: &str, path: &Path) -> Option<u8> {
    let norm = id.replace('-', "").to_ascii_uppercase();
    if norm.starts_with("LH") || norm.starts_with("HLH") {
        return Some(4);
    }
    let num = norm
        .trim_start_matches("HWF")
        .trim_start_matches("WF")
        .parse::<u32>()
        .ok();
    if norm.starts_with("WF") || norm.starts_with("HWF") {
        return num.map(|n| match n {
            1..=2 => 1,
            3..=6 => 2,
            _ => 3,
        });
    }
    path.parent()?
        .file_name()?
        .to_str()?
        .strip_prefix("tier")?
        .chars()
        .next()?
        .to_digit(10)
        .map(|d| d as u8)
}

/// Upstream prompts embed the step list; our prompt.md holds only the body before it.
fn prompt_body(prompt: &str) -> String {
    let mut body = Vec::new();
    for line in prompt.lines() {
        if line.trim_start().starts_with("Required steps") {
            break;
        }
        body.push(line);
    }
    let mut s = body.join("\n").trim().to_string();
    if s.is_empty() {
        s = prompt.trim().to_string();
    }
    s.push('\n');
    s
}

fn find(root: &Path, json_dir: &Path, rel: &str) -> Option<PathBuf> {
    if !fsutil::is_safe_relative(rel) {
        return None;
    }
    [
        root.join(rel),
        root.join("fixtures").join(rel),
        json_dir.join(rel),
    ]
    .into_iter()
    .find(|p| p.exists())
}

fn copy_fixture(src: &Path, dst: &Path) -> Result<(), TaskError> {
    if dst.exists() {
        return Ok(());
    }
    fsutil::copy_tree(src, dst)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_and_prompt_body() {
        let p = Path::new("x/tier3_workflow/WF-07.json");
        assert_eq!(tier_of("WF-02", p), Some(1));
        assert_eq!(tier_of("WF-05", p), Some(2));
        assert_eq!(tier_of("WF-15", p), Some(3));
        assert_eq!(tier_of("LH-03", p), Some(4));
        assert_eq!(tier_of("ZZ", p), Some(3));
        assert_eq!(
            prompt_body("Head\n\nDo X.\nRequired steps (plan at least 2):\n1. a\n"),
            "Head\n\nDo X.\n"
        );
    }
}
