//! Issue 30, item 3: every wait and every missing tool says so, with the real `lrab` binary.
//!
//! * Waiting for a backend: the announcement (what, at most how long, the flag that changes
//!   it), progress lines, then how it ended — given up, or answered.
//! * A Python without pytest (a venv made here without pip, so nothing is uninstalled from the
//!   machine; `python -S` wrappers where `venv` is missing): `lrab tasks check`, `lrab score`
//!   and `lrab doctor` name the module and the fix, in the wording `lrab run` uses.
//! * A program a check or a solution runs that is not on PATH is named.
//! * Error lines say each cause once; `--resume` of a missing folder names it.

mod common;

use common::{lrab, text};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// No cause twice: the system's words ("… (os error N)") appear at most once per line.
fn each_cause_once(t: &str) {
    for line in t.lines() {
        for (i, _) in line.match_indices("(os error") {
            let start = line[..i].rfind(": ").map(|x| x + 2).unwrap_or(0);
            let cause = &line[start..line[i..].find(')').map(|e| i + e + 1).unwrap()];
            assert_eq!(line.matches(cause).count(), 1, "{cause:?} twice in: {line}");
        }
    }
}

/// A free local port nothing listens on (bound, then released).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn a_backend_wait_is_announced_reported_and_given_up_with_how_to_change_it() {
    let d = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}", free_port());
    let o = lrab()
        .args(["run", "--backend", &url, "--backend-wait-secs", "3"])
        .args(["--arms", "harness", "--tasks", "WF-01", "--no-progress"])
        .args(["--out", s(&d.path().join("results"))])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{err}"))
    };
    let announced = at(&format!("waiting up to 3 s for the backend at {url}"));
    assert!(
        lines[announced].contains("change with --backend-wait-secs"),
        "says how to change it: {err}"
    );
    let progress = at(&format!("still waiting for the backend at {url}"));
    assert!(lines[progress].contains("of 3 s so far"), "{err}");
    let gave_up = lines
        .iter()
        .position(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(
        announced < progress && progress < gave_up,
        "in order: {err}"
    );
    assert!(
        lines[gave_up].contains(&format!("gave up waiting for the backend at {url}"))
            && lines[gave_up].contains("--backend-wait-secs"),
        "{err}"
    );
    each_cause_once(&err);
    assert!(!d.path().join("results").exists(), "nothing written: {err}");
}

