//! End-to-end tests of the real `lrab` binary on the small packs under `tests/fixtures/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn good() -> PathBuf {
    fixtures().join("pack")
}

fn lrab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(args)
        .env_remove("LRAB_PACK")
        .output()
        .expect("run lrab")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

/// `lrab tasks --pack <the good pack> materialize <task> --out <out> <more…>`.
fn materialize(task: &str, out: &Path, more: &[&str]) -> Output {
    let pack = good();
    let mut args = vec![
        "tasks",
        "--pack",
        p(&pack),
        "materialize",
        task,
        "--out",
        p(out),
    ];
    args.extend_from_slice(more);
    lrab(&args)
}

#[test]
fn list_shows_every_task_with_check_counts() {
    let o = lrab(&["tasks", "--pack", p(&good()), "list"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert!(
        rows[0].starts_with("T-01") && rows[0].contains("notes-summary") && rows[0].contains(" 5 ")
    );
    assert!(rows[1].starts_with("T-02") && rows[1].contains(" 4 "));
}

#[test]
fn show_prints_spec_and_rendered_prompt() {
    let o = lrab(&["tasks", "--pack", p(&good()), "show", "T-02"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("spec_pytest"));
    assert!(out.contains("Required steps (plan at least 3):\n1. Run the tests"));
    assert!(!out.contains("long task"), "tier 2 has no long-task lines");
    let unknown = lrab(&["tasks", "--pack", p(&good()), "show", "T-99"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown).contains("unknown task 'T-99'"));
}

#[test]
fn materialize_is_fresh_flat_deterministic_and_refuses_reuse() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    for d in [&a, &b] {
        let o = materialize("T-03", d, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    // Directory input copied as a subfolder, file input flat, prompt written.
    for f in ["data/a.csv", "data/b.csv", "notes.md", "task_input.txt"] {
        let x = std::fs::read(a.join(f)).unwrap();
        assert_eq!(
            x,
            std::fs::read(b.join(f)).unwrap(),
            "{f} differs between runs"
        );
    }
    let prompt = std::fs::read_to_string(a.join("task_input.txt")).unwrap();
    assert!(prompt.contains("Aggregate the item quantities"));
    // Reuse of a non-empty folder is refused, and nothing in it is touched.
    std::fs::write(a.join("keep.md"), "mine").unwrap();
    let o = materialize("T-03", &a, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not empty"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(a.join("keep.md")).unwrap(), "mine");
    let o = materialize("T-03", &a, &["--wipe"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!a.join("keep.md").exists());
    // A seed for a task without a generator is a usage error.
    let o = materialize("T-01", &tmp.path().join("c"), &["--seed", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no generator"));
}

#[test]
fn check_passes_on_the_good_pack() {
    let o = lrab(&["tasks", "check", "--pack", p(&good())]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("T-01       0.000/0.000     0.857/0.857     1.000      PASS"),
        "{out}"
    );
    assert!(
        out.contains("T-02       0.286/0.286     0.571/0.571     1.000      PASS"),
        "{out}"
    );
    assert!(
        out.contains("T-03       0.143/0.143     (none)          1.000      PASS"),
        "{out}"
    );
    assert!(
        out.contains("T-04       0.000/0.000     (none)          1.000      PASS"),
        "{out}"
    );
    assert!(out.contains("4 passed, 0 failed, 0 invalid"));
}

#[test]
fn check_fails_with_exit_1_when_an_expectation_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("pack");
    lrab_tasks::copy_tree(&good(), &pack).unwrap();
    let t = pack.join("T-02/task.toml");
    let s = std::fs::read_to_string(&t)
        .unwrap()
        .replace("partial = 0.571", "partial = 0.5");
    std::fs::write(&t, s).unwrap();
    let o = lrab(&["tasks", "check", "--pack", p(&pack), "T-02"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("0.571/0.500") && out.contains("FAIL"), "{out}");
    assert!(
        out.contains("partial: scored 0.571, expected 0.500"),
        "{out}"
    );
}

#[test]
fn broken_pack_names_file_and_field_for_every_problem() {
    let broken = fixtures().join("broken");
    let o = lrab(&["tasks", "check", "--pack", p(&broken)]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    let expect = [
        ("B-01/task.toml: milestones[0]: kind: unknown check kind 'contains_everything'"),
        ("B-01/task.toml: finals[0]: min_words: unknown field `max_words`"),
        ("B-02/task.toml: inputs[0]: missing fixture"),
        ("B-02/task.toml: finals[0]: contains_any: missing field `any_of`"),
        ("B-03/task.toml: generator.seed: line 10: invalid type: string \"forty-one\""),
        ("B-04/task.toml: id: 'B-99' does not equal the folder name 'B-04'"),
        ("B-04/task.toml: tier: 7 is out of range"),
        ("B-04/task.toml: finals: needs at least one check"),
    ];
    for e in expect {
        assert!(out.contains(e), "missing {e:?} in:\n{out}");
    }
    assert!(out.contains("0 passed, 0 failed, 4 invalid"));
    // `list` reports the same problems and fails too.
    let l = lrab(&["tasks", "--pack", p(&broken), "list"]);
    assert_eq!(l.status.code(), Some(2));
}

#[test]
fn score_writes_score_json_and_rejects_a_missing_workdir() {
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().join("wd");
    let o = materialize("T-02", &wd, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = lrab(&["score", "--pack", p(&good()), "--task", "T-02", p(&wd)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("total: 0.286"), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(wd.join("score.json")).unwrap()).unwrap();
    assert_eq!(j["task_id"], "T-02");
    assert_eq!(j["total"], 0.286);
    assert_eq!(j["milestone_score"], 0.5);
    assert_eq!(j["milestone_details"][1]["check"], "python_compiles");
    assert_eq!(j["milestone_details"][1]["ok"], true);
    assert_eq!(j["failure_mode"], "completed");
    // The compile check left no byte-code behind.
    assert!(!wd.join("__pycache__").exists());

    // Scoring again gives a byte-identical score.json (no timings or paths in details).
    let first = std::fs::read(wd.join("score.json")).unwrap();
    let o = lrab(&["score", "--pack", p(&good()), "--task", "T-02", p(&wd)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(first, std::fs::read(wd.join("score.json")).unwrap());
    let wd2 = tmp.path().join("wd2");
    materialize("T-02", &wd2, &[]);
    lrab(&["score", "--pack", p(&good()), "--task", "T-02", p(&wd2)]);
    assert_eq!(
        first,
        std::fs::read(wd2.join("score.json")).unwrap(),
        "same content, other folder"
    );

    let missing = tmp.path().join("nope");
    let o = lrab(&["score", "--pack", p(&good()), "--task", "T-02", p(&missing)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("does not exist"), "{}", text(&o));
}

#[test]
fn untouched_workdir_with_nothing_produced_is_no_artifacts() {
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().join("wd");
    materialize("T-01", &wd, &[]);
    let o = lrab(&["score", "--pack", p(&good()), "--task", "T-01", p(&wd)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(wd.join("score.json")).unwrap()).unwrap();
    assert_eq!(j["total"], 0.0);
    assert_eq!(j["failure_mode"], "no_artifacts");
}

#[test]
fn import_mingbird_converts_upstream_json_and_measures_the_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let out_pack = tmp.path().join("imported");
    let o = lrab(&[
        "tasks",
        "import-mingbird",
        p(&fixtures().join("mingbird")),
        "--out",
        p(&out_pack),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("imported WF-04 (untouched floor 0.286)"),
        "{out}"
    );
    assert!(
        out.contains("imported WF-02 (untouched floor 0.143)"),
        "{out}"
    );
    assert!(out.contains("ignored keys [\"rubric_note\"]"), "{out}");
    let toml = std::fs::read_to_string(out_pack.join("WF-04/task.toml")).unwrap();
    assert!(
        toml.contains("tier = 2") && toml.contains("kind = \"spec_pytest\""),
        "{toml}"
    );
    assert!(toml.contains("seed_rel = \"fixtures/buggy_project/test_inventory.py\""));
    let prompt = std::fs::read_to_string(out_pack.join("WF-04/prompt.md")).unwrap();
    assert!(!prompt.contains("Required steps"), "{prompt}");
    assert!(out_pack
        .join("fixtures/buggy_project/test_inventory.py")
        .is_file());
    // The imported pack loads and materializes; it has no reference solutions, which check reports.
    let l = lrab(&["tasks", "--pack", p(&out_pack), "list"]);
    assert_eq!(l.status.code(), Some(0), "{}", text(&l));
    let c = lrab(&["tasks", "check", "--pack", p(&out_pack)]);
    assert_eq!(c.status.code(), Some(1));
    assert!(text(&c).contains("WF-04: reference: task WF-04 has no reference solution"));
    // Importing again over existing tasks refuses rather than overwriting.
    let again = lrab(&[
        "tasks",
        "import-mingbird",
        p(&fixtures().join("mingbird")),
        "--out",
        p(&out_pack),
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again).contains("already exists"));
}

#[test]
fn generate_refuses_a_task_without_generator() {
    let tmp = tempfile::tempdir().unwrap();
    let o = lrab(&[
        "generate",
        "--pack",
        p(&good()),
        "--task",
        "T-01",
        "--seed",
        "5",
        "--out",
        p(&tmp.path().join("T-01-s5")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("has no [generator]"));
}

#[test]
fn usage_errors_exit_2() {
    let o = lrab(&["tasks", "materialize", "T-01"]);
    assert_eq!(o.status.code(), Some(2));
    let o = lrab(&["score", "--task", "T-01", "--seed", "abc", "/tmp"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn generate_writes_a_held_out_variant_whose_checks_follow_the_data() {
    let tmp = tempfile::tempdir().unwrap();
    let variant = tmp.path().join("heldout/T-04-s99");
    let o = lrab(&[
        "generate",
        "--pack",
        p(&good()),
        "--task",
        "T-04",
        "--seed",
        "99",
        "--out",
        p(&variant),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let toml = std::fs::read_to_string(variant.join("task.toml")).unwrap();
    assert!(
        toml.contains("id = \"T-04-s99\"") && toml.contains("seed = 99"),
        "{toml}"
    );
    assert!(
        toml.starts_with("# Test task with generated inputs"),
        "comments kept"
    );
    let old = std::fs::read_to_string(good().join("T-04/generated.sha256")).unwrap();
    let new = std::fs::read_to_string(variant.join("generated.sha256")).unwrap();
    assert_ne!(old, new, "a new seed must give new data");
    // The reference computes from the data, so the variant's pack checks clean.
    let c = lrab(&["tasks", "check", "--pack", p(&tmp.path().join("heldout"))]);
    assert_eq!(c.status.code(), Some(0), "{}", text(&c));
    assert!(text(&c).contains("T-04-s99"));
    // The original reference output does not satisfy the variant's truth (checks follow data).
    let wd_old = tmp.path().join("old");
    let wd_new = tmp.path().join("new");
    materialize("T-04", &wd_old, &[]);
    materialize("T-04", &wd_new, &["--seed", "99"]);
    let peaks = Command::new("python3")
        .arg(good().join("T-04/reference/files/peaks.py"))
        .current_dir(&wd_old)
        .output()
        .unwrap();
    std::fs::write(wd_new.join("peaks.md"), &peaks.stdout).unwrap();
    let s = lrab(&[
        "score",
        "--pack",
        p(&good()),
        "--task",
        "T-04",
        "--seed",
        "99",
        "--no-write",
        p(&wd_new),
    ]);
    assert_eq!(s.status.code(), Some(0), "{}", text(&s));
    assert!(!text(&s).contains("total: 1.000"), "{}", text(&s));
    // Refuses to write into a non-empty folder.
    let again = lrab(&[
        "generate",
        "--pack",
        p(&good()),
        "--task",
        "T-04",
        "--seed",
        "98",
        "--out",
        p(&variant),
    ]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn manifest_mismatch_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("pack");
    lrab_tasks::copy_tree(&good(), &pack).unwrap();
    let m = pack.join("T-04/generated.sha256");
    std::fs::write(&m, format!("{}  alloy_multibatch.csv\n", "0".repeat(64))).unwrap();
    let o = lrab(&["tasks", "check", "--pack", p(&pack), "T-04"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("T-04/generated.sha256: does not match generator 'lh01' seed 4101: alloy_multibatch.csv hash differs"), "{}", text(&o));
}

#[test]
fn lrab_pack_env_selects_the_pack_and_pack_flag_wins() {
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(["tasks", "list"])
        .env("LRAB_PACK", good())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("T-03"));
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .args(["tasks", "--pack", p(&fixtures().join("broken")), "list"])
        .env("LRAB_PACK", good())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "--pack must override LRAB_PACK");
}

#[test]
fn import_mingbird_reports_bad_upstream_json_with_file_and_check() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("up");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("WF-09.json"),
        r#"{"id": "WF-09", "domain": "d", "prompt": "p", "plan_steps": ["a"], "max_wall_minutes": 70000,
            "milestones": [{"artifact": "a.md", "check": "judge_me"}], "final_artifacts": []}"#,
    )
    .unwrap();
    std::fs::write(src.join("WF-10.json"), "{ not json").unwrap();
    let o = lrab(&[
        "tasks",
        "import-mingbird",
        p(&src),
        "--out",
        p(&tmp.path().join("out")),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("WF-09.json: milestones[0]: kind: unknown check kind 'judge_me'"),
        "{out}"
    );
    assert!(out.contains("WF-10.json: not valid JSON"), "{out}");
}
