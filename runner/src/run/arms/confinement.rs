//! What one launch of an arm may touch (`run/confine.rs` has the box it goes into): the
//! attempt's writable folders, its program's roots, its install and the arm file's folder,
//! and the one port of the backend (relayed from its private network when on the loopback).

use std::net::SocketAddr;
use std::path::Path;

use anyhow::{bail, Result};
use lrab_safety::{ArmNet, ArmPolicy};

use super::Arm;
use crate::run::confine::{exec_roots, host_of, port_of, AttemptDirs, Confinement};
use crate::run::install;

impl Arm {
    /// What one launch of this arm (its resolved `program`) may touch.
    pub fn confinement(
        &self,
        program: &Path,
        attempt_dir: &Path,
        workdir: &Path,
        dirs: &AttemptDirs,
        backend_url: &str,
    ) -> Result<Confinement> {
        let Some(port) = port_of(backend_url) else {
            bail!(
                "arm '{}': cannot tell the port of backend URL {backend_url}",
                self.name
            );
        };
        let loopback = matches!(host_of(backend_url), Some("127.0.0.1" | "localhost"));
        let (net, forward_to) = match loopback {
            true => (
                ArmNet::Private,
                Some(SocketAddr::from(([127, 0, 0, 1], port))),
            ),
            false => (ArmNet::LandlockPort, None),
        };
        let install_dir = (self.install.as_ref()).map(|s| s.dir(&install::cache_root()));
        let exec = exec_roots(program, install_dir.as_deref());
        let mut readable = vec![attempt_dir.to_path_buf()];
        if let Some(d) = self.file.parent().filter(|d| !d.as_os_str().is_empty()) {
            readable.push(d.to_path_buf());
        }
        Ok(Confinement {
            policy: ArmPolicy {
                writable: vec![
                    workdir.to_path_buf(),
                    dirs.home.clone(),
                    dirs.tmp.clone(),
                    dirs.state.clone(),
                ],
                readable,
                executable: exec,
                connect_port: port,
                net,
                hide: Vec::new(),
            },
            forward_to,
        })
    }
}
