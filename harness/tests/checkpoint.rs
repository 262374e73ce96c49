//! The checkpoint across kills and builds, through the agent loop with scripted replies (no
//! model): call signatures are stored as sha256 digests (the same in every build, unlike
//! `DefaultHasher`), and a call that changes the workdir is recorded in the checkpoint before
//! it runs, so a run killed in the middle of a call neither repeats nor loses it on resume.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::mechanisms::anti_loop::signature;
use lrab_harness::mechanisms::repeat_guard::digest;
use lrab_harness::mechanisms::resilience::{probe, Inflight};
use lrab_harness::{Agent, Reply, Role, State};
use lrab_harness::{LocalExecutor, ShellExecutor, ShellOutcome, ShellRequest};
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const TASK: &str = "Add a second item to notes.md, then finish.";

/// The state the run's checkpoint (snapshot and journal) holds.
fn checkpoint(dir: &Path) -> State {
    lrab_harness::read_checkpoint(&common::state_of(dir)).unwrap()
}

/// A whole checkpoint written by hand (its journal, extending another snapshot, is not read).
fn save(dir: &Path, s: &State) {
    fs::write(
        common::state_of(dir).join("checkpoint.json"),
        serde_json::to_vec(s).unwrap(),
    )
    .unwrap();
}

fn append_two() -> Reply {
    Reply::call(
        "append_file",
        json!({"path": "notes.md", "content": "- two\n"}),
    )
}

/// What the workdir's notes.md holds.
fn notes(dir: &Path) -> String {
    fs::read_to_string(dir.join("notes.md")).unwrap()
}

/// The text of the newest tool result in the history (how a resume settled the last call).
fn last_tool_result(s: &State) -> &str {
    &s.messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .expect("a tool result")
        .content
}

/// A workdir whose notes.md held `before` and then took one turn: `append_two` ran once.
fn after_one_append(before: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("notes.md"), before).unwrap();
    let mut a = agent_in(d.path(), TASK, vec![append_two()]);
    a.step();
    d
}

#[test]
fn signatures_are_stored_as_digests_that_every_build_computes_alike() {
    let sig = signature(
        "write_file",
        &json!({"path": "notes.md", "content": "# Notes\n"}),
    );
    // pinned (the first 32 hex digits of sha256 of `write_file:{"content":"# Notes\n","path":"notes.md"}`,
    // as Python's hashlib gives them): a change of hash function or normalization shows here, not as a resume that
    // silently forgets which calls it has seen
    assert_eq!(digest(&sig), "2c238d739599fd2c028e27f2a0b24d3f");
    let d = tempfile::tempdir().unwrap();
    let mut a = agent_in(
        d.path(),
        TASK,
        vec![Reply::call(
            "write_file",
            json!({"path": "notes.md", "content": "# Notes\n"}),
        )],
    );
    a.step();
    // written as is, in the snapshot or its journal
    let cp: String = CHECKPOINT_FILES
        .iter()
        .map(|f| fs::read_to_string(common::state_of(d.path()).join(f)).unwrap())
        .collect();
    assert!(cp.contains("2c238d739599fd2c028e27f2a0b24d3f"));
    assert!(checkpoint(d.path())
        .seen
        .contains("2c238d739599fd2c028e27f2a0b24d3f"));
}

/// The checkpoint's files: the snapshot and its journal.
const CHECKPOINT_FILES: [&str; 2] = ["checkpoint.json", "checkpoint.journal.jsonl"];

/// Runs commands on the host, copying the checkpoint's files aside at the moment a command
/// starts (what a kill during the command would leave).
struct Snapshot {
    at: PathBuf,
    runs: Arc<AtomicUsize>,
}

impl ShellExecutor for Snapshot {
    fn run(&self, req: &ShellRequest<'_>) -> std::io::Result<ShellOutcome> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        fs::create_dir_all(&self.at)?;
        for f in CHECKPOINT_FILES {
            fs::copy(common::state_of(req.cwd).join(f), self.at.join(f))?;
        }
        LocalExecutor.run(req)
    }
    fn admit(
        &self,
        _c: &str,
        _x: &lrab_safety::Context,
    ) -> Result<(), lrab_harness::mechanisms::security::Refusal> {
        Ok(())
    }
}

