//! `lrab tasks …`: list, show, materialize, check, import-mingbird.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Subcommand;
use lrab_tasks::{materialize_with, Pack};

use super::{load_task, pack_dir, print_problems, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Task pack folder (default: $LRAB_PACK, else the built-in pack).
    #[arg(long, global = true)]
    pub pack: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// One line per task: id, tier, domain, title, number of checks.
    List,
    /// The task's spec and its rendered prompt.
    Show { id: String },
    /// Build a fresh workdir for a task.
    Materialize {
        id: String,
        #[arg(long)]
        out: PathBuf,
        /// Seed for generated tasks (default: the task's seed).
        #[arg(long)]
        seed: Option<u64>,
        /// Delete a non-empty --out first.
        #[arg(long)]
        wipe: bool,
    },
    /// Validate tasks and verify their untouched, partial and reference scores.
    Check {
        /// Task ids (default: all).
        ids: Vec<String>,
    },
    /// Convert an upstream (Mingbird-format) task folder into a pack.
    ImportMingbird {
        dir: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn run(a: Args) -> Result<Exit> {
    let pack_opt = a.pack.as_deref();
    match a.command {
        Cmd::List => {
            let (pack, problems) = Pack::load_lenient(pack_dir(pack_opt));
            lrab_util::outln!(
                "{:<8} {:>4}  {:<36} {:>6}  title",
                "id",
                "tier",
                "domain",
                "checks"
            );
            for t in &pack.tasks {
                let s = &t.spec;
                let n = s.milestones.len() + s.finals.len();
                lrab_util::outln!(
                    "{:<8} {:>4}  {:<36} {:>6}  {}",
                    s.id,
                    s.tier,
                    s.domain,
                    n,
                    s.title
                );
            }
            print_problems(&problems);
            Ok(if problems.is_empty() {
                Exit::Ok
            } else {
                Exit::Usage
            })
        }
        Cmd::Show { id } => {
            let (_, t) = load_task(pack_opt, &id)?;
            let s = &t.spec;
            lrab_util::outln!(
                "id: {}\ntier: {}\ndomain: {}\ntitle: {}",
                s.id,
                s.tier,
                s.domain,
                s.title
            );
            lrab_util::outln!("budget_minutes: {}", s.budget_minutes);
            if let Some(k) = s.kill_at_pct {
                lrab_util::outln!("kill_at_pct: {k}");
            }
            lrab_util::outln!("inputs: {}", s.inputs.join(", "));
            if let Some(g) = &s.generator {
                lrab_util::outln!("generator: {} (seed {})", g.name, g.seed);
            }
            for (group, c) in t.all_checks() {
                let params = serde_json::to_string(&c.check).unwrap_or_default();
                lrab_util::outln!("{group:<10} {:<28} {params}", c.artifact);
            }
            lrab_util::outln!(
                "expect: untouched {}{}",
                s.expect.untouched,
                s.expect
                    .partial
                    .map(|p| format!(", partial {p}"))
                    .unwrap_or_default()
            );
            lrab_util::outln!("\n--- prompt ---\n{}", t.render_prompt());
            Ok(Exit::Ok)
        }
        Cmd::Materialize {
            id,
            out,
            seed,
            wipe,
        } => {
            let (pack, t) = load_task(pack_opt, &id)?;
            let m = materialize_with(&pack, &t, &out, seed, wipe)
                .with_context(|| format!("materializing {id} into {}", out.display()))?;
            for f in &m.files {
                lrab_util::outln!("{f}");
            }
            eprintln!(
                "materialized {id}{} into {} ({} files)",
                m.seed.map(|s| format!(" (seed {s})")).unwrap_or_default(),
                out.display(),
                m.files.len()
            );
            Ok(Exit::Ok)
        }
        Cmd::Check { ids } => super::check::run(&pack_dir(pack_opt), &ids),
        Cmd::ImportMingbird { dir, out } => super::import_mingbird::run(&dir, &out),
    }
}
