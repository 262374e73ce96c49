//! Loader, validation, prompt, materialize and solution tests on packs built in temp folders.

use std::path::Path;
use std::time::Duration;

use lrab_tasks::{
    apply_solution, apply_solution_with_timeout, materialize, materialize_with, Check, Pack,
    Solution, SolutionKind, TaskError,
};

fn write(base: &Path, rel: &str, text: &str) {
    let p = base.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const GOOD: &str = r#"
id = "A-01"
tier = 4
domain = "d"
title = "t"
budget_minutes = 3
inputs = ["sub/in.txt", "dir"]
plan_steps = ["first", "second"]
[[milestones]]
artifact = "out.md"
kind = "contains_groups"
groups = [["a"], ["b", "c"]]
[[finals]]
artifact = "in.txt"
kind = "seed_unchanged"
seed_rel = "fixtures/sub/in.txt"
[[finals]]
artifact = "fig.png"
kind = "image_valid"
[reference]
commands = ["cp in.txt out.md"]
[expect]
untouched = 0.143
"#;

fn good_pack(root: &Path) {
    write(root, "fixtures/sub/in.txt", "a b\n");
    write(root, "fixtures/dir/x/y.csv", "1\n");
    write(root, "fixtures/dir/z.csv", "2\n");
    write(root, "A-01/task.toml", GOOD);
    write(root, "A-01/prompt.md", "Body of the task.\n");
    write(root, "A-01/reference/files/notes/r.md", "ref\n");
}

#[test]
fn loads_types_and_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    good_pack(tmp.path());
    let pack = Pack::load(tmp.path()).unwrap();
    let t = pack.get("A-01").unwrap();
    assert_eq!(t.spec.tier, 4);
    assert_eq!(
        t.spec.finals[1].check,
        Check::ImageValid {
            min_width: 1,
            min_height: 1
        }
    );
    assert!(
        matches!(t.spec.milestones[0].check, Check::ContainsGroups { min_ratio, .. } if min_ratio == 1.0)
    );
    assert!(pack.get("nope").is_none());
}

#[test]
fn prompt_has_header_body_steps_footer_and_long_task_lines() {
    let tmp = tempfile::tempdir().unwrap();
    good_pack(tmp.path());
    let pack = Pack::load(tmp.path()).unwrap();
    let p = pack.get("A-01").unwrap().render_prompt();
    assert!(p.starts_with(lrab_tasks::PROMPT_HEADER));
    assert!(p.contains("work through ALL steps persistently"));
    assert!(p.contains("computed from the input files"));
    assert!(p.contains(
        "\n\nBody of the task.\n\nRequired steps (plan at least 2):\n1. first\n2. second\n\n"
    ));
    assert!(p.ends_with(&format!("{}\n", lrab_tasks::PROMPT_FOOTER)));
    for tool in ["todo(", "write_file", "run_shell", "finish("] {
        assert!(!p.contains(tool), "prompt names a tool: {tool}");
    }
}

