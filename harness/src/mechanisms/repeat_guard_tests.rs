//! The repeat guard's rules, without a model.

use super::*;

fn ran<'a>(sig: &'a str, tool: &'a str, ok: bool, result: &'a str, w: u64, t: u32) -> Ran<'a> {
    Ran {
        sig,
        tool,
        ok,
        result,
        world_after: w,
        turn: t,
        file: None,
        polling: false,
    }
}

#[test]
fn a_pure_rerun_of_a_failure_is_refused_then_paused() {
    let mut g = RepeatGuard::default();
    let test = digest("run_shell:pytest");
    assert_eq!(g.before(&test, "run_shell", false, 5), Before::Run);
    g.after(&ran(&test, "run_shell", false, "1 failed in 0.02s", 6, 3));
    // a write that changed nothing in between: still world 6
    assert!(matches!(
        g.before(&test, "run_shell", false, 6),
        Before::Rerun {
            turn: 3,
            level: 1,
            ..
        }
    ));
    assert!(matches!(
        g.before(&test, "run_shell", false, 6),
        Before::Rerun { level: 2, .. }
    ));
    assert_eq!(g.before(&test, "run_shell", false, 6), Before::Pause);
    // after a real change it runs
    assert_eq!(g.before(&test, "run_shell", false, 7), Before::Run);
    // polling is exempt, and a success is never refused
    assert_eq!(g.before(&test, "run_shell", true, 6), Before::Run);
    g.after(&ran(&test, "run_shell", true, "ok", 8, 4));
    assert_eq!(g.before(&test, "run_shell", false, 8), Before::Run);
}

#[test]
fn the_same_failure_after_changes_is_noted() {
    let mut g = RepeatGuard::default();
    let s = digest("run_shell:python3 t.py");
    let out1 = "[exit 1]\nAssertionError at t.py:3 (in 0.01s)\nfull output: .lrab/out/1.txt";
    let out2 = "[exit 1]\nAssertionError at t.py:3 (in 0.03s)\nfull output: .lrab/out/4.txt";
    assert!(g
        .after(&ran(&s, "run_shell", false, out1, 2, 1))
        .notes
        .is_empty());
    let a = g.after(&ran(&s, "run_shell", false, out2, 4, 3));
    assert!(
        a.notes[0].contains("same failure as at turn 1"),
        "{:?}",
        a.notes
    );
    let a = g.after(&ran(&s, "run_shell", false, out1, 6, 5));
    assert!(a.notes[0].contains("3 times in a row") && a.notes[0].contains("rollback"));
    // a different failure starts over
    let a = g.after(&ran(&s, "run_shell", false, "[exit 1]\nNameError", 8, 7));
    assert!(a.notes.iter().all(|n| !n.contains("same failure")));
}

#[test]
fn tool_failures_get_advice_then_file_tools_pause() {
    let mut g = RepeatGuard::default();
    let mut notes = Vec::new();
    let mut paused = false;
    for i in 0..TOOL_FAIL_PAUSE {
        let sig = digest(&format!("edit{i}"));
        let a = g.after(&ran(
            &sig,
            "edit_file",
            false,
            &format!("not found {i}"),
            0,
            i,
        ));
        notes.extend(a.notes);
        paused |= a.pause;
    }
    assert!(notes[0].contains("edit_file failed 3 times") && notes[0].contains("write_file"));
    assert!(paused && notes[1].contains("paused"));
    // run_shell is never paused for failing
    let mut g = RepeatGuard::default();
    for i in 0..TOOL_FAIL_PAUSE {
        let sig = digest(&format!("cmd{i}"));
        assert!(
            !g.after(&ran(
                &sig,
                "run_shell",
                false,
                &format!("e{i}"),
                i as u64,
                i
            ))
            .pause
        );
    }
}

