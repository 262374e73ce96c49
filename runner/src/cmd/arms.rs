//! `lrab arms list|check`: the arm files, whether each arm is installed, and its version.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use super::Exit;
use crate::run::arms;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
    /// Folder of arm files (default: LRAB_ARMS or the suite's arms/).
    #[arg(long, global = true)]
    pub arms_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Every arm file with its program, API and whether it is installed.
    List,
    /// Validate the arm files and probe the named arms (default all); exit 1 if one is missing.
    Check { names: Vec<String> },
}

pub fn run(a: Args) -> Result<Exit> {
    let dir = a.arms_dir.unwrap_or_else(arms::default_dir);
    let all = arms::load_dir(&dir)?;
    match a.command {
        Sub::List => {
            println!(
                "{:<28} {:<7} {:<6} {:<10} program",
                "arm", "api", "proxy", "installed"
            );
            for x in &all {
                println!(
                    "{:<28} {:<7} {:<6} {:<10} {}",
                    x.name,
                    format!("{:?}", x.api).to_lowercase(),
                    x.proxy,
                    if x.locate().is_some() { "yes" } else { "no" },
                    x.program
                );
            }
            Ok(Exit::Ok)
        }
        Sub::Check { names } => {
            let sel = if names.is_empty() {
                all.clone()
            } else {
                arms::select(&all, &names)?
            };
            let mut missing = 0;
            for x in &sel {
                let s = arms::status(x);
                if s.installed {
                    println!(
                        "ok       {:<28} {} — {}{}",
                        s.name,
                        s.path.unwrap_or_default(),
                        s.version.unwrap_or_else(|| "version unknown".into()),
                        if s.upstream_version.is_empty() {
                            String::new()
                        } else {
                            format!(" (upstream used {})", s.upstream_version)
                        }
                    );
                } else {
                    missing += 1;
                    println!("missing  {:<28} {}", s.name, s.install_hint);
                }
            }
            Ok(if missing == 0 {
                Exit::Ok
            } else {
                Exit::Failures
            })
        }
    }
}
