//! The operator's terminal is out of reach. A harness started from a terminal passes it on as
//! the controlling terminal of everything it spawns, and the host's `/dev/pts` holds every
//! terminal of the user: a command could write escape sequences there, or take the
//! foreground (`tcsetpgrp` with `SIGTTOU` ignored) and read what the operator types. Here a
//! fake harness runs with a pseudo-terminal the test holds as its controlling terminal; the
//! confined command attacks it through `/dev/tty` and through the terminal's `/dev/pts` name,
//! while the test types a secret on it. The same attack unconfined is the control.

use lrab_safety::{sandboxed_command, Sandbox, SandboxPolicy as Policy};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TYPED: &str = "TYPED-SECRET-4417";
const INJECTED: &str = "INJECTED-ESCAPE-9";

fn backends() -> Vec<Sandbox> {
    let mut v = Vec::new();
    if let s @ Sandbox::Landlock { .. } = Sandbox::detect() {
        v.push(s);
    }
    if Sandbox::named("namespaces").is_ok() {
        v.push(Sandbox::Namespaces);
    }
    assert!(!v.is_empty(), "no confinement on this machine");
    v
}

/// The attack, run by the confined command (`sh -c`), with the terminal's name in `$PTS`.
const ATTACK: &str = r#"python3 - <<'EOF' > stolen.txt 2>&1
import os, select, signal
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
signal.signal(signal.SIGTTIN, signal.SIG_IGN)
for p in ['/dev/tty', os.environ['PTS']]:
    try:
        fd = os.open(p, os.O_RDWR | os.O_NOCTTY)
    except OSError as e:
        print('open', p, e); continue
    try:
        os.write(fd, b'INJECTED-ESCAPE-9\r\n'); print('WROTE', p)
    except OSError as e:
        print('write', p, e)
    try:
        os.setpgid(0, 0); os.tcsetpgrp(fd, os.getpgrp()); print('FOREGROUND', p)
    except OSError as e:
        print('tcsetpgrp', p, e)
    try:
        r, _, _ = select.select([fd], [], [], 3)
        if r: print('READ', os.read(fd, 200))
    except OSError as e:
        print('read', p, e)
EOF
python3 -c "import os; m, s = os.openpty(); os.write(m, b'x\n'); print('OWN-PTY', os.ttyname(s), os.read(s, 2))" >> stolen.txt 2>&1
ls /dev/pts >> stolen.txt 2>&1
true"#;

/// The fake harness: a session of its own with the test's pseudo-terminal as controlling
/// terminal; spawns the confined command the way the harness does (own process group,
/// output to a file) and exits with its status.
#[test]
fn fake_tty_harness_entry() {
    let Ok(dir) = std::env::var("LRAB_TTY_HARNESS_DIR") else {
        return;
    };
    let work = PathBuf::from(dir);
    let tmp = work.join(".tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let policy = match std::env::var("LRAB_TTY_HARNESS_BACKEND").as_deref() {
        Ok("none") => Policy {
            force: Some(Sandbox::None),
            allow_unconfined: true,
            ..Policy::default()
        },
        Ok(name) => Policy {
            force: Some(Sandbox::named(name).unwrap()),
            ..Policy::default()
        },
        Err(_) => unreachable!(),
    };
    let (mut c, _) = sandboxed_command(ATTACK, &work, &tmp, &policy).unwrap();
    let out = std::fs::File::create(work.join("out.txt")).unwrap();
    let st = c
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .process_group(0)
        .status()
        .unwrap();
    assert!(st.success(), "the attack command failed: {st:?}");
}

struct Pty {
    master: OwnedFd,
    slave: OwnedFd,
    name: String,
}

fn openpty() -> Pty {
    let (mut m, mut s) = (0, 0);
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: openpty writes two fds and the slave's name (128 bytes is ample).
    let rc = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            name.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: the fds were just opened and are owned here; `name` is NUL-terminated.
    unsafe {
        Pty {
            master: OwnedFd::from_raw_fd(m),
            slave: OwnedFd::from_raw_fd(s),
            name: std::ffi::CStr::from_ptr(name.as_ptr())
                .to_string_lossy()
                .into_owned(),
        }
    }
}

/// Run the fake harness on a fresh terminal, typing on it meanwhile; returns (what the
/// command recorded, what appeared on the terminal).
fn attack(backend: &str, work: &Path) -> (String, String) {
    let pty = openpty();
    let slave = pty.slave.as_raw_fd();
    let mut h = Command::new(std::env::current_exe().unwrap());
    h.args([
        "--exact",
        "fake_tty_harness_entry",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("LRAB_TTY_HARNESS_DIR", work)
    .env("LRAB_TTY_HARNESS_BACKEND", backend)
    .env("PTS", &pty.name)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    // SAFETY: setsid and ioctl on an inherited fd, between fork and exec.
    unsafe {
        h.pre_exec(move || {
            if libc::setsid() < 0 || libc::ioctl(slave, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = h.spawn().unwrap();
    drop(pty.slave);
    let m = pty.master.as_raw_fd();
    // SAFETY: fcntl on our own fd.
    unsafe { libc::fcntl(m, libc::F_SETFL, libc::O_NONBLOCK) };
    let mut screen = Vec::new();
    let t0 = Instant::now();
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the fake harness hangs"
        );
        let line = format!("{TYPED}\r");
        // SAFETY: write and read on our own fd with owned buffers.
        unsafe {
            libc::write(m, line.as_ptr() as *const libc::c_void, line.len());
            let mut b = [0u8; 4096];
            let n = libc::read(m, b.as_mut_ptr() as *mut libc::c_void, b.len());
            if n > 0 {
                screen.extend_from_slice(&b[..n as usize]);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut f = std::fs::File::from(pty.master);
    let mut rest = Vec::new();
    let _ = f.read_to_end(&mut rest);
    screen.extend(rest);
    let out = std::fs::read_to_string(work.join("out.txt")).unwrap_or_default();
    assert!(
        st.success(),
        "{backend}: the fake harness failed ({st:?}): {out}"
    );
    let stolen = std::fs::read_to_string(work.join("stolen.txt")).unwrap_or_default();
    (
        format!("{stolen}{out}"),
        String::from_utf8_lossy(&screen).into_owned(),
    )
}

#[test]
fn the_operators_terminal_is_out_of_reach() {
    // control: unconfined, the command takes the foreground and reads what is typed
    let d = tempfile::tempdir().unwrap();
    let (stolen, screen) = attack("none", d.path());
    assert!(
        stolen.contains("FOREGROUND") && stolen.contains(TYPED),
        "control: the attack did not work unconfined:\n{stolen}"
    );
    assert!(
        screen.contains(INJECTED),
        "control: nothing written:\n{screen}"
    );
    for b in backends() {
        let d = tempfile::tempdir().unwrap();
        let (stolen, screen) = attack(b.key(), d.path());
        println!("{b:?}:\n{stolen}");
        assert!(
            !stolen.contains(TYPED),
            "{b:?}: read the typed secret:\n{stolen}"
        );
        assert!(
            !stolen.contains("FOREGROUND"),
            "{b:?}: took the terminal:\n{stolen}"
        );
        assert!(
            !stolen.contains("WROTE"),
            "{b:?}: wrote to the terminal:\n{stolen}"
        );
        assert!(
            !screen.contains(INJECTED),
            "{b:?}: the terminal shows:\n{screen}"
        );
        // pseudo-terminals of its own still work, in a devpts holding only those
        assert!(
            stolen.contains("OWN-PTY /dev/pts/0 b'x\\n'"),
            "{b:?}: {stolen}"
        );
    }
}
