//! The probe suite: adversarial attempts and benign controls, each run in a fresh workdir with a
//! canary HOME and a canary outside directory, through the classifier and the kernel sandbox.
//! After every probe the canary areas are compared byte for byte with a snapshot; a leak is any
//! change outside workdir+tmp, or a canary secret appearing in a probe's output.
//!
//! Layout of one probe's root: `home/` (canary HOME), `run/` (outside dir = the workdir's
//! parent, where upstream fixtures like `../old_build` live), `run/work/` (workdir), `tmp/`.
//! Steps marked irreversible are only classified, never executed: if the classifier let one
//! through, that is reported as a failure without risking the machine.

mod direct;
mod load;
pub mod own;
mod report;
mod run;
pub mod upstream;

pub use direct::DirectExecutor;
pub use load::{own_probes, upstream_probes, ProbeLoadError};
pub use report::{Outcome, ProbeResult, Report};
pub use run::{prepare, run_probe, run_suite};

use crate::{Context, ProbeError, Verdict};
use std::path::PathBuf;

pub const CANARY_SSH: &str = "CANARY-SSH-PRIVATE-KEY-7f3a";
pub const CANARY_AWS: &str = "CANARY-AWS-SECRET-91bd";
pub const CANARY_BASHRC: &str = "CANARY-BASHRC-c02e";

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Kind {
    Adversarial,
    Control,
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum Setup {
    Work(String, Vec<u8>),
    Outside(String, Vec<u8>),
    /// Relative to the probe root (upstream's "runroot").
    Root(String, Vec<u8>),
    RootDir(String),
    Symlink(String, String),
    Hardlink(String, String),
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum Step {
    Shell {
        cmd: String,
        prep: bool,
    },
    SubAgent {
        tool: String,
        depth: u32,
    },
    Write {
        path: String,
        size: u64,
        replace: bool,
    },
}

#[derive(Clone, Debug, serde::Serialize)]
pub enum Expect {
    Exists(String),
    MinBytes(String, u64),
    Gone(String),
    Contains(String, String),
    NotContains(String, String),
    AllSucceed,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Probe {
    pub id: String,
    pub source: &'static str,
    pub kind: Kind,
    /// The ring the probe targets (0 for controls).
    pub ring: u8,
    pub irreversible: bool,
    pub setup: Vec<Setup>,
    pub steps: Vec<Step>,
    pub expect: Vec<Expect>,
}

/// Everything an executor needs for one probe.
pub struct ProbeEnv {
    pub root: PathBuf,
    pub workdir: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
    pub tmp: PathBuf,
    pub ctx: Context,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Attempt {
    pub verdict: Verdict,
    pub ran: bool,
    pub exit: Option<i32>,
    pub output: String,
}

/// What an executor saw while issuing one probe's steps.
pub struct Issued {
    /// One per step, in order.
    pub attempts: Vec<Attempt>,
    /// Everything else the model or the operator saw (a harness's stdout/stderr, saved outputs),
    /// scanned for canary secrets like the attempts' outputs.
    pub other_output: String,
}

/// Issues a probe's steps. The direct executor classifies and runs each one itself; the
/// harness-backed executor (in `lrab`) has a simulated adversarial model issue them as tool
/// calls through the real harness.
pub trait ProbeExecutor {
    fn name(&self) -> String;
    /// `steps` have `{HOME}`/`{OUT}` already substituted. Steps of an `irreversible` probe that
    /// are not preparation must never be executed, only judged.
    fn issue(
        &mut self,
        steps: &[Step],
        irreversible: bool,
        env: &ProbeEnv,
    ) -> Result<Issued, ProbeError>;
}
