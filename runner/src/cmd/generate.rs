//! `lrab generate --task ID --seed N --out DIR`: a held-out variant of a generated task. DIR
//! becomes a complete task folder (its name is the variant's id): task.toml with the new seed,
//! prompt/reference/partial copied, `generated.sha256` for the new seed. Fixtures the task needs
//! are copied into `DIR/../fixtures/` when absent, so the parent folder is a valid pack.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use lrab_tasks::{load_task as load_one, Task};

use super::{load_task, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Task id of a task with a [generator].
    #[arg(long)]
    pub task: String,
    #[arg(long)]
    pub seed: u64,
    /// The variant's task folder (created; must be absent or empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Task pack folder (default: $LRAB_PACK, else the built-in pack).
    #[arg(long)]
    pub pack: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<Exit> {
    let (pack, task) = load_task(a.pack.as_deref(), &a.task)?;
    let Some(g) = task.spec.generator.clone() else {
        bail!(
            "task {} has no [generator]; only generated tasks have variants",
            a.task
        );
    };
    let new_id = a
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && n != "fixtures" && !n.starts_with('.'))
        .ok_or_else(|| {
            anyhow!(
                "--out {} must end in a folder name (the variant's id)",
                a.out.display()
            )
        })?;
    if a.out.exists() && std::fs::read_dir(&a.out)?.next().is_some() {
        bail!("--out {} exists and is not empty", a.out.display());
    }
    let generated = lrab_generators::generate(&g.name, a.seed)
        .map_err(|e| anyhow!("generator '{}' seed {}: {e}", g.name, a.seed))?;

    // Copy the task folder except the two files rewritten below.
    for rel in lrab_tasks::walk_files(&task.dir)? {
        if rel == "task.toml" || rel == lrab_tasks::MANIFEST {
            continue;
        }
        lrab_tasks::copy_tree(&task.dir.join(&rel), &a.out.join(&rel))?;
    }
    let text = std::fs::read_to_string(task.toml_path())?;
    let text = rewrite_toml(&text, &new_id, a.seed)
        .with_context(|| format!("rewriting {}", task.toml_path().display()))?;
    lrab_tasks::write_file(&a.out.join("task.toml"), text.as_bytes())?;
    lrab_tasks::write_file(
        &a.out.join(lrab_tasks::MANIFEST),
        lrab_tasks::format_manifest(&generated.files).as_bytes(),
    )?;
    let parent = a
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    copy_needed_fixtures(&pack.root, parent, &task)?;

    // The variant must load as a valid task of its new pack.
    let (_, problems) = load_one(parent, &a.out, &new_id);
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("invalid: {p}");
        }
        return Ok(Exit::Usage);
    }
    lrab_util::outln!(
        "wrote {} ({} seed {}, {} generated files)",
        a.out.display(),
        g.name,
        a.seed,
        generated.files.len()
    );
    Ok(Exit::Ok)
}

/// Replaces the top-level `id` and the `seed` of `[generator]`, keeping everything else
/// (comments, order) byte for byte.
pub fn rewrite_toml(text: &str, id: &str, seed: u64) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut table = String::new();
    let (mut did_id, mut did_seed) = (false, false);
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            table = t
                .trim_end()
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_string();
        }
        let key = t.split('=').next().map(str::trim).unwrap_or("");
        let nl = if line.ends_with('\n') { "\n" } else { "" };
        if table.is_empty() && key == "id" && t.contains('=') && !did_id {
            out.push_str(&format!("id = {}{nl}", toml::Value::String(id.to_string())));
            did_id = true;
        } else if table == "generator" && key == "seed" && t.contains('=') && !did_seed {
            out.push_str(&format!("seed = {seed}{nl}"));
            did_seed = true;
        } else {
            out.push_str(line);
        }
    }
    if !did_id || !did_seed {
        bail!("could not find the top-level id and [generator] seed lines");
    }
    Ok(out)
}

/// Copies the task's inputs and seed files into `<dest_pack>/...` when missing there; a
/// different existing file is an error (never overwritten).
fn copy_needed_fixtures(src_root: &Path, dest_root: &Path, task: &Task) -> Result<()> {
    let mut rels: Vec<String> = task
        .spec
        .inputs
        .iter()
        .map(|i| format!("fixtures/{i}"))
        .collect();
    for (_, c) in task.all_checks() {
        if let Some(s) = c.check.seed_rel() {
            rels.push(s.to_string());
        }
    }
    for rel in rels {
        let src = src_root.join(&rel);
        let dst = dest_root.join(&rel);
        if src.canonicalize().ok() == dst.canonicalize().ok() && dst.exists() {
            continue;
        }
        let files = if src.is_dir() {
            lrab_tasks::walk_files(&src)?
                .into_iter()
                .map(|f| format!("{rel}/{f}"))
                .collect()
        } else {
            vec![rel.clone()]
        };
        for f in files {
            let (s, d) = (src_root.join(&f), dest_root.join(&f));
            let bytes = std::fs::read(&s).with_context(|| format!("reading {}", s.display()))?;
            match std::fs::read(&d) {
                Ok(existing) if existing == bytes => {}
                Ok(_) => bail!(
                    "{} exists with different content; not overwriting",
                    d.display()
                ),
                Err(_) => lrab_tasks::write_file(&d, &bytes)?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_id_and_seed() {
        let t = "# c\nid = \"LH-01\"\ntier = 4\n\n[generator]\nname = \"lh01\"\nseed = 4101 # default\n\n[expect]\nseed = 1\n";
        let r = rewrite_toml(t, "LH-01-s7", 7).unwrap();
        assert_eq!(
            r,
            "# c\nid = \"LH-01-s7\"\ntier = 4\n\n[generator]\nname = \"lh01\"\nseed = 7\n\n[expect]\nseed = 1\n"
        );
        assert!(rewrite_toml("id = \"x\"\n", "y", 1).is_err());
    }
}
