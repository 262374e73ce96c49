//! How the runner confines every arm it launches (`lrab_safety::confine_arm`): the per-attempt
//! `HOME` and `TMPDIR` every arm gets, the folders its process tree may write (workdir, that
//! home, that temp dir) and read (its program, install folder and interpreter, resolved from
//! the program's real path and the arm's `[install]` data; the attempt folder with the config
//! files the runner wrote; the arm file's folder with its launchers), and the one TCP port it
//! may connect to (the backend, or the proxy in front of it). `--unconfined-arms` turns it
//! off, loudly, and the run records that.
//!
//! The network: a backend on the host's `127.0.0.1` (the proxy, the simulator, a local Ollama)
//! is reached from the arm's private network namespace through a listener on the same
//! `127.0.0.1:<port>` inside it, which [`Forwarder`] relays to the host — so `{backend_url}`
//! is unchanged, and the arm can still run servers of its own on its loopback (tasks ask for
//! that). Any other backend host: Landlock lets TCP connect to its port only, with no bind.

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use lrab_safety::{ArmNet, ArmPolicy};

/// Refuses to start a run whose arms cannot be confined here (unless `unconfined`); returns
/// the line `lrab run` prints at start and records in the manifest.
pub fn check(unconfined: bool) -> Result<String> {
    if unconfined {
        return Ok(
            "WARNING: arms run UNCONFINED (--unconfined-arms): they can read, write and connect wherever the user can; recorded in the manifest and every cell"
                .into(),
        );
    }
    if let Some(m) = lrab_safety::arm_box_missing(ArmNet::Private) {
        bail!(
            "cannot confine the arms on this machine: missing {m}. Run on a kernel with Landlock and user namespaces, or pass --unconfined-arms to run them without confinement (recorded as unconfined)"
        );
    }
    Ok(lrab_safety::describe_arm_box(
        ArmNet::Private,
        "the backend or proxy port of each cell",
    ))
}

/// One launch's confinement: the policy, and where the private network's one port leads.
#[derive(Debug, Clone)]
pub struct Confinement {
    pub policy: ArmPolicy,
    /// [`ArmNet::Private`]: the host address the listener inside is relayed to.
    pub forward_to: Option<SocketAddr>,
}

/// Relays every connection made to the arm's in-namespace listener to the backend on the
/// host, both directions as bytes arrive (streams are not buffered). Stops accepting when
/// dropped ([`Forwarder::keep_until_exit`]: when the arm's last process is gone); relays in
/// flight end when either side closes.
pub struct Forwarder {
    listener: TcpListener,
}

impl Forwarder {
    pub fn start(listener: TcpListener, to: SocketAddr) -> Result<Forwarder> {
        let l = listener.try_clone()?;
        std::thread::spawn(move || {
            while let Ok((inside, _)) = l.accept() {
                let Ok(out) = TcpStream::connect(to) else {
                    continue;
                };
                relay(inside, out);
            }
        });
        Ok(Forwarder { listener })
    }

    /// Keeps relaying until `shim` (the confined launch's first process, which lives exactly
    /// as long as anything of the arm does) has exited, and reaps it; then stops accepting.
    pub fn keep_until_exit(self, mut shim: std::process::Child) {
        std::thread::spawn(move || {
            while let Ok(None) = shim.try_wait() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            drop(self);
        });
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        // wakes the blocked accept with an error
        // SAFETY: shutdown on a socket we own.
        unsafe {
            libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR);
        }
    }
}

fn relay(a: TcpStream, b: TcpStream) {
    for s in [&a, &b] {
        let _ = s.set_nodelay(true);
    }
    let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else {
        return;
    };
    for (mut from, mut to) in [(a, b), (b2, a2)] {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from, &mut to);
            let _ = to.flush();
            let _ = to.shutdown(Shutdown::Write);
        });
    }
}

/// The TCP port of an `http://host[:port]/…` URL (80/443 by default).
pub fn port_of(url: &str) -> Option<u16> {
    let (scheme, rest) = url.split_once("://")?;
    let hostport = rest.split('/').next()?;
    let hostport = hostport.rsplit_once('@').map(|x| x.1).unwrap_or(hostport);
    match hostport.rsplit_once(':') {
        Some((_, p)) if !p.ends_with(']') => p.parse().ok(),
        _ => match scheme {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        },
    }
}

