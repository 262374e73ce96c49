//! The checkpoint as a snapshot plus a journal. Rewriting the whole state after every turn
//! cost more than anything else the harness does per turn, and grew with the history; now
//! `checkpoint.json` holds the whole [`State`] as of one moment (the format readers already
//! know) and `checkpoint.journal.jsonl` appends one line per save after it: the messages
//! added since (after the first `keep` of the previous save), and the values of the state
//! that changed, each at its path of object keys (a mechanism's map that gains an entry
//! writes just that entry), with the keys that went away. A resume reads the snapshot and replays the journal; what
//! it gets is the state of the last complete line, exactly as a full checkpoint written then
//! would have loaded.
//!
//! - The journal's first line names the snapshot it extends by its sha256, so a journal left
//!   over from an older snapshot (a kill between writing a snapshot and starting its
//!   journal, or a checkpoint written by hand) is never replayed onto the wrong state.
//! - A line cut off by a kill (no newline at the end, or not JSON) is the last one and is
//!   ignored; the first save after a resume writes a fresh snapshot, so nothing is ever
//!   appended after a torn line. A damaged line before the end stops the replay there (with
//!   a warning naming the line).
//! - A new snapshot replaces the journal when the history is rewritten (compaction, pruning,
//!   the cleanup after a resume), when the journal has grown past [`JOURNAL_BOUND`] or the
//!   size of the snapshot, and when the run ends (so a finished run's `checkpoint.json` is
//!   the whole state again).

use super::State;
use lrab_records::layout::{CHECKPOINT, CHECKPOINT_JOURNAL};
use lrab_safety::Beneath;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Version of the journal's line format.
pub const JOURNAL_VERSION: u32 = 1;

/// The journal is replaced by a new snapshot once it holds more than this many bytes and more
/// than the snapshot itself (replaying it then costs more than reading a fresh snapshot).
pub const JOURNAL_BOUND: u64 = 256 * 1024;

/// The journal's first line.
#[derive(Serialize, Deserialize)]
struct Header {
    journal: u32,
    /// sha256 of the bytes of the `checkpoint.json` this journal extends.
    extends: String,
}

/// One save after the snapshot.
#[derive(Serialize)]
struct Record<'a> {
    seq: u64,
    /// Messages of the previous state kept; `messages` follow them.
    keep: usize,
    messages: &'a [crate::messages::Message],
    /// Values that changed, each at its path of object keys below the state (a mechanism's
    /// map gains one entry per call, so only that entry is written, not the whole map).
    set: &'a [(Vec<String>, Value)],
    /// Paths of object keys that are gone.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    del: &'a [Vec<String>],
    /// Objects whose keys are put in order afterwards (maps, which serialize sorted, that
    /// gained a key in the middle).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    sort: &'a [Vec<String>],
}

#[derive(Deserialize)]
struct RecordIn {
    seq: u64,
    keep: usize,
    messages: Vec<Value>,
    set: Vec<(Vec<String>, Value)>,
    #[serde(default)]
    del: Vec<Vec<String>>,
    #[serde(default)]
    sort: Vec<Vec<String>>,
}

/// What a replay found.
#[derive(Debug, Default)]
pub struct Replay {
    /// Journal lines applied.
    pub records: usize,
    /// The last line was cut off (a kill during an append) and was ignored.
    pub torn: bool,
    /// A damaged line before the end: its number (1-based) and why; the replay stopped there.
    pub damaged: Option<(usize, String)>,
}

/// The state a snapshot and its journal describe: the snapshot with every complete line of a
/// journal that extends it applied (a journal of another snapshot is not read). An error:
/// the snapshot itself is not a checkpoint.
pub fn replay(snapshot: &[u8], journal: &[u8]) -> serde_json::Result<(State, Replay)> {
    let mut info = Replay::default();
    let mut lines = journal.split_inclusive(|&b| b == b'\n');
    let header = lines
        .next()
        .filter(|l| l.ends_with(b"\n"))
        .and_then(|l| serde_json::from_slice::<Header>(l).ok());
    let extends = header.is_some_and(|h| {
        h.journal == JOURNAL_VERSION && h.extends == lrab_util::sha256_hex(snapshot)
    });
    let mut state: Option<Value> = None;
    if extends {
        for (i, line) in lines.enumerate() {
            let number = i + 2;
            // JSON escapes the newlines inside strings, so a line without its newline is the
            // last one, cut off by a kill during the append
            if !line.ends_with(b"\n") {
                info.torn = true;
                break;
            }
            let expect = info.records as u64 + 1;
            let rec = match serde_json::from_slice::<RecordIn>(line) {
                Ok(r) if r.seq == expect => r,
                Ok(r) => {
                    info.damaged =
                        Some((number, format!("record {} where {expect} was due", r.seq)));
                    break;
                }
                Err(e) => {
                    info.damaged = Some((number, e.to_string()));
                    break;
                }
            };
            let v = match &mut state {
                Some(v) => v,
                None => state.insert(serde_json::from_slice(snapshot)?),
            };
            if let Err(e) = apply(v, rec) {
                info.damaged = Some((number, e));
                break;
            }
            info.records += 1;
        }
    }
    let s = match state {
        // exactly what a full checkpoint written at the last line would have loaded
        Some(v) if info.records > 0 => serde_json::from_value::<State>(v),
        _ => serde_json::from_slice::<State>(snapshot),
    };
    s.map(|s| (s, info))
}

