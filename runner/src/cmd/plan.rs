//! `lrab plan`: writes the cell list of a matrix (JSON lines, plan order with indices) — the
//! contract `--shard k/n` slices, so distributed workers agree on which cell is whose.

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

use super::run::MatrixArgs;
use super::Exit;
use crate::run::backend::BackendSpec;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Write the plan here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<Exit> {
    let (spec, _) = a.matrix.spec()?;
    // Default models follow the backend kind; `plan` never starts one, so `auto` means real.
    let sim = crate::run::plan::backend_spec(&spec)? == BackendSpec::Sim;
    let p = crate::run::plan::resolve(&spec, sim, false)?;
    match &a.out {
        Some(path) => {
            crate::run::write_plan(path, &p.cells)?;
            eprintln!("{} cells written to {}", p.cells.len(), path.display());
        }
        None => {
            for c in &p.cells {
                lrab_util::outln!("{}", c.plan_line()?);
            }
        }
    }
    Ok(Exit::Ok)
}
