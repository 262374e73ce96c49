//! The confinement backends and the policy a command is confined by: the values the sandbox,
//! its start-up trial and the kernel probes all name, below them. Which backend works here
//! (`Sandbox::detect`) is the sandbox's, from the kernel probes (`support`).

use std::path::PathBuf;

/// A confinement backend.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Sandbox {
    /// Landlock with this ABI version (≥ 4) for the file allow-list.
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: i32,
    },
    /// A new root of read-only bind mounts (writable workdir and temp dir) in a mount
    /// namespace.
    Namespaces,
    /// No confinement (model-chosen commands are refused unless allowed unconfined).
    None,
}

/// How a command is confined.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Reach the host's network. Off: a private network namespace whose loopback is up (the
    /// command's own local servers work, nothing else is reachable).
    pub network: bool,
    /// Paths that must not be readable even where the allow-list would let them (e.g. the
    /// real `~/.ssh` when a toolchain in that home is readable).
    pub hide: Vec<PathBuf>,
    /// Use this backend instead of the best detected one (tests of both paths).
    pub force: Option<Sandbox>,
    /// Run without confinement when none is available.
    pub allow_unconfined: bool,
}

impl Sandbox {
    /// The name [`Sandbox::named`] takes for this backend (what `LRAB_SANDBOX` is set to).
    pub fn key(&self) -> &'static str {
        match self {
            Sandbox::Landlock { .. } => "landlock",
            Sandbox::Namespaces => "namespaces",
            Sandbox::None => "none",
        }
    }
}
