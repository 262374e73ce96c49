//! Stand-alone front end for `lrab_tau2::cli` until the `lrab` binary wires it in:
//! `cargo run -p lrab-tau2 --example tau2 -- replay-gold` (data: `--tau2-data`, `TAU2_DATA_DIR`
//! or the data lookup that `lrab data fetch` fills).
use clap::Parser;
use lrab_tau2::Tau2Args;

#[derive(Parser)]
#[command(name = "tau2")]
struct Cli {
    #[command(flatten)]
    args: Tau2Args,
}

fn main() {
    let cli = Cli::parse();
    let mut out = std::io::stdout();
    if let Err(e) = lrab_tau2::run_cli(&cli.args, &mut out) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
