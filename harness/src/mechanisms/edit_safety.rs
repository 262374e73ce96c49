//! Edit safety: every write first copies the previous version to the state folder's
//! `backups/`, deletes go to its `trash/`, and `rollback(path)` undoes the last change to a file in one call. A
//! journal makes this survive a kill and relaunch.

use crate::state_dir::io_err;
use lrab_safety::{Beneath, BeneathError as BError};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Entry {
    seq: u64,
    rel: String,
    /// File name under backups/ holding the previous content; `None` when the write created
    /// the file.
    backup: Option<String>,
    #[serde(default)]
    undone: bool,
}

/// Why a rollback did not happen (each message told to the model as is).
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    #[error("no recorded change to '{rel}' to roll back")]
    NoChange { rel: String },
    /// Moving the current version to the trash or recording the rollback failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Reading the backup or writing it back beneath the workdir failed.
    #[error(transparent)]
    Beneath(#[from] BError),
}

/// The backups and trash folders of the state folder (outside the workdir), held open as
/// directory handles made once at start-up.
#[derive(Debug)]
pub struct Backups {
    dir: Beneath,
    trash: Beneath,
    journal: Vec<Entry>,
    seq: u64,
}

fn flat(rel: &str) -> String {
    rel.replace(['/', '\\'], "__")
}

impl Backups {
    /// Open (and replay) the journal under `backups/` of the state folder `state`.
    pub fn open(state: &Beneath) -> std::io::Result<Self> {
        let (d, t) = (lrab_records::layout::BACKUPS, lrab_records::layout::TRASH);
        state.mkdir_all(d).map_err(io_err)?;
        state.mkdir_all(t).map_err(io_err)?;
        let dir = state.sub(d).map_err(io_err)?;
        let trash = state.sub(t).map_err(io_err)?;
        let mut journal: Vec<Entry> = Vec::new();
        if let Ok(bytes) = dir.read_bytes("journal.jsonl") {
            for line in String::from_utf8_lossy(&bytes).lines() {
                if let Ok(e) = serde_json::from_str::<Entry>(line) {
                    if let Some(old) = journal.iter_mut().find(|x| x.seq == e.seq) {
                        *old = e;
                    } else {
                        journal.push(e);
                    }
                }
            }
        }
        let seq = journal.iter().map(|e| e.seq).max().unwrap_or(0);
        Ok(Backups {
            dir,
            trash,
            journal,
            seq,
        })
    }

    fn append(&self, e: &Entry) -> std::io::Result<()> {
        let line = format!("{}\n", serde_json::to_string(e).unwrap_or_default());
        self.dir
            .append("journal.jsonl", line.as_bytes())
            .map(|_| ())
            .map_err(io_err)
    }

    /// Record the state of `rel` before a write: `old` is its content as the caller read it
    /// through the workdir handle (`None`: the write creates the file).
    pub fn before_write(&mut self, rel: &str, old: Option<&[u8]>) -> std::io::Result<()> {
        self.seq += 1;
        let backup = match old {
            Some(bytes) => {
                let name = format!("{}.{}.bak", flat(rel), self.seq);
                self.dir.write(&name, bytes).map_err(io_err)?;
                Some(name)
            }
            None => None,
        };
        let e = Entry {
            seq: self.seq,
            rel: rel.to_string(),
            backup,
            undone: false,
        };
        self.append(&e)?;
        self.journal.push(e);
        Ok(())
    }

    /// Move `rel` (beneath `wd`) to the trash instead of deleting it; returns the trash path
    /// (relative to the state folder).
    pub fn trash(&mut self, wd: &Beneath, rel: &str) -> std::io::Result<String> {
        self.seq += 1;
        let name = format!("{}.{}", flat(rel), self.seq);
        if let Err(e) = wd.move_to(rel, &self.trash, &name) {
            let cross = e.io_kind().is_some()
                && matches!(&e, BError::Io { err, .. } if err.raw_os_error() == Some(libc::EXDEV));
            if !cross {
                return Err(io_err(e));
            }
            // across filesystems: copy then remove (files only)
            let bytes = wd.read_bytes(rel).map_err(io_err)?;
            self.trash.write(&name, &bytes).map_err(io_err)?;
            wd.remove(rel).map_err(io_err)?;
        }
        Ok(format!("trash/{name}"))
    }

    /// Undo the most recent not-yet-undone write to `rel`: restore the previous content, or
    /// move a file the write created to the trash. The current content is kept in the trash.
    pub fn rollback(&mut self, wd: &Beneath, rel: &str) -> Result<String, RollbackError> {
        let Some(idx) = self.journal.iter().rposition(|e| e.rel == rel && !e.undone) else {
            return Err(RollbackError::NoChange {
                rel: rel.to_string(),
            });
        };
        let e = self.journal[idx].clone();
        let kept = if wd.stat(rel).is_ok() {
            Some(self.trash(wd, rel)?)
        } else {
            None
        };
        let msg = match &e.backup {
            Some(b) => {
                let bytes = self.dir.read_bytes(b)?;
                if let Some((parent, _)) = rel.rsplit_once('/') {
                    wd.mkdir_all(parent)?;
                }
                wd.write(rel, &bytes)?;
                format!("restored '{rel}' to its content before change #{}", e.seq)
            }
            None => format!(
                "removed '{rel}' (it did not exist before change #{})",
                e.seq
            ),
        };
        let mut done = e;
        done.undone = true;
        self.append(&done)?;
        self.journal[idx] = done;
        Ok(match kept {
            Some(k) => format!("{msg}; the replaced version is kept in the harness's {k}"),
            None => msg,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_rollback_and_trash() {
        use std::fs;
        let d = tempfile::tempdir().unwrap();
        let s = tempfile::tempdir().unwrap();
        let state = s.path();
        let st = Beneath::open(state).unwrap();
        let f = d.path().join("a.py");
        let wd = Beneath::open(d.path()).unwrap();
        let mut b = Backups::open(&st).unwrap();
        b.before_write("a.py", None).unwrap();
        fs::write(&f, "v1").unwrap();
        b.before_write("a.py", Some(b"v1")).unwrap();
        fs::write(&f, "v2").unwrap();
        // survives a reopen (kill and relaunch)
        let mut b = Backups::open(&st).unwrap();
        let m = b.rollback(&wd, "a.py").unwrap();
        assert!(m.contains("restored"));
        assert_eq!(fs::read_to_string(&f).unwrap(), "v1");
        let m = b.rollback(&wd, "a.py").unwrap();
        assert!(m.contains("removed"));
        assert!(!f.exists());
        let e = b.rollback(&wd, "a.py").unwrap_err();
        assert!(matches!(e, RollbackError::NoChange { .. }), "{e:?}");
        assert_eq!(e.to_string(), "no recorded change to 'a.py' to roll back");
        fs::write(&f, "v3").unwrap();
        let t = b.trash(&wd, "a.py").unwrap();
        assert!(!f.exists());
        assert_eq!(fs::read_to_string(state.join(t)).unwrap(), "v3");
    }
}
