//! The paper's protocol as options of `tau2 run` (issue 28, item 3) and the per-task manifest
//! (item 4): error cells re-run in retry passes, then set aside or scored 0; pass^k over
//! several trials as upstream computes it; `<domain>_manifest.json` in the published shape,
//! arms of several runs merged into one file.

mod common;
use common::{is_user_request, llm_run_args, ollama_call, ollama_text, spawn_server};
use lrab_records::{CellStatus, Tau2Manifest};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A backend for mock `update_task_1`: the customer asks and then stops; the agent marks the
/// task done and confirms (reward 1) — except that the agent requests whose 0-based index is
/// in `fail` get HTTP 400, which ends that conversation as `agent_error`.
fn backend(fail: Vec<usize>) -> String {
    let n = AtomicUsize::new(0);
    let (url, _log) = spawn_server(500, move |_p, b| {
        let msgs = b["messages"].as_array().unwrap();
        if is_user_request(b) {
            let text = if msgs.len() <= 2 {
                "Please mark task_1 as completed."
            } else {
                "Thanks! ###STOP###"
            };
            return (200, ollama_text(text));
        }
        if fail.contains(&n.fetch_add(1, Ordering::SeqCst)) {
            return (400, json!({"error": "model crashed"}));
        }
        if msgs.last().unwrap()["role"] == "tool" {
            (200, ollama_text("task_1 is now completed."))
        } else {
            (
                200,
                ollama_call(
                    "update_task_status",
                    json!({"task_id": "task_1", "status": "completed"}),
                ),
            )
        }
    });
    url
}

