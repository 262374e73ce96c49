//! The finish gate's checks, without a model.

use super::*;
use std::collections::BTreeMap;

struct Env {
    files: BTreeMap<String, String>,
    test_out: Vec<TestRun>,
    ran: Vec<String>,
}
impl GateEnv for Env {
    fn file_size(&self, rel: &str) -> Option<u64> {
        self.files.get(rel).map(|s| s.len() as u64)
    }
    fn top_files(&self) -> Vec<String> {
        self.files
            .keys()
            .filter(|k| !k.contains('/'))
            .cloned()
            .collect()
    }
    fn read_text(&self, rel: &str) -> Option<String> {
        self.files.get(rel).cloned()
    }
    fn run_test(&mut self, cmd: &str) -> TestRun {
        self.ran.push(cmd.to_string());
        if self.test_out.len() > 1 {
            self.test_out.remove(0)
        } else {
            self.test_out[0].clone()
        }
    }
}

fn env(files: &[(&str, &str)]) -> Env {
    Env {
        files: files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        test_out: vec![TestRun {
            exit: Some(0),
            timed_out: false,
            output: "1 passed".into(),
        }],
        ran: vec![],
    }
}

#[test]
fn named_artifacts_with_ranges_and_optional_lines() {
    let t = "Write `review.md` and data_table.md.\nCreate labs/lab1.md.\nWrite fix_log_m01..m03.md, one per module.\nUse your todo tool, otherwise write plan.md.\nSee https://example.org/x.html and read task_input.txt";
    assert_eq!(
        named_artifacts(t),
        vec![
            "review.md",
            "data_table.md",
            "labs/lab1.md",
            "fix_log_m01.md",
            "fix_log_m02.md",
            "fix_log_m03.md"
        ]
    );
    let t = "eight files slice_stats_B01..B08.md";
    assert_eq!(named_artifacts(t).len(), 8);
    assert_eq!(named_artifacts(t)[7], "slice_stats_B08.md");
    // a pattern next to the range it stands for is not a file to write
    let t = "- `fix_log_m01.md` .. `fix_log_m10.md` — per module.\n1. Check for earlier progress (existing fix_log_mNN.md files); write partN.md or notes_XX.csv.";
    let a = named_artifacts(t);
    assert_eq!(a.len(), 10, "{a:?}");
    assert!(a
        .iter()
        .all(|n| n.starts_with("fix_log_m") && !n.contains('N')));
    for (name, pattern) in [
        ("fix_log_mNN.md", true),
        ("report_YYYY-MM-DD.md", true),
        ("partN.md", true),
        ("data_N.csv", true),
        ("out/run_XX.txt", true),
        ("README.md", false),
        ("RUNNING.md", false),
        ("CHANGELOG_DRAFT.md", false),
        ("Notes.md", false),
        ("fix_log_m01.md", false),
        ("DNA_report.md", false),
        ("plan_Nov.md", false),
    ] {
        assert_eq!(is_placeholder_name(name), pattern, "{name}");
    }
    let t = "- `slice_stats_B01.md` .. `slice_stats_B08.md` — one summary per batch";
    let a = named_artifacts(t);
    assert_eq!(a.len(), 8, "{a:?}");
    assert_eq!(a[1], "slice_stats_B02.md");
}

#[test]
fn test_commands_from_prompt_and_files() {
    let e = env(&[
        ("test_inventory.py", "def test_a():\n    pass"),
        ("test_suite.py", "if __name__ == '__main__':\n    main()"),
        ("inventory.py", ""),
    ]);
    assert_eq!(
        detect_test_commands("Make `python -m pytest test_inventory.py -q` pass.", &e),
        vec![
            "python -m pytest test_inventory.py -q",
            "python3 test_suite.py"
        ]
    );
    assert_eq!(
        detect_test_commands("fix it", &e),
        vec![
            "python3 test_suite.py",
            "python3 -m pytest -q test_inventory.py"
        ]
    );
}

