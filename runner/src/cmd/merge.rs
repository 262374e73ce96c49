//! `lrab merge`: merge the run folders of one matrix (e.g. shards) into one folder.

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

use super::Exit;

#[derive(Parser, Debug)]
pub struct Args {
    /// The merged run folder (must not exist or be empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Run folders to merge.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Merge even when a model without a digest (an OpenAI-compatible backend's) was served by
    /// different backends in different inputs: nothing then tells it is the same model.
    #[arg(long)]
    pub allow_different_backends: bool,
}

pub fn run(a: Args) -> Result<Exit> {
    let r = crate::run::merge::merge(&a.out, &a.inputs, a.allow_different_backends)?;
    lrab_util::outln!(
        "merged {} rows into {} ({} cells planned, {} missing)",
        r.rows,
        r.out.display(),
        r.cells_planned,
        r.missing
    );
    Ok(if r.missing == 0 {
        Exit::Ok
    } else {
        Exit::Failures
    })
}
