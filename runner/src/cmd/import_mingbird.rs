//! `lrab tasks import-mingbird <dir> --out PACKDIR`: converts upstream task JSONs (keys `id,
//! domain, prompt, plan_steps, fixtures, milestones, final_artifacts, …`; each check
//! `{artifact, check, …params}`) into our pack format. Fixtures are looked up under `<dir>`,
//! `<dir>/fixtures` and next to the JSON, and copied into `PACKDIR/fixtures/`. The untouched
//! floor is measured (materialize + score) and written as `expect.untouched`. Upstream has no
//! reference solutions, so imported tasks have none.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use lrab_tasks::{fsutil, spec::CheckSpec, Expect, Pack, TaskSpec};
use serde_json::Value;

use super::Exit;

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

pub fn run(dir: &Path, out: &Path) -> Result<Exit> {
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    let mut jsons = Vec::new();
    for rel in fsutil::walk_files(dir)? {
        if rel.ends_with(".json") && !rel.starts_with("fixtures/") {
            jsons.push(rel);
        }
    }
    if jsons.is_empty() {
        bail!("no task JSON files under {}", dir.display());
    }
    let mut errors = Vec::new();
    let mut imported = Vec::new();
    for rel in &jsons {
        let path = dir.join(rel);
        match import_one(dir, &path, out) {
            Ok(id) => imported.push(id),
            Err(e) => errors.push(format!("{}: {e:#}", path.display())),
        }
    }
    // Measure each floor now that all fixtures are in place.
    let (pack, problems) = Pack::load_lenient(out);
    for p in &problems {
        errors.push(format!("imported task invalid: {p}"));
    }
    let tmp = tempfile::tempdir()?;
    for id in &imported {
        let Some(task) = pack.get(id) else { continue };
        let wd = tmp.path().join(id);
        let floor = lrab_tasks::materialize(&pack, task, &wd, None)
            .map_err(anyhow::Error::from)
            .and_then(|m| Ok(lrab_scorer::score(task, &m.checks, &wd)?.total));
        match floor {
            Ok(f) => {
                let mut spec = task.spec.clone();
                spec.expect.untouched = f;
                fsutil::write_file(
                    &task.toml_path(),
                    lrab_tasks::to_toml_string(&spec).as_bytes(),
                )?;
                println!("imported {id} (untouched floor {f:.3})");
            }
            Err(e) => errors.push(format!("{id}: measuring the floor: {e:#}")),
        }
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    Ok(if errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Usage
    })
}

fn import_one(root: &Path, path: &Path, out: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)?;
    let j: Value = serde_json::from_str(&text).context("not valid JSON")?;
    let obj = j
        .as_object()
        .ok_or_else(|| anyhow!("top level is not an object"))?;
    let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let id = s("id").ok_or_else(|| anyhow!("id: missing"))?;
    if !fsutil::is_safe_relative(&id) || id.contains('/') {
        bail!("id: '{id}' cannot be a folder name");
    }
    let ignored: Vec<&String> = obj
        .keys()
        .filter(|k| !KNOWN.contains(&k.as_str()))
        .collect();
    if !ignored.is_empty() {
        eprintln!("note: {}: ignored keys {ignored:?}", path.display());
    }
    let domain = s("domain").ok_or_else(|| anyhow!("domain: missing"))?;
    let prompt = s("prompt").ok_or_else(|| anyhow!("prompt: missing"))?;
    let tier = match obj.get("tier").and_then(Value::as_u64) {
        Some(t) => u8::try_from(t).map_err(|_| anyhow!("tier: {t} is out of range"))?,
        None => tier_of(&id, path)
            .ok_or_else(|| anyhow!("tier: missing and not derivable from '{id}'"))?,
    };
    let plan_steps: Vec<String> = strings(obj.get("plan_steps")).context("plan_steps")?;
    let fixtures: Vec<String> = strings(obj.get("fixtures")).context("fixtures")?;
    let task_dir = out.join(&id);
    if task_dir.exists() {
        bail!("{} already exists; not overwriting", task_dir.display());
    }

    let json_dir = path.parent().unwrap_or(root);
    let mut inputs = Vec::new();
    for (i, f) in fixtures.iter().enumerate() {
        let rel = f
            .trim_start_matches("./")
            .trim_start_matches("fixtures/")
            .to_string();
        if !fsutil::is_safe_relative(&rel) {
            bail!("fixtures[{i}]: unsafe path '{f}'");
        }
        let src = find(root, json_dir, f)
            .ok_or_else(|| anyhow!("fixtures[{i}]: '{f}' not found under {}", root.display()))?;
        copy_fixture(&src, &out.join("fixtures").join(&rel))?;
        inputs.push(rel);
    }
    let mut groups = Vec::new();
    for key in ["milestones", "final_artifacts"] {
        let arr = obj
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("{key}: missing or not a list"))?;
        let mut checks = Vec::new();
        for (i, c) in arr.iter().enumerate() {
            let spec = convert_check(c).with_context(|| format!("{key}[{i}]"))?;
            if let Some(seed) = spec.check.seed_rel() {
                let src = find(root, json_dir, seed)
                    .ok_or_else(|| anyhow!("{key}[{i}].seed_rel: '{seed}' not found"))?;
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
        budget_minutes: small(obj, "max_wall_minutes")?.unwrap_or(60),
        inputs,
        plan_steps,
        kill_at_pct: small(obj, "kill_at_pct")?,
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
        lrab_tasks::to_toml_string(&spec).as_bytes(),
    )?;
    Ok(id)
}

/// One upstream check → our typed check (`check` → `kind`, params kept, validated).
fn convert_check(c: &Value) -> Result<CheckSpec> {
    let o = c.as_object().ok_or_else(|| anyhow!("not an object"))?;
    let mut t = toml::Table::new();
    for (k, v) in o {
        let key = if k == "check" {
            "kind".to_string()
        } else {
            k.clone()
        };
        t.insert(
            key,
            json_to_toml(v).ok_or_else(|| anyhow!("{k}: null is not representable"))?,
        );
    }
    lrab_tasks::spec::parse_check_table(&t).map_err(|e| anyhow!(e))
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
fn small<T: TryFrom<u64>>(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<T>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let n = v
                .as_u64()
                .ok_or_else(|| anyhow!("{key}: expected a non-negative integer, found {v}"))?;
            T::try_from(n)
                .map(Some)
                .map_err(|_| anyhow!("{key}: {n} is out of range"))
        }
    }
}

fn strings(v: Option<&Value>) -> Result<Vec<String>> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| anyhow!("[{i}] is not a string"))
            })
            .collect(),
        Some(_) => bail!("not a list"),
    }
}

/// Upstream's tier split (DESIGN.md): WF-01/02 → 1, WF-03..06 → 2, WF-07..15 → 3, LH → 4; else
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

fn copy_fixture(src: &Path, dst: &Path) -> Result<()> {
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
