//! `lrab analyze <csv>... --out <dir>`: statistics, tables, figures and the publishable report
//! (see docs/statistics.md).

use anyhow::Result;
use clap::Parser;

use super::Exit;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: lrab_analysis::AnalyzeArgs,
}

pub fn run(a: Args) -> Result<Exit> {
    // `run` prints the summary tables itself unless --quiet.
    lrab_analysis::run(&a.inner)?;
    lrab_util::outln!("report: {}", a.inner.out.join("report.md").display());
    Ok(Exit::Ok)
}
