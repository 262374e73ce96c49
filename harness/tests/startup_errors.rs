//! The binary refuses bad surroundings at start-up with one line on stderr and a documented
//! exit code, before contacting the backend (the URL here is a closed port: a check that did
//! not fire would end in "backend unreachable", exit 5) and without writing anything.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> String {
    env!("CARGO_BIN_EXE_lrab-harness").to_string()
}

fn closed_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

fn args(prompt: &Path, workdir: &Path) -> Vec<String> {
    [
        "run",
        "--model",
        "m",
        "--prompt-file",
        &prompt.to_string_lossy(),
        "--workdir",
        &workdir.to_string_lossy(),
        "--backend-url",
        &closed_url(),
    ]
    .map(String::from)
    .to_vec()
}

fn one_line(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.starts_with("lrab-harness: "), "{e}");
    e
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, "Write a.txt.\n").unwrap();
    (d, prompt)
}

#[test]
fn a_symlinked_workdir_is_refused_with_exit_4_and_nothing_written() {
    let (d, prompt) = setup();
    let real = d.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = Command::new(bin())
        .args(args(&prompt, &link))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", one_line(&o));
    assert!(one_line(&o).contains("is a symbolic link"));
    assert_eq!(fs::read_dir(&real).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_missing_home_is_refused_with_exit_10() {
    let (d, prompt) = setup();
    let wd = d.path().join("work");
    fs::create_dir(&wd).unwrap();
    let o = Command::new(bin())
        .args(args(&prompt, &wd))
        .env("HOME", d.path().join("no-such-home"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(10), "{}", one_line(&o));
    let e = one_line(&o);
    assert!(e.contains("HOME") && e.contains("no-such-home"), "{e}");
    assert_eq!(fs::read_dir(&wd).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_workdir_on_a_read_only_filesystem_is_refused_with_exit_4() {
    let (d, prompt) = setup();
    let wd = d.path().join("work");
    fs::create_dir(&wd).unwrap();
    // a read-only bind mount of the workdir in a private mount namespace
    let root = unsafe { libc::geteuid() } == 0;
    let w = wd.to_string_lossy().into_owned();
    let script = format!(
        "mount --bind '{w}' '{w}' && mount -o remount,bind,ro '{w}' || exit 111; exec \"$0\" \"$@\""
    );
    let mut cmd = Command::new("unshare");
    cmd.arg(if root { "-m" } else { "-rm" })
        .args(["sh", "-c", &script, &bin()])
        .args(args(&prompt, &wd));
    let o = cmd.output().unwrap();
    if o.status.code() == Some(111)
        || o.status.code() == Some(1) && o.stderr.starts_with(b"unshare")
    {
        eprintln!(
            "skipped: no private read-only mount here ({})",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        return;
    }
    assert_eq!(o.status.code(), Some(4), "{}", one_line(&o));
    let e = one_line(&o);
    assert!(
        e.contains("not writable") && e.contains("read-only filesystem"),
        "{e}"
    );
}
