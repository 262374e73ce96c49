//! A hostile arm: its program is a shell script that tries to write outside its workdir (a
//! canary in the user's HOME, a sibling folder of the run, the host's /tmp), to read the
//! user's secret, to connect to a TCP listener on another port of 127.0.0.1 and to a unix
//! socket listener, and leaves `nohup` and `setsid` loops behind, and a job that calls its
//! backend only after the main process has exited. Run by `lrab run` as every arm is
//! (confined), none of the attacks gets through, the late job still reaches the backend,
//! nothing of it is left running, and the cell is still scored. The same arm with
//! `--unconfined-arms` is the control: there every attack works (so the test can fail).

mod common;

use common::{lrab, quick, running_below, running_below_after, text};
use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SECRET: &str = "HOSTILE-ARM-SECRET-7d2a";
const CANARY: &str = "canary: untouched\n";

/// Every attack, then a partial WF-01 answer so the cell has something to score.
const SCRIPT: &str = r#"
cat "$1" > /dev/null; echo read task_input.txt
echo pwned >> "$HOSTILE_HOME/canary.txt"
echo pwned > "$HOSTILE_HOME/planted.txt"
echo pwned > "$HOSTILE_SIBLING/planted.txt"
echo pwned > "$HOSTILE_TMP"
cat "$HOSTILE_HOME/.ssh/id_rsa" > stolen.txt
cat "$HOSTILE_HOME/.ssh/id_rsa"
python3 - <<'EOF'
import os, socket
for what, make, addr in [
    ("tcp", lambda: socket.socket(), ("127.0.0.1", int(os.environ["HOSTILE_PORT"]))),
    ("unix", lambda: socket.socket(socket.AF_UNIX), os.environ["HOSTILE_SOCK"]),
]:
    try:
        s = make(); s.settimeout(3); s.connect(addr); s.sendall(b"pwned"); s.close()
        print(what, "connected")
    except Exception as e:
        print(what, "refused:", e)
# what it may do: reach its backend, run a server of its own on its loopback
import urllib.request
try:
    urllib.request.urlopen(os.environ["OLLAMA_HOST"] + "/api/tags", timeout=5).read()
    print("backend reachable")
except Exception as e:
    print("backend unreachable:", e)
try:
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
    socket.create_connection(srv.getsockname(), timeout=3).close(); print("own server ok")
except Exception as e:
    print("own server failed:", e)
