//! `lrab-safety | head -1`: a reader that stops early ends the output, not the run — the
//! JSON report is still written and the exit status is the suite's own, with no panic and no
//! broken-pipe message.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

#[test]
fn a_gone_reader_does_not_cut_the_run_short() {
    // a pipe whose read end is closed before the binary starts: every write fails with EPIPE
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills both descriptors on success; each is owned exactly once here.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe(2)");
    let write = unsafe {
        drop(OwnedFd::from_raw_fd(fds[0]));
        OwnedFd::from_raw_fd(fds[1])
    };
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_lrab-safety"))
        .args(["--only", "OWN-R4-01,OWN-R5", "--json"])
        .arg(&json)
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .expect("run lrab-safety");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
}
