//! The harness's state folder (`--state-dir`; where it is: `lrab_records::layout`): checkpoint,
//! event log, report, saved shell outputs, backups, trash, and the private `HOME`/`TMPDIR` of
//! shell commands. It lies outside the workdir, so the kernel confinement of model-chosen
//! commands (the workdir and the private area `sandbox/` only) keeps them from writing it or
//! replacing any part of it by a symbolic link. The harness holds the folder open once and
//! reaches every file beneath that handle without following symlinks; the model reads saved
//! outputs back through `read_file` under the name `.lrab/out/N.txt`, served from the handle.

use crate::mechanisms::edit_safety::io_err;
use lrab_records::layout;
use lrab_safety::beneath::{Beneath, Error as BError};
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

/// The standalone default for `workdir` (see `lrab_records::layout::default_state_dir`).
pub fn default_for(workdir: &Path) -> Result<PathBuf, String> {
    let wd = workdir
        .canonicalize()
        .map_err(|e| format!("workdir '{}': {e}", workdir.display()))?;
    layout::default_state_dir(&wd).ok_or_else(|| {
        format!(
            "workdir '{}' has no parent folder for the default state folder; pass --state-dir",
            wd.display()
        )
    })
}

impl StateDir {
    /// Create (or reopen, for a resume) the state folder `state` of a run in `workdir`. Refused:
    /// a folder inside the workdir or containing it, a symbolic link, one that cannot be
    /// written.
    pub fn open(state: &Path, workdir: &Path) -> Result<StateDir, String> {
        let shown = state.display();
        let wd = workdir
            .canonicalize()
            .map_err(|e| format!("workdir '{}': {e}", workdir.display()))?;
        if state
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(format!("state folder '{shown}' is a symbolic link"));
        }
        std::fs::create_dir_all(state)
            .map_err(|e| format!("state folder '{shown}' cannot be created: {e}"))?;
        let path = state
            .canonicalize()
            .map_err(|e| format!("state folder '{shown}': {e}"))?;
        if path.starts_with(&wd) {
            return Err(format!(
                "state folder '{shown}' is inside the workdir, where model-chosen commands could change it; choose a folder outside it"
            ));
        }
        if wd.starts_with(&path) {
            return Err(format!(
                "state folder '{shown}' contains the workdir; choose a folder beside it"
            ));
        }
        let dir = Beneath::open(&path).map_err(|e| format!("state folder '{shown}': {e}"))?;
        let err = |e: BError| format!("state folder '{shown}' is not writable: {e}");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_state_folder_inside_or_around_the_workdir_and_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let wd = d.path().join("w");
        std::fs::create_dir(&wd).unwrap();
        let e = StateDir::open(&wd.join("state"), &wd).unwrap_err();
        assert!(e.contains("inside the workdir"), "{e}");
        let e = StateDir::open(d.path(), &wd).unwrap_err();
        assert!(e.contains("contains the workdir"), "{e}");
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("link")).unwrap();
        let e = StateDir::open(&d.path().join("link"), &wd).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
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
