//! `lrab safety`: the adversarial probe suite of the harness's safety rings (see docs/safety.md).

use anyhow::Result;
use clap::Parser;

use super::Exit;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: lrab_safety::cli::SafetyArgs,
}

pub fn run(a: Args) -> Result<Exit> {
    Ok(match lrab_safety::cli::run(&a.inner)? {
        0 => Exit::Ok,
        1 => Exit::Failures,
        _ => Exit::Usage,
    })
}
