//! Unit tests of the checkpoint journal: appends, snapshots, replay, torn and damaged lines,
//! key paths and key order.

use super::*;
use crate::agent::AgentConfig;
use crate::messages::Message;

struct Fixture {
    _d: tempfile::TempDir,
    dir: Beneath,
    state: State,
    journal: Journal,
}

fn fixture() -> Fixture {
    let d = tempfile::tempdir().unwrap();
    let dir = Beneath::open(d.path()).unwrap();
    let state = State::fresh(&AgentConfig::new(d.path(), "Write notes.md."));
    Fixture {
        _d: d,
        dir,
        state,
        journal: Journal::default(),
    }
}

impl Fixture {
    fn save(&mut self) {
        self.journal
            .save(&self.dir, &mut self.state, false)
            .unwrap();
    }
    fn files(&self) -> (Vec<u8>, Vec<u8>) {
        (
            self.dir.read_bytes(CHECKPOINT).unwrap(),
            self.dir.read_bytes(CHECKPOINT_JOURNAL).unwrap(),
        )
    }
    /// The state as a full checkpoint written now would load it.
    fn full(&self) -> Vec<u8> {
        let s: State = serde_json::from_slice(&serde_json::to_vec(&self.state).unwrap()).unwrap();
        serde_json::to_vec(&s).unwrap()
    }
    fn loaded(&self) -> (Vec<u8>, Replay) {
        let (s, r) = load_from(&self.dir).unwrap().unwrap();
        (serde_json::to_vec(&s).unwrap(), r)
    }
    fn turn(&mut self, i: u32) {
        self.state
            .messages
            .push(Message::assistant(format!("turn {i}"), vec![]));
        self.state
            .messages
            .push(Message::user(format!("result {i}\nline two\t\"quoted\"")));
        self.state.turn = i;
        self.state.seen.insert(format!("{i:032x}"));
        self.state.elapsed_s = f64::from(i) * 0.1 + 1e-9;
        self.save();
    }
}

#[test]
fn each_save_appends_one_line_and_the_replay_is_the_full_state() {
    let mut f = fixture();
    f.save();
    assert_eq!(f.journal.snapshots, 1);
    let (snap, _) = f.files();
    for i in 1..=20 {
        f.turn(i);
        let (cp, journal) = f.files();
        // the snapshot is not rewritten; the journal gained the turn's line
        assert_eq!(cp, snap, "turn {i}");
        assert_eq!(
            journal.iter().filter(|&&b| b == b'\n').count(),
            1 + i as usize
        );
        let (loaded, r) = f.loaded();
        assert_eq!(loaded, f.full(), "turn {i}");
        assert_eq!(
            (r.records, r.torn, r.damaged.is_none()),
            (i as usize, false, true)
        );
    }
    assert_eq!((f.journal.snapshots, f.journal.appends), (1, 20));
    // a nudge joining the newest message is an amendment, not a rewrite
    f.state
        .messages
        .last_mut()
        .unwrap()
        .content
        .push_str("\n\n[nudge]");
    f.save();
    assert_eq!(f.journal.snapshots, 1);
    assert_eq!(f.loaded().0, f.full());
    // the run's end writes the whole state as the snapshot again
    f.state.done = Some(crate::agent::RunStatus::Finished);
    f.journal.save(&f.dir, &mut f.state, true).unwrap();
    assert_eq!(f.journal.snapshots, 2);
    let (cp, journal) = f.files();
    assert_eq!(cp, f.full());
    assert_eq!(journal.iter().filter(|&&b| b == b'\n').count(), 1);
}

#[test]
fn a_rewritten_history_or_a_long_journal_starts_a_new_snapshot() {
    let mut f = fixture();
    for i in 1..=6 {
        f.turn(i);
    }
    assert_eq!(f.journal.snapshots, 1);
    // compaction: older messages replaced
    f.state.messages.drain(2..8);
    f.state.messages.insert(2, Message::user("[summary]"));
    f.save();
    assert_eq!(f.journal.snapshots, 2);
    assert_eq!(f.files().0, f.full());
    assert_eq!(f.loaded().0, f.full());
    // a journal past its bound (and the snapshot's size) is folded into a new snapshot
    let before = f.journal.snapshots;
    let big = "x".repeat(40 * 1024);
    for i in 0..8 {
        f.state.messages.push(Message::user(format!("{i}{big}")));
        f.save();
        assert_eq!(f.loaded().0, f.full());
    }
    assert!(f.journal.snapshots > before);
    let (cp, journal) = f.files();
    assert!(journal.len() as u64 <= JOURNAL_BOUND.max(cp.len() as u64));
}

#[test]
fn a_torn_last_line_is_ignored_and_a_damaged_one_stops_the_replay() {
    let mut f = fixture();
    for i in 1..=3 {
        f.turn(i);
    }
    let at3 = f.full();
    let (snap, j3) = f.files();
    f.turn(4);
    let (_, j4) = f.files();
    // a kill halfway through the fourth append
    let cut = j3.len() + (j4.len() - j3.len()) / 2;
    let (s, r) = replay(&snap, &j4[..cut]).unwrap();
    assert_eq!(serde_json::to_vec(&s).unwrap(), at3);
    // (turn 1 was the snapshot; turns 2 and 3 its two lines)
    assert!(r.torn && r.records == 2 && r.damaged.is_none(), "{r:?}");
    // ... or just before its newline
    let (s, r) = replay(&snap, &j4[..j4.len() - 1]).unwrap();
    assert_eq!(serde_json::to_vec(&s).unwrap(), at3);
    assert!(r.torn);
    // a damaged line in the middle: the replay stops before it and says where
    let mut lines: Vec<&[u8]> = j4.split_inclusive(|&b| b == b'\n').collect();
    lines[2] = b"{\"seq\":2,\"keep\":1}\n";
    let (_, r) = replay(&snap, &lines.concat()).unwrap();
    assert_eq!(r.records, 1);
    assert_eq!(r.damaged.as_ref().map(|d| d.0), Some(3));
    // a record out of sequence (a line appended twice) stops it too
    let mut lines: Vec<&[u8]> = j4.split_inclusive(|&b| b == b'\n').collect();
    lines.insert(2, lines[1]);
    let (_, r) = replay(&snap, &lines.concat()).unwrap();
    assert_eq!(r.records, 1);
    assert!(r.damaged.unwrap().1.contains("record 1 where 2 was due"));
}