fn apply(state: &mut Value, rec: RecordIn) -> Result<(), String> {
    let obj = state
        .as_object_mut()
        .ok_or("the snapshot is not a JSON object")?;
    let msgs = obj
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .ok_or("the snapshot has no messages")?;
    if rec.keep > msgs.len() {
        return Err(format!("keeps {} messages of {}", rec.keep, msgs.len()));
    }
    msgs.truncate(rec.keep);
    msgs.extend(rec.messages);
    for (path, v) in rec.set {
        let (parent, key) = at(obj, &path)?;
        parent.insert(key.to_string(), v);
    }
    for path in rec.del {
        let (parent, key) = at(obj, &path)?;
        parent.shift_remove(key);
    }
    for path in rec.sort {
        let (parent, key) = at(obj, &path)?;
        parent
            .get_mut(key)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| format!("no object to sort at {}", path.join(".")))?
            .sort_keys();
    }
    Ok(())
}

/// The object that holds the last key of `path`, and that key. The messages are not a field.
fn at<'a, 'p>(
    root: &'a mut Map<String, Value>,
    path: &'p [String],
) -> Result<(&'a mut Map<String, Value>, &'p str), String> {
    let Some((key, parents)) = path.split_last() else {
        return Err("an empty path".into());
    };
    if path[0] == "messages" {
        return Err("sets the messages as a field".into());
    }
    let mut obj = root;
    for p in parents {
        obj = obj
            .get_mut(p)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| format!("no object at '{p}' of {}", path.join(".")))?;
    }
    Ok((obj, key))
}

/// What changed from `old` to `new`, as values set and keys removed at paths of object keys
/// (anything but an object is replaced whole).
#[derive(Default)]
struct Diff {
    set: Vec<(Vec<String>, Value)>,
    del: Vec<Vec<String>>,
    sort: Vec<Vec<String>>,
}

/// How the keys of `new` can be reached from those of `old` by the journal's operations,
/// which keep the order of the keys kept and append the keys added; the key order is part of
/// the state (a tool call's arguments serialize in the order the model wrote them).
enum Order {
    /// Keys kept in place, new ones appended.
    Kept,
    /// `new` is sorted (a map): the keys are sorted after the change.
    Sorted,
    /// Neither: the object is written whole.
    Other,
}

fn order(old: &Map<String, Value>, new: &Map<String, Value>) -> Order {
    let kept = old.keys().filter(|k| new.contains_key(*k));
    let added = new.keys().filter(|k| !old.contains_key(*k));
    if kept.chain(added).eq(new.keys()) {
        Order::Kept
    } else if new.keys().zip(new.keys().skip(1)).all(|(a, b)| a < b) {
        Order::Sorted
    } else {
        Order::Other
    }
}

impl Diff {
    /// Record what turns `old` (at `path`) into `new`; `false` when only a whole replacement
    /// of the object would do.
    fn objects(
        &mut self,
        path: &mut Vec<String>,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> bool {
        match order(old, new) {
            Order::Other => return false,
            Order::Sorted => self.sort.push(path.clone()),
            Order::Kept => {}
        }
        for (k, v) in new {
            path.push(k.clone());
            match (old.get(k), v) {
                (Some(o), n) if o == n => {}
                (Some(Value::Object(o)), Value::Object(n)) if self.objects(path, o, n) => {}
                _ => self.set.push((path.clone(), v.clone())),
            }
            path.pop();
        }
        for k in old.keys().filter(|k| !new.contains_key(*k)) {
            let mut p = path.clone();
            p.push(k.clone());
            self.del.push(p);
        }
        true
    }
}

/// The top-level fields of `state` other than the messages, as JSON values.
fn fields(state: &mut State) -> serde_json::Result<Map<String, Value>> {
    let msgs = std::mem::take(&mut state.messages);
    let v = serde_json::to_value(&*state);
    state.messages = msgs;
    match v? {
        Value::Object(mut m) => {
            m.remove("messages");
            Ok(m)
        }
        _ => Err(serde::ser::Error::custom("the state is not a JSON object")),
    }
}

/// The writer: what the last save wrote, to know what the next one adds.
#[derive(Default)]
pub struct Journal {
    /// The journal open for appending, after a snapshot; `None`: the next save is a snapshot.
    file: Option<File>,
    /// The messages as of the last save.
    messages: Vec<crate::messages::Message>,
    /// The other fields as of the last save.
    fields: Map<String, Value>,
    /// Bytes in the journal, and in the snapshot it extends.
    bytes: u64,
    snapshot_bytes: u64,
    seq: u64,
    /// Snapshots written by this process (for tests and the benchmark).
    pub snapshots: u32,
    /// Journal lines appended by this process.
    pub appends: u32,
}

impl Journal {
    /// Save `state`: one appended line, or a new snapshot (see the module doc). `last`: the run
    /// has ended.
    pub fn save(&mut self, dir: &Beneath, state: &mut State, last: bool) -> std::io::Result<()> {
        if !last && self.file.is_some() {
            if let Some(line) = self.line(state)? {
                if self.bytes + line.len() as u64 <= JOURNAL_BOUND.max(self.snapshot_bytes) {
                    let r = self.file.as_mut().map_or(Ok(()), |f| f.write_all(&line));
                    if r.is_ok() {
                        self.bytes += line.len() as u64;
                        self.appends += 1;
                        return Ok(());
                    }
                }
            }
        }
        self.snapshot(dir, state)
    }

