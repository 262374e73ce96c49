//! The harness's state is out of the model's reach: model-chosen shell commands replace every
//! place the state used to be or could be found (`.lrab`, `.lrab/out`, `.lrab/tmp`, the event
//! log, backups, trash; the real state folder through `$HOME/../..`, the private `TMPDIR`)
//! with symlinks to a fake HOME, then the model makes the harness write, back up, delete,
//! save outputs, and resume. Nothing in the fake HOME or beside the workdir may change, no
//! new file may appear outside the workdir except in the state folder, and no canary byte
//! may reach the model.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::{Agent, Reply, Role};
use lrab_safety::Sandbox;
use serde_json::json;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const TASK: &str = "Keep notes.\nRequired steps (plan at least 2):\n1. Edit notes.txt.\n2. Finish.";
const SECRET: &str = "HOME-CANARY-7741";

struct Run {
    tmp: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path();
        for d in ["work", "home/.ssh", "home/.aws", "sibling"] {
            fs::create_dir_all(p.join(d)).unwrap();
        }
        fs::write(p.join("home/.ssh/id_rsa"), format!("KEY {SECRET} a\n")).unwrap();
        fs::write(p.join("home/.aws/credentials"), format!("AWS {SECRET} b\n")).unwrap();
        fs::write(p.join("home/.bashrc"), format!("# {SECRET} c\n")).unwrap();
        fs::write(p.join("sibling/secret.txt"), format!("SIB {SECRET} d\n")).unwrap();
        fs::write(p.join("work/notes.txt"), "inside line one\n").unwrap();
        Run { tmp }
    }
    fn wd(&self) -> PathBuf {
        self.tmp.path().join("work")
    }
    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }
    fn state(&self) -> PathBuf {
        self.tmp.path().join("state")
    }
    /// Every file outside the workdir and the state folder, with its content and mode.
    fn outside(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut m = BTreeMap::new();
        walk(self.tmp.path(), &[self.wd(), self.state()], &mut m);
        m
    }
    fn agent(&self, calls: Vec<Reply>) -> Agent<ScriptedModel> {
        let mut c = config(&self.wd(), TASK);
        c.real_home = Some(self.home());
        c.state_dir = Some(self.state());
        let mut a = Agent::new(c, ScriptedModel::replies(calls)).unwrap();
        a.sleeper = Box::new(|_| {});
        a
    }
}

fn walk(dir: &Path, skip: &[PathBuf], out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if skip.contains(&p) {
            continue;
        }
        let md = fs::symlink_metadata(&p).unwrap();
        if md.is_dir() {
            out.insert(p.clone(), b"<dir>".to_vec());
            walk(&p, skip, out);
        } else if md.file_type().is_symlink() {
            out.insert(
                p.clone(),
                fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            );
        } else {
            let mut v = fs::read(&p).unwrap();
            v.extend(format!(" mode={:o}", md.permissions().mode_bits()).bytes());
            out.insert(p, v);
        }
    }
}

trait ModeBits {
    fn mode_bits(&self) -> u32;
}
impl ModeBits for fs::Permissions {
    fn mode_bits(&self) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        self.mode()
    }
}

fn sh(cmd: String) -> Reply {
    Reply::call("run_shell", json!({ "command": cmd, "timeout": 30 }))
}