#[test]
fn collects_every_problem_with_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    good_pack(root);
    let bad = GOOD
        .replace("id = \"A-01\"", "id = \"A-09\"")
        .replace(
            "inputs = [\"sub/in.txt\", \"dir\"]",
            "inputs = [\"sub/in.txt\", \"other/in.txt\", \"../etc\"]",
        )
        .replace("artifact = \"out.md\"", "artifact = \"../out.md\"")
        .replace(
            "groups = [[\"a\"], [\"b\", \"c\"]]",
            "groups = [[\"{{truth:peak}}\"], []]",
        )
        .replace(
            "seed_rel = \"fixtures/sub/in.txt\"",
            "seed_rel = \"fixtures/dir/z.csv\"",
        )
        .replace("untouched = 0.143", "untouched = 0.1\npartial = 1.5");
    write(root, "fixtures/other/in.txt", "x");
    write(root, "A-02/task.toml", &bad);
    write(
        root,
        "A-03/task.toml",
        &GOOD.replace("A-01", "A-03").replace(
            "[reference]",
            "[generator]\nname = \"nope\"\nseed = 1\n[reference]",
        ),
    );
    write(root, "A-03/prompt.md", "x");
    std::fs::create_dir_all(root.join("A-04")).unwrap();
    let (pack, problems) = Pack::load_lenient(root);
    assert_eq!(pack.tasks.len(), 1, "only A-01 is valid");
    let all: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let joined = all.join("\n");
    let want = [
        "A-02/task.toml: id: 'A-09' does not equal the folder name 'A-02'",
        "A-02/task.toml: inputs[1]: 'other/in.txt' lands on workdir/in.txt, already taken by sub/in.txt",
        "A-02/task.toml: inputs[2]: '../etc' must be a relative path",
        "A-02/task.toml: milestones[0].artifact: '../out.md' must be a relative path",
        "A-02/task.toml: milestones[0]: a string list is empty",
        "A-02/task.toml: finals[0].seed_rel: 'z.csv' is not one of the task's inputs",
        "A-02/task.toml: expect.partial: 1.5 is outside [0, 1]",
        "A-02/task.toml: expect.partial: given, but there is no partial solution",
        "A-02/task.toml: milestones[0]: truth placeholder 'peak' but the task has no [generator]",
        "A-02/prompt.md: missing prompt.md",
        "A-03/task.toml: generator.name: unknown generator 'nope'",
        "A-04/task.toml: cannot read task.toml",
    ];
    for w in want {
        assert!(joined.contains(w), "missing {w:?} in:\n{joined}");
    }
    let err = Pack::load(root).unwrap_err();
    assert_eq!(err.problems.len(), problems.len());
}

#[test]
fn truth_placeholder_must_come_from_the_generator() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let toml = r#"
id = "G-01"
tier = 4
domain = "d"
title = "t"
budget_minutes = 3
plan_steps = ["x"]
[generator]
name = "lh01"
seed = 4101
[[milestones]]
artifact = "a.md"
kind = "contains_any"
any_of = ["{{truth:peak_B01}}", "{{truth:no_such_key}}"]
[[finals]]
artifact = "a.md"
kind = "exists"
[expect]
untouched = 0.0
"#;
    write(root, "G-01/task.toml", toml);
    write(root, "G-01/prompt.md", "x");
    let (_, problems) = Pack::load_lenient(root);
    let joined: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let joined = joined.join("\n");
    assert!(
        joined.contains(
            "milestones[0]: truth placeholder 'no_such_key' is not produced by generator 'lh01'"
        ),
        "{joined}"
    );
    assert!(!joined.contains("'peak_B01'"), "{joined}");
    assert!(
        joined.contains("G-01/generated.sha256: missing manifest"),
        "{joined}"
    );
}

#[test]
fn materialize_copies_flat_and_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("pack");
    good_pack(&root);
    let pack = Pack::load(&root).unwrap();
    let t = pack.get("A-01").unwrap();
    let a = materialize(&pack, t, &tmp.path().join("a"), None).unwrap();
    let b = materialize(&pack, t, &tmp.path().join("b"), None).unwrap();
    assert_eq!(
        a.files,
        vec!["dir/x/y.csv", "dir/z.csv", "in.txt", "task_input.txt"]
    );
    assert_eq!(a.files, b.files);
    for f in &a.files {
        assert_eq!(
            std::fs::read(a.workdir.join(f)).unwrap(),
            std::fs::read(b.workdir.join(f)).unwrap()
        );
    }
    assert_eq!(a.checks.milestones, t.spec.milestones);
    // Non-empty workdir: refused without wipe, nothing lost.
    write(&a.workdir, "agent.md", "keep");
    assert!(matches!(
        materialize(&pack, t, &a.workdir, None),
        Err(TaskError::WorkdirNotEmpty(_))
    ));
    assert!(a.workdir.join("agent.md").exists());
    materialize_with(&pack, t, &a.workdir, None, true).unwrap();
    assert!(!a.workdir.join("agent.md").exists());
    // Refuses to wipe a folder that contains the pack.
    assert!(materialize_with(&pack, t, tmp.path(), None, true).is_err());
    assert!(root.join("A-01/task.toml").exists());
    // No generator: a seed is an error.
    assert!(matches!(
        materialize(&pack, t, &tmp.path().join("c"), Some(3)),
        Err(TaskError::SeedWithoutGenerator { .. })
    ));
}

