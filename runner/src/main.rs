//! The `lrab` binary: everything is in the `lrab_runner` library.

/// mimalloc rather than glibc's malloc: the proxy (in this binary, in process for every
/// attempt and as `lrab proxy`) allocates and frees a request's bodies, messages and lines on
/// two runtime threads and a writer thread; glibc's arena locks and chunk consolidation were a
/// fifth of its CPU per request at load 16 (docs/runner.md, "Overhead").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    lrab_util::treat_closed_stdout_as_end();
    lrab_runner::main()
}