/// The per-attempt folders every arm gets, confined or not.
pub struct AttemptDirs {
    pub home: PathBuf,
    pub tmp: PathBuf,
    /// The attempt's harness state folder (`lrab_records::layout::attempt_state`): our harness
    /// keeps its checkpoint and logs there, outside the workdir, so a confined harness arm must
    /// be able to write it (its own sandbox keeps model-chosen commands out of it).
    pub state: PathBuf,
}

impl AttemptDirs {
    /// Makes `home/`, `tmp/` and the state folder in the attempt folder.
    pub fn create(attempt_dir: &Path) -> Result<AttemptDirs> {
        let d = AttemptDirs {
            home: attempt_dir.join("home"),
            tmp: attempt_dir.join("tmp"),
            state: lrab_records::layout::attempt_state(attempt_dir),
        };
        for p in [&d.home, &d.tmp, &d.state] {
            std::fs::create_dir_all(p)?;
        }
        Ok(d)
    }

    /// `HOME`, `TMPDIR` (and `TMP`/`TEMP`, which some tools read instead) for the launch.
    pub fn env(&self) -> Vec<(String, String)> {
        let (h, t) = (
            self.home.to_string_lossy().into_owned(),
            self.tmp.to_string_lossy().into_owned(),
        );
        vec![
            ("HOME".into(), h),
            ("TMPDIR".into(), t.clone()),
            ("TMP".into(), t.clone()),
            ("TEMP".into(), t),
        ]
    }
}

/// The host of an `http://host[:port]/…` URL.
pub(super) fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let hostport = rest.split('/').next()?;
    let hostport = hostport.rsplit_once('@').map(|x| x.1).unwrap_or(hostport);
    Some(match hostport.rsplit_once(':') {
        Some((h, p)) if !p.ends_with(']') => h,
        _ => hostport,
    })
}

/// What a launch of `program` may read and execute: its own roots (install prefix,
/// interpreter) and, when it has one, the arm's whole install folder (a launcher or source
/// files may sit beside the program; a venv's Python came with the program's roots).
pub(super) fn exec_roots(program: &Path, install_dir: Option<&Path>) -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    let homes = lrab_safety::home_dirs(&home);
    let mut exec = lrab_safety::arm_program_roots(program, &path, &homes);
    if let Some(d) = install_dir.filter(|d| d.is_dir()) {
        exec.push(d.to_path_buf());
    }
    exec
}

/// The confinement of an arm's version command (`install::run_version`): the cells' kernel
/// layers, writes only into `writable` (its throwaway working folder, HOME and TMPDIR), reads
/// its program's roots, its install and the arm file's folder, and a private network with no
/// way out. Never run unconfined: where the kernel cannot confine, the reason is the error.
pub fn probe(
    program: &Path,
    scope: &ProbeScope,
    writable: Vec<PathBuf>,
) -> std::result::Result<Confinement, String> {
    if let Some(m) = lrab_safety::arm_box_missing(ArmNet::Private) {
        return Err(format!(
            "this kernel cannot confine arms (missing {m}), and arm programs never run unconfined outside `lrab run --unconfined-arms`"
        ));
    }
    Ok(Confinement {
        policy: ArmPolicy {
            writable,
            readable: scope.arm_dir.iter().cloned().collect(),
            executable: exec_roots(program, scope.install_dir.as_deref()),
            // a listener inside the private network that nothing relays: no way out
            connect_port: PROBE_PORT,
            net: ArmNet::Private,
            hide: Vec::new(),
        },
        forward_to: None,
    })
}

/// What an arm's version command may read and run besides the system folders: its install
/// folder and the arm file's folder (launchers). It writes only into a throwaway folder.
#[derive(Debug, Clone, Default)]
pub struct ProbeScope {
    pub install_dir: Option<PathBuf>,
    pub arm_dir: Option<PathBuf>,
}

/// The port of a version command's private network (relayed nowhere).
const PROBE_PORT: u16 = 11434;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_of_urls() {
        assert_eq!(port_of("http://127.0.0.1:41234"), Some(41234));
        assert_eq!(port_of("http://127.0.0.1:5/sim/cell/x"), Some(5));
        assert_eq!(port_of("http://localhost/v1"), Some(80));
        assert_eq!(port_of("https://u:p@host/v1"), Some(443));
        assert_eq!(port_of("http://[::1]:7000/"), Some(7000));
        assert_eq!(port_of("http://[::1]/"), Some(80));
        assert_eq!(port_of("127.0.0.1:80"), None);
        assert_eq!(host_of("http://127.0.0.1:5/x"), Some("127.0.0.1"));
        assert_eq!(host_of("http://u@gpu-box/v1"), Some("gpu-box"));
    }
}
