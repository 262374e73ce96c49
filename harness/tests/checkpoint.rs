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
use lrab_harness::tools::shell::{LocalExecutor, ShellExecutor, ShellOutcome, ShellRequest};
use lrab_harness::{Agent, Reply, Role, State};
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const TASK: &str = "Add a second item to notes.md, then finish.";

fn checkpoint(dir: &Path) -> State {
    serde_json::from_slice(&fs::read(common::state_of(dir).join("checkpoint.json")).unwrap())
        .unwrap()
}

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
    let cp = fs::read_to_string(common::state_of(d.path()).join("checkpoint.json")).unwrap();
    assert!(cp.contains("2c238d739599fd2c028e27f2a0b24d3f"));
    assert!(checkpoint(d.path())
        .seen
        .contains("2c238d739599fd2c028e27f2a0b24d3f"));
}

/// Runs commands on the host, copying the checkpoint aside at the moment a command starts (the
/// state a kill during the command would leave).
struct Snapshot {
    at: PathBuf,
    runs: Arc<AtomicUsize>,
}

impl ShellExecutor for Snapshot {
    fn run(&self, req: &ShellRequest<'_>) -> std::io::Result<ShellOutcome> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let _ = fs::copy(common::state_of(req.cwd).join("checkpoint.json"), &self.at);
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
    let at = side.path().join("at-kill.json");
    let runs = Arc::new(AtomicUsize::new(0));
    fs::write(d.path().join("notes.md"), "# Notes\n- one\n").unwrap();
    let cmd = Reply::call(
        "run_shell",
        json!({"command": "printf -- '- two\\n' >> notes.md"}),
    );
    {
        let mut a = snapshot_agent(d.path(), &at, &runs, vec![cmd]);
        a.step();
    }
    // the checkpoint on disk while the command ran held the call
    let killed: State = serde_json::from_slice(&fs::read(&at).unwrap()).unwrap();
    let rec = killed.inflight.clone().expect("recorded before it ran");
    assert_eq!(rec.call.name, "run_shell");
    assert_eq!(killed.turn, 0);
    // relaunch from that moment
    save(d.path(), &killed);
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
    assert_eq!(a.state.turn, 1);
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