EOF
nohup sh -c 'while :; do echo x >> bg-nohup.txt; sleep 0.2; done' > /dev/null 2>&1 &
setsid sh -c 'while :; do echo x >> bg-setsid.txt; sleep 0.2; done' > /dev/null 2>&1 &
# a leftover that needs its backend only after the main process has exited
(sleep 0.4; python3 -c '
import os, urllib.request
try:
    urllib.request.urlopen(os.environ["OLLAMA_HOST"] + "/api/tags", timeout=5).read()
    print("late backend reachable")
except Exception as e:
    print("late backend unreachable:", e)
' > late-backend.txt 2>&1) > /dev/null 2>&1 &
printf 'S001 Ti aging\n' > shortlist.md
exit 0
"#;

struct World {
    _d: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    sibling: PathBuf,
    tmp_canary: PathBuf,
    arms: PathBuf,
    out: PathBuf,
    tcp: TcpListener,
    unix: UnixListener,
}

impl World {
    fn new() -> World {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let home = root.join("home");
        let out = root.join("results");
        let sibling = out.join("sibling");
        let arms = root.join("arms");
        for p in [&home.join(".ssh"), &sibling, &arms] {
            std::fs::create_dir_all(p).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), SECRET).unwrap();
        std::fs::write(home.join("canary.txt"), CANARY).unwrap();
        let tmp_canary = std::env::temp_dir().join(format!(
            "lrab-hostile-{}-{}",
            std::process::id(),
            root.file_name().unwrap().to_string_lossy()
        ));
        let _ = std::fs::remove_file(&tmp_canary);
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let unix = UnixListener::bind(root.join("agent.sock")).unwrap();
        unix.set_nonblocking(true).unwrap();
        std::fs::write(arms.join("hostile.sh"), SCRIPT).unwrap();
        let arm = format!(
            "name = \"hostile\"\nprogram = \"/bin/sh\"\nargs = [\"{}\", \"{{prompt_file}}\"]\napi = \"ollama\"\nversion_args = [\"-c\", \"echo hostile 1.0\"]\n[env]\nHOSTILE_HOME = \"{}\"\nHOSTILE_SIBLING = \"{}\"\nHOSTILE_TMP = \"{}\"\nHOSTILE_PORT = \"{}\"\nHOSTILE_SOCK = \"{}\"\n",
            arms.join("hostile.sh").display(),
            home.display(),
            sibling.display(),
            tmp_canary.display(),
            tcp.local_addr().unwrap().port(),
            root.join("agent.sock").display(),
        );
        std::fs::write(arms.join("hostile.toml"), arm).unwrap();
        World {
            _d: d,
            root,
            home,
            sibling,
            tmp_canary,
            arms,
            out,
            tcp,
            unix,
        }
    }

    /// `lrab run` of the hostile arm on WF-01 into `results/<id>`, the runner's HOME = the
    /// fake user home.
    fn run(&self, id: &str, extra: &[&str]) -> String {
        let o = quick("run", &self.arms, &self.out, (300, 1500, 200))
            .args([
                "--arms", "hostile", "--models", "sim-2b", "--tasks", "WF-01", "--run-id", id,
            ])
            .args(extra)
            .env("HOME", &self.home)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    }

    /// What the listeners received.
    fn received(&self) -> Vec<String> {
        let mut got = Vec::new();
        while let Ok((mut s, _)) = self.tcp.accept() {
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut b = String::new();
            let _ = s.read_to_string(&mut b);
            got.push(format!("tcp:{b}"));
        }
        while let Ok((mut s, _)) = self.unix.accept() {
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut b = String::new();
            let _ = s.read_to_string(&mut b);
            got.push(format!("unix:{b}"));
        }
        got
    }

    /// Host pids of live processes working below this world.
    fn running(&self) -> Vec<i32> {
        running_below(&self.root)
    }

    fn settle_running(&self) -> Vec<i32> {
        running_below_after(&self.root, Duration::from_secs(3))
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for pid in self.running() {
            // SAFETY: SIGKILL to leftovers of the control run below this test's folder.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_file(&self.tmp_canary);
    }
}

fn cells_rows(run: &Path) -> Vec<String> {
    std::fs::read_to_string(run.join("cells.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(String::from)
        .collect()
}

fn attempt_dir(run: &Path) -> PathBuf {
    run.join("cells/hostile/sim-2b/WF-01/r0/a0")
}

/// Every file below `dir` holding `needle`.
fn files_with(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut st = vec![dir.to_path_buf()];
    while let Some(d) = st.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                st.push(p);
            } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle))
            {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_hostile_arm_is_confined_reaped_and_still_scored() {
    let w = World::new();
    let printed = w.run("confined", &[]);
    assert!(printed.contains("arms confined: Landlock"), "{printed}");
    let run = w.out.join("confined");
    let a = attempt_dir(&run);

    // writes outside failed
    assert_eq!(
        std::fs::read_to_string(w.home.join("canary.txt")).unwrap(),
        CANARY
    );
    assert!(!w.home.join("planted.txt").exists());
    assert!(!w.sibling.join("planted.txt").exists());
    assert!(!w.tmp_canary.exists(), "{}", w.tmp_canary.display());
    // the secret was not read: nowhere in the run (transcript, workdir, score)
    assert_eq!(files_with(&run, SECRET), Vec::<PathBuf>::new());
    // other connections failed; the listeners got nothing
    let tr = std::fs::read_to_string(a.join("transcript.txt")).unwrap();
    assert!(
        tr.contains("tcp refused") && tr.contains("unix refused"),
        "{tr}"
    );
    assert!(
        tr.contains("backend reachable") && tr.contains("own server ok"),
        "{tr}"
    );
    assert_eq!(w.received(), Vec::<String>::new());
    // a leftover still reached the backend after the main process had exited
    let late = std::fs::read_to_string(a.join("workdir/late-backend.txt")).unwrap_or_default();
    assert_eq!(late.trim(), "late backend reachable");
    // the background loops ran (in the workdir), and nothing is left running
    assert!(a.join("workdir/bg-nohup.txt").exists() && a.join("workdir/bg-setsid.txt").exists());
    assert_eq!(w.settle_running(), Vec::<i32>::new(), "left running");
    let size = |f: &str| std::fs::metadata(a.join("workdir").join(f)).unwrap().len();
    let before = (size("bg-nohup.txt"), size("bg-setsid.txt"));
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        before,
        (size("bg-nohup.txt"), size("bg-setsid.txt")),
        "loops stopped"
    );
    // the cell ended and was scored
    let sj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("score.json")).unwrap()).unwrap();
    assert_eq!(sj["confined"], true, "{sj}");
    assert!(sj["total"].as_f64().unwrap() > 0.0, "{sj}");
    let rows = cells_rows(&run);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].contains(",completed,"), "{rows:?}");
    let m = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(
        m.contains("\"arm_confinement\": \"arms confined: Landlock"),
        "{m}"
    );

    // control: the same arm unconfined — every attack works
    let w = World::new();
    let printed = w.run("unconfined", &["--unconfined-arms"]);
    assert!(printed.contains("arms run UNCONFINED"), "{printed}");
    let run = w.out.join("unconfined");
    let a = attempt_dir(&run);
    assert!(std::fs::read_to_string(w.home.join("canary.txt"))
        .unwrap()
        .contains("pwned"));
    assert!(w.home.join("planted.txt").exists() && w.sibling.join("planted.txt").exists());
    assert!(w.tmp_canary.exists());
    assert!(!files_with(&run, SECRET).is_empty());
    let mut got = w.received();
    got.sort();
    assert_eq!(got, ["tcp:pwned", "unix:pwned"]);
    let sj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("score.json")).unwrap()).unwrap();
    assert_eq!(sj["confined"], false, "{sj}");
    let m = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(m.contains("\"unconfined_arms\": true"), "{m}");
    // the setsid loop left the arm's process group: only the pid namespace catches it
    assert!(
        !w.settle_running().is_empty(),
        "the control's setsid loop escaped the group kill"
    );
}