#[test]
fn solutions_are_read_sorted_and_applied_with_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("pack");
    good_pack(&root);
    let pack = Pack::load(&root).unwrap();
    let t = pack.get("A-01").unwrap();
    let sol = t.solution(SolutionKind::Reference).unwrap();
    assert_eq!(
        sol.files,
        vec![("notes/r.md".to_string(), b"ref\n".to_vec())]
    );
    assert_eq!(sol.commands, vec!["cp in.txt out.md".to_string()]);
    assert!(matches!(
        t.solution(SolutionKind::Partial),
        Err(TaskError::NoSolution { .. })
    ));
    let wd = tmp.path().join("wd");
    materialize(&pack, t, &wd, None).unwrap();
    apply_solution(&wd, &sol).unwrap();
    assert_eq!(std::fs::read_to_string(wd.join("out.md")).unwrap(), "a b\n");
    assert!(wd.join("notes/r.md").is_file());
    // A failing command is an error that quotes its output; a hanging one times out.
    let bad = Solution {
        files: vec![],
        commands: vec!["echo boom >&2; exit 4".into()],
    };
    let e = apply_solution(&wd, &bad).unwrap_err().to_string();
    assert!(
        e.contains("exited with Some(4)") && e.contains("boom"),
        "{e}"
    );
    let slow = Solution {
        files: vec![],
        commands: vec!["sleep 30".into()],
    };
    let e = apply_solution_with_timeout(&wd, &slow, Duration::from_millis(300))
        .unwrap_err()
        .to_string();
    assert!(e.contains("timed out"), "{e}");
    let escape = Solution {
        files: vec![("../x".into(), vec![])],
        commands: vec![],
    };
    assert!(apply_solution(&wd, &escape).is_err());
}

#[test]
fn builtin_dir_honours_lrab_pack() {
    // Only the default branch is asserted here: changing the environment would race with other tests.
    if std::env::var_os("LRAB_PACK").is_none() {
        assert!(Pack::builtin_dir().ends_with("tasks/lrab"));
    }
}

#[test]
fn partial_takes_named_files_from_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    good_pack(tmp.path());
    let toml = GOOD.replace(
        "[expect]\nuntouched = 0.143\n",
        "[partial]\nfrom_reference = [\"notes/r.md\"]\n[expect]\nuntouched = 0.143\npartial = 0.0\n",
    );
    write(tmp.path(), "A-01/task.toml", &toml);
    write(tmp.path(), "A-01/partial/files/own.md", "mine\n");
    let pack = Pack::load(tmp.path()).unwrap();
    let sol = pack
        .get("A-01")
        .unwrap()
        .solution(SolutionKind::Partial)
        .unwrap();
    let names: Vec<&str> = sol.files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["notes/r.md", "own.md"]);
    assert_eq!(sol.files[0].1, b"ref\n");

    // a name the reference does not have, or one the partial also carries, is an error
    let bad = toml.replace("[\"notes/r.md\"]", "[\"nope.md\", \"own.md\"]");
    write(tmp.path(), "A-01/reference/files/own.md", "ref copy\n");
    write(tmp.path(), "A-01/task.toml", &bad);
    let err = Pack::load(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("partial.from_reference[0]"), "{err}");
    assert!(
        err.contains("reference/files/nope.md does not exist"),
        "{err}"
    );
    assert!(err.contains("partial.from_reference[1]"), "{err}");
    assert!(err.contains("also in partial/files/"), "{err}");
}
