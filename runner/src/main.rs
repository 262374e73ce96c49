//! The `lrab` binary: everything is in the `lrab_runner` library.

fn main() -> std::process::ExitCode {
    lrab_util::treat_closed_stdout_as_end();
    lrab_runner::main()
}
