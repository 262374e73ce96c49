//! `lrab analyze <run folder>` on a run with three kinds of cells: a Mingbird arm (markers in
//! its transcript), an arm whose cells.csv row (version 4) carries the trajectory counters, and
//! an old (version 3) row whose attempt kept no trajectory. paper.md lists the paper's items in
//! order with where each came from; the activation table is in upstream's layout; the failure
//! forms that need a trajectory are unknown for the cell without one, never guessed.

use lrab_analysis::{run, AnalyzeArgs};
use lrab_records::CellRow;
use serde_json::Value;
use std::path::Path;

fn row(arm: &str, task: &str, dir: &str) -> CellRow {
    CellRow {
        run_id: "run-1".into(),
        tier: 2,
        milestone_score: Some(0.0),
        final_score: Some(0.5),
        wall_seconds: 12.0,
        prompt_tokens: Some(3000),
        completion_tokens: Some(100),
        model_calls: Some(3),
        tool_calls: Some(2),
        attempt_dir: dir.into(),
        turns: Some(3),
        ..CellRow::example(arm, "sim-2b", task, 0.25)
    }
}

/// Mingbird's own output, as its print statements write it (v1.5.0), after the rendered
/// conversation our runner writes first.
fn mingbird_transcript() -> String {
    let out = "[1|+1s] ⚙ read_file {\"path\": \"a\"} -> x\n[ctx: 1811/32768 = 5%]\n\
               [2] ⚠️ 重复调用拦截: read_file(1)\n[3] ⚠️ 计划未同步(1/3),拒绝 finish\n\
               [4] ⚠️ 交付自查:回注任务原文(99 字符),要求自查后重新 finish\n";
    format!(
        "=== request 1\n[user]\n计划未同步 (the model said this)\n=== ARM OUTPUT === ({} bytes)\n{out}",
        out.len()
    )
}

fn write_run(root: &Path) {
    let run = root.join("run-1");
    let cells = run.join("cells.csv");
    // the Mingbird cell: counters from its markers
    let mb = "cells/mingbird/sim-2b/WF-04/r0/a0";
    std::fs::create_dir_all(run.join(mb)).unwrap();
    std::fs::write(run.join(mb).join("transcript.txt"), mingbird_transcript()).unwrap();
    let mut r = row("mingbird", "WF-04", mb);
    r.peak_prompt_tokens = Some(1811);
    r.append_to(&cells).unwrap();
    // an arm whose row carries the trajectory counters (version 4)
    let mut g = row("goose", "WF-04", "cells/goose/sim-2b/WF-04/r0/a0");
    (g.peak_prompt_tokens, g.fmt_arg_errors, g.spin_events) = (Some(5000), Some(0), Some(2));
    (g.ctx_events, g.finish_rejections, g.provider_errors) = (Some(0), None, Some(0));
    g.append_to(&cells).unwrap();
    // a cell whose attempt kept no trajectory: nothing to count
    row("opencode", "WF-04", "cells/opencode/sim-2b/WF-04/r0/a0")
        .append_to(&cells)
        .unwrap();
}

fn form(a: &Value, arm: &str, k: usize) -> (u64, u64) {
    let by = a["failure_forms"]["by_arm"].as_array().unwrap();
    let r = by.iter().find(|r| r["arm"] == arm).unwrap();
    let c = &r["counts"][k];
    (c["set"].as_u64().unwrap(), c["coded"].as_u64().unwrap())
}

