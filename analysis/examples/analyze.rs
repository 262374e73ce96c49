//! Standalone `analyze` command (the same arguments as `lrab analyze`):
//! `cargo run -p lrab-analysis --example analyze -- <inputs>... --out <dir> [--rng cpython]`.

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "analyze",
    about = "Tables, statistics, figures and a report from LRAB results"
)]
struct Cli {
    #[command(flatten)]
    args: lrab_analysis::AnalyzeArgs,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = lrab_analysis::run(&cli.args) {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}
