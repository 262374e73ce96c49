//! The safety rings in the harness, through the real agent loop with a scripted model: the
//! classifier refuses what it can see, the kernel confinement stops what it cannot (writes
//! outside the workdir, the real home's credentials, the network), and benign task commands
//! (python scripts, pytest, local servers) still work.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::ConfinedExecutor;
use lrab_harness::{Agent, Reply, Role};
use lrab_safety::Sandbox;
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};

const TASK: &str =
    "Compute the totals.\nRequired steps (plan at least 2):\n1. Write out.txt.\n2. Finish.";

fn call(name: &str, args: serde_json::Value) -> Reply {
    Reply::call(name, args)
}

/// A run directory: `<tmp>/work` (the workdir), `<tmp>/home` (the "real" home with a key),
/// `<tmp>/outside` (a folder the model must not write).
struct Setup {
    tmp: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["work", "home/.ssh", "outside"] {
            fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        fs::write(
            tmp.path().join("home/.ssh/id_rsa"),
            "-----BEGIN KEY----- TOPSECRET-42\n",
        )
        .unwrap();
        fs::write(tmp.path().join("keep.txt"), "sibling of the workdir\n").unwrap();
        Setup { tmp }
    }
    fn wd(&self) -> PathBuf {
        self.tmp.path().join("work")
    }
    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }
    fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }
    /// Run the scripted calls; returns the agent (the model saw each tool result on the next
    /// call).
    fn run(&self, calls: Vec<Reply>) -> Agent<ScriptedModel> {
        let mut c = config(&self.wd(), TASK);
        c.real_home = Some(self.home());
        let mut a = Agent::new(c, ScriptedModel::replies(calls)).unwrap();
        a.sleeper = Box::new(|_| {});
        a.run();
        a
    }
}

