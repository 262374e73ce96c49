//! A reader that stops early (`lrab tasks list | head -3`, `lrab tau2 … | head -1`) is a normal
//! end: no panic, no backtrace, no "Broken pipe" message; the command still does the rest of
//! its work (the files it writes after printing) and ends with the status it would have had.

mod common;

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
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

fn fixture_pack() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pack")
}

/// Runs `cmd` with its stdout into a widowed pipe: its exit status and its stderr, checked to
/// hold no panic and no broken-pipe message.
fn into_closed_pipe(mut cmd: Command) -> Option<i32> {
    let out = cmd
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::from(widowed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .expect("run lrab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{cmd:?}: {stderr}"
    );
    out.status.code()
}

fn lrab(args: &[&str]) -> Command {
    let mut c = common::lrab();
    c.args(args).env("LRAB_PACK", fixture_pack());
    c
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
        assert_eq!(into_closed_pipe(lrab(args)), Some(0), "lrab {args:?}");
    }
}

/// `lrab score` prints its breakdown, then writes score.json: a gone reader does not stop it.
#[test]
fn score_still_writes_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().to_str().unwrap();
    assert_eq!(
        into_closed_pipe(lrab(&["score", "--task", "T-01", wd])),
        Some(0)
    );
    assert!(tmp.path().join("score.json").is_file());
}

/// A failing `lrab tasks check` keeps its failure status (1) with no one reading its table.
#[test]
fn a_failing_check_still_fails() {
    let tmp = tempfile::tempdir().unwrap();
    for e in walkdir::WalkDir::new(fixture_pack()) {
        let e = e.unwrap();
        let to = tmp
            .path()
            .join(e.path().strip_prefix(fixture_pack()).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    // the untouched workdir scores 0.0: expecting 0.5 is a failed check
    let toml = tmp.path().join("T-01/task.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains("untouched = 0.0"));
    std::fs::write(&toml, text.replace("untouched = 0.0", "untouched = 0.5")).unwrap();
    let mut c = common::lrab();
    c.args(["tasks", "check", "T-01"])
        .env("LRAB_PACK", tmp.path());
    assert_eq!(into_closed_pipe(c), Some(1));
}

fn tau2(data: &Path, args: &[&str]) -> Command {
    let mut c = common::lrab();
    c.arg("tau2")
        .arg("--tau2-data")
        .arg(data)
        .args(args)
        .env_remove("TAU2_DATA_DIR");
    c
}

/// `lrab tau2` writes through one writer: a gone reader ends its output, not the command — a
/// run still writes results.json and tau2.csv and exits 0.
#[test]
fn tau2_commands_end_quietly_and_finish_their_work() {
    // τ²-bench's domain data: fetched text (`lrab data fetch`), found by the data lookup
    let Some(data) = lrab_data::test_folder("tau2") else {
        return;
    };
    assert_eq!(
        into_closed_pipe(tau2(&data, &["replay-gold", "--domain", "mock"])),
        Some(0)
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let gold = "run --domain mock --agent gold --user scripted --tasks update_task_1 --fixed-clock";
    let mut args: Vec<&str> = gold.split(' ').collect();
    args.extend(["--out", out]);
    let run = tau2(&data, &args);
    assert_eq!(into_closed_pipe(run), Some(0));
    assert!(tmp.path().join("results.json").is_file());
    assert!(tmp.path().join("tau2.csv").is_file());
}

/// `lrab-harness run` prints each turn: with no one reading, it still does the whole task
/// (on the simulated backend) and exits with the run's own status. Needs the `lrab-harness`
/// sibling binary (`cargo test --workspace` builds it; alone: `cargo build -p lrab-harness`).
#[test]
fn a_harness_run_finishes_its_task_with_no_one_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().join("wd");
    let o = common::lrab()
        .args(["tasks", "materialize", "WF-01", "--out"])
        .arg(&wd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    let prompt = tmp.path().join("prompt.md");
    std::fs::copy(wd.join("task_input.txt"), &prompt).unwrap();
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let harness = Path::new(env!("CARGO_BIN_EXE_lrab")).with_file_name("lrab-harness");
    let mut c = Command::new(harness);
    c.args(["run", "--model", "sim-oracle", "--prompt-file"])
        .arg(&prompt)
        .arg("--workdir")
        .arg(&wd)
        .args(["--backend-url", &sim.url()]);
    assert_eq!(into_closed_pipe(c), Some(0));
    for f in ["shortlist.md", "review_report.md", "references.md"] {
        assert!(wd.join(f).is_file(), "{f} not written");
    }
}