/// A hostile arm whose *version command* writes outside (the system temp folders, the user's
/// home, its own arm folder): every command that probes the version — `arms check`, `arms
/// list`, `doctor`, the probe behind `lrab run` — runs it under the arm confinement, so none
/// of the writes lands, while the command itself runs (its version line is read). The control
/// runs the same command directly: there every write lands (so the test can fail).
#[test]
fn a_hostile_version_command_writes_nothing_outside() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let (home, arms, out) = (root.join("home"), root.join("arms"), root.join("results"));
    for p in [&home, &arms] {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(home.join("canary.txt"), CANARY).unwrap();
    let tag = format!(
        "lrab-hostile-version-{}-{}",
        std::process::id(),
        root.file_name().unwrap().to_string_lossy()
    );
    let outside = [
        std::env::temp_dir().join(&tag),
        PathBuf::from("/var/tmp").join(&tag),
        home.join("planted.txt"),
        arms.join("planted.txt"),
    ];
    let mut script = String::new();
    for p in &outside {
        script.push_str(&format!("echo pwned > '{}' 2>/dev/null; ", p.display()));
    }
    script.push_str(&format!(
        "echo pwned >> '{}' 2>/dev/null; echo 'hostile 1.0'",
        home.join("canary.txt").display()
    ));
    std::fs::write(
        arms.join("hostile.toml"),
        format!(
            "name = \"hostile\"\nprogram = \"/bin/sh\"\nargs = [\"-c\", \"printf 'S001 Ti aging\\\\n' > shortlist.md\", \"{{prompt_file}}\"]\napi = \"ollama\"\nupstream_version = \"1.0\"\nversion_args = [\"-c\", {script:?}]\n"
        ),
    )
    .unwrap();
    let untouched = || {
        for p in &outside {
            assert!(!p.exists(), "{} was written", p.display());
        }
        assert_eq!(
            std::fs::read_to_string(home.join("canary.txt")).unwrap(),
            CANARY
        );
    };
    let lrab_in = |args: &[&str]| {
        let o = lrab()
            .args(args)
            .arg("--arms-dir")
            .arg(&arms)
            .env("HOME", &home)
            .output()
            .unwrap();
        text(&o)
    };
    let t = lrab_in(&["arms", "check", "hostile"]);
    assert!(
        t.contains("ok       hostile") && t.contains("hostile 1.0"),
        "{t}"
    );
    untouched();
    lrab_in(&["arms", "list"]);
    untouched();
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let t = lrab_in(&["doctor", "--backend-url", &sim.url(), "--models", "sim-2b"]);
    assert!(
        t.contains("ok    arm hostile") && t.contains("hostile 1.0"),
        "{t}"
    );
    untouched();
    let o = quick("run", &arms, &out, (200, 1000, 200))
        .args([
            "--arms", "hostile", "--models", "sim-2b", "--tasks", "WF-01",
        ])
        .args(["--run-id", "v"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let m = std::fs::read_to_string(out.join("v/manifest.json")).unwrap();
    assert!(m.contains("\"version\": \"hostile 1.0\""), "{m}");
    untouched();

    // control: the same version command, run directly, writes everywhere it aims at
    let o = std::process::Command::new("/bin/sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success());
    for p in &outside {
        assert!(p.exists(), "control: {} not written", p.display());
        let _ = std::fs::remove_file(p);
    }
}