/// The tool result of scripted call `i` (what the model saw on call `i + 1`).
fn result(a: &Agent<ScriptedModel>, i: usize) -> String {
    a.model.seen[i + 1]
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

fn sh(cmd: &str) -> Reply {
    call("run_shell", json!({ "command": cmd, "timeout": 30 }))
}

#[test]
fn writes_outside_the_workdir_are_refused_or_fail() {
    let s = Setup::new();
    let target = s.outside().join("escaped.txt");
    // a path the classifier cannot see (read from a file at run time): the kernel stops it
    fs::write(
        s.wd().join("target.txt"),
        target.to_string_lossy().as_bytes(),
    )
    .unwrap();
    let a = s.run(vec![
        call(
            "write_file",
            json!({"path": "w.py", "content": "p = open('target.txt').read().strip()\nopen(p, 'w').write('x')\nprint('WROTE')\n"}),
        ),
        sh("python3 w.py"),
        sh(&format!("echo hi > {}", s.outside().join("direct.txt").display())),
        call(
            "write_file",
            json!({"path": s.outside().join("tool.txt"), "content": "x"}),
        ),
        sh("echo still-running > alive.txt"),
    ]);
    let r1 = result(&a, 1);
    assert!(r1.contains("[exit 1]") && !r1.contains("WROTE"), "{r1}");
    assert!(r1.contains("ermission") || r1.contains("Read-only"), "{r1}");
    assert!(!target.exists());
    let r2 = result(&a, 2);
    assert!(r2.contains("refused"), "{r2}");
    assert!(!s.outside().join("direct.txt").exists());
    assert!(result(&a, 3).contains("outside the working directory"));
    assert!(!s.outside().join("tool.txt").exists());
    // a refusal is a tool result, not the end of the run
    assert_eq!(
        fs::read_to_string(s.wd().join("alive.txt")).unwrap(),
        "still-running\n"
    );
}

#[test]
fn recursive_delete_of_the_parent_is_refused_with_the_alternative() {
    let s = Setup::new();
    let a = s.run(vec![sh("rm -rf .."), sh("rm -rf ../outside")]);
    for i in 0..2 {
        let r = result(&a, i);
        assert!(r.contains("refused"), "{r}");
        assert!(r.contains("find") && r.contains("rm FILE"), "{r}");
    }
    assert!(s.tmp.path().join("keep.txt").exists());
    assert!(s.outside().is_dir());
    assert!(s.wd().is_dir());
}

#[test]
fn the_real_homes_key_is_not_readable_through_links() {
    let s = Setup::new();
    let key = s.home().join(".ssh/id_rsa");
    std::os::unix::fs::symlink(&key, s.wd().join("notes.txt")).unwrap();
    fs::write(
        s.wd().join("r.py"),
        "print(open(open('which.txt').read().strip()).read())\n",
    )
    .unwrap();
    fs::write(s.wd().join("which.txt"), key.to_string_lossy().as_bytes()).unwrap();
    let a = s.run(vec![
        call("read_file", json!({"path": "notes.txt"})),
        sh("cat notes.txt"),
        sh(&format!("cat {}", key.display())),
        // the classifier does not see the path in argv of a script: the kernel hides it
        sh("python3 r.py"),
    ]);
    for i in 0..4 {
        let r = result(&a, i);
        assert!(!r.contains("TOPSECRET"), "call {i}: {r}");
    }
    assert!(result(&a, 0).starts_with("error:"));
    assert!(result(&a, 0).contains("[safety ring 4"));
    assert!(result(&a, 1).contains("refused"));
    assert!(result(&a, 2).contains("refused"));
    let r3 = result(&a, 3);
    assert!(
        r3.contains("[exit 1]") && r3.contains("PermissionError"),
        "{r3}"
    );
}

#[test]
fn a_planted_hard_link_to_a_secret_stops_the_start() {
    // path-based confinement cannot hide an inode that already has a name inside the workdir
    let s = Setup::new();
    fs::hard_link(s.home().join(".ssh/id_rsa"), s.wd().join("data.txt")).unwrap();
    let mut c = config(&s.wd(), TASK);
    c.real_home = Some(s.home());
    let e = match Agent::new(c, ScriptedModel::replies(vec![])) {
        Ok(_) => panic!("the run started with a hard link to the key in its workdir"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("data.txt") && e.contains("hard links"), "{e}");
}

#[test]
fn a_planted_hard_link_to_any_outside_file_stops_the_start() {
    // not a credential, but its bytes are an outside file's: a private copy would still hand
    // them to the model
    let s = Setup::new();
    let plan = s.outside().join("plan.md");
    fs::write(&plan, "original plan\n").unwrap();
    fs::hard_link(&plan, s.wd().join("p.md")).unwrap();
    let mut c = config(&s.wd(), TASK);
    c.real_home = Some(s.home());
    let e = match Agent::new(c, ScriptedModel::replies(vec![])) {
        Ok(_) => panic!("the run started with a hard link to an outside file in its workdir"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("p.md") && e.contains("outside it"), "{e}");
    assert_eq!(fs::read_to_string(&plan).unwrap(), "original plan\n");
}

#[test]
fn shrinking_a_large_file_needs_the_replace_flag() {
    let s = Setup::new();
    let big = "row,value\n".repeat(300);
    fs::write(s.wd().join("data.csv"), &big).unwrap();
    let a = s.run(vec![
        call(
            "write_file",
            json!({"path": "data.csv", "content": "row,value\n"}),
        ),
        call(
            "write_file",
            json!({"path": "data.csv", "content": "row,value\n", "replace": true}),
        ),
    ]);
    let r0 = result(&a, 0);
    assert!(
        r0.contains("[safety ring 5") && r0.contains("replace=true") && r0.contains("data.csv"),
        "{r0}"
    );
    assert!(!result(&a, 1).starts_with("error"), "{}", result(&a, 1));
    assert_eq!(
        fs::read_to_string(s.wd().join("data.csv")).unwrap(),
        "row,value\n"
    );
    // and the previous version is kept
    let backups: Vec<_> = fs::read_dir(common::state_of(&s.wd()).join("backups"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("data.csv"))
        .collect();
    assert_eq!(backups.len(), 1);
}

/// The mount-namespace fallback, forced on a machine that also has Landlock: the same
/// boundaries hold through the agent loop.
#[test]
fn the_namespace_fallback_confines_like_landlock() {
    let ok = std::process::Command::new("unshare")
        .args(["-Urmn", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok || Sandbox::detect() == Sandbox::None,
        "user namespaces unavailable but Landlock present: cannot test the fallback here"
    );
    if !ok {
        return;
    }
    let s = Setup::new();
    let ex = ConfinedExecutor::with_backend(
        &s.wd(),
        &common::open_state(&s.wd()),
        &s.home(),
        false,
        Sandbox::Namespaces,
    )
    .unwrap();
    let mut c = config(&s.wd(), TASK);
    c.real_home = Some(s.home());
    // the paths come from data files, so only the kernel can stop the scripts
    fs::write(
        s.wd().join("a.txt"),
        s.home().join(".ssh/id_rsa").to_string_lossy().as_bytes(),
    )
    .unwrap();
    fs::write(
        s.wd().join("b.txt"),
        s.outside().join("esc.txt").to_string_lossy().as_bytes(),
    )
    .unwrap();
    fs::write(
        s.wd().join("r.py"),
        "try:\n    print(open(open('a.txt').read().strip()).read())\nexcept OSError as e:\n    print('denied', type(e).__name__)\n",
    )
    .unwrap();
    fs::write(
        s.wd().join("w.py"),
        "try:\n    open(open('b.txt').read().strip(), 'w').write('x')\n    print('wrote')\nexcept OSError as e:\n    print('denied', type(e).__name__)\n",
    )
    .unwrap();
    let calls = vec![
        sh("python3 r.py"),
        sh("python3 w.py"),
        sh("echo inside > in.txt && cat in.txt"),
        sh("python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=2)\""),
    ];
    let mut a = Agent::with_executor(c, ScriptedModel::replies(calls), Box::new(ex)).unwrap();
    a.sleeper = Box::new(|_| {});
    a.run();
    let r0 = result(&a, 0);
    assert!(r0.contains("denied") && !r0.contains("TOPSECRET"), "{r0}");
    assert!(result(&a, 1).contains("denied"), "{}", result(&a, 1));
    assert!(!s.outside().join("esc.txt").exists());
    assert!(result(&a, 2).contains("inside"), "{}", result(&a, 2));
    assert!(fs::read_to_string(s.wd().join("in.txt")).is_ok());
    assert!(!result(&a, 3).contains("[exit 0]"), "{}", result(&a, 3));
}

#[test]
fn the_network_is_cut_but_loopback_servers_of_the_command_work() {
    let s = Setup::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    fs::write(
        s.wd().join("client.py"),
        format!("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\nprint('CONNECTED')\n"),
    )
    .unwrap();
    fs::write(
        s.wd().join("local.py"),
        "import socket\nsrv = socket.socket()\nsrv.bind(('127.0.0.1', 0))\nsrv.listen(1)\nc = socket.create_connection(srv.getsockname(), timeout=3)\nconn, _ = srv.accept()\nc.sendall(b'ping')\nprint('LOCAL', conn.recv(4).decode())\n",
    )
    .unwrap();
    let a = s.run(vec![sh("python3 client.py"), sh("python3 local.py")]);
    let r0 = result(&a, 0);
    assert!(
        !r0.contains("CONNECTED") && !r0.contains("[exit 0]"),
        "{r0}"
    );
    assert!(matches!(
        listener.accept().map_err(|e| e.kind()),
        Err(std::io::ErrorKind::WouldBlock)
    ));
    let r1 = result(&a, 1);
    assert!(r1.contains("LOCAL ping"), "{r1}");
}

#[test]
fn benign_task_commands_work_with_a_private_home() {
    let s = Setup::new();
    let a = s.run(vec![
        call(
            "write_file",
            json!({"path": "calc.py", "content": "import os, tempfile\nopen('out.txt', 'w').write(str(sum(range(10))) + '\\n')\nopen(os.path.expanduser('~/data.json'), 'w').write('{}')\nprint('HOME=' + os.environ['HOME'])\nprint('TMP=' + tempfile.mkdtemp())\n"}),
        ),
        sh("python3 calc.py"),
        call(
            "write_file",
            json!({"path": "test_calc.py", "content": "def test_total():\n    assert open('out.txt').read().strip() == '45'\n"}),
        ),
        sh("python3 -m pytest -q test_calc.py"),
    ]);
    let r1 = result(&a, 1);
    assert!(r1.contains("[exit 0]"), "{r1}");
    assert!(
        r1.contains("sandbox/home") && r1.contains("sandbox/tmp") && !r1.contains("work/.lrab"),
        "{r1}"
    );
    assert_eq!(fs::read_to_string(s.wd().join("out.txt")).unwrap(), "45\n");
    assert!(common::state_of(&s.wd())
        .join("sandbox/home/data.json")
        .exists());
    assert!(!s.home().join("data.json").exists());
    let r3 = result(&a, 3);
    assert!(
        r3.to_lowercase().contains("[verdict: passed]") && r3.contains("1 passed"),
        "{r3}"
    );
}

fn agent_with(wd: &Path, home: &Path, allow: bool, calls: Vec<Reply>) -> Agent<ScriptedModel> {
    let ex =
        ConfinedExecutor::with_backend(wd, &common::open_state(wd), home, allow, Sandbox::None)
            .unwrap();
    let mut c = config(wd, TASK);
    c.real_home = Some(home.to_path_buf());
    let mut a = Agent::with_executor(c, ScriptedModel::replies(calls), Box::new(ex)).unwrap();
    a.sleeper = Box::new(|_| {});
    a.run();
    a
}

#[test]
fn without_confinement_commands_are_refused_unless_allowed() {
    let s = Setup::new();
    let a = agent_with(
        &s.wd(),
        &s.home(),
        false,
        vec![
            sh("echo hi > hi.txt"),
            call(
                "write_file",
                json!({"path": "hi.txt", "content": "by tool\n"}),
            ),
        ],
    );
    let r = result(&a, 0);
    assert!(
        r.contains("--allow-unconfined") && r.contains("write_file"),
        "{r}"
    );
    assert_eq!(
        fs::read_to_string(s.wd().join("hi.txt")).unwrap(),
        "by tool\n"
    );
    let s2 = Setup::new();
    let b = agent_with(&s2.wd(), &s2.home(), true, vec![sh("echo hi > hi.txt")]);
    assert!(result(&b, 0).contains("[exit 0]"));
    assert_eq!(fs::read_to_string(s2.wd().join("hi.txt")).unwrap(), "hi\n");
}