#[test]
fn a_journal_of_another_snapshot_is_never_replayed() {
    let mut f = fixture();
    for i in 1..=3 {
        f.turn(i);
    }
    let (_, journal) = f.files();
    // a checkpoint written by hand (or a new snapshot whose journal was not started yet)
    let mut other = f.state.clone();
    other.turn = 99;
    let other_bytes = serde_json::to_vec(&other).unwrap();
    let (s, r) = replay(&other_bytes, &journal).unwrap();
    assert_eq!((s.turn, r.records), (99, 0));
    // a header of another version, or a missing journal: the snapshot alone
    let (snap, _) = f.files();
    let bumped =
        String::from_utf8(journal.clone())
            .unwrap()
            .replacen("\"journal\":1", "\"journal\":7", 1);
    assert_eq!(replay(&snap, bumped.as_bytes()).unwrap().1.records, 0);
    // (the snapshot is the first save, at turn 1)
    assert_eq!(replay(&snap, b"").unwrap().0.turn, 1);
    // a snapshot that is not a checkpoint is an error, not a fresh state
    assert!(replay(b"{\"turn\":", &journal).is_err());
}

#[test]
fn only_the_changed_entries_of_a_map_are_recorded_and_removed_keys_are_replayed() {
    let old = serde_json::json!({
        "turn": 1, "gone": true,
        "guard": {"calls": {"a": {"ok": true}, "b": {"ok": false}}, "last": null},
    });
    let new = serde_json::json!({
        "turn": 2,
        "guard": {"calls": {"a": {"ok": true}, "c": {"ok": true}}, "last": "c"},
    });
    let (o, n) = (old.as_object().unwrap(), new.as_object().unwrap());
    let mut d = Diff::default();
    assert!(d.objects(&mut Vec::new(), o, n));
    let Diff { set, del, sort } = d;
    assert!(sort.is_empty());
    let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        set,
        vec![
            (p(&["turn"]), serde_json::json!(2)),
            (p(&["guard", "calls", "c"]), serde_json::json!({"ok": true})),
            (p(&["guard", "last"]), serde_json::json!("c")),
        ]
    );
    assert_eq!(del, vec![p(&["guard", "calls", "b"]), p(&["gone"])]);
    let mut state = old.clone();
    state["messages"] = serde_json::json!([]);
    let rec = RecordIn {
        seq: 1,
        keep: 0,
        messages: vec![],
        set,
        del,
        sort,
    };
    apply(&mut state, rec).unwrap();
    state.as_object_mut().unwrap().remove("messages");
    assert_eq!(state, new);
    // a path through something that is not an object is a damaged line
    let mut state = serde_json::json!({"messages": [], "turn": 1});
    let bad = RecordIn {
        seq: 1,
        keep: 0,
        messages: vec![],
        set: vec![(p(&["turn", "x"]), Value::Null)],
        del: vec![],
        sort: vec![],
    };
    assert!(apply(&mut state, bad)
        .unwrap_err()
        .contains("no object at 'turn'"));
}

/// Replays `old` → `new` through a recorded diff and checks the result, key order included.
fn round_trip(old: Value, new: Value) -> Diff {
    let mut d = Diff::default();
    let ok = d.objects(
        &mut Vec::new(),
        old.as_object().unwrap(),
        new.as_object().unwrap(),
    );
    assert!(ok, "the root keeps its keys in place");
    let mut state = old.clone();
    state["messages"] = serde_json::json!([]);
    let rec = RecordIn {
        seq: 1,
        keep: 0,
        messages: vec![],
        set: d.set.clone(),
        del: d.del.clone(),
        sort: d.sort.clone(),
    };
    apply(&mut state, rec).unwrap();
    state.as_object_mut().unwrap().shift_remove("messages");
    assert_eq!(
        serde_json::to_string(&state).unwrap(),
        serde_json::to_string(&new).unwrap()
    );
    d
}

#[test]
fn the_key_order_of_every_object_survives_the_replay() {
    // a sorted map gaining a key in the middle: entry written, keys sorted afterwards
    let d = round_trip(
        serde_json::json!({"m": {"a": 1, "c": 3}}),
        serde_json::json!({"m": {"a": 1, "b": 2, "c": 3}}),
    );
    assert_eq!((d.set.len(), d.sort.len()), (1, 1));
    // arguments in the order the model wrote them: written whole when the order changed
    let d = round_trip(
        serde_json::json!({"call": {"arguments": {"old": "x"}}}),
        serde_json::json!({"call": {"arguments": {"path": "p", "old": "x", "new": "y"}}}),
    );
    assert_eq!(d.set[0].0, vec!["call".to_string(), "arguments".into()]);
    // a removed key in the middle keeps the others in their order
    round_trip(
        serde_json::json!({"o": {"z": 1, "y": 2, "x": 3}}),
        serde_json::json!({"o": {"z": 1, "x": 3, "w": 0}}),
    );
}