fn snapshot_agent(
    dir: &Path,
    at: &Path,
    runs: &Arc<AtomicUsize>,
    replies: Vec<Reply>,
) -> Agent<ScriptedModel> {
    let exec = Snapshot {
        at: at.to_path_buf(),
        runs: runs.clone(),
    };
    let mut a = Agent::with_executor(
        config(dir, TASK),
        ScriptedModel::replies(replies),
        Box::new(exec),
    )
    .unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

#[test]
fn a_command_cut_off_by_a_kill_is_recorded_before_it_ran_and_not_rerun() {
    let d = tempfile::tempdir().unwrap();
    let side = tempfile::tempdir().unwrap();
    let at = side.path().join("at-kill");
    let runs = Arc::new(AtomicUsize::new(0));
    fs::write(d.path().join("notes.md"), "# Notes\n- one\n").unwrap();
    let cmd = Reply::call(
        "run_shell",
        json!({"command": "printf -- '- two\\n' >> notes.md"}),
    );
    {
        // a turn before the command, so its record lands in the journal after that snapshot
        let list = Reply::call("list_dir", json!({}));
        let mut a = snapshot_agent(d.path(), &at, &runs, vec![list, cmd]);
        a.step();
        a.step();
    }
    // the checkpoint on disk while the command ran held the call: in the journal's last line,
    // after the snapshot of the start
    let killed = lrab_harness::read_checkpoint(&at).unwrap();
    let rec = killed.inflight.clone().expect("recorded before it ran");
    assert_eq!(rec.call.name, "run_shell");
    assert_eq!(killed.turn, 1);
    let snapshot: State =
        serde_json::from_slice(&fs::read(at.join("checkpoint.json")).unwrap()).unwrap();
    assert!(snapshot.inflight.is_none());
    // relaunch from that moment
    for f in CHECKPOINT_FILES {
        fs::copy(at.join(f), common::state_of(d.path()).join(f)).unwrap();
    }
    let mut a = snapshot_agent(
        d.path(),
        &at,
        &runs,
        vec![Reply::call("list_dir", json!({}))],
    );
    assert!(a.resumed);
    let settled = last_tool_result(&a.state);
    assert!(settled.starts_with("interrupted:"), "{}", settled);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "not run again");
    assert_eq!(notes(d.path()), "# Notes\n- one\n- two\n");
    assert_eq!(a.state.turn, 2);
    assert!(a.state.inflight.is_none());
    a.step();
    assert_eq!(mech_count(d.path(), "resilience", "inflight"), 1);
}

/// The checkpoint as a kill during the append of `after_one_turn`'s reply would have left it:
/// the reply in the history, no result yet, the call recorded with its file as it was.
fn killed_during_append(dir: &Path, before: &str) -> State {
    let mut s = checkpoint(dir);
    let result = s.messages.pop().unwrap();
    assert_eq!(result.role, Role::Tool);
    let call = s.messages.last().unwrap().tool_calls[0].clone();
    let scratch = tempfile::tempdir().unwrap();
    let f = scratch.path().join("notes.md");
    fs::write(&f, before).unwrap();
    s.turn -= 1;
    s.tool_calls -= 1;
    s.inflight = Some(Inflight {
        turn: s.turn,
        index: 0,
        call,
        target: Some(probe(&f, "notes.md")),
        file_tool: true,
    });
    s
}

#[test]
fn an_append_cut_off_after_it_landed_is_not_appended_again_on_resume() {
    let before = "# Notes\n- one\n";
    let d = after_one_append(before);
    assert_eq!(notes(d.path()), "# Notes\n- one\n- two\n");
    save(d.path(), &killed_during_append(d.path(), before));
    // the relaunched model repeats the append it does not know landed
    let mut a = agent_in(d.path(), TASK, vec![append_two()]);
    let settled = last_tool_result(&a.state);
    assert!(
        settled.contains("completed before the run was interrupted")
            && settled.contains("not run again"),
        "{}",
        settled
    );
    a.step();
    // once, whatever happened
    assert_eq!(notes(d.path()), "# Notes\n- one\n- two\n");
}