fn run(url: &str, out: &std::path::Path, extra: &[&str]) -> String {
    let mut argv = llm_run_args("mock", "plain", url, "update_task_1", out);
    argv.extend(extra.iter().map(|s| s.to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (r, printed) = common::run_cli(&common::data_dir(), &argv);
    r.unwrap();
    printed
}

fn csv_rewards(out: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(out.join("tau2.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(4).unwrap().to_string())
        .collect()
}

fn results(out: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap()
}

fn manifest(out: &std::path::Path) -> Tau2Manifest {
    Tau2Manifest::read(&out.join("mock_manifest.json")).unwrap()
}

#[test]
fn an_error_cell_is_retried_and_the_retry_counts() {
    if common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let printed = run(&backend(vec![0]), tmp.path(), &["--retry-passes", "2"]);
    assert!(printed.contains("agent_error — retry pass 1"), "{printed}");
    assert!(
        printed.contains("error cells: 1 retried in up to 2 pass(es); 0 left"),
        "{printed}"
    );
    assert_eq!(csv_rewards(tmp.path()), ["1"]);
    let p = &results(tmp.path())["info"]["protocol"];
    assert_eq!(p["error_cells"], "set-aside");
    assert_eq!(p["retry_passes"], 2);
    assert_eq!(p["retried"][0]["replaced"], "agent_error");
    assert!(p["retried"][0]["note"]
        .as_str()
        .unwrap()
        .contains("model crashed"));
    assert_eq!(p["pass_hat_ks"], json!({"pass_hat_1": 1.0}));
}

#[test]
fn an_error_cell_left_is_set_aside_or_scored_zero() {
    if common::data().is_none() {
        return;
    }
    let always: Vec<usize> = (0..50).collect();
    let tmp = tempfile::tempdir().unwrap();
    let aside = tmp.path().join("aside");
    let printed = run(&backend(always.clone()), &aside, &["--retry-passes", "2"]);
    assert!(printed.contains("agent_error — retry pass 2"), "{printed}");
    assert!(
        printed.contains("2 retried in up to 2 pass(es); 1 left, set aside (no reward; not in averages or pass^k): update_task_1/t0"),
        "{printed}"
    );
    assert!(printed.contains("graded 0/1"), "{printed}");
    assert!(!printed.contains("pass^1"), "{printed}");
    assert_eq!(csv_rewards(&aside), [""], "set aside: no reward in the CSV");
    let cell = manifest(&aside)
        .get("update_task_1", "plain")
        .unwrap()
        .clone();
    assert_eq!(cell.status, CellStatus::Error);
    assert_eq!(
        (cell.reward, cell.wall),
        (None, None),
        "as the published error cells"
    );
    assert!(cell.error.unwrap().contains("model crashed"));

    let zero = tmp.path().join("zero");
    let printed = run(
        &backend(always),
        &zero,
        &["--retry-passes", "2", "--error-cells", "zero"],
    );
    assert!(
        printed.contains("1 left, scored 0 (the paper's protocol)"),
        "{printed}"
    );
    assert!(printed.contains("pass^1: 0.0000"), "{printed}");
    assert_eq!(csv_rewards(&zero), ["0"]);
    let cell = manifest(&zero)
        .get("update_task_1", "plain")
        .unwrap()
        .clone();
    assert_eq!((cell.status, cell.reward), (CellStatus::Error, Some(0.0)));
    let p = &results(&zero)["info"]["protocol"];
    assert_eq!(p["error_cells"], "zero");
    assert_eq!(p["error_cells_left"][0]["reward"], 0.0);
    assert_eq!(
        results(&zero)["simulations"][0]["reward_info"]["info"]["graded"],
        true
    );
    // `grade` re-grades under the policy the run recorded
    for (dir, want) in [(&aside, ""), (&zero, "0")] {
        let csv = dir.join("graded.csv");
        let (r, printed) = common::run_cli(
            &common::data_dir(),
            &[
                "grade",
                dir.join("results.json").to_str().unwrap(),
                "--csv",
                csv.to_str().unwrap(),
                "--arm",
                "plain",
            ],
        );
        r.unwrap();
        assert!(
            printed.contains("1 left") && printed.contains("(as the run recorded)"),
            "{printed}"
        );
        let rows = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(
            rows.lines().nth(1).unwrap().split(',').nth(4),
            Some(want),
            "{rows}"
        );
    }
}

/// Three trials, the second one failing (the third agent request): under `zero` the rewards
/// are 1, 0, 1 and pass^k is upstream's C(2, k) / C(3, k); set aside, the task has two rewarded
/// trials, so k stops at 2 (upstream lowers max k to the fewest trials a task has).
#[test]
fn pass_hat_k_over_trials_as_upstream() {
    if common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let zero = tmp.path().join("zero");
    let printed = run(
        &backend(vec![2]),
        &zero,
        &["--trials", "3", "--error-cells", "zero"],
    );
    for line in ["pass^1: 0.6667", "pass^2: 0.3333", "pass^3: 0.0000"] {
        assert!(printed.contains(line), "{line}: {printed}");
    }
    assert_eq!(csv_rewards(&zero), ["1", "0", "1"]);
    let cell = manifest(&zero)
        .get("update_task_1", "plain")
        .unwrap()
        .clone();
    assert_eq!(cell.status, CellStatus::Ok, "the first trial's status");
    assert_eq!(cell.rewards, Some(vec![Some(1.0), Some(0.0), Some(1.0)]));

    let aside = tmp.path().join("aside");
    let printed = run(&backend(vec![2]), &aside, &["--trials", "3"]);
    assert!(printed.contains("pass^2: 1.0000"), "{printed}");
    assert!(!printed.contains("pass^3"), "{printed}");
    let cell = manifest(&aside)
        .get("update_task_1", "plain")
        .unwrap()
        .clone();
    assert_eq!(cell.rewards, Some(vec![Some(1.0), None, Some(1.0)]));
    assert_eq!(
        results(&aside)["info"]["protocol"]["pass_hat_ks"],
        json!({"pass_hat_1": 1.0, "pass_hat_2": 1.0})
    );
}

/// Two arms run into one folder share one manifest (the published files hold three arms
/// each); re-running an arm replaces its cells in place, so the file is reproducible.
#[test]
fn manifest_merges_arms_of_one_folder() {
    if common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    let gold = |name: Option<&str>| {
        let mut argv = common::gold_run_args("update_task_1,create_task_1", out);
        if let Some(n) = name {
            argv.extend(["--arm-name", n].map(String::from));
        }
        let (r, printed) = common::run_cli_owned(&common::data_dir(), &argv);
        r.unwrap();
        printed
    };
    let printed = gold(None);
    assert!(printed.contains("mock_manifest.json"), "{printed}");
    run(&backend(vec![]), out, &[]);
    let first = std::fs::read(out.join("mock_manifest.json")).unwrap();
    let m = manifest(out);
    let ids: Vec<&str> = m.tasks.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(ids, ["update_task_1", "create_task_1"]);
    let arms: Vec<&str> = m.tasks[0].1.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(arms, ["gold", "plain"]);
    assert_eq!(m.get("update_task_1", "gold").unwrap().reward, Some(1.0));
    assert_eq!(m.get("update_task_1", "plain").unwrap().wall, Some(0));
    assert!(
        m.get("create_task_1", "plain").is_none(),
        "plain ran one task"
    );
    gold(None);
    assert_eq!(
        std::fs::read(out.join("mock_manifest.json")).unwrap(),
        first
    );
    gold(Some("gold-again"));
    let arms: Vec<String> = manifest(out).tasks[0]
        .1
        .iter()
        .map(|(a, _)| a.clone())
        .collect();
    assert_eq!(arms, ["gold", "plain", "gold-again"]);
    assert!(std::fs::read_to_string(out.join("tau2.csv"))
        .unwrap()
        .contains("mock,update_task_1,gold-again,0,1,"));

    std::fs::write(out.join("mock_manifest.json"), "[1]").unwrap();
    let argv = llm_run_args("mock", "plain", &backend(vec![]), "update_task_1", out);
    let (r, _) = common::run_cli_owned(&common::data_dir(), &argv);
    let e = format!("{:#}", r.unwrap_err());
    assert!(
        e.contains("mock_manifest.json") && e.contains("not a τ² manifest"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(out.join("mock_manifest.json")).unwrap(),
        b"[1]"
    );
}
