//! Replacing a file atomically: readers see the old file or the new one, never half of either.

use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temp files of concurrent writers within one process.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// `.<name>.tmp.<pid>.<n>` next to `path`: same folder (so the rename stays on one filesystem),
/// hidden, and unique per writer so two writers never share a temp file.
fn temp_path(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()))
}

fn replace(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path` atomically and durably: a temp file in the same folder, fsync,
/// rename over the target. A crash of the process or of the machine leaves the old file or the
/// new one. The folder must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, true)
}

/// As [`write_atomic`] without the fsync: a killed process still leaves the old file or the new
/// one, but a power loss may lose the last write. For state rewritten on every step (the
/// harness checkpoint), where an fsync per step would cost more than the step.
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, false)
}

/// Pretty JSON with a trailing newline, written with [`write_atomic`].
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic_unsynced(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        write_json_atomic(&p, &serde_json::json!({"k": 1})).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\n  \"k\": 1\n}\n");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("missing-folder/x");
        assert!(write_atomic(&p, b"x").is_err());
        let q = d.path().join("dir");
        std::fs::create_dir(&q).unwrap();
        std::fs::write(q.join("keep"), b"k").unwrap();
        // renaming a file over a non-empty folder fails: the folder and its file stay
        assert!(write_atomic(&q, b"x").is_err());
        assert_eq!(std::fs::read(q.join("keep")).unwrap(), b"k");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