/// Everything the harness sent to the model.
fn seen(a: &Agent<ScriptedModel>) -> String {
    a.model
        .seen
        .iter()
        .flat_map(|r| r.messages.iter())
        .filter(|m| m.role != Role::System)
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn confined() -> bool {
    Sandbox::detect() != Sandbox::None
}

/// The attacks, as shell commands; `{H}` is the fake HOME.
fn attacks(home: &Path) -> Vec<String> {
    let h = home.display().to_string();
    [
        // the places the state used to be, in the workdir
        "mkdir -p .lrab && ln -s {H} .lrab.new && mv -T .lrab.new .lrab; ls -la",
        "rm -rf .lrab; mkdir -p .lrab; for d in out tmp home backups trash; do ln -s {H} .lrab/$d; done; ln -s {H}/.bashrc .lrab/events.jsonl; ln -s {H}/.bashrc .lrab/checkpoint.json; ln -s {H}/.bashrc .lrab/report.json; ls -la .lrab",
        // the real state folder, found from the private HOME
        "ls -la \"$HOME/../..\"; cat \"$HOME/../../checkpoint.json\" | head -c 200",
        "ln -s {H}/.bashrc \"$HOME/../../out/99.txt\"; mv \"$HOME/../../out\" \"$HOME/../../out.old\"; ln -s {H} \"$HOME/../../out\"; echo attempted",
        "printf '{\"kind\":\"x\"}\\n' >> \"$HOME/../../events.jsonl\"; mv \"$HOME/../../backups\" \"$HOME/bk\"; ln -s {H}/.ssh \"$HOME/../../backups\"; ln -s {H} \"$HOME/../../trash\"; echo attempted",
        "mv \"$HOME/..\" /tmp/gone; ln -s {H} \"$HOME/../../sandbox\"; echo attempted",
        // the private TMPDIR and HOME swapped for links to the fake HOME (the next commands
        // use them)
        "rm -rf \"$TMPDIR\" && ln -s {H} \"$TMPDIR\"; rm -rf \"$HOME\"; ln -s {H} \"$HOME\"; ls -la \"$HOME/../\"",
        "cat \"$TMPDIR/.ssh/id_rsa\"; cat \"$HOME/.aws/credentials\"; echo pwned >> \"$HOME/.bashrc\"; touch \"$TMPDIR/.ssh/authorized_keys\"; ls \"$TMPDIR\"",
        // the sibling, through computed paths
        "cat \"$(dirname \"$PWD\")/sibling/secret.txt\"; d=..; cat $d/sibling/*",
    ]
    .iter()
    .map(|c| c.replace("{H}", &h))
    .collect()
}

/// The same attacks as a Python script whose paths come from a data file, so the classifier
/// sees no path at all and only the kernel confinement stands in the way.
const SCRIPT: &str = r#"import json, os, shutil
H = json.load(open('targets.json'))['h']
S = os.path.normpath(os.path.join(os.environ['HOME'], '..', '..'))
def tryit(f, *a):
    try:
        f(*a)
        print('did', f.__name__, a)
    except Exception as e:
        print('no', f.__name__, type(e).__name__)
for p in ['out', 'backups', 'trash', 'sandbox']:
    tryit(os.rename, os.path.join(S, p), os.path.join(S, p + '.old'))
    tryit(os.symlink, H, os.path.join(S, p))
for p in ['events.jsonl', 'checkpoint.json', 'report.json', 'out/77.txt']:
    tryit(os.symlink, os.path.join(H, '.bashrc'), os.path.join(S, p))
tryit(lambda: open(os.path.join(S, 'events.jsonl'), 'a').write('{"kind":"x"}
'))
tryit(lambda: print(open(os.path.join(S, 'checkpoint.json')).read()[:100]))
T = os.environ['TMPDIR']
tryit(shutil.rmtree, T)
tryit(os.symlink, H, T)
tryit(lambda: print(open(os.path.join(T, '.ssh', 'id_rsa')).read()))
tryit(lambda: open(os.path.join(T, '.bashrc'), 'a').write('pwned
'))
tryit(lambda: print(open(os.path.join(os.path.dirname(os.getcwd()), 'sibling', 'secret.txt')).read()))
"#;

#[test]
fn shell_commands_cannot_redirect_or_read_the_harness_state() {
    if !confined() {
        eprintln!(
            "no kernel confinement on this machine: model commands are refused, nothing to attack"
        );
        return;
    }
    let r = Run::new();
    let before = r.outside();
    fs::write(
        r.wd().join("targets.json"),
        json!({"h": r.home()}).to_string(),
    )
    .unwrap();
    fs::write(r.wd().join("attack.py"), SCRIPT).unwrap();
    let mut calls: Vec<Reply> = attacks(&r.home()).into_iter().map(sh).collect();
    calls.push(sh("python3 attack.py".into()));
    calls.push(sh("python3 attack.py".into()));
    // make the harness write, back up, delete, save outputs
    calls.extend([
        Reply::call(
            "write_file",
            json!({"path": "notes.txt", "content": "second\n"}),
        ),
        Reply::call(
            "edit_file",
            json!({"path": "notes.txt", "old": "second", "new": "third"}),
        ),
        Reply::call(
            "append_file",
            json!({"path": "notes.txt", "content": "fourth\n"}),
        ),
        Reply::call("write_file", json!({"path": "junk.txt", "content": "j\n"})),
        Reply::call("delete_file", json!({"path": "junk.txt"})),
        Reply::call("rollback", json!({"path": "notes.txt"})),
        sh("seq 1 5000".into()),
        Reply::call("read_file", json!({"path": ".lrab/out/1.txt"})),
        Reply::call("read_file", json!({"path": ".lrab/events.jsonl"})),
    ]);
    let mut a = r.agent(calls.clone());
    for _ in 0..calls.len() {
        a.step();
    }
    let text = seen(&a);
    drop(a);
    // relaunch on the same folders (a resume appends to the event log, reloads the checkpoint)
    let mut a = r.agent(vec![
        sh("echo after-resume".into()),
        Reply::call(
            "write_file",
            json!({"path": "notes.txt", "content": "fifth\n"}),
        ),
        Reply::call("finish", json!({"summary": "done"})),
    ]);
    assert!(a.resumed, "{:?}", a.warnings);
    a.run();
    let text = format!("{text}\n{}", seen(&a));
    let after = r.outside();
    assert_eq!(
        before, after,
        "something outside the workdir and the state folder changed"
    );
    assert!(!text.contains(SECRET), "a canary reached the model");
    // the state is where it belongs and intact
    let st = r.state();
    let ev = fs::read_to_string(st.join("events.jsonl")).unwrap();
    assert!(ev
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    assert!(
        !ev.contains("{\"kind\":\"x\"}"),
        "a command appended to the event log"
    );
    assert!(ev.contains("after-resume"));
    assert!(fs::symlink_metadata(st.join("out")).unwrap().is_dir());
    assert!(fs::symlink_metadata(st.join("backups")).unwrap().is_dir());
    assert!(fs::read_dir(st.join("trash")).unwrap().count() >= 1);
    assert!(!st.join("out/99.txt").exists());
    assert!(fs::read_to_string(r.wd().join("notes.txt"))
        .unwrap()
        .contains("fifth"));
}

#[test]
fn saved_outputs_are_read_from_the_state_folder_not_the_workdir() {
    if !confined() {
        return;
    }
    let r = Run::new();
    // the workdir holds a decoy `.lrab/out/1.txt` that is a link to the fake HOME's key
    fs::create_dir_all(r.wd().join(".lrab/out")).unwrap();
    std::os::unix::fs::symlink(r.home().join(".ssh/id_rsa"), r.wd().join(".lrab/out/1.txt"))
        .unwrap();
    let mut a = r.agent(vec![
        sh("for i in $(seq 1 3000); do echo row$i; done".into()),
        Reply::call(
            "read_file",
            json!({"path": ".lrab/out/1.txt", "start_line": 2999}),
        ),
        Reply::call("finish", json!({"summary": "done"})),
    ]);
    a.run();
    let text = seen(&a);
    assert!(!text.contains(SECRET));
    assert!(text.contains("row3000"), "{text}");
    assert!(text.contains("(read_file)"), "{text}");
}
