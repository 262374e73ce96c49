//! The three records of an attempt, pinned byte for byte: a change to any of them is a change
//! to the files users publish and other tools read.

use std::time::Duration;

use lrab_records::{CheckDetail, FailureMode, ResumeInfo, ScoreReport, TaskScore};

use super::super::process::Exit;
use super::super::sim_clock::Ledger;
use super::super::usage::Usage;
use super::Facts;

fn exit(wall_us: u64, code: Option<i32>, timed_out: bool) -> Exit {
    Exit {
        code,
        timed_out,
        wall: Duration::from_micros(wall_us),
        survivors: false,
        pgid: 4242,
    }
}

/// A kill-and-resume attempt on the simulator: killed at 50 %, relaunched, finished.
fn resumed() -> Facts {
    let detail = |artifact: &str, score: f64| CheckDetail {
        artifact: artifact.into(),
        check: "exists".into(),
        ok: score >= 0.5,
        score,
        detail: format!("{artifact} checked"),
    };
    let score = TaskScore {
        task_id: "LH-03".into(),
        domain: "long-horizon".into(),
        tier: 4,
        milestone_score: 1.0,
        final_score: 0.5,
        total: 0.6666,
        milestone_details: vec![detail("m01.py", 1.0)],
        final_details: vec![detail("report.md", 0.5)],
    };
    Facts {
        run_id: "run-1".into(),
        cell: 7,
        arm: "harness".into(),
        model: "sim-4b".into(),
        repeat: 1,
        attempt: 0,
        attempt_dir: "cells/harness/sim-4b/LH-03/r1/a0".into(),
        backend: "sim".into(),
        simulated: true,
        backend_kind: Some(lrab_records::BackendKind::Sim),
        think: Some(lrab_records::ThinkSetting::Off),
        confined: None,
        command: vec!["/bin/lrab-harness".into(), "run".into(), "--x".into()],
        backend_url: "http://127.0.0.1:4000".into(),
        phases: vec![
            exit(1_800_000_400, None, true),
            exit(95_555_600, Some(0), false),
        ],
        budget_seconds: 3600.0,
        resume: Some(ResumeInfo {
            protocol: "kill_and_resume".into(),
            kill_at_pct: 50,
            kill_at_seconds: 1800.0,
            budget_seconds: 3600.0,
            killed: true,
            attempt1_wall: 1800.0,
            attempt1_killed: true,
            attempt2_wall: Some(95.6),
            phase2_timeout: Some(false),
        }),
        quiet_wait: Duration::from_millis(1250),
        sim_ledger: Some(Ledger {
            requests: 12,
            model_ns: 40_123_456_789,
            paced_ns: 401_234_567,
            tool_calls: 9,
            errors: 1,
        }),
        score: ScoreReport::scored(score, FailureMode::Completed),
        score_error: None,
        scoring: Duration::from_micros(51_234),
        usage: Usage {
            prompt_tokens: Some(1200),
            completion_tokens: Some(80),
            model_calls: Some(12),
            tool_calls: None,
            turns: Some(11),
            cached_prompt_tokens: Some(900),
            uncached_prompt_tokens: Some(300),
            counters: lrab_analysis::trajectory_counts::Counters {
                peak_prompt_tokens: Some(700),
                fmt_arg_errors: 1,
                spin_events: 2,
                ctx_events: 0,
                finish_rejections: Some(1),
                provider_errors: 0,
            },
        },
        overhead: Duration::ZERO,
        retries_left: true,
    }
}

/// A real-backend attempt that ran into its budget.
fn timed_out() -> Facts {
    Facts {
        run_id: "run-2".into(),
        cell: 0,
        arm: "goose".into(),
        model: "qwen3:4b".into(),
        repeat: 0,
        attempt: 0,
        attempt_dir: "cells/goose/qwen3_4b/WF-01/r0/a0".into(),
        backend: "ollama".into(),
        simulated: false,
        backend_kind: Some(lrab_records::BackendKind::Ollama),
        think: Some(lrab_records::ThinkSetting::Off),
        confined: None,
        command: vec!["goose".into()],
        backend_url: "http://127.0.0.1:5000".into(),
        phases: vec![exit(600_030_100, None, true)],
        budget_seconds: 600.0,
        resume: None,
        quiet_wait: Duration::ZERO,
        sim_ledger: None,
        score: ScoreReport::timeout("WF-01", "workflow", 1),
        score_error: None,
        scoring: Duration::ZERO,
        usage: Usage::default(),
        overhead: Duration::ZERO,
        retries_left: true,
    }
}

fn written(mut f: Facts, overhead_ms: u64) -> (String, String, String) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(&f.attempt_dir)).unwrap();
    let row = f
        .record(d.path(), || Duration::from_millis(overhead_ms))
        .unwrap();
    assert_eq!(row, f.cell_row());
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap();
    (
        read(d.path().join(&f.attempt_dir).join("score.json")),
        read(d.path().join("cells.csv")),
        read(d.path().join("attempts.jsonl")),
    )
}

const RESUMED_SCORE_JSON: &str = r#"{
  "schema_version": 1,
  "task_id": "LH-03",
  "domain": "long-horizon",
  "tier": 4,
  "milestone_score": 1.0,
  "final_score": 0.5,
  "total": 0.6666,
  "milestone_details": [
    {
      "artifact": "m01.py",
      "check": "exists",
      "ok": true,
      "score": 1.0,
      "detail": "m01.py checked"
    }
  ],
  "final_details": [
    {
      "artifact": "report.md",
      "check": "exists",
      "ok": true,
      "score": 0.5,
      "detail": "report.md checked"
    }
  ],
  "failure_mode": "completed",
  "arm": "harness",
  "model": "sim-4b",
  "run_id": "run-1",
  "repeat": 1,
  "attempt": 0,
  "wall_seconds": 1895.6,
  "exit_code": 0,
  "backend": "sim",
  "simulated": true,
  "modelled_wall_seconds": 1935.3,
  "resume": {
    "protocol": "kill_and_resume",
    "kill_at_pct": 50,
    "kill_at_seconds": 1800.0,
    "budget_seconds": 3600.0,
    "killed": true,
    "attempt1_wall": 1800.0,
    "attempt1_killed": true,
    "attempt2_wall": 95.6,
    "phase2_timeout": false
  }
}
"#;

