//! `lrab-harness mechanisms | head -1`: a reader that stops early is a normal end, with no
//! panic and no backtrace (the listing commands print more than a reader may want).

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

#[test]
fn listing_commands_end_quietly_when_the_reader_has_gone() {
    for args in [&["mechanisms"][..], &["prefill"], &["help"], &["--help"]] {
        // a pipe whose read end is closed before the binary starts: every write fails with EPIPE
        let mut fds = [0; 2];
        // SAFETY: `pipe` fills both descriptors on success; each is owned exactly once here.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe(2)");
        let write = unsafe {
            drop(OwnedFd::from_raw_fd(fds[0]));
            OwnedFd::from_raw_fd(fds[1])
        };
        let out = Command::new(env!("CARGO_BIN_EXE_lrab-harness"))
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::from(write))
            .stderr(Stdio::piped())
            .output()
            .expect("run lrab-harness");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
}
