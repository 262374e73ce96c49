//! The `git` install kind against a local repository made here (no network): files taken at
//! their pinned commits and checked against their sha256, from a clone of the repository or
//! from the checkout or folder its `src_env` variable names; the installed arm launched through
//! the runner as the Mingbird arms are (`{install_dir}`, its venv's Python first on PATH, a
//! variable of the runner's environment removed). Bad input — a commit that is not 40 hex
//! digits, a commit the repository lacks, a file it lacks, a digest that differs — is refused
//! naming the arm, the file and the field; an install killed half way leaves `arms check`
//! saying `failed` and why, and nothing of it is used.

mod common;

use common::{fast, git, lrab, text};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The arm's program: writes what it was given into the workdir, plus a partial WF-01 answer.
const AGENT: &str = r#"import json, os, sys
json.dump({
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "agent_stream": os.environ.get("AGENT_STREAM"),
    "path0": os.environ.get("PATH", "").split(":")[0],
    "ollama_host": os.environ.get("OLLAMA_HOST"),
    "home": os.environ.get("HUMMINGBIRD_HOME"),
}, open("seen.json", "w"))
open("shortlist.md", "w").write("S001 Ti aging\n")
"#;
const CONF: &str = "SETTING = 'from the second commit'\n";

fn sha(b: &str) -> String {
    lrab_util::sha256_hex(b.as_bytes())
}

/// A repository with `agent.py` in its first commit and `conf.py` (changed) in its second.
struct Repo {
    dir: PathBuf,
    c1: String,
    c2: String,
}

fn make_repo(root: &Path) -> Repo {
    let dir = root.join("upstream");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("agent.py"), AGENT).unwrap();
    std::fs::write(dir.join("conf.py"), "SETTING = 'old'\n").unwrap();
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    let c1 = git(&dir, &["rev-parse", "HEAD"]);
    std::fs::write(dir.join("conf.py"), CONF).unwrap();
    std::fs::write(dir.join("agent.py"), "print('later')\n").unwrap();
    git(&dir, &["commit", "-q", "-am", "two"]);
    let c2 = git(&dir, &["rev-parse", "HEAD"]);
    Repo { dir, c1, c2 }
}

/// An arm file `name` of kind git; `files` is the TOML of its files list.
fn git_arm(arms: &Path, name: &str, url: &Path, commit: &str, files: &str) {
    let py = "python = \">=3.8\"\nbin = \"venv/bin/python\"\n";
    std::fs::write(
        arms.join(format!("{name}.toml")),
        format!(
            r#"name = "{name}"
program = "python"
args = ["{{install_dir}}/src/agent.py", "{{model}}", "{{prompt_file}}", "{{workdir}}"]
version_args = ["--version"]
api = "ollama"
isolate_home = true
env_remove = ["AGENT_STREAM"]

[env]
HUMMINGBIRD_HOME = "{{home}}/hb"
PATH = "{{install_dir}}/venv/bin:{{path}}"

[install]
kind = "git"
package = "{name}"
version = "1.0.0"
url = "{}"
commit = "{commit}"
src_env = "FAKE_SRC"
{py}files = [
{files}
]
"#,
            url.display()
        ),
    )
    .unwrap();
}

fn files_ok(r: &Repo) -> String {
    format!(
        "  {{ path = \"agent.py\", sha256 = \"{}\" }},\n  {{ path = \"conf.py\", commit = \"{}\", sha256 = \"{}\" }},",
        sha(AGENT),
        r.c2,
        sha(CONF)
    )
}

struct Env {
    _d: tempfile::TempDir,
    root: PathBuf,
    arms: PathBuf,
    cache: PathBuf,
}

