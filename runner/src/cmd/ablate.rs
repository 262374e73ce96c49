//! `lrab ablate`: a batch-matched, repeated leave-one-mechanism-out ablation. The baseline arm
//! and its variants run interleaved cell by cell within each repeat (the same backend state and
//! machine load for both sides of every pair), k repeats, each attempt in a fresh workdir, and
//! the run resumes like any run. Variants are named by mechanism: `--ablate a,b` builds
//! `<arm>-no-a`, `<arm>-no-b` for an arm that runs our harness (`lrab-harness --ablate`), and
//! `--variants` names existing arm files. The arm files used are copied into the run folder
//! (`<run>/arms/`), so a resumed run runs exactly the same arms. See docs/statistics.md,
//! "Ablations", for how the run is analysed.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Parser;

use super::Exit;
use crate::run::arms::{self, Arm};
use crate::run::matrix::Order;

/// Repeats of an ablation when `--repeats` is not given (the published re-run used three).
pub const DEFAULT_REPEATS: u32 = 3;

#[derive(Parser, Debug)]
#[group(id = "ablate_args")]
pub struct Args {
    /// The baseline arm (every mechanism on), e.g. `harness`.
    #[arg(long, required_unless_present = "resume")]
    pub arm: Option<String>,
    /// Mechanisms to switch off, one variant each, named `<arm>-no-<mechanism>` (only for arms
    /// that run lrab-harness; `lrab-harness mechanisms` lists the names).
    #[arg(long, value_delimiter = ',')]
    pub ablate: Vec<String>,
    /// Variant arm files to compare with the arm, named `<arm>-no-<mechanism>` (for agents
    /// without a mechanism switch, or variants defined by hand).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    #[command(flatten)]
    pub run: super::run::Args,
}

/// An arm file to write: (file name, TOML text).
type ArmFile = (String, String);

/// The program of an arm is our harness.
fn runs_our_harness(a: &Arm) -> bool {
    Path::new(&a.program)
        .file_name()
        .is_some_and(|n| n == "lrab-harness")
}

/// Mechanism names the arm's harness binary accepts for `--ablate` (`lrab-harness mechanisms`).
fn mechanisms_of(a: &Arm) -> Result<Vec<String>> {
    let bin = a.locate().with_context(|| {
        format!(
            "arm '{}': program '{}' not found. {}",
            a.name, a.program, a.install_hint
        )
    })?;
    // confined, like every launch of an arm's program
    let out = crate::run::install::run_confined_output(
        &bin,
        &["mechanisms".to_string()],
        &a.probe_scope(),
    )
    .with_context(|| format!("{} mechanisms", bin.display()))?;
    Ok(out
        .lines()
        .filter(|l| !l.contains("not ablatable"))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// `finish_gate` → `finish-gate`, the arm-file spelling.
fn variant_name(arm: &str, mechanism: &str) -> String {
    format!("{arm}-no-{}", mechanism.replace('_', "-"))
}

/// The arm files to write into the run folder: (file name, TOML text) for the variants
/// `--ablate` asks for that no arm file defines yet, plus the variant names in order.
fn resolve(
    all: &[Arm],
    base: &Arm,
    ablate: &[String],
    named: &[String],
) -> Result<(Vec<String>, Vec<ArmFile>)> {
    let mut variants = Vec::new();
    let mut generated = Vec::new();
    if !ablate.is_empty() {
        if !runs_our_harness(base) {
            bail!(
                "arm '{}' has no mechanism switch (--ablate works on arms that run \
                 lrab-harness); write variant arm files named '{}-no-<mechanism>' and pass \
                 them with --variants",
                base.name,
                base.name
            );
        }
        let known = mechanisms_of(base)?;
        for m in ablate {
            if !known.contains(m) {
                bail!(
                    "--ablate {m}: unknown mechanism (known: {})",
                    known.join(", ")
                );
            }
            let name = variant_name(&base.name, m);
            let mut want = base.args.clone();
            want.extend(["--ablate".to_string(), m.clone()]);
            match all.iter().find(|a| a.name == name) {
                Some(a) if a.args == want && a.program == base.program && a.env == base.env => {}
                Some(a) => bail!(
                    "arm file {} is named like the ablation of {m} but is not '{}' plus \
                     `--ablate {m}`; rename it or pass it with --variants",
                    a.file.display(),
                    base.name
                ),
                None => generated.push((
                    format!("{name}.toml"),
                    format!(
                        "# Written by `lrab ablate`: {base} with the {m} mechanism switched off.\n\
                         name = \"{name}\"\nextends = \"{base}\"\n\
                         description = \"{base} without {m}\"\n\
                         extra_args = [\"--ablate\", \"{m}\"]\n",
                        base = base.name
                    ),
                )),
            }
            variants.push(name);
        }
    }
    for v in named {
        if !v.starts_with(&format!("{}-no-", base.name)) {
            bail!(
                "--variants {v}: a variant of '{}' must be named '{}-no-<mechanism>' so the \
                 analysis pairs it with its baseline",
                base.name,
                base.name
            );
        }
        arms::select(all, std::slice::from_ref(v))?;
        variants.push(v.clone());
    }
    if variants.is_empty() {
        bail!("nothing to compare: give --ablate <mechanisms> or --variants <arms>");
    }
    crate::run::matrix::no_duplicates("variant", &variants)?;
    Ok((variants, generated))
}

/// Copies every arm file of `from` into `to`, with the launchers kept beside them (an arm file
/// may name a script next to it), and adds the generated ones.
fn write_arms(from: &Path, to: &Path, generated: &[(String, String)]) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("create {}", to.display()))?;
    for e in std::fs::read_dir(from).with_context(|| format!("read {}", from.display()))? {
        let p = e?.path();
        if p.is_file() {
            let dest = to.join(p.file_name().expect("file"));
            std::fs::copy(&p, &dest).with_context(|| format!("copy {}", p.display()))?;
        }
    }
    for (name, text) in generated {
        lrab_util::write_atomic(&to.join(name), text.as_bytes())
            .with_context(|| format!("write {}", to.join(name).display()))?;
    }
    Ok(())
}