#[test]
fn oscillating_and_streaking_edits_are_noted() {
    let mut g = RepeatGuard::default();
    let (a, b) = (digest("version a"), digest("version b"));
    fn w(d: &str, t: u32, g: &mut RepeatGuard) -> After {
        g.after(&Ran {
            file: Some(("m.py", d.to_string())),
            ..ran("s", "write_file", true, "wrote", t as u64, t)
        })
    }
    assert!(w(&a, 1, &mut g).notes.is_empty());
    assert!(w(&b, 2, &mut g).notes.is_empty());
    let back = w(&a, 3, &mut g);
    assert!(back.no_progress && back.notes[0].contains("exactly as it was at turn 1"));
    let again = w(&b, 4, &mut g);
    assert!(again
        .notes
        .iter()
        .any(|n| n.contains("back to an earlier version")));
    assert!(again.notes.iter().any(|n| n.contains("4 changes to m.py")));
    // running something resets the streak
    g.after(&ran("t", "run_shell", true, "ok", 9, 5));
    let c = digest("version c");
    assert!(w(&c, 6, &mut g).notes.is_empty());
}

#[test]
fn a_rerun_on_file_versions_it_failed_on_is_refused() {
    let mut g = RepeatGuard::default();
    let (a, b) = (digest("version a"), digest("version b"));
    let test = digest("run_shell:python3 t.py");
    let write = |d: &str, t: u32, g: &mut RepeatGuard| {
        g.after(&Ran {
            file: Some(("m.py", d.to_string())),
            ..ran("w", "write_file", true, "wrote", t as u64, t)
        })
    };
    write(&a, 1, &mut g);
    assert_eq!(g.before(&test, "run_shell", false, 1), Before::Run);
    g.after(&ran(&test, "run_shell", false, "fails on a", 2, 2));
    assert!(write(&b, 3, &mut g).changed_file);
    assert_eq!(g.before(&test, "run_shell", false, 3), Before::Run);
    g.after(&ran(&test, "run_shell", false, "fails on b", 4, 4));
    write(&a, 5, &mut g);
    // back on the versions of turn 2, only this command ran since: known to fail
    assert!(matches!(
        g.before(&test, "run_shell", false, 5),
        Before::Rerun {
            turn: 2,
            level: 1,
            same_files: true,
            ..
        }
    ));
    // another command in between may have changed what the files do not show
    let other = digest("run_shell:pip install x");
    g.after(&ran(&other, "run_shell", true, "ok", 6, 6));
    assert_eq!(g.before(&test, "run_shell", false, 6), Before::Run);
}

#[test]
fn the_same_result_from_other_commands_is_noted_then_pauses() {
    let mut g = RepeatGuard::default();
    let mut notes = Vec::new();
    let mut paused = false;
    for i in 0..SAME_RESULT_PAUSE {
        let sig = digest(&format!("run_shell:pytest -q {i}"));
        let a = g.after(&ran(
            &sig,
            "run_shell",
            false,
            "1 failed in 0.0{i}s",
            i as u64,
            i,
        ));
        notes.extend(a.notes);
        paused |= a.pause;
    }
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].contains("another way"), "{notes:?}");
    assert!(notes[1].contains("run_shell failed 3 times"), "{notes:?}");
    assert!(
        notes[2].contains("paused until you change a file"),
        "{notes:?}"
    );
    assert!(paused);
    // a changed file starts over
    let a = g.after(&Ran {
        file: Some(("m.py", digest("new"))),
        ..ran("w", "write_file", true, "wrote", 9, 9)
    });
    assert!(a.changed_file);
    let a = g.after(&ran("x", "run_shell", false, "1 failed in 0.1s", 10, 10));
    assert!(a.notes.is_empty() && !a.pause);
    // polling results may repeat
    let mut g = RepeatGuard::default();
    for i in 0..6 {
        let a = g.after(&Ran {
            polling: true,
            ..ran("p", "run_shell", false, "not ready", i, i as u32)
        });
        assert!(!a.pause);
    }
}

#[test]
fn result_digests_ignore_timings_and_output_numbers() {
    assert_eq!(
        result_digest("1 failed in 0.02s, see .lrab/out/3.txt"),
        result_digest("1 failed in 1.5 s, see .lrab/out/12.txt")
    );
    assert_ne!(result_digest("1 failed"), result_digest("2 failed"));
}