impl Env {
    fn new() -> Env {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let (arms, cache) = (root.join("arms"), root.join("cache"));
        std::fs::create_dir_all(&arms).unwrap();
        Env {
            _d: d,
            root,
            arms,
            cache,
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = lrab();
        c.args(args)
            .arg("--arms-dir")
            .arg(&self.arms)
            .env("LRAB_ARMS_CACHE", &self.cache)
            .env_remove("FAKE_SRC");
        c
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        self.cmd(args).output().unwrap()
    }
}

#[test]
fn git_install_takes_pinned_files_checks_digests_and_launches_like_mingbird() {
    let e = Env::new();
    let r = make_repo(&e.root);
    git_arm(&e.arms, "fake", &r.dir, &r.c1, &files_ok(&r));
    let o = e.run(&["arms", "check", "fake"]);
    assert!(
        o.status.code() == Some(1) && text(&o).contains("missing  fake"),
        "{}",
        text(&o)
    );
    let o = e.run(&["arms", "install", "fake"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("git clone") && t.contains("installed fake 1.0.0 @ "),
        "{t}"
    );
    let dir = e.cache.join("git/fake@1.0.0");
    // each file from its own commit: agent.py from the first, conf.py from the second
    assert_eq!(
        std::fs::read_to_string(dir.join("src/agent.py")).unwrap(),
        AGENT
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/conf.py")).unwrap(),
        CONF
    );
    let o = e.run(&["arms", "install", "fake"]);
    assert!(
        o.status.success() && text(&o).contains("already installed"),
        "{}",
        text(&o)
    );
    let o = e.run(&["arms", "check", "fake"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("ok       fake")
            && t.contains("Python 3.")
            && t.contains("agent.py, conf.py match their sha256 (pinned 1.0.0 @ "),
        "{t}"
    );
    // A file changed in the cache afterwards: `arms check` names it and its expected digest.
    std::fs::write(dir.join("src/conf.py"), "tampered\n").unwrap();
    let o = e.run(&["arms", "check", "fake"]);
    let t = text(&o);
    assert!(
        o.status.code() == Some(1)
            && t.contains("version  fake")
            && t.contains(&format!("install.files[1].sha256 is {}", sha(CONF))),
        "{t}"
    );
    std::fs::write(dir.join("src/conf.py"), CONF).unwrap();

    // Launched through the runner on the simulator, confined, as the Mingbird arms are.
    let out = e.root.join("results");
    let o = e
        .cmd(&["run"])
        .args(fast(200, 1000, 200))
        .args(["--arms", "fake", "--models", "sim-2b", "--tasks", "WF-01"])
        .args(["--run-id", "g", "--out"])
        .arg(&out)
        .env("AGENT_STREAM", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let a = out.join("g/cells/fake/sim-2b/WF-01/r0/a0");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("workdir/seen.json")).unwrap())
            .unwrap();
    let workdir = a.join("workdir");
    assert_eq!(seen["cwd"], workdir.display().to_string(), "{seen}");
    assert_eq!(
        seen["argv"],
        serde_json::json!([
            "sim-2b",
            workdir.join("task_input.txt").display().to_string(),
            workdir.display().to_string()
        ]),
        "{seen}"
    );
    assert_eq!(seen["agent_stream"], serde_json::Value::Null, "{seen}");
    assert_eq!(
        seen["path0"],
        dir.join("venv/bin").display().to_string(),
        "{seen}"
    );
    assert!(
        seen["ollama_host"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"),
        "{seen}"
    );
    assert_eq!(
        seen["home"],
        a.join("home/hb").display().to_string(),
        "{seen}"
    );
}

#[test]
fn git_install_refuses_bad_commits_missing_files_and_digest_mismatches() {
    let e = Env::new();
    let r = make_repo(&e.root);
    // a commit that is not 40 hex digits: the arm files do not load, file and field named
    git_arm(&e.arms, "short", &r.dir, &r.c1[..7], &files_ok(&r));
    let o = e.run(&["arms", "check"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("short.toml: install.commit: '")
            && t.contains("is not a full commit id (40 lower-case hex digits)"),
        "{t}"
    );
    std::fs::remove_file(e.arms.join("short.toml")).unwrap();

    // a full id the repository does not have
    let absent = "0123456789abcdef0123456789abcdef01234567";
    git_arm(&e.arms, "nocommit", &r.dir, absent, &files_ok(&r));
    let o = e.run(&["arms", "install", "nocommit"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("failed   nocommit")
            && t.contains("arm nocommit: install.commit: commit 0123456789abcdef")
            && t.contains("is not in"),
        "{t}"
    );

    // a file the repository lacks at that commit
    let missing = format!(
        "{}\n  {{ path = \"nothere.py\", sha256 = \"{}\" }},",
        files_ok(&r),
        sha("x")
    );
    git_arm(&e.arms, "nofile", &r.dir, &r.c1, &missing);
    let o = e.run(&["arms", "install", "nofile"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("arm nofile: install.files[2].path: nothere.py is not in"),
        "{t}"
    );

    // a digest that differs: refused, naming the file and the digest expected
    let wrong = files_ok(&r).replace(&sha(CONF), &sha("something else"));
    git_arm(&e.arms, "baddigest", &r.dir, &r.c1, &wrong);
    let o = e.run(&["arms", "install", "baddigest"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!(
            "arm baddigest: install.files[1].sha256: conf.py from {}",
            r.dir.display()
        )) && t.contains(&format!(
            "has sha256 {}, expected {}",
            sha(CONF),
            sha("something else")
        )),
        "{t}"
    );
    // nothing of a refused install is used: `arms check` says failed and why
    let o = e.run(&["arms", "check", "baddigest"]);
    let t = text(&o);
    assert!(
        o.status.code() == Some(1) && t.contains("failed   baddigest") && t.contains("refused"),
        "{t}"
    );

    // from a folder named by src_env (no git there): <folder>/<commit>/<path>, then <path>
    let folder = e.root.join("files");
    std::fs::create_dir_all(folder.join(&r.c2)).unwrap();
    std::fs::write(folder.join("agent.py"), AGENT).unwrap();
    std::fs::write(folder.join(&r.c2).join("conf.py"), CONF).unwrap();
    git_arm(
        &e.arms,
        "fromdir",
        Path::new("/nonexistent/repo"),
        &r.c1,
        &files_ok(&r),
    );
    let o = e
        .cmd(&["arms", "install", "fromdir"])
        .env("FAKE_SRC", &folder)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // the folder misses a file: named, with where it was looked for
    std::fs::remove_file(folder.join("agent.py")).unwrap();
    std::fs::write(
        e.arms.join("fromdir.toml"),
        std::fs::read_to_string(e.arms.join("fromdir.toml"))
            .unwrap()
            .replace("version = \"1.0.0\"", "version = \"1.0.1\""),
    )
    .unwrap();
    let o = e
        .cmd(&["arms", "install", "fromdir"])
        .env("FAKE_SRC", &folder)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("arm fromdir: install.files[0].path: agent.py is missing from $FAKE_SRC"),
        "{t}"
    );
    // and from a checkout named by src_env (its own history, no clone)
    let o = e
        .cmd(&["arms", "install", "nocommit"])
        .env("FAKE_SRC", &r.dir)
        .output()
        .unwrap();
    assert!(
        text(&o).contains("install.commit: commit 0123456789abcdef")
            && text(&o).contains("$FAKE_SRC"),
        "{}",
        text(&o)
    );
}

/// An install killed half way (the source folder's second file is a FIFO nobody writes, so
/// reading it blocks): `arms check` says failed, at which step and why; the arm is not used.
#[test]
fn an_install_killed_half_way_is_reported_failed_and_never_used() {
    let e = Env::new();
    let r = make_repo(&e.root);
    let folder = e.root.join("files");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("agent.py"), AGENT).unwrap();
    let fifo = folder.join("conf.py");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    git_arm(&e.arms, "half", &r.dir, &r.c1, &files_ok(&r));
    let mut child = e
        .cmd(&["arms", "install", "half"])
        .env("FAKE_SRC", &folder)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = e.cache.join("logs/half@1.0.0.status.json");
    let t0 = Instant::now();
    while !std::fs::read_to_string(&status).is_ok_and(|s| s.contains("take the files")) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "install never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let o = e.run(&["arms", "check", "half"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("failed   half")
            && t.contains("failed at step 'take the files from")
            && t.contains("did not finish (interrupted, or still running)"),
        "{t}"
    );
    assert!(!e.cache.join("git/half@1.0.0/.lrab-install.json").exists());
    let o = e
        .cmd(&["run"])
        .args(fast(200, 1000, 200))
        .args([
            "--arms", "half", "--models", "sim-2b", "--tasks", "WF-01", "--out",
        ])
        .arg(e.root.join("results"))
        .output()
        .unwrap();
    assert!(
        !o.status.success() && text(&o).contains("arm 'half' is not installed"),
        "{}",
        text(&o)
    );
}