    /// The next journal line, with what it records remembered; `None` when a snapshot is due
    /// (the history was rewritten, not just extended).
    fn line(&mut self, state: &mut State) -> std::io::Result<Option<Vec<u8>>> {
        let old = &self.messages;
        let keep = old
            .iter()
            .zip(&state.messages)
            .take_while(|(a, b)| a == b)
            .count();
        // the newest saved message may still be amended (a nudge joins the last tool result);
        // anything older changed means the history was rewritten
        if keep + 1 < old.len() {
            return Ok(None);
        }
        let now = fields(state)?;
        let mut d = Diff::default();
        // the state's own fields are in the struct's order: always kept in place
        if !d.objects(&mut Vec::new(), &self.fields, &now) || d.sort.first() == Some(&vec![]) {
            return Ok(None);
        }
        let rec = Record {
            seq: self.seq + 1,
            keep,
            messages: &state.messages[keep..],
            set: &d.set,
            del: &d.del,
            sort: &d.sort,
        };
        let mut line = serde_json::to_vec(&rec)?;
        line.push(b'\n');
        self.seq += 1;
        self.messages.truncate(keep);
        self.messages.extend_from_slice(&state.messages[keep..]);
        self.fields = now;
        Ok(Some(line))
    }

    /// Write the whole state as the snapshot and start its journal.
    fn snapshot(&mut self, dir: &Beneath, state: &mut State) -> std::io::Result<()> {
        use crate::state_dir::io_err;
        self.file = None;
        let bytes = serde_json::to_vec(&*state)?;
        dir.write(CHECKPOINT, &bytes).map_err(io_err)?;
        let mut head = serde_json::to_vec(&Header {
            journal: JOURNAL_VERSION,
            extends: lrab_util::sha256_hex(&bytes),
        })?;
        head.push(b'\n');
        dir.write(CHECKPOINT_JOURNAL, &head).map_err(io_err)?;
        self.file = Some(dir.open_append(CHECKPOINT_JOURNAL).map_err(io_err)?);
        self.messages = state.messages.clone();
        self.fields = fields(state)?;
        self.bytes = head.len() as u64;
        self.snapshot_bytes = bytes.len() as u64;
        self.seq = 0;
        self.snapshots += 1;
        Ok(())
    }
}

/// Why a state folder's checkpoint cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("state folder '{}': {err}", state.display())]
    Open {
        state: std::path::PathBuf,
        err: lrab_safety::BeneathError,
    },
    #[error("state folder '{}' has no checkpoint: {err}", state.display())]
    Missing {
        state: std::path::PathBuf,
        err: lrab_safety::BeneathError,
    },
    #[error("checkpoint in '{}' is corrupt: {err}", state.display())]
    Corrupt {
        state: std::path::PathBuf,
        err: serde_json::Error,
    },
}

/// The snapshot beneath `dir` could not be read (`Ok(Err)`), or it and its journal describe
/// this state (`Ok(Ok)`); `Err`: the snapshot is not a checkpoint.
pub(super) fn load_from(
    dir: &Beneath,
) -> Result<serde_json::Result<(State, Replay)>, lrab_safety::BeneathError> {
    let snapshot = dir.read_bytes(CHECKPOINT)?;
    let journal = dir.read_bytes(CHECKPOINT_JOURNAL).unwrap_or_default();
    Ok(replay(&snapshot, &journal))
}

/// The run's state as its last checkpoint left it: the snapshot in the state folder `state`
/// with its journal replayed (what a resume starts from). For tests and tools that inspect a
/// run; it changes nothing.
pub fn read_checkpoint(state: &Path) -> Result<State, CheckpointError> {
    let at = || state.to_path_buf();
    let dir = Beneath::open(state).map_err(|err| CheckpointError::Open { state: at(), err })?;
    match load_from(&dir) {
        Err(err) => Err(CheckpointError::Missing { state: at(), err }),
        Ok(Err(err)) => Err(CheckpointError::Corrupt { state: at(), err }),
        Ok(Ok((s, _))) => Ok(s),
    }
}

#[cfg(test)]
#[path = "state_journal_tests.rs"]
mod tests;
