//! `lrab-harness`: the lrab agent harness arm.

fn main() {
    lrab_util::treat_closed_stdout_as_end();
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(lrab_harness::main_with(&args));
}
