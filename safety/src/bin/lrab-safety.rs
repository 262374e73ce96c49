//! Stand-alone entry point for the probe suite until `lrab safety` is wired into the CLI.

use clap::Parser;

#[derive(Parser)]
#[command(name = "lrab-safety", about = "Run the lrab safety probe suite")]
struct Cli {
    #[command(flatten)]
    args: lrab_safety::SafetyArgs,
}

fn main() {
    lrab_util::treat_closed_stdout_as_end();
    let cli = Cli::parse();
    match lrab_safety::run_safety_cli(&cli.args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("lrab safety: error: {e:#}");
            std::process::exit(2);
        }
    }
}
