//! Edit safety: every write first copies the previous version to `.lrab/backups/`, deletes go
//! to `.lrab/trash/`, and `rollback(path)` undoes the last change to a file in one call. A
//! journal makes this survive a kill and relaunch.

use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

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

#[derive(Debug)]
pub struct Backups {
    dir: PathBuf,
    trash: PathBuf,
    journal: Vec<Entry>,
    seq: u64,
}

fn flat(rel: &str) -> String {
    rel.replace(['/', '\\'], "__")
}

impl Backups {
    /// Open (and replay) the journal under `state_dir`.
    pub fn open(state_dir: &Path) -> std::io::Result<Self> {
        let dir = state_dir.join("backups");
        let trash = state_dir.join("trash");
        fs::create_dir_all(&dir)?;
        fs::create_dir_all(&trash)?;
        let mut journal: Vec<Entry> = Vec::new();
        if let Ok(text) = fs::read_to_string(dir.join("journal.jsonl")) {
            for line in text.lines() {
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
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("journal.jsonl"))?;
        writeln!(f, "{}", serde_json::to_string(e).unwrap_or_default())
    }

    /// Record the state of `abs` before a write (copying it when it exists).
    pub fn before_write(&mut self, abs: &Path, rel: &str) -> std::io::Result<()> {
        self.seq += 1;
        let backup = if abs.is_file() {
            let name = format!("{}.{}.bak", flat(rel), self.seq);
            fs::copy(abs, self.dir.join(&name))?;
            Some(name)
        } else {
            None
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

    /// Move a file to the trash instead of deleting it; returns the trash path (relative to
    /// the state folder).
    pub fn trash(&mut self, abs: &Path, rel: &str) -> std::io::Result<String> {
        self.seq += 1;
        let name = format!("{}.{}", flat(rel), self.seq);
        let dest = self.trash.join(&name);
        if fs::rename(abs, &dest).is_err() {
            // across filesystems: copy then remove
            if abs.is_dir() {
                return Err(std::io::Error::other(
                    "cannot move a directory across filesystems",
                ));
            }
            fs::copy(abs, &dest)?;
            fs::remove_file(abs)?;
        }
        Ok(format!("trash/{name}"))
    }

    /// Undo the most recent not-yet-undone write to `rel`: restore the previous content, or
    /// move a file the write created to the trash. The current content is kept in the trash.
    pub fn rollback(&mut self, abs: &Path, rel: &str) -> Result<String, String> {
        let Some(idx) = self.journal.iter().rposition(|e| e.rel == rel && !e.undone) else {
            return Err(format!("no recorded change to '{rel}' to roll back"));
        };
        let e = self.journal[idx].clone();
        let kept = if abs.exists() {
            Some(self.trash(abs, rel).map_err(|x| x.to_string())?)
        } else {
            None
        };
        let msg = match &e.backup {
            Some(b) => {
                if let Some(parent) = abs.parent() {
                    fs::create_dir_all(parent).map_err(|x| x.to_string())?;
                }
                fs::copy(self.dir.join(b), abs).map_err(|x| x.to_string())?;
                format!("restored '{rel}' to its content before change #{}", e.seq)
            }
            None => format!(
                "removed '{rel}' (it did not exist before change #{})",
                e.seq
            ),
        };
        let mut done = e;
        done.undone = true;
        self.append(&done).map_err(|x| x.to_string())?;
        self.journal[idx] = done;
        Ok(match kept {
            Some(k) => format!("{msg}; the replaced version is kept in .lrab/{k}"),
            None => msg,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_rollback_and_trash() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join(".lrab");
        let f = d.path().join("a.py");
        let mut b = Backups::open(&state).unwrap();
        b.before_write(&f, "a.py").unwrap();
        fs::write(&f, "v1").unwrap();
        b.before_write(&f, "a.py").unwrap();
        fs::write(&f, "v2").unwrap();
        // survives a reopen (kill and relaunch)
        let mut b = Backups::open(&state).unwrap();
        let m = b.rollback(&f, "a.py").unwrap();
        assert!(m.contains("restored"));
        assert_eq!(fs::read_to_string(&f).unwrap(), "v1");
        let m = b.rollback(&f, "a.py").unwrap();
        assert!(m.contains("removed"));
        assert!(!f.exists());
        assert!(b.rollback(&f, "a.py").is_err());
        fs::write(&f, "v3").unwrap();
        let t = b.trash(&f, "a.py").unwrap();
        assert!(!f.exists());
        assert_eq!(fs::read_to_string(state.join(t)).unwrap(), "v3");
    }
}