#[test]
fn a_backend_that_answers_during_the_wait_ends_it_with_a_line() {
    let d = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut run = lrab()
        .args(["run", "--backend", &url, "--backend-wait-secs", "60"])
        .args(["--arms", "harness", "--tasks", "WF-01", "--no-progress"])
        .args(["--models", "no-such-model"])
        .args(["--out", s(&d.path().join("results"))])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // the backend starts only once the wait has been announced
    let mut err = BufReader::new(run.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(
        first.contains(&format!("waiting up to 60 s for the backend at {url}")),
        "{first}"
    );
    let mut sim = lrab()
        .args(["sim", "serve", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = run.wait().unwrap();
    let _ = sim.kill();
    let _ = sim.wait();
    assert!(
        rest.contains(&format!("done waiting: the backend at {url}")),
        "{first}{rest}"
    );
    // then the run goes on (and stops at the unknown model, as any run would)
    assert!(rest.contains("no-such-model"), "{rest}");
    assert_eq!(status.code(), Some(2));
}

#[test]
fn resume_of_a_missing_folder_names_it() {
    let d = tempfile::tempdir().unwrap();
    let gone = d.path().join("results/run-gone");
    let o = lrab().args(["run", "--resume", s(&gone)]).output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains(&format!(
            "--resume {}: the folder does not exist",
            gone.display()
        )),
        "{t}"
    );
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = lrab()
        .args(["run", "--resume", s(&empty)])
        .output()
        .unwrap();
    assert!(
        text(&o).contains("not a run folder (it has no manifest.json)"),
        "{}",
        text(&o)
    );
}

/// Any command's error says each cause once (the renderer of the whole binary): `merge` of a
/// folder that is not there used to say "No such file or directory (os error 2)" twice.
#[test]
fn error_lines_say_each_cause_once() {
    let d = tempfile::tempdir().unwrap();
    let o = lrab()
        .args(["merge", "--out", s(&d.path().join("m"))])
        .arg(d.path().join("missing-run"))
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("missing-run"), "{t}");
    assert_eq!(t.matches("(os error 2)").count(), 1, "{t}");
    each_cause_once(&t);
}

/// A bin folder whose `python` and `python3` cannot import pytest: a venv without pip (its
/// `sys.executable` is the venv's, so scripts that run `sys.executable -m pytest` lack it
/// too), else wrappers running this machine's Python with `-S`. `true` when it is a venv.
fn python_without_pytest(root: &Path) -> (PathBuf, bool) {
    let venv = root.join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        return (venv.join("bin"), true);
    }
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed by these tests");
    let py = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["python", "python3"] {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\nexec '{py}' -S \"$@\"\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (bin, false)
}

fn with_path(mut c: Command, bin: &Path) -> Output {
    c.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap()
}

#[test]
fn tasks_check_names_the_missing_module_and_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let (bin, venv) = python_without_pytest(d.path());
    let mut c = lrab();
    c.args(["tasks", "check", "WF-01", "WF-03", "WF-04", "WF-13"]);
    let o = with_path(c, &bin);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let row = |id: &str| {
        t.lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("no row for {id}: {t}"))
            .to_string()
    };
    assert!(row("WF-01").ends_with("PASS"), "{t}");
    let mut unchecked = vec!["WF-04", "WF-13"];
    if venv {
        unchecked.push("WF-03");
    }
    for id in &unchecked {
        assert!(row(id).ends_with("NOT CHECKED"), "{id}: {t}");
    }
    assert!(
        !t.contains("exited with Some(1)"),
        "the cause, not the exit: {t}"
    );
    assert!(t.contains("this machine lacks what some tasks need"), "{t}");
    let about = |who: &str| {
        t.lines()
            .find(|l| l.contains(who))
            .unwrap_or_else(|| panic!("nothing says {who:?}: {t}"))
            .to_string()
    };
    for who in ["the checks of WF-04", "the reference solution of WF-13"] {
        let l = about(who);
        assert!(
            l.contains("Python module `pytest`") && l.contains("-m pip install pytest"),
            "{l}"
        );
    }
    if venv {
        // the reference script's own output names the module (ModuleNotFoundError / python -m)
        let l = about("the reference solution of WF-03");
        assert!(
            l.contains("`pytest`")
                && l.contains("the command said: ")
                && l.contains("pip install pytest"),
            "{l}"
        );
    }
    assert!(
        t.contains(&format!(
            "1 passed, 0 failed, 0 invalid, {} not checked",
            unchecked.len()
        )),
        "{t}"
    );
}

#[test]
fn score_names_the_missing_module_before_scoring() {
    let d = tempfile::tempdir().unwrap();
    let (bin, _) = python_without_pytest(d.path());
    let wd = d.path().join("wf04");
    let o = lrab()
        .args(["tasks", "materialize", "WF-04", "--out", s(&wd)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let mut c = lrab();
    c.args(["score", "--task", "WF-04", s(&wd)]);
    let o = with_path(c, &bin);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("cannot score WF-04 on this machine (nothing was written)"),
        "{t}"
    );
    assert!(
        t.contains("Python module `pytest`")
            && t.contains("needed by the checks of WF-04")
            && t.contains("python -m pip install pytest"),
        "{t}"
    );
    assert!(!wd.join("score.json").exists());
}

#[test]
fn doctor_names_a_missing_python_and_its_fix() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("nothing");
    std::fs::create_dir(&empty).unwrap();
    let o = lrab()
        .args([
            "doctor",
            "--backend-url",
            &format!("http://127.0.0.1:{}", free_port()),
        ])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let line = t
        .lines()
        .find(|l| l.contains(" python3 "))
        .unwrap_or_else(|| panic!("no python3 line: {t}"));
    assert!(line.starts_with("FAIL"), "{line}");
    assert!(
        line.contains("program `python3` is missing") && line.contains("install Python 3"),
        "{line}"
    );
    let backend = t
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("backend"))
        .unwrap_or_else(|| panic!("no backend line: {t}"));
    assert!(backend.contains("unreachable"), "{t}");
    each_cause_once(backend);
}

