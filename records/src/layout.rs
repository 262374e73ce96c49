//! Where a harness run keeps its state, in one place for the harness (which writes it), the
//! runner (which passes it and reads token usage back) and the analysis (which counts
//! mechanism firings). The state folder lies *outside* the workdir: model-chosen commands are
//! confined to the workdir and a private area, so they can neither write the harness's
//! checkpoint, event log, backups, trash and saved outputs nor replace any of them by a
//! symbolic link (docs/harness.md, *Files*).
//!
//! ```text
//! <attempt>/workdir/            the task's files (the model's working directory)
//! <attempt>/harness/            the harness state folder (`--state-dir`)
//!     checkpoint.json  checkpoint.journal.jsonl  events.jsonl  report.json  out/N.txt
//!     backups/  trash/
//!     sandbox/home/  sandbox/tmp/    the private HOME and TMPDIR of every shell command
//! ```
//!
//! A standalone harness without `--state-dir` uses [`default_state_dir`]: `.<name>.lrab`
//! next to the workdir `<parent>/<name>`.

use std::path::{Path, PathBuf};

/// The state folder's name inside an attempt folder.
pub const ATTEMPT_STATE: &str = "harness";
/// The workdir's name inside an attempt folder.
pub const ATTEMPT_WORKDIR: &str = "workdir";
/// Where result folders written before the state moved out of the workdir kept it, relative
/// to the workdir.
pub const LEGACY_STATE: &str = ".lrab";

/// The workdir of an attempt.
pub fn attempt_workdir(attempt_dir: &Path) -> PathBuf {
    attempt_dir.join(ATTEMPT_WORKDIR)
}

/// The harness state folder of an attempt (what the runner passes as `--state-dir`).
pub fn attempt_state(attempt_dir: &Path) -> PathBuf {
    attempt_dir.join(ATTEMPT_STATE)
}

/// The state folder of a standalone run: `.<name>.lrab` next to the workdir (so
/// `~/proj` keeps its state in `~/.proj.lrab`). `None` for a workdir without a parent or a
/// name (`/`): such a run must be given `--state-dir`. `workdir` should be canonical.
pub fn default_state_dir(workdir: &Path) -> Option<PathBuf> {
    let name = workdir.file_name()?;
    let parent = workdir.parent()?;
    let mut n = std::ffi::OsString::from(".");
    n.push(name);
    n.push(".lrab");
    Some(parent.join(n))
}

/// The checkpoint (the whole loop state as of its last snapshot) in a state folder.
pub fn checkpoint(state: &Path) -> PathBuf {
    state.join(CHECKPOINT)
}
/// The checkpoint's journal (one line per save after the snapshot: the messages added and the
/// fields changed) in a state folder.
pub fn checkpoint_journal(state: &Path) -> PathBuf {
    state.join(CHECKPOINT_JOURNAL)
}
/// The event log ([`crate::EventLine`] per line) in a state folder.
pub fn events(state: &Path) -> PathBuf {
    state.join(EVENTS)
}
/// The final report in a state folder.
pub fn report(state: &Path) -> PathBuf {
    state.join(REPORT)
}
/// The folder of saved shell outputs (`N.txt`) in a state folder.
pub fn outputs(state: &Path) -> PathBuf {
    state.join(OUTPUTS)
}

/// File and folder names inside a state folder (the harness opens them beneath its handle on
/// the folder, never by joining paths).
pub const CHECKPOINT: &str = "checkpoint.json";
/// See [`checkpoint_journal`].
pub const CHECKPOINT_JOURNAL: &str = "checkpoint.journal.jsonl";
/// See [`events`].
pub const EVENTS: &str = "events.jsonl";
/// See [`report`].
pub const REPORT: &str = "report.json";
/// See [`outputs`].
pub const OUTPUTS: &str = "out";
/// Previous versions of files and the rollback journal.
pub const BACKUPS: &str = "backups";
/// Deleted files.
pub const TRASH: &str = "trash";
/// The private area shell commands may write: `home/` and `tmp/` below it.
pub const SANDBOX: &str = "sandbox";

/// The event log of an attempt: the state folder's, else one of the places older result
/// folders kept it (`workdir/.lrab/`, `.lrab/`, the attempt folder itself). `None` when none
/// exists.
pub fn attempt_events(attempt_dir: &Path) -> Option<PathBuf> {
    event_candidates(attempt_dir)
        .into_iter()
        .find(|p| p.is_file())
}

/// Where an attempt's event log may be, in order of preference.
pub fn event_candidates(attempt_dir: &Path) -> [PathBuf; 4] {
    [
        events(&attempt_state(attempt_dir)),
        attempt_workdir(attempt_dir).join(LEGACY_STATE).join(EVENTS),
        attempt_dir.join(LEGACY_STATE).join(EVENTS),
        attempt_dir.join(EVENTS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_state_is_a_hidden_sibling() {
        assert_eq!(
            default_state_dir(Path::new("/home/u/proj")).unwrap(),
            Path::new("/home/u/.proj.lrab")
        );
        assert!(default_state_dir(Path::new("/")).is_none());
    }

    #[test]
    fn attempt_events_prefers_the_state_folder_and_reads_old_layouts() {
        let d = tempfile::tempdir().unwrap();
        assert!(attempt_events(d.path()).is_none());
        let legacy = d.path().join("workdir/.lrab/events.jsonl");
        std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
        std::fs::write(&legacy, "").unwrap();
        assert_eq!(attempt_events(d.path()).unwrap(), legacy);
        let now = events(&attempt_state(d.path()));
        std::fs::create_dir_all(now.parent().unwrap()).unwrap();
        std::fs::write(&now, "").unwrap();
        assert_eq!(attempt_events(d.path()).unwrap(), now);
        assert_eq!(now, d.path().join("harness/events.jsonl"));
    }
}