#[test]
fn an_append_cut_off_before_it_landed_runs_once_on_resume() {
    let before = "# Notes\n- one\n";
    let d = after_one_append(before);
    let killed = killed_during_append(d.path(), before);
    // the kill came before the write reached the file
    fs::write(d.path().join("notes.md"), before).unwrap();
    save(d.path(), &killed);
    let a = agent_in(d.path(), TASK, vec![]);
    let settled = last_tool_result(&a.state);
    assert!(settled.starts_with("appended"), "{}", settled);
    assert_eq!(notes(d.path()), "# Notes\n- one\n- two\n");
    assert_eq!(a.state.turn, 1);
}

/// The state as a whole checkpoint written at this moment would have loaded it.
fn as_full_checkpoint(s: &State) -> Vec<u8> {
    let back: State = serde_json::from_slice(&serde_json::to_vec(s).unwrap()).unwrap();
    serde_json::to_vec(&back).unwrap()
}

fn lines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

#[test]
fn each_turn_appends_to_the_journal_and_the_checkpoint_reads_back_whole() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("notes.md"), "# Notes\n- one\n").unwrap();
    let mut replies = vec![Reply::call(
        "todo",
        json!({"action": "create", "items": ["write the parts", "finish"]}),
    )];
    for i in 0..8 {
        let f = format!("part{i}.md");
        replies.push(Reply::call(
            "write_file",
            json!({"path": f, "content": format!("# Part {i}\ntext\n")}),
        ));
        replies.push(Reply::call("read_file", json!({"path": f})));
        replies.push(Reply::text("I am thinking about the next part."));
    }
    let turns = replies.len();
    let mut a = agent_in(d.path(), TASK, replies);
    let st = common::state_of(d.path());
    let mut snapshots = 0;
    let mut last = Vec::new();
    for t in 0..turns {
        a.step();
        let cp = fs::read(st.join("checkpoint.json")).unwrap();
        if cp != last {
            snapshots += 1;
            last = cp;
        }
        let read = lrab_harness::read_checkpoint(&st).unwrap();
        assert_eq!(
            serde_json::to_vec(&read).unwrap(),
            as_full_checkpoint(&a.state),
            "turn {t}"
        );
    }
    // one snapshot at the start; every later turn only appended
    assert_eq!(snapshots, 1);
    let journal = fs::read(st.join("checkpoint.journal.jsonl")).unwrap();
    assert!(lines(&journal) > turns, "{} lines", lines(&journal));
    // a line holds what its save changed, not the state's growing maps (whole top-level
    // fields made the last lines of this run 5.6 KB)
    let longest = journal
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap();
    assert!(longest < 2048, "longest line {longest} bytes");
}

#[test]
fn a_pruned_or_compacted_history_is_a_new_snapshot_and_still_reads_back_whole() {
    let d = tempfile::tempdir().unwrap();
    let mut a = part_reader_unstarted(d.path(), 4096);
    let st = common::state_of(d.path());
    let mut snapshots = 0;
    let mut last = Vec::new();
    for t in 0..40 {
        let end = a.step();
        let cp = fs::read(st.join("checkpoint.json")).unwrap();
        if cp != last {
            snapshots += 1;
            last = cp;
        }
        assert_eq!(
            serde_json::to_vec(&lrab_harness::read_checkpoint(&st).unwrap()).unwrap(),
            as_full_checkpoint(&a.state),
            "turn {t}"
        );
        if end.is_some() {
            break;
        }
    }
    assert!(
        mech_count(d.path(), "context", "prune") + mech_count(d.path(), "context", "compact") > 0
    );
    assert!(snapshots > 1, "the rewrites wrote new snapshots");
}

