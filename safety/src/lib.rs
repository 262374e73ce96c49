//! Safety rings for lrab's agent harness (the published benchmark's five-ring model, re-designed;
//! docs/safety.md).
//!
//! 1. [`narrow_tools`] — sub-agents get a reduced tool list and cannot dispatch further.
//! 2. Irreversible operations are refused ([`classify_shell`]).
//! 3. System-mutating operations are refused when nobody is watching ([`Verdict::NeedsAttended`]).
//! 4. Boundaries: recursive deletes only inside the workdir, sensitive paths ([`is_sensitive`]) never
//!    touched ([`check_access`]), file tools resolving through directory fds ([`Beneath`]),
//!    and the kernel sandbox ([`sandboxed_command`]: read allow-list, no side channels,
//!    nothing left running) as the backstop for anything the classifier cannot see.
//! 5. Reversibility: large overwrites need an explicit flag ([`overwrite_guard`]).
//!
//! The classifier works on the parsed structure of a command line (a shell parser of its own),
//! never on substrings, and the probe suite ([`run_suite`]) measures both layers together. Arms the
//! runner launches are boxed by [`confine_arm`].
//!
//! Every module is private but `published` (the published benchmark on any arm, a surface of
//! its own); this root is the rest of the surface. Names that would clash here carry
//! their part's name: a probe's [`ProbeStep`] and an attack's [`AttackStep`], the resolver's
//! [`BeneathError`] and [`FileKind`], the sandbox's [`SandboxPolicy`].

#![deny(missing_docs)]

mod allowlist;
mod analyzer;
mod armbox;
mod backend;
mod beneath;
mod cli;
mod corpus;
mod decode;
mod error;
mod fsrules;
mod leakscan;
mod mountns;
mod netns;
mod netrules;
mod nscalls;
mod paths;
mod payload;
mod plan;
mod probes;
pub mod published;
mod reaper;
mod rings;
mod sandbox;
mod seccomp;
mod shell;
mod step;
mod support;
mod trial;
mod verdict;

use std::path::Path;

pub use armbox::{
    confine as confine_arm, describe as describe_arm_box, missing as arm_box_missing,
    program_roots as arm_program_roots, ArmNet, ArmPolicy, Confined,
};
pub use beneath::{
    openat2_available, Beneath, Entry as BeneathEntry, Error as BeneathError, Kind as FileKind,
    Refusal as BeneathRefusal, Stat as BeneathStat, Walk, Written,
};
pub use cli::{
    forced_backend, run as run_safety_cli, run_with as run_safety_cli_with, BackendChoice,
    SafetyArgs,
};
pub use corpus::{
    load_dir as load_attacks, Attack, CorpusError, Places as AttackPlaces, Plant,
    Step as AttackStep,
};
pub use error::{ConfineError, HardLinkError, ProbeError, SandboxError};
pub use leakscan::{find as find_leak, Found as FoundLeak};
pub use nscalls::loopback_up;
pub use paths::{
    audit_hard_links, check_access, homes as home_dirs, is_sensitive, lexical as lexical_path,
    resolve as resolve_path, sensitive_inodes, Access, HISTORY_FILES, HOME_SENSITIVE,
    STARTUP_FILES,
};
pub use payload::Lang;
pub use probes::{
    own_probes, prepare as prepare_probe, run_probe, run_suite, upstream_probes, Attempt,
    DirectExecutor, Issued, Kind as ProbeKind, Outcome as ProbeOutcome, Probe, ProbeEnv,
    ProbeExecutor, ProbeLoadError, ProbeResult, Report as ProbeReport, Step as ProbeStep,
};
pub use rings::{narrow_tools, overwrite_guard, sub_agent_call};
pub use sandbox::{
    sandboxed_command, Gap as KernelGap, KernelSupport, Policy as SandboxPolicy, Sandbox,
    Trial as SandboxTrial, Unconfined,
};
pub use shell::{classify_payload, classify_shell};
pub use verdict::{Context, Ring, Verdict};

/// The one call a shell tool needs: classify, then build the confined child. `Err` carries the
/// message for the model (a refusal) — also when no confinement is available and
/// `policy.allow_unconfined` is off. `ctx.home` must be the HOME the child will see.
pub fn guarded_command(
    command: &str,
    ctx: &Context,
    tmp: &Path,
    policy: &sandbox::Policy,
) -> Result<(std::process::Command, sandbox::Sandbox), Verdict> {
    let v = classify_shell(command, ctx);
    if !v.is_allow() {
        return Err(v);
    }
    sandbox::sandboxed_command(command, &ctx.workdir, tmp, policy).map_err(|e| Verdict::Deny {
        ring: Ring::Boundary,
        reason: e.0,
        alternative: None,
    })
}