/// A pack of our own: T-01's reference runs a script calling a program that is not on PATH;
/// T-03 has a check whose command is not on PATH.
fn pack_with_missing_programs(root: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pack");
    let pack = root.join("pack");
    lrab_tasks::copy_tree(&src, &pack).unwrap();
    let t01 = pack.join("T-01");
    std::fs::write(
        t01.join("reference/files/make_links.sh"),
        "lrab-no-such-tool --links > links.md\n",
    )
    .unwrap();
    append(
        &t01.join("task.toml"),
        "\n[reference]\ncommands = [\"sh make_links.sh\"]\n",
    );
    append(
        &pack.join("T-03/task.toml"),
        "\n[[finals]]\nartifact = \"report.md\"\nkind = \"script_pass\"\n\
         command = \"lrab-no-such-check report.md\"\nexpect_stdout = \"ok\"\ntimeout_s = 10\n",
    );
    pack
}

fn append(p: &Path, text: &str) {
    let mut s = std::fs::read_to_string(p).unwrap();
    s.push_str(text);
    std::fs::write(p, s).unwrap();
}

#[test]
fn tasks_check_names_a_program_missing_from_path() {
    let d = tempfile::tempdir().unwrap();
    let pack = pack_with_missing_programs(d.path());
    let o = lrab()
        .args(["tasks", "check", "--pack", s(&pack), "T-01", "T-03"])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    for id in ["T-01", "T-03"] {
        let row = t.lines().find(|l| l.starts_with(id)).unwrap();
        assert!(row.ends_with("NOT CHECKED"), "{row}\n{t}");
    }
    let l = t
        .lines()
        .find(|l| l.contains("program `lrab-no-such-tool` is missing"))
        .unwrap_or_else(|| panic!("the solution's program is not named: {t}"));
    assert!(
        l.contains("the reference solution of T-01")
            && l.contains("install `lrab-no-such-tool` or put it on PATH"),
        "{l}"
    );
    let l = t
        .lines()
        .find(|l| l.contains("program `lrab-no-such-check` is missing"))
        .unwrap_or_else(|| panic!("the check's program is not named: {t}"));
    assert!(l.contains("the checks of T-03"), "{l}");
}

/// When the only backend stops answering mid-run, the wait for one to come back is said like
/// the first one (what, how long at most, `--cell-backend-wait-secs`), with progress, then the
/// run stops naming it.
#[test]
fn waiting_for_a_lost_backend_to_come_back_is_said() {
    let d = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut sim = lrab()
        .args(["sim", "serve", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let gate = d.path().join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir_all(&arms).unwrap();
    let g = gate.display();
    common::sh_arm(
        &arms,
        "waiter",
        &format!("touch {g}/started; while [ ! -e {g}/go ]; do sleep 0.05; done; exit 0\n"),
    );
    let mut run = lrab()
        .args([
            "run",
            "--arms-dir",
            s(&arms),
            "--out",
            s(&d.path().join("results")),
        ])
        .args([
            "--backend",
            &url,
            "--backend-wait-secs",
            "30",
            "--no-progress",
        ])
        .args(["--cell-backend-wait-secs", "3", "--unconfined-arms"])
        .args([
            "--quiet-poll-ms",
            "20",
            "--quiet-stable-ms",
            "100",
            "--quiet-max-ms",
            "500",
        ])
        .args(["--arms", "waiter", "--models", "sim-2b", "--tasks", "WF-01"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !gate.join("started").exists() {
        assert!(t0.elapsed().as_secs() < 120, "the cell never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = sim.kill();
    let _ = sim.wait();
    std::fs::write(gate.join("go"), "").unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut err).unwrap();
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    let announced = err
        .lines()
        .position(|l| {
            l.contains("waiting up to 3 s for a backend to answer again")
                && l.contains("change with --cell-backend-wait-secs")
        })
        .unwrap_or_else(|| panic!("no announcement: {err}"));
    let last = err.lines().count() - 1;
    assert!(
        err.lines()
            .nth(last)
            .unwrap()
            .contains("no backend answers after 3 s"),
        "{err}"
    );
    assert!(announced < last, "{err}");
    assert!(
        err.contains("still waiting for a backend to answer again"),
        "{err}"
    );
    eprintln!("{err}");
}
