//! Real confinement tests: both backends where the kernel offers them.

use lrab_safety::{sandboxed_command, Sandbox, SandboxPolicy as Policy};
use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

fn rand_suffix() -> String {
    format!(
        "{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

fn run(mut c: Command) -> (bool, String) {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    let start = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut out = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            return (st.success(), out);
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("sandboxed command hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn backends() -> Vec<Sandbox> {
    let detected = Sandbox::detect();
    println!("detected sandbox: {}", detected.describe());
    let mut v = Vec::new();
    if let Sandbox::Landlock { .. } = detected {
        v.push(detected.clone());
    }
    if Sandbox::named("namespaces").is_ok() {
        v.push(Sandbox::Namespaces);
    }
    assert!(
        !v.is_empty(),
        "neither Landlock nor user namespaces are available: no confinement can be tested"
    );
    v
}

#[test]
fn writes_outside_fail_inside_work_and_network_is_off() {
    for b in backends() {
        println!("testing backend: {}", b.describe());
        let root = tempfile::tempdir().unwrap();
        let wd = root.path().join("w");
        let tmp = root.path().join("t");
        std::fs::create_dir_all(&wd).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        let outside = std::env::temp_dir().join(format!("outside_{}", rand_suffix()));
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };

        let (c, used) = sandboxed_command(
            &format!("echo x > {}", outside.display()),
            &wd,
            &tmp,
            &policy,
        )
        .unwrap();
        assert_eq!(used, b);
        let (ok, out) = run(c);
        assert!(!ok, "{b:?}: write outside succeeded: {out}");
        assert!(!outside.exists(), "{b:?}: {} appeared", outside.display());

        let (c, _) = sandboxed_command(
            "echo inside > f.txt && cat f.txt && echo t > $LRAB_T/x",
            &wd,
            &tmp,
            &policy,
        )
        .unwrap();
        let mut c = c;
        c.env("LRAB_T", &tmp);
        let (ok, out) = run(c);
        assert!(ok, "{b:?}: write inside failed: {out}");
        assert_eq!(
            std::fs::read_to_string(wd.join("f.txt")).unwrap(),
            "inside\n"
        );
        assert!(tmp.join("x").exists());

        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let py = format!("import socket; s=socket.create_connection(('127.0.0.1',{port}),timeout=3); print('CONNECTED')");
        let (c, _) =
            sandboxed_command(&format!("python3 -c \"{py}\""), &wd, &tmp, &policy).unwrap();
        let (ok, out) = run(c);
        assert!(
            !ok && !out.contains("CONNECTED"),
            "{b:?}: python reached the listener: {out}"
        );
        let (c, _) = sandboxed_command(
            &format!("curl -sS --max-time 3 http://127.0.0.1:{port}/"),
            &wd,
            &tmp,
            &policy,
        )
        .unwrap();
        let (ok, out) = run(c);
        assert!(!ok, "{b:?}: curl reached the listener: {out}");

        // with network allowed the same connection works (the test can fail)
        let open = Policy {
            network: true,
            ..policy.clone()
        };
        let (c, _) = sandboxed_command(&format!("python3 -c \"{py}\""), &wd, &tmp, &open).unwrap();
        let (ok, out) = run(c);
        assert!(
            ok && out.contains("CONNECTED"),
            "{b:?}: network=true should connect: {out}"
        );
    }
}

#[test]
fn hidden_paths_are_unreadable() {
    for b in backends() {
        let root = tempfile::tempdir().unwrap();
        let wd = root.path().join("w");
        let tmp = root.path().join("t");
        let secret = root.path().join("home/.ssh");
        std::fs::create_dir_all(&wd).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("id_rsa"), "CANARY-SECRET").unwrap();
        let policy = Policy {
            force: Some(b.clone()),
            hide: vec![secret.clone()],
            ..Policy::default()
        };
        let (c, _) = sandboxed_command(
            &format!(
                "cat {}/id_rsa; ln {}/id_rsa wd_link 2>&1; cat wd_link",
                secret.display(),
                secret.display()
            ),
            &wd,
            &tmp,
            &policy,
        )
        .unwrap();
        let (_, out) = run(c);
        assert!(
            !out.contains("CANARY-SECRET"),
            "{b:?}: hidden file was read: {out}"
        );
    }
}

#[test]
fn unconfined_is_refused_unless_allowed() {
    let d = tempfile::tempdir().unwrap();
    let p = Policy {
        force: Some(Sandbox::None),
        ..Policy::default()
    };
    let e = sandboxed_command("true", d.path(), d.path(), &p).unwrap_err();
    assert!(e.to_string().contains("refusing"), "{e}");
    let p = Policy {
        allow_unconfined: true,
        ..p
    };
    let (c, used) = sandboxed_command("true", d.path(), d.path(), &p).unwrap();
    assert_eq!(used, Sandbox::None);
    assert!(run(c).0);
}

#[test]
fn no_capabilities_and_no_signals_outside() {
    for b in backends() {
        let root = tempfile::tempdir().unwrap();
        let wd = root.path().join("w");
        std::fs::create_dir_all(&wd).unwrap();
        // a process outside the sandbox that must survive a `kill` from inside
        let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };
        let (c, _) = sandboxed_command(
            &format!(
                "grep CapEff /proc/self/status; kill -TERM {} 2>&1; echo done",
                victim.id()
            ),
            &wd,
            &wd,
            &policy,
        )
        .unwrap();
        let (_, out) = run(c);
        std::thread::sleep(Duration::from_millis(100));
        let alive = victim.try_wait().unwrap().is_none();
        let _ = victim.kill();
        let _ = victim.wait();
        assert!(
            alive,
            "{b:?}: a process outside the sandbox was signalled: {out}"
        );
        if let Sandbox::Landlock { .. } = b {
            assert!(
                out.contains("CapEff:\t0000000000000000"),
                "{b:?}: capabilities not dropped: {out}"
            );
        }
    }
}

#[test]
fn guarded_command_refuses_or_confines() {
    let root = tempfile::tempdir().unwrap();
    let wd = root.path().join("w");
    let tmp = root.path().join("t");
    std::fs::create_dir_all(&wd).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let ctx = lrab_safety::Context::new(&wd, &root.path().join("home")).with_writable(&tmp);
    let policy = Policy::default();
    let v = lrab_safety::guarded_command("rm -rf ../", &ctx, &tmp, &policy).unwrap_err();
    assert!(v.message().contains("refused"), "{}", v.message());
    let (c, used) = lrab_safety::guarded_command("echo ok > a.txt", &ctx, &tmp, &policy).unwrap();
    println!("guarded_command backend: {}", used.describe());
    assert!(run(c).0);
    assert_eq!(std::fs::read_to_string(wd.join("a.txt")).unwrap(), "ok\n");
}

#[test]
fn udp_is_cut_too() {
    for b in backends() {
        let root = tempfile::tempdir().unwrap();
        let wd = root.path().join("w");
        std::fs::create_dir_all(&wd).unwrap();
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(1500)))
            .unwrap();
        let port = sock.local_addr().unwrap().port();
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };
        let py = format!("import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'LEAK', ('127.0.0.1', {port}))");
        let (c, _) = sandboxed_command(&format!("python3 -c \"{py}\""), &wd, &wd, &policy).unwrap();
        let _ = run(c);
        let mut buf = [0u8; 16];
        assert!(
            sock.recv_from(&mut buf).is_err(),
            "{b:?}: a UDP datagram left the sandbox"
        );
    }
}
