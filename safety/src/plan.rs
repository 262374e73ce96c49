//! Everything a confined child does, prepared in the parent for a backend and a policy: the
//! plan the reaper carries out (`reaper::enter`), shared by the sandbox and its start-up trial.

use crate::allowlist::{allow_list, AllowList};
use crate::backend::{Policy, Sandbox};
use crate::fsrules::{Grant, Ruleset, Target};
use crate::mountns::MountPlan;
use crate::nscalls::UserMaps;
use crate::reaper::{ChildPlan, LandlockPlan};
use crate::seccomp::Filter;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The opened read-only rule targets of an allow-list, kept for a short while for the next
/// calls with the same system roots (a harness confines every command of a run, and every run
/// of a sweep, with the same ones): listing `/etc` and opening a hundred-odd paths per shell
/// call would be most of the sandbox's cost. Entries expire, so a file replaced meanwhile (a
/// rewritten `/etc/resolv.conf`) is picked up again. The writable roots (workdir, temp dir)
/// are neither part of the key nor cached: they are opened afresh every call, so a workdir
/// deleted and made again under the same name gets its rule on the new directory.
fn landlock_targets(list: &AllowList) -> Arc<Vec<Target>> {
    type Entry = (AllowList, std::time::Instant, Arc<Vec<Target>>);
    const TTL: std::time::Duration = std::time::Duration::from_secs(30);
    static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    let key = AllowList {
        roots: list
            .roots
            .iter()
            .filter(|(_, g)| *g != Grant::Full)
            .cloned()
            .collect(),
        masks: list.masks.clone(),
    };
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(_, at, _)| at.elapsed() < TTL);
    if let Some((_, _, t)) = cache.iter().find(|(l, _, _)| *l == key) {
        return t.clone();
    }
    let targets: Arc<Vec<Target>> = Arc::new(
        key.landlock_rules()
            .iter()
            .filter_map(|(p, g)| Target::open(p, *g))
            .collect(),
    );
    if cache.len() >= 4 {
        cache.remove(0);
    }
    cache.push((key, std::time::Instant::now(), targets.clone()));
    targets
}

/// Everything the confined child does, prepared here (the child only makes system calls).
/// `via_user`: make the namespaces inside a user namespace (the caller lacks `CAP_SYS_ADMIN`);
/// `diag`: where a failing step is reported (-1: nowhere).
pub(crate) fn child_plan(
    backend: &Sandbox,
    workdir: &Path,
    tmp: &Path,
    policy: &Policy,
    via_user: bool,
    diag: std::os::fd::RawFd,
) -> std::io::Result<ChildPlan> {
    static FILTER: std::sync::OnceLock<Filter> = std::sync::OnceLock::new();
    let list = allow_list(workdir, tmp, &policy.hide);
    let mut unshare = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    // no host network: join the process-wide private one, else make one per command
    let join = match (policy.network, crate::netns::shared(via_user)) {
        (false, Some(s)) => Some((s.user_fd(), s.net_fd())),
        _ => None,
    };
    let loopback = !policy.network && join.is_none();
    if loopback {
        unshare |= libc::CLONE_NEWNET;
    }
    let (mounts, landlock) = match backend {
        Sandbox::Landlock { abi } => {
            let abi = (*abi).min(crate::fsrules::abi());
            if abi < 1 {
                return Err(std::io::Error::other("this kernel has no Landlock"));
            }
            let ruleset = Ruleset::new(abi)?;
            for t in landlock_targets(&list).iter() {
                ruleset.allow_target(t)?;
            }
            for (p, _) in list.roots.iter().filter(|(_, g)| *g == Grant::Full) {
                ruleset.allow(p, Grant::Full)?;
            }
            let late = LandlockPlan {
                ruleset,
                proc: c"/proc".to_owned(),
                shm: c"/dev/shm".to_owned(),
                pts: c"/dev/pts".to_owned(),
                ptmx: c"/dev/ptmx".to_owned(),
            };
            (MountPlan::light(), Some(late))
        }
        _ => (MountPlan::new_root(&list, workdir)?, None),
    };
    Ok(ChildPlan {
        parent_pid: std::process::id() as libc::pid_t,
        user: via_user.then(UserMaps::for_current),
        join,
        unshare,
        loopback,
        mounts,
        landlock,
        seccomp: FILTER.get_or_init(Filter::confined).clone(),
        diag,
        ended: -1,
        keep_caps: false,
        listen: None,
    })
}
