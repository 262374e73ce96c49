//! Manual use: `cargo run -p lrab-sim --example serve -- --addr 127.0.0.1:11435`.

use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    sim: lrab_sim::SimArgs,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = lrab_sim::run_cli(&cli.sim) {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}
