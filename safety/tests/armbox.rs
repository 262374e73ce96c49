//! A whole agent confined by `armbox`: what its process tree can write, read and connect to,
//! and the linger mode that tells the caller when the main process ended while what it left
//! behind still runs. Each attack also runs unconfined as the control (it must work there).

use lrab_safety::{arm_box_missing, confine_arm, ArmNet, ArmPolicy};
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "ARMBOX-SECRET-5e1f";

struct World {
    _d: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let (work, home) = (root.join("work"), root.join("home"));
    for p in [&work, &home, &root.join("outside")] {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(root.join("outside/secret.txt"), SECRET).unwrap();
    World {
        _d: d,
        root,
        work,
        home,
    }
}

fn policy(w: &World, port: u16, net: ArmNet) -> ArmPolicy {
    ArmPolicy {
        writable: vec![w.work.clone(), w.home.clone()],
        connect_port: port,
        net,
        ..ArmPolicy::default()
    }
}

/// The attacks, as python (the toolchain on PATH); one line of results per attack.
const PROBE: &str = r#"
import socket, sys, os
allowed, other, udp, outside = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def t(name, f):
    try:
        f(); print(name, "ok")
    except Exception as e:
        print(name, "denied", type(e).__name__)
def conn(p):
    s = socket.create_connection(("127.0.0.1", p), timeout=3); s.sendall(b"hi"); s.close()
def bind():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
def udp_send():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"hi", ("127.0.0.1", udp))
def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind("\0armbox-probe")
t("connect-allowed", lambda: conn(allowed))
t("connect-other", lambda: conn(other))
t("bind", bind)
t("udp", udp_send)
t("unix", unix)
t("write-outside", lambda: open(os.path.join(outside, "new.txt"), "w").write("x"))
t("read-outside", lambda: print(open(os.path.join(outside, "secret.txt")).read()))
t("write-work", lambda: open("w.txt", "w").write("x"))
t("write-home", lambda: open(os.path.join(os.environ["HOME"], "h.txt"), "w").write("x"))
"#;

fn run_probe(w: &World, confined: Option<ArmNet>) -> (String, Vec<String>) {
    let allowed = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    for l in [&allowed, &other] {
        l.set_nonblocking(true).unwrap();
    }
    udp.set_nonblocking(true).unwrap();
    let port = allowed.local_addr().unwrap().port();
    let mut c = Command::new("python3");
    c.arg("-c")
        .arg(PROBE)
        .arg(port.to_string())
        .arg(other.local_addr().unwrap().port().to_string())
        .arg(udp.local_addr().unwrap().port().to_string())
        .arg(w.root.join("outside"))
        .current_dir(&w.work)
        .env("HOME", &w.home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let b = confined.map(|net| confine_arm(&mut c, &policy(w, port, net)).unwrap());
    let child = c.spawn().unwrap();
    // the private network: its one port is a listener inside, relayed here to `allowed`
    let relay = match (&b, confined) {
        (Some(b), Some(ArmNet::Private)) => {
            let inside = b.listener(Duration::from_secs(10)).expect("listener");
            Some(std::thread::spawn(move || {
                let (mut s, _) = inside.accept().unwrap();
                let mut out = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                let mut buf = Vec::new();
                s.read_to_end(&mut buf).unwrap();
                std::io::Write::write_all(&mut out, &buf).unwrap();
            }))
        }
        _ => None,
    };
    let o = child.wait_with_output().unwrap();
    if let Some(r) = relay {
        r.join().unwrap();
    }
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let mut got = Vec::new();
    for (name, l) in [("allowed", &allowed), ("other", &other)] {
        if let Ok((mut s, _)) = l.accept() {
            s.set_nonblocking(false).unwrap();
            let mut b = Vec::new();
            let _ = s.read_to_end(&mut b);
            got.push(format!("{name}:{}", String::from_utf8_lossy(&b)));
        }
    }
    let mut b = [0u8; 16];
    if let Ok(n) = udp.recv(&mut b) {
        got.push(format!("udp:{}", String::from_utf8_lossy(&b[..n])));
    }
    (out, got)
}

fn line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no result for {name}: {out}"))
}

