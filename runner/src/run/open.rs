//! Step 2 of a run: open its folder. A new run gets a fresh folder, its `manifest.json` (the
//! resolved spec and the facts about backends, models, arms and machine) and `plan.jsonl`; a
//! resumed one keeps both and records this session's backend in `manifest.resume.json`. Either
//! way the folder is locked to this process, and the resume state (`cells.csv`, attempt
//! folders without a row set aside) decides which cells are still to run.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use lrab_records::ModelInfo;

use super::backend::Backend;
use super::manifest::{self, Manifest};
use super::matrix::{Cell, Shard};
use super::plan::{self, Plan};
use super::{arms, process, resume, Session};

/// A run folder held by one runner process (exclusive `flock` on `.lock`).
pub struct RunLock {
    _file: std::fs::File,
}

/// Locks `dir` for this process; a second runner on the same folder is refused.
pub fn lock_run(dir: &Path) -> Result<RunLock> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lock"))?;
    // SAFETY: flock on our own descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!("{} is in use by another lrab run", dir.display());
    }
    Ok(RunLock { _file: f })
}

/// `run-YYYYMMDD-HHMMSS[-sKofN]`.
pub(crate) fn default_run_id(shard: Option<Shard>) -> String {
    let t = lrab_util::UtcTime::now();
    let base = format!(
        "run-{:04}{:02}{:02}-{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    match shard {
        Some(sh) => format!("{base}-s{}of{}", sh.k, sh.n),
        None => base,
    }
}

/// An open run folder and what is left to do in it.
pub struct Opened {
    /// The run folder, absolute (arms run with cwd = their workdir).
    pub run_dir: PathBuf,
    pub run_id: String,
    /// Each planned cell still to do, with the first attempt to run.
    pub todo: Vec<(Cell, u32)>,
    _lock: RunLock,
}

/// What the run found out before opening its folder: its backends (the first is the run's),
/// their models and how arms are confined.
pub struct Found<'a> {
    pub backends: &'a [Backend],
    pub models: Vec<ModelInfo>,
    pub confinement: String,
}

/// The folder of a new run (refused when it already holds one) or the resumed one.
fn run_folder(plan: &Plan, session: &Session, resuming: Option<&Path>) -> Result<PathBuf> {
    if let Some(d) = resuming {
        return Ok(d.to_path_buf());
    }
    let id = match &session.run_id {
        Some(id) => id.clone(),
        None => default_run_id(plan::shard(&plan.spec)?),
    };
    if id.is_empty() || id.contains('/') || id.starts_with('.') {
        bail!("--run-id '{id}': must be a plain folder name");
    }
    let d = session.out_root.join(&id);
    if d.join("manifest.json").exists() {
        bail!(
            "{} already holds a run; use --resume {} or another --run-id",
            d.display(),
            d.display()
        );
    }
    Ok(d)
}

/// What the manifest records about an arm: where it is, the version it reports and the one its
/// file pins.
fn arm_info(a: &arms::Arm) -> manifest::ArmInfo {
    let s = arms::status(a);
    manifest::ArmInfo {
        name: s.name,
        installed: s.installed,
        path: s.path,
        version: s.version,
        upstream_version: s.upstream_version,
        pinned_version: Some(a.pinned_version().to_string()),
        install_hint: s.install_hint,
    }
}

/// The manifest of the run `run_id` of `plan` on what was `found`.
fn manifest_of(plan: &Plan, found: Found<'_>, run_id: &str) -> Result<Manifest> {
    let backend = &found.backends[0];
    Ok(Manifest {
        schema_version: lrab_records::SCHEMA_VERSION,
        run_id: run_id.to_string(),
        lrab_version: env!("CARGO_PKG_VERSION").into(),
        suite_commit: Some(manifest::suite_commit()),
        host: Some(manifest::host()),
        pack_hash: Some(
            (plan.pack.content_hash())
                .with_context(|| format!("hash of the task pack {}", plan.pack.root.display()))?,
        ),
        simulated: backend.simulated,
        backend_label: backend.label.clone(),
        backend_url: backend.public_url.clone(),
        backend_version: backend.version(),
        backends: (found.backends.iter())
            .map(|b| manifest::BackendInfo {
                label: b.label.clone(),
                url: b.public_url.clone(),
                simulated: b.simulated,
                version: b.version(),
                kind: Some(b.kind),
            })
            .collect(),
        models: found.models,
        arms: plan.arms.iter().map(arm_info).collect(),
        skipped_arms: plan.skipped_arms.clone(),
        arm_confinement: found.confinement,
        matrix: plan.spec.clone(),
        cells_planned: plan.cells.len(),
        note: if backend.simulated {
            "SIMULATED backend: these numbers are not results of real models".into()
        } else {
            String::new()
        },
    })
}

/// Opens (creates, or resumes when `resuming` names it) the run folder of `plan`.
pub fn open(
    plan: &Plan,
    found: Found<'_>,
    session: &Session,
    resuming: Option<&Path>,
) -> Result<Opened> {
    let run_dir = run_folder(plan, session, resuming)?;
    std::fs::create_dir_all(&run_dir).with_context(|| format!("create {}", run_dir.display()))?;
    // Arms run with cwd = their workdir: every path handed to them must be absolute.
    let run_dir = std::fs::canonicalize(&run_dir)
        .with_context(|| format!("resolve {}", run_dir.display()))?;
    let lock = lock_run(&run_dir)?;
    process::install_interrupt_handler();
    let run_id = (run_dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let manifest = manifest_of(plan, found, &run_id)?;
    if resuming.is_none() {
        manifest.write(&run_dir)?;
        plan::write_plan(&run_dir.join("plan.jsonl"), &plan.cells)?;
    } else {
        // Keep the original manifest; record this session's backend next to it.
        manifest.write_as(&run_dir.join("manifest.resume.json"))?;
    }
    if !plan.skipped_arms.is_empty() {
        eprintln!(
            "note: arms not installed, left out: {} (see `lrab arms check`)",
            plan.skipped_arms.join(", ")
        );
    }
    let rows = resume::read_rows_lenient(&run_dir.join("cells.csv"))?;
    if resuming.is_some() {
        // attempts the stopped runner left without a row: set aside, named, and run again
        resume::set_aside_unrecorded(&run_dir, &rows, &plan.cells, plan.spec.retries)?;
    }
    let todo = resume::pending(&plan.cells, &rows, plan.spec.retries);
    Ok(Opened {
        run_dir,
        run_id,
        todo,
        _lock: lock,
    })
}
