//! A reader that stops early (`lrab tasks list | head -3`) is a normal end: the listing commands
//! exit 0 with no panic and no backtrace when their stdout's reader has gone.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};

/// The write end of a pipe whose read end is already closed: every write to it fails with
/// EPIPE, as in a pipeline whose reader has exited (deterministic, unlike racing a real `head`).
fn widowed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills both descriptors on success; each is owned exactly once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe(2)");
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

fn run_into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let pack = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pack");
    let out = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(args)
        .env("LRAB_PACK", pack)
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::from(widowed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .expect("run lrab");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn listing_commands_end_quietly_when_the_reader_has_gone() {
    for args in [
        &["tasks", "list"][..],
        &["tasks", "show", "T-01"],
        &["arms", "list"],
        &["--help"],
        &["tasks", "--help"],
    ] {
        let (code, stderr) = run_into_closed_pipe(args);
        assert_eq!(code, Some(0), "lrab {args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "lrab {args:?}: {stderr}"
        );
    }
}
