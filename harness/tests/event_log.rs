//! The event log is the typed record of a run (`lrab_records::EventLine`): every tool call
//! carries its outcome — ran (with the shell's exit code), refused by a safety ring (with the
//! ring), unknown, or answered without running — and the text the model was given.

mod common;

use common::config;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::{Agent, Reply};
use lrab_records::{CallOutcome, Event};
use serde_json::json;

#[test]
fn every_tool_call_is_recorded_with_its_typed_outcome() {
    let d = tempfile::tempdir().unwrap();
    let task = "Write notes.md with one line.\nRequired steps:\n1. Write notes.md.\n2. Finish.";
    let mut c = config(d.path(), task);
    c.allow_unconfined = true;
    c.max_turns = 6;
    let write = json!({"path": "notes.md", "content": "one line\n"});
    let replies = vec![
        Reply::call("run_shell", json!({"command": "rm -rf /"})),
        Reply::call("dispatch_agent", json!({"task": "x"})),
        Reply::call("run_shell", json!({"command": "exit 3"})),
        Reply::call("write_file", write.clone()),
        Reply::call("write_file", write),
        Reply::call("read_file", json!({"path": "/etc/passwd"})),
    ];
    let mut a = Agent::new(c, ScriptedModel::replies(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a.run();
    let log = lrab_records::read_events(&common::state_of(d.path()).join("events.jsonl")).unwrap();
    assert_eq!(log.bad_lines, 0);
    assert!(log
        .lines
        .iter()
        .all(|l| l.schema_version == lrab_records::SCHEMA_VERSION && l.run == 1));
    assert!(matches!(log.lines[0].event, Event::RunStart(_)));
    let calls: Vec<_> = log.tool_calls().collect();
    assert_eq!(calls.len(), 6);
    let outcome = |i: usize| calls[i].outcome.clone().unwrap();
    // the classifier's refusal, with its ring, and the words the model read
    match outcome(0) {
        CallOutcome::Refused(r) => assert!(r.ring == 2 || r.ring == 4, "{r:?}"),
        o => panic!("rm -rf / was not refused: {o:?}"),
    }
    assert!(calls[0].result.as_deref().unwrap().contains("[safety ring"));
    assert_eq!(outcome(1), CallOutcome::UnknownTool);
    // the unknown-tool answer lists the tools offered in this turn
    let unknown = calls[1].result.as_deref().unwrap();
    assert!(
        unknown.contains("unknown tool 'dispatch_agent'")
            && unknown.contains("run_shell, todo, finish"),
        "{unknown}"
    );
    if let CallOutcome::Ran { exit, .. } = outcome(2) {
        // exit 3 when a sandbox ran it
        assert!(exit == Some(3) || exit.is_none(), "{exit:?}");
    } else if !matches!(outcome(2), CallOutcome::Refused(_)) {
        panic!("{:?}", outcome(2));
    }
    assert!(matches!(outcome(3), CallOutcome::Ran { .. }) && calls[3].ok);
    assert_eq!(outcome(4), CallOutcome::NotRun);
    assert!(calls[4].intercepted);
    match outcome(5) {
        CallOutcome::Refused(r) => assert_eq!(r.ring, 4),
        o => panic!("{o:?}"),
    }
    assert!(log.model_calls().count() >= 6);
    assert!(matches!(log.lines.last().unwrap().event, Event::RunEnd(_)));
}