#[test]
fn gate_order_caps_and_next_actions() {
    let task = "Write report.md. Run python3 -m pytest -q test_x.py";
    let mut g = FinishGate::default();
    let mut e = env(&[("test_x.py", "def test_a(): pass")]);
    let mut runs = vec![];
    let input = |productive, open: Vec<String>| GateInput {
        task,
        productive,
        open_plan_items: open,
        verify_feedback: true,
        task_in_view: true,
    };
    // 1. fake finish, capped at 2
    for _ in 0..CAP_FAKE {
        match g.evaluate(&input(false, vec![]), &mut e, &mut runs) {
            GateDecision::Reject { check, message } => {
                assert_eq!(check, "fake_finish");
                assert!(message.contains("Next action: write_file(path=\"report.md\""));
            }
            d => panic!("{d:?}"),
        }
    }
    // 2. missing artifact
    match g.evaluate(&input(false, vec![]), &mut e, &mut runs) {
        GateDecision::Reject { check, message } => {
            assert_eq!(check, "artifacts");
            assert!(message.contains("report.md"));
        }
        d => panic!("{d:?}"),
    }
    e.files.insert("report.md".into(), "content".into());
    // 3. failing tests with file/line/error
    e.test_out = vec![TestRun {
        exit: Some(1),
        timed_out: false,
        output: "E       assert 1 == 2\n\nx.py:3: AssertionError\nFAILED test_x.py::test_a - assert 1 == 2\n1 failed in 0.1s".into(),
    }];
    match g.evaluate(&input(true, vec![]), &mut e, &mut runs) {
        GateDecision::Reject { check, message } => {
            assert_eq!(check, "tests");
            assert!(message.contains("assert 1 == 2"), "{message}");
            assert!(message.contains("x.py:3"), "{message}");
            assert!(message.contains("Next action"));
        }
        d => panic!("{d:?}"),
    }
    assert_eq!(e.ran, vec!["python3 -m pytest -q test_x.py"]);
    assert_eq!(runs[0].verdict, Verdict::Failed);
    // tests now pass; 4. plan sync
    e.test_out = vec![TestRun {
        exit: Some(0),
        timed_out: false,
        output: "1 passed".into(),
    }];
    match g.evaluate(&input(true, vec!["write report".into()]), &mut e, &mut runs) {
        GateDecision::Reject { check, message } => {
            assert_eq!(check, "plan_sync");
            assert!(message.contains("done_all"));
        }
        d => panic!("{d:?}"),
    }
    // 5. re-read once (the task copied, also while it is in view), then accept
    match g.evaluate(&input(true, vec![]), &mut e, &mut runs) {
        GateDecision::Reject { check, message } => {
            assert_eq!(check, "reread");
            assert!(message.contains("Write report.md"));
        }
        d => panic!("{d:?}"),
    }
    assert_eq!(
        g.evaluate(&input(true, vec![]), &mut e, &mut runs),
        GateDecision::Accept
    );
}

#[test]
fn gate_cannot_deadlock() {
    // Everything keeps failing; the gate still accepts after its caps are used up.
    let task = "Write a.md and b.md. Run python3 -m pytest -q";
    let mut g = FinishGate::default();
    let mut e = env(&[]);
    e.test_out = vec![TestRun {
        exit: Some(1),
        timed_out: false,
        output: "1 failed".into(),
    }];
    let mut runs = vec![];
    let mut rejections = 0;
    loop {
        let d = g.evaluate(
            &GateInput {
                task,
                productive: false,
                open_plan_items: vec!["x".into()],
                verify_feedback: false,
                task_in_view: true,
            },
            &mut e,
            &mut runs,
        );
        if d == GateDecision::Accept {
            break;
        }
        rejections += 1;
        assert!(rejections <= CAP_FAKE + CAP_ARTIFACTS + CAP_TESTS + CAP_PLAN + 1);
    }
    assert_eq!(
        rejections,
        CAP_FAKE + CAP_ARTIFACTS + CAP_TESTS + CAP_PLAN + 1
    );
}

#[test]
fn a_file_name_pattern_is_never_asked_for() {
    // the numbered logs exist; the pattern the task also mentions is not a missing file
    let task = "Write `fix_log_m01.md` .. `fix_log_m03.md`.\nCheck the existing fix_log_mNN.md files first.";
    let mut e = env(&[
        ("fix_log_m01.md", "one"),
        ("fix_log_m02.md", "two"),
        ("fix_log_m03.md", "three"),
    ]);
    let input = GateInput {
        task,
        productive: true,
        open_plan_items: vec![],
        verify_feedback: true,
        task_in_view: true,
    };
    let d = FinishGate::default().evaluate(&input, &mut e, &mut vec![]);
    // past the file check (the re-read of the task is the last step)
    assert!(
        matches!(
            &d,
            GateDecision::Reject {
                check: "reread",
                ..
            }
        ),
        "{d:?}"
    );
    e.files.remove("fix_log_m02.md");
    match FinishGate::default().evaluate(&input, &mut e, &mut vec![]) {
        GateDecision::Reject { check, message } => {
            assert_eq!(check, "artifacts");
            let first = message.lines().next().unwrap_or("");
            assert!(
                first.contains("names: fix_log_m02.md.") && !first.contains("mNN"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
}