#[test]
fn writes_reads_and_connections_outside_the_policy_fail() {
    for net in [ArmNet::Private, ArmNet::LandlockPort] {
        if let Some(m) = arm_box_missing(net) {
            panic!("this machine cannot confine arms ({net:?}): {m}");
        }
        let w = world();
        let (out, got) = run_probe(&w, Some(net));
        // in a private network the agent may serve on its own loopback; Landlock: no bind
        let mut ok = vec!["connect-allowed", "write-work", "write-home"];
        let mut bad = vec![
            "connect-other",
            "udp",
            "unix",
            "write-outside",
            "read-outside",
        ];
        match net {
            ArmNet::Private => ok.push("bind"),
            ArmNet::LandlockPort => bad.push("bind"),
        }
        for name in ok {
            assert!(line(&out, name).ends_with(" ok"), "{net:?} {name}: {out}");
        }
        for name in bad {
            assert!(
                line(&out, name).contains(" denied "),
                "{net:?} {name}: {out}"
            );
        }
        assert!(!out.contains(SECRET), "{out}");
        assert!(!w.root.join("outside/new.txt").exists());
        assert_eq!(got, vec!["allowed:hi".to_string()], "{net:?}: {out}");
    }

    // control: unconfined, every attack works
    let w = world();
    let (out, got) = run_probe(&w, None);
    for name in [
        "connect-other",
        "bind",
        "udp",
        "unix",
        "write-outside",
        "read-outside",
    ] {
        assert!(line(&out, name).ends_with(" ok"), "control {name}: {out}");
    }
    assert!(out.contains(SECRET));
    assert_eq!(got.len(), 3, "{got:?}");
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let st = s.rsplit(')').next().unwrap_or("").trim_start();
            !st.starts_with('Z')
        })
        .unwrap_or(false)
}

/// Host pids of processes whose working directory is `dir` (the namespace hides host pids
/// from the command itself).
fn working_in(dir: &Path) -> Vec<i32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir) && alive(pid) {
            v.push(pid);
        }
    }
    v
}

#[test]
fn linger_reports_the_exit_keeps_the_rest_until_the_kill() {
    let w = world();
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(
            "(sleep 0.5; echo late > late.txt) & setsid sh -c 'while :; do sleep 1; done' & exit 3",
        )
        .current_dir(&w.work);
    let b = confine_arm(&mut c, &policy(&w, 9, ArmNet::Private)).unwrap();
    let mut child = c.spawn().unwrap();
    let t = Instant::now();
    let st = loop {
        if let Some(s) = b.ended() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no exit reported");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 3, "{st}");
    assert!(child.try_wait().unwrap().is_none(), "the namespace lingers");
    // what the main process left behind still works
    while !w.work.join("late.txt").exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "late writer killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!working_in(&w.work).is_empty());
    // SIGTERM is passed on (the loop is in its own session and ignores nothing: the shim
    // survives it, the group of the command gets it), SIGKILL of the shim ends everything
    // SAFETY: signals to the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "shim survives SIGTERM");
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let t = Instant::now();
    while !working_in(&w.work).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "left running: {:?}",
            working_in(&w.work)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn without_survivors_the_shim_exits_with_the_command() {
    let w = world();
    let mut c = Command::new("sh");
    c.arg("-c").arg("exit 5").current_dir(&w.work);
    let b = confine_arm(&mut c, &policy(&w, 9, ArmNet::Private)).unwrap();
    let st = c.status().unwrap();
    assert_eq!(st.code(), Some(5));
    let s = b.ended().expect("exit reported");
    assert_eq!(libc::WEXITSTATUS(s), 5);
}
