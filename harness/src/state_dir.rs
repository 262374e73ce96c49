//! The harness's state folder (`--state-dir`; where it is: `lrab_records::layout`): checkpoint,
//! event log, report, saved shell outputs, backups, trash, and the private `HOME`/`TMPDIR` of
//! shell commands. It lies outside the workdir, so the kernel confinement of model-chosen
//! commands (the workdir and the private area `sandbox/` only) keeps them from writing it or
//! replacing any part of it by a symbolic link. The harness holds the folder open once and
//! reaches every file beneath that handle without following symlinks; the model reads saved
//! outputs back through `read_file` under the name `.lrab/out/N.txt`, served from the handle.

use lrab_records::layout;
use lrab_safety::{Beneath, BeneathError as BError};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The name under which the model reads saved outputs (`.lrab/out/N.txt`): a view of
/// the state folder's `out/`, not a folder in the workdir.
pub const OUT_PREFIX: &str = ".lrab/out/";

#[derive(Debug)]
pub struct StateDir {
    /// The folder's canonical path (for messages, the event log's readers, the sandbox rule).
    pub path: PathBuf,
    /// The folder, held open.
    pub dir: Beneath,
    /// `out/`, held open.
    pub out: Beneath,
    /// The private area shell commands may write (granted to the sandbox as a whole).
    pub sandbox: PathBuf,
    /// `sandbox/home`: the commands' `HOME`.
    pub home: PathBuf,
    /// `sandbox/tmp`: the commands' `TMPDIR`.
    pub tmp: PathBuf,
}

/// Why a state folder cannot be used (each message one line, naming the folder as given).
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    #[error("workdir '{}': {err}", workdir.display())]
    Workdir {
        workdir: PathBuf,
        err: std::io::Error,
    },
    #[error("workdir '{}' has no parent folder for the default state folder; pass --state-dir", workdir.display())]
    NoParent { workdir: PathBuf },
    #[error("state folder '{}' is a symbolic link", state.display())]
    Symlink { state: PathBuf },
    #[error("state folder '{}' cannot be created: {err}", state.display())]
    Create { state: PathBuf, err: std::io::Error },
    #[error("state folder '{}': {err}", state.display())]
    Resolve { state: PathBuf, err: std::io::Error },
    #[error("state folder '{}' is inside the workdir, where model-chosen commands could change it; choose a folder outside it", state.display())]
    InsideWorkdir { state: PathBuf },
    #[error("state folder '{}' contains the workdir; choose a folder beside it", state.display())]
    ContainsWorkdir { state: PathBuf },
    #[error("state folder '{}': {err}", state.display())]
    Open { state: PathBuf, err: BError },
    #[error("state folder '{}' is not writable: {err}", state.display())]
    NotWritable { state: PathBuf, err: BError },
}

fn canonical_workdir(workdir: &Path) -> Result<PathBuf, StateDirError> {
    workdir
        .canonicalize()
        .map_err(|err| StateDirError::Workdir {
            workdir: workdir.to_path_buf(),
            err,
        })
}

/// The standalone default for `workdir` (see `lrab_records::layout::default_state_dir`).
pub fn default_for(workdir: &Path) -> Result<PathBuf, StateDirError> {
    let wd = canonical_workdir(workdir)?;
    layout::default_state_dir(&wd).ok_or(StateDirError::NoParent { workdir: wd })
}

