//! `lrab-harness`: the lrab agent harness arm.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(lrab_harness::cli::main_with(&args));
}