#[test]
fn a_kill_during_an_append_to_the_journal_resumes_from_the_line_before_and_runs_nothing_twice() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("notes.md"), "# Notes\n- one\n").unwrap();
    let st = common::state_of(d.path());
    let journal = st.join("checkpoint.journal.jsonl");
    let before_append;
    {
        let mut a = agent_in(
            d.path(),
            TASK,
            vec![Reply::call("list_dir", json!({})), append_two()],
        );
        a.step();
        before_append = fs::read(&journal).unwrap();
        a.step();
    }
    assert_eq!(notes(d.path()), "# Notes\n- one\n- two\n");
    // the append's turn wrote two lines: the call's record before it ran, then the turn's
    // end; the kill came halfway through writing the second
    let full = fs::read(&journal).unwrap();
    assert_eq!(lines(&full), lines(&before_append) + 2);
    let second = full[..full.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let torn = &full[..second + (full.len() - second) / 2];
    fs::write(&journal, torn).unwrap();
    let killed = lrab_harness::read_checkpoint(&st).unwrap();
    assert_eq!(killed.turn, 1);
    assert_eq!(
        killed.inflight.as_ref().map(|r| r.call.name.as_str()),
        Some("append_file")
    );
    // the relaunched model repeats the append it does not know landed
    let mut a = agent_in(d.path(), TASK, vec![append_two()]);
    assert!(a.resumed && a.warnings.is_empty(), "{:?}", a.warnings);
    let settled = last_tool_result(&a.state);
    assert!(
        settled.contains("completed before the run was interrupted"),
        "{settled}"
    );
    assert_eq!(a.state.turn, 2);
    a.step();
    assert_eq!(notes(d.path()), "# Notes\n- one\n- two\n");
    // nothing is appended after the torn line: the resume began a new snapshot and journal
    let now = fs::read(&journal).unwrap();
    assert!(!now
        .windows(torn.len() - second)
        .any(|w| w == &torn[second..]));
    assert_eq!(
        serde_json::to_vec(&lrab_harness::read_checkpoint(&st).unwrap()).unwrap(),
        as_full_checkpoint(&a.state)
    );
}

#[test]
fn a_damaged_journal_line_is_set_aside_with_a_warning_and_the_run_resumes_before_it() {
    let d = tempfile::tempdir().unwrap();
    let st = common::state_of(d.path());
    let journal = st.join("checkpoint.journal.jsonl");
    {
        let replies = (0..4).map(|_| Reply::call("list_dir", json!({}))).collect();
        let mut a = agent_in(d.path(), TASK, replies);
        for _ in 0..4 {
            a.step();
        }
    }
    let text = fs::read_to_string(&journal).unwrap();
    let mut l: Vec<&str> = text.lines().collect();
    l[2] = "{\"seq\": 2, \"keep\": \"many\"}";
    fs::write(&journal, l.join("\n") + "\n").unwrap();
    let a = agent_in(d.path(), TASK, vec![]);
    assert!(a.resumed);
    // the snapshot is turn 1's end, line 2 turn 2's: resumed there
    assert_eq!(a.state.turn, 2, "resumed after the last good line");
    assert!(
        a.warnings[0].contains("checkpoint journal is damaged at line 3"),
        "{:?}",
        a.warnings
    );
    assert!(st.join("checkpoint.journal.damaged.jsonl").exists());
}

#[test]
fn a_checkpoint_of_another_task_is_set_aside_with_its_journal() {
    let d = tempfile::tempdir().unwrap();
    let st = common::state_of(d.path());
    {
        let replies = (0..3).map(|_| Reply::call("list_dir", json!({}))).collect();
        let mut a = agent_in(d.path(), TASK, replies);
        for _ in 0..3 {
            a.step();
        }
    }
    let journal = fs::read(st.join("checkpoint.journal.jsonl")).unwrap();
    assert!(lines(&journal) > 1);
    let a = agent_in(d.path(), "Another task entirely.", vec![]);
    assert!(!a.resumed && a.state.turn == 0);
    assert!(a.warnings[0].contains("another task"), "{:?}", a.warnings);
    assert_eq!(
        fs::read(st.join("checkpoint.other-task.journal.jsonl")).unwrap(),
        journal
    );
    assert!(st.join("checkpoint.other-task.json").exists());
    assert!(!st.join("checkpoint.journal.jsonl").exists());
}
