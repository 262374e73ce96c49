//! `lrab data`: the published data files the suite reads (catalogue: `lrab-data`). `fetch` gets
//! the published text (τ²-bench domain data, the safety prompts) from where it is published into
//! the per-user cache; `status` says where each file is found.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

use super::Exit;
use lrab_data::{DataError, DataFile, FetchOptions, FILES};

#[derive(Parser, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: DataCommand,
}

#[derive(Subcommand, Debug)]
pub enum DataCommand {
    /// Fetch the published files no data folder holds yet into the per-user cache
    /// (~/.cache/lrab/data, or LRAB_DATA_CACHE), each checked against its sha256; exit 1 when
    /// some file could not be had (what was fetched is kept).
    Fetch {
        /// Only files whose path starts with one of these prefixes (comma list: tau2, mingbird …).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Cache folder to fetch into (default: LRAB_DATA_CACHE or ~/.cache/lrab/data).
        #[arg(long)]
        cache: Option<PathBuf>,
    },
    /// Where each data file is found, in lookup order (LRAB_DATA or ../shared/data, the
    /// repository's data/, the cache); exit 1 when some file is missing or refused.
    Status,
}

pub fn run(a: Args) -> Result<Exit> {
    match a.command {
        DataCommand::Fetch { only, cache } => fetch(&only, cache),
        DataCommand::Status => Ok(status()),
    }
}

fn selected(only: &[String]) -> Vec<&'static DataFile> {
    FILES
        .iter()
        .filter(|f| only.is_empty() || only.iter().any(|p| f.path.starts_with(p.as_str())))
        .collect()
}

fn fetch(only: &[String], cache: Option<PathBuf>) -> Result<Exit> {
    let files = selected(only);
    if files.is_empty() {
        anyhow::bail!("--only {}: no data file matches", only.join(","));
    }
    let mut opts = FetchOptions::default();
    if let Some(c) = cache {
        opts.roots.retain(|r| r.dir != opts.cache);
        opts.roots.push(lrab_data::Root {
            label: format!("the cache {}", c.display()),
            dir: c.clone(),
        });
        opts.cache = c;
    }
    eprintln!("lrab data fetch: into {}", opts.cache.display());
    let rep = lrab_data::fetch(&files, &opts, &mut |line| {
        eprintln!("lrab data fetch: {line}")
    });
    for (path, why) in &rep.failed {
        eprintln!("lrab data fetch: could not get {path}: {why}");
    }
    lrab_util::outln!(
        "data: {} fetched, {} already present, {} could not be had",
        rep.fetched.len(),
        rep.had.len(),
        rep.failed.len()
    );
    if rep.failed.is_empty() {
        return Ok(Exit::Ok);
    }
    eprintln!(
        "lrab data fetch: tests that need the missing files print `skipped: <file>: <why>`; \
         commands that need them say so"
    );
    Ok(Exit::Failures)
}

fn status() -> Exit {
    let roots = lrab_data::roots();
    let mut bad = 0;
    for f in FILES {
        let line = match lrab_data::find(f, &roots) {
            Ok(p) => format!("ok       {}  {}", f.path, p.display()),
            Err(DataError::Missing { .. }) => {
                bad += 1;
                let how = if f.is_fetched() {
                    "lrab data fetch"
                } else {
                    "carried: checkout incomplete"
                };
                format!("missing  {}  ({how})", f.path)
            }
            Err(e) => {
                bad += 1;
                format!("refused  {}  {e}", f.path)
            }
        };
        lrab_util::outln!("{line}");
    }
    let places: Vec<String> = roots.iter().map(|r| r.label.clone()).collect();
    lrab_util::outln!("looked in: {}", places.join(", "));
    if bad == 0 {
        Exit::Ok
    } else {
        Exit::Failures
    }
}