#[test]
fn a_run_folder_gives_the_papers_items_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    write_run(tmp.path());
    let out = tmp.path().join("report");
    let mut args = AnalyzeArgs::new(vec![tmp.path().join("run-1")], out.clone());
    (args.quiet, args.resamples, args.no_figures) = (true, 50, true);
    run(&args).unwrap();

    let paper = std::fs::read_to_string(out.join("paper.md")).unwrap();
    let rows: Vec<&str> = paper.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(rows[1].starts_with("| 1 | Table | Mean score") && rows[1].contains("from this run"));
    let item = |n: usize| rows[n].to_string();
    assert!(item(6).contains("Failure forms") && item(6).contains("from this run"));
    assert!(item(7).contains("Resources") && item(7).contains("from this run"));
    assert!(item(8).contains("Mechanism activation") && item(8).contains("from this run"));
    assert!(item(9).contains("Fig 9") && item(9).contains("not computed: it is measured by"));
    // figures off: the two figures say why they are missing
    assert!(item(2).contains("not computed") && item(2).contains("--no-figures"));
    assert!(paper.contains("Arms that expose no mechanism firings in these inputs"));
    assert!(paper.contains("goose, opencode"));

    // upstream's layout; only the arm's own output is counted (not the conversation's text)
    let act = std::fs::read_to_string(out.join("mechanism_activation.csv")).unwrap();
    let lines: Vec<&str> = act.lines().collect();
    assert_eq!(lines[0], "harness,model,task,marker,marker_zh,count");
    assert_eq!(lines.len(), 1 + 21);
    assert!(lines.contains(&"mingbird,sim-2b,WF-04,plan_unsynced_reject,计划未同步,1"));
    assert!(lines.contains(&"mingbird,sim-2b,WF-04,selfcheck_reinject,交付自查:回注任务原文,1"));
    assert!(
        lines.contains(&"mingbird,sim-2b,WF-04,force_finish_loop_guard,\"本轮已足够,强制结束\",0")
    );

    let a: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("analysis.json")).unwrap()).unwrap();
    // spin (index 4): Mingbird's marker; goose's column; opencode has nothing to count
    assert_eq!(form(&a, "mingbird", 4), (1, 1));
    assert_eq!(form(&a, "goose", 4), (1, 1));
    assert_eq!(form(&a, "opencode", 4), (0, 0));
    // false finish (index 7): Mingbird's gate rejected one; goose offered no finish tool
    assert_eq!(form(&a, "mingbird", 7), (1, 1));
    assert_eq!(form(&a, "goose", 7), (0, 0));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Mechanism activation (the paper's marker table)"));
    // the run's family total beside the paper's 72 cells (the arm is the paper's `mingbird`)
    assert!(
        report.contains("| **finish_gate** | (family) | **2** | | **155** |"),
        "{report}"
    );
    assert!(
        report.contains("| **anti_loop** | (family) | **1** | | **95** |"),
        "{report}"
    );
    // the peak prompt's median per arm
    let res = &a["resource_table"]["by_arm"];
    let peak = |arm: &str| {
        res.as_array()
            .unwrap()
            .iter()
            .find(|r| r["arm"] == arm)
            .unwrap()["peak_prompt_median"]
            .clone()
    };
    assert_eq!(
        (peak("mingbird"), peak("goose")),
        (1811.0.into(), 5000.0.into())
    );
    assert_eq!(peak("opencode"), Value::Null);
}

#[test]
fn a_folder_without_cells_csv_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let args = AnalyzeArgs::new(vec![tmp.path().to_path_buf()], tmp.path().join("out"));
    let e = run(&args).unwrap_err().to_string();
    assert!(e.contains("run folder with a cells.csv"), "{e}");
    assert!(e.contains(&tmp.path().display().to_string()), "{e}");
}

/// A run written before cells.csv version 4: the counters and the peak come from the attempt's
/// `proxy.jsonl` when it kept one; without one they stay unknown.
#[test]
fn an_older_run_is_counted_from_its_trajectory() {
    use lrab_records::{TrajectoryEntry, TrajectoryReply, TrajectoryToolCall};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("old");
    let head = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version,turns,cached_prompt_tokens,uncached_prompt_tokens,backend_kind,think";
    let line = |arm: &str| {
        format!("old,{arm},sim-2b,WF-01,1,0,0,0.200,0.000,0.500,5.0,0,completed,sim,true,300,10,2,2,a/{arm},3,2,,,sim,off")
    };
    std::fs::create_dir_all(dir.join("a/goose")).unwrap();
    std::fs::write(
        dir.join("cells.csv"),
        format!("{head}\n{}\n{}\n", line("goose"), line("opencode")),
    )
    .unwrap();
    // the same call twice in a row: one spin event
    let call = TrajectoryToolCall {
        id: None,
        name: "shell".into(),
        arguments: serde_json::json!({"command": "ls"}),
    };
    for p in [120, 180] {
        let e = TrajectoryEntry {
            schema_version: TrajectoryEntry::SCHEMA_VERSION,
            status: 200,
            tools: vec!["shell".into()],
            reply: Some(TrajectoryReply {
                tool_calls: vec![call.clone()],
                ..Default::default()
            }),
            prompt_tokens: Some(p),
            ..Default::default()
        };
        lrab_records::append_jsonl(&dir.join("a/goose/proxy.jsonl"), &e).unwrap();
    }
    let out = tmp.path().join("report");
    let mut args = AnalyzeArgs::new(vec![dir], out.clone());
    (args.quiet, args.resamples, args.no_figures) = (true, 50, true);
    run(&args).unwrap();
    let a: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("analysis.json")).unwrap()).unwrap();
    assert_eq!(form(&a, "goose", 4), (1, 1), "spin from the trajectory");
    assert_eq!(form(&a, "goose", 7), (0, 0), "no finish tool offered: n/a");
    assert_eq!(form(&a, "opencode", 4), (0, 0), "no trajectory: unknown");
    let by = a["resource_table"]["by_arm"].as_array().unwrap();
    let goose = by.iter().find(|r| r["arm"] == "goose").unwrap();
    assert_eq!(goose["peak_prompt_median"], 180.0);
}