impl StateDir {
    /// Create (or reopen, for a resume) the state folder `state` of a run in `workdir`. Refused:
    /// a folder inside the workdir or containing it, a symbolic link, one that cannot be
    /// written.
    pub fn open(state: &Path, workdir: &Path) -> Result<StateDir, StateDirError> {
        let shown = || state.to_path_buf();
        let wd = canonical_workdir(workdir)?;
        if state
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(StateDirError::Symlink { state: shown() });
        }
        std::fs::create_dir_all(state).map_err(|err| StateDirError::Create {
            state: shown(),
            err,
        })?;
        let path = state.canonicalize().map_err(|err| StateDirError::Resolve {
            state: shown(),
            err,
        })?;
        if path.starts_with(&wd) {
            return Err(StateDirError::InsideWorkdir { state: shown() });
        }
        if wd.starts_with(&path) {
            return Err(StateDirError::ContainsWorkdir { state: shown() });
        }
        let dir = Beneath::open(&path).map_err(|err| StateDirError::Open {
            state: shown(),
            err,
        })?;
        let err = |err: BError| StateDirError::NotWritable {
            state: shown(),
            err,
        };
        for sub in [
            layout::OUTPUTS,
            layout::BACKUPS,
            layout::TRASH,
            "sandbox/home",
            "sandbox/tmp",
        ] {
            dir.mkdir_all(sub).map_err(err)?;
        }
        let probe = format!(".write-probe-{}", std::process::id());
        dir.write(&probe, b"ok").map_err(err)?;
        let _ = dir.remove(&probe);
        let out = dir.sub(layout::OUTPUTS).map_err(err)?;
        let sandbox = path.join(layout::SANDBOX);
        Ok(StateDir {
            home: sandbox.join("home"),
            tmp: sandbox.join("tmp"),
            sandbox,
            out,
            dir,
            path,
        })
    }

    /// The number of saved outputs so far (numbering continues after a resume).
    pub fn outputs_so_far(&self) -> u64 {
        self.out.list("").map_or(0, |e| e.len() as u64)
    }

    /// Create saved output `n` (`out/N.txt`), open for writing and reading back.
    pub fn create_output(&self, n: u64) -> std::io::Result<File> {
        self.out.create(&format!("{n}.txt")).map_err(io_err)
    }

    /// The saved output the model names `.lrab/out/N.txt` (`rel`, workdir-relative), if `rel`
    /// is such a name: its bytes, or the error.
    pub fn read_output(&self, rel: &str) -> Option<Result<Vec<u8>, BError>> {
        let name = rel.strip_prefix(OUT_PREFIX)?;
        Some(self.out.read_bytes(name))
    }

    /// The event log, open for appending.
    pub fn open_events(&self) -> std::io::Result<File> {
        self.dir.open_append(layout::EVENTS).map_err(io_err)
    }

    /// Make sure the private `HOME` and `TMPDIR` exist again (a command may have removed
    /// them); never follows a symlink a command left in their place.
    pub fn restore_private_dirs(&self) {
        let _ = self.dir.mkdir_all("sandbox/home");
        let _ = self.dir.mkdir_all("sandbox/tmp");
    }
}

/// A resolver error as an I/O error (refusals keep their text).
pub fn io_err(e: lrab_safety::BeneathError) -> std::io::Error {
    match e {
        lrab_safety::BeneathError::Io { err, .. } => err,
        r => std::io::Error::other(r.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_state_folder_inside_or_around_the_workdir_and_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let wd = d.path().join("w");
        std::fs::create_dir(&wd).unwrap();
        let e = StateDir::open(&wd.join("state"), &wd).unwrap_err();
        assert!(matches!(e, StateDirError::InsideWorkdir { .. }), "{e}");
        assert!(e.to_string().contains("inside the workdir"), "{e}");
        let e = StateDir::open(d.path(), &wd).unwrap_err();
        assert!(matches!(e, StateDirError::ContainsWorkdir { .. }), "{e}");
        assert!(e.to_string().contains("contains the workdir"), "{e}");
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("link")).unwrap();
        let e = StateDir::open(&d.path().join("link"), &wd).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "state folder '{}' is a symbolic link",
                d.path().join("link").display()
            )
        );
        let s = StateDir::open(&d.path().join("state"), &wd).unwrap();
        assert!(s.home.is_dir() && s.tmp.is_dir() && s.path.join("out").is_dir());
        assert_eq!(
            default_for(&wd).unwrap(),
            d.path().canonicalize().unwrap().join(".w.lrab")
        );
    }

    #[test]
    fn saved_outputs_are_served_from_the_handle_only() {
        let d = tempfile::tempdir().unwrap();
        let wd = d.path().join("w");
        std::fs::create_dir(&wd).unwrap();
        let s = StateDir::open(&d.path().join("state"), &wd).unwrap();
        use std::io::Write;
        s.create_output(1).unwrap().write_all(b"full").unwrap();
        assert_eq!(s.outputs_so_far(), 1);
        assert_eq!(s.read_output(".lrab/out/1.txt").unwrap().unwrap(), b"full");
        assert!(s.read_output("notes.txt").is_none());
        assert!(s
            .read_output(".lrab/out/../checkpoint.json")
            .unwrap()
            .is_err());
        // a symlink in out/ (not something a command can plant: out/ is outside its reach)
        // is refused, not followed
        std::fs::write(d.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), s.path.join("out/2.txt")).unwrap();
        assert!(s.read_output(".lrab/out/2.txt").unwrap().is_err());
    }
}