const HEADER_LINE: &str = "run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir,schema_version,turns,cached_prompt_tokens,uncached_prompt_tokens,backend_kind,think,peak_prompt_tokens,fmt_arg_errors,spin_events,ctx_events,finish_rejections,provider_errors\n";

const RESUMED_ATTEMPT_LINE: &str = r#"{"schema_version":1,"cell":7,"arm":"harness","model":"sim-4b","task":"LH-03","repeat":1,"attempt":0,"attempt_dir":"cells/harness/sim-4b/LH-03/r1/a0","command":["/bin/lrab-harness","run","--x"],"backend":"sim","backend_url":"http://127.0.0.1:4000","backend_kind":"sim","think":"off","phases":[{"wall":1800.0,"code":null,"timed_out":true,"survivors":false},{"wall":95.556,"code":0,"timed_out":false,"survivors":false}],"quiet_wait_seconds":1.25,"modelled_wall_seconds":1935.3,"sim_ledger":{"requests":12,"model_seconds":40.123,"paced_seconds":0.401,"tool_calls":9,"errors":1},"runner_overhead_seconds":0.31,"scoring_seconds":0.051,"failure_mode":"completed","score":0.6666,"score_error":null,"retry":false}
"#;

#[test]
fn a_resumed_sim_attempt_writes_exactly_these_bytes() {
    let (score, cells, attempts) = written(resumed(), 310);
    assert_eq!(score, RESUMED_SCORE_JSON);
    assert_eq!(
        cells,
        format!("{HEADER_LINE}run-1,harness,sim-4b,LH-03,4,1,0,0.667,1.000,0.500,1895.6,0,completed,sim,true,1200,80,12,,cells/harness/sim-4b/LH-03/r1/a0,4,11,900,300,sim,off,700,1,2,0,1,0\n")
    );
    assert_eq!(HEADER_LINE.trim_end(), lrab_records::HEADER.join(","));
    assert_eq!(attempts, RESUMED_ATTEMPT_LINE);
}

const TIMED_OUT_SCORE_JSON: &str = r#"{
  "schema_version": 1,
  "task_id": "WF-01",
  "domain": "workflow",
  "tier": 1,
  "milestone_details": [],
  "final_details": [],
  "failure_mode": "timeout",
  "arm": "goose",
  "model": "qwen3:4b",
  "run_id": "run-2",
  "repeat": 0,
  "attempt": 0,
  "wall_seconds": 600.0,
  "exit_code": null,
  "backend": "ollama",
  "simulated": false,
  "failure_note": "killed at the budget of 600 s"
}
"#;

const TIMED_OUT_ATTEMPT_LINE: &str = r#"{"schema_version":1,"cell":0,"arm":"goose","model":"qwen3:4b","task":"WF-01","repeat":0,"attempt":0,"attempt_dir":"cells/goose/qwen3_4b/WF-01/r0/a0","command":["goose"],"backend":"ollama","backend_url":"http://127.0.0.1:5000","backend_kind":"ollama","think":"off","phases":[{"wall":600.03,"code":null,"timed_out":true,"survivors":false}],"quiet_wait_seconds":0.0,"modelled_wall_seconds":null,"sim_ledger":null,"runner_overhead_seconds":0.02,"scoring_seconds":0.0,"failure_mode":"timeout","score":0.0,"score_error":null,"retry":true}
"#;

#[test]
fn a_timed_out_attempt_writes_exactly_these_bytes() {
    let (score, cells, attempts) = written(timed_out(), 20);
    assert_eq!(score, TIMED_OUT_SCORE_JSON);
    assert_eq!(
        cells,
        format!("{HEADER_LINE}run-2,goose,qwen3:4b,WF-01,1,0,0,0.000,,,600.0,,timeout,ollama,false,,,,,cells/goose/qwen3_4b/WF-01/r0/a0,4,,,,ollama,off,,0,0,0,,0\n")
    );
    assert_eq!(attempts, TIMED_OUT_ATTEMPT_LINE);
    // the last allowed attempt is not retried
    let mut last = timed_out();
    last.retries_left = false;
    assert!(!last.attempt_record().retry);
}

#[test]
fn a_scoring_error_is_kept_in_both_json_records() {
    let mut f = timed_out();
    f.phases = vec![exit(70_000_000, Some(0), false)];
    f.score = ScoreReport::unscored("WF-01", "workflow", 1, FailureMode::Error);
    f.score_error = Some("workdir vanished".into());
    let (score, cells, attempts) = written(f, 0);
    let s: serde_json::Value = serde_json::from_str(&score).unwrap();
    assert_eq!(s["score_error"], "workdir vanished");
    assert_eq!(s["exit_code"], 0);
    assert!(s.get("failure_note").is_none());
    let a: serde_json::Value = serde_json::from_str(&attempts).unwrap();
    assert_eq!(a["score_error"], "workdir vanished");
    assert_eq!(a["failure_mode"], "error");
    // no score: the retry rule applies
    assert_eq!(a["retry"], true);
    assert!(cells.ends_with(
        ",70.0,0,error,ollama,false,,,,,cells/goose/qwen3_4b/WF-01/r0/a0,4,,,,ollama,off,,0,0,0,,0\n"
    ));
}