pub fn run(mut a: Args) -> Result<Exit> {
    if a.run.resume.is_some() {
        if a.arm.is_some() || !a.ablate.is_empty() || !a.variants.is_empty() {
            bail!(
                "--resume takes the arms from the run's manifest; drop --arm/--ablate/--variants"
            );
        }
        return super::run::run(a.run);
    }
    let m = &mut a.run.matrix;
    if m.arms.is_some() {
        bail!("lrab ablate takes --arm and --ablate/--variants, not --arms");
    }
    if m.shard.is_some() {
        bail!(
            "lrab ablate does not shard: a shard would split the pairs of a batch across machines"
        );
    }
    let repeats = m.repeats.unwrap_or(DEFAULT_REPEATS);
    if repeats < 2 {
        bail!(
            "--repeats {repeats}: the noise floor of an ablation is measured from at least 2 \
             repeats of the baseline (default {DEFAULT_REPEATS}); for a single-shot comparison \
             use `lrab run`"
        );
    }
    let base_name = a.arm.clone().expect("required by clap");
    let arms_dir = m.arms_dir.clone().unwrap_or_else(arms::default_dir);
    let all = arms::load_dir(&arms_dir)?;
    let base = arms::select(&all, std::slice::from_ref(&base_name))?.remove(0);
    let (variants, generated) = resolve(&all, &base, &a.ablate, &a.variants)?;
    let run_id = a
        .run
        .run_id
        .clone()
        .unwrap_or_else(|| crate::run::default_run_id(None).replacen("run-", "ablate-", 1));
    if run_id.is_empty() || run_id.contains('/') || run_id.starts_with('.') {
        bail!("--run-id '{run_id}': must be a plain folder name");
    }
    let run_dir: PathBuf = a.run.out.join(&run_id);
    if run_dir.join("manifest.json").exists() {
        bail!(
            "{} already holds a run; use `lrab ablate --resume {}` or another --run-id",
            run_dir.display(),
            run_dir.display()
        );
    }
    let own_arms = run_dir.join("arms");
    write_arms(&arms_dir, &own_arms, &generated)?;
    let mut list = vec![base_name];
    list.extend(variants);
    eprintln!(
        "ablation: {} and {} interleaved cell by cell, {repeats} repeats; arm files in {}",
        list[0],
        list[1..].join(", "),
        own_arms.display()
    );
    let m = &mut a.run.matrix;
    m.arms = Some(list.join(","));
    m.repeats = Some(repeats);
    m.arms_dir = Some(own_arms);
    m.order = Order::Interleaved;
    a.run.run_id = Some(run_id);
    super::run::run(a.run)
}

#[cfg(test)]
mod tests {
    #[test]
    fn variant_names_use_the_arm_file_spelling() {
        assert_eq!(
            super::variant_name("harness", "finish_gate"),
            "harness-no-finish-gate"
        );
        assert_eq!(super::variant_name("h", "clock"), "h-no-clock");
    }
}
