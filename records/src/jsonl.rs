//! JSON-lines files: appended under an exclusive lock in one write, so concurrent writers
//! (shards, the proxy's threads) never interleave and a crash never tears more than the last
//! line; read leniently, skipping a torn last line.

use crate::RecordError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// Opens `path` for appending (creating it and its folder), takes an exclusive `flock`, and
/// appends what `build` returns; `build` gets the file (positioned at its end) and its length.
/// The data leaves in a single `write` on an `O_APPEND` descriptor and is flushed to disk.
pub(crate) fn append_locked(
    path: &Path,
    build: impl FnOnce(&mut std::fs::File, u64) -> Result<Vec<u8>, RecordError>,
) -> Result<(), RecordError> {
    let io = |e| RecordError::io(path, e);
    if let Some(parent) = path.parent().filter(|x| !x.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    // SAFETY: flock on a descriptor we own; released when `f` is closed.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    let len = f.metadata().map_err(io)?.len();
    let bytes = build(&mut f, len)?;
    f.write_all(&bytes).map_err(io)?;
    f.sync_data().map_err(io)?;
    Ok(())
}

/// Whether the file's last byte is a newline (an empty file counts as terminated).
pub(crate) fn ends_with_newline(f: &mut std::fs::File, len: u64) -> std::io::Result<bool> {
    if len == 0 {
        return Ok(true);
    }
    let mut last = [0u8; 1];
    f.seek(SeekFrom::Start(len - 1))?;
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Appends `record` as one JSON line, terminating a torn last line first.
pub fn append_jsonl<T: Serialize>(path: &Path, record: &T) -> Result<(), RecordError> {
    let json = serde_json::to_string(record)
        .map_err(|e| RecordError::invalid(path, None, e.to_string()))?;
    append_locked(path, |f, len| {
        let mut line = String::new();
        if !ends_with_newline(f, len).map_err(|e| RecordError::io(path, e))? {
            line.push('\n');
        }
        line.push_str(&json);
        line.push('\n');
        Ok(line.into_bytes())
    })
}

/// Every line of `text` that parses as `T`, plus the number of non-blank lines that did not
/// (a line torn by a killed writer is one; nothing is guessed from it).
pub fn parse_lines<T: DeserializeOwned>(text: &str) -> (Vec<T>, usize) {
    let mut out = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<T>(line) {
            Ok(v) => out.push(v),
            Err(_) => bad += 1,
        }
    }
    (out, bad)
}

/// The records of a JSON-lines file and the number of lines that were not records; `None` when
/// the file cannot be read.
pub fn read_jsonl_lenient<T: DeserializeOwned>(path: &Path) -> Option<(Vec<T>, usize)> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(parse_lines(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_lines_are_terminated_and_skipped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/x.jsonl");
        append_jsonl(&p, &serde_json::json!({"a": 1})).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"{\"a\":")
            .unwrap();
        append_jsonl(&p, &serde_json::json!({"a": 2})).unwrap();
        let (v, bad) = read_jsonl_lenient::<serde_json::Value>(&p).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(bad, 1);
        assert!(read_jsonl_lenient::<serde_json::Value>(&d.path().join("none")).is_none());
    }
}
