//! The `lrab` binary: everything is in the `lrab_runner` library.

fn main() -> std::process::ExitCode {
    lrab_runner::main()
}
