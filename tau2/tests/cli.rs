//! The CLI through `cli::run`: replay-gold, a full `run` on the HTTP backend with
//! byte-identical outputs, `grade` of the written results.json, and clear errors.

mod common;
use clap::Parser;
use common::spawn_server;
use lrab_tau2::run_cli as run;
use serde_json::Value;

fn call(argv: &[&str]) -> (anyhow::Result<()>, String) {
    common::run_cli(&common::data_dir(), argv)
}

#[test]
fn replay_gold_prints_matched_over_total() {
    if common::data().is_none() {
        return;
    }
    let (r, out) = call(&["replay-gold", "--domain", "mock"]);
    r.unwrap();
    assert!(
        out.contains("mock: 10/10 gold hashes match; 1/3 env assertions hold after the gold actions; initial hash ok"),
        "{out}"
    );
    // Those two tasks need more than their gold actions (a message-history update, the
    // user dismissing a notification): reported, not a hash mismatch.
    assert!(
        out.contains("mock: env assertions not met by the gold actions alone: update_task_with_history_and_env_assertions, update_task_with_user_tools"),
        "{out}"
    );
    assert!(!out.contains("mismatching"), "{out}");
}

#[test]
fn replay_gold_telecom_checks_every_env_assertion() {
    if common::data().is_none() {
        return;
    }
    let (r, out) = call(&["replay-gold", "--domain", "telecom"]);
    r.unwrap();
    assert!(
        out.contains("telecom: 114/114 gold hashes match; 209/209 env assertions hold after the gold actions; initial hash ok"),
        "{out}"
    );
    assert!(!out.contains("not met"), "{out}");
}

#[test]
fn run_writes_results_and_csv_deterministically_and_grade_agrees() {
    if common::data().is_none() {
        return;
    }
    let (url, _log) = spawn_server(200, |_p, b| (200, common::complete_task_1(b)));
    let tmp = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for i in 0..2 {
        let dir = tmp.path().join(format!("run{i}"));
        let mut argv =
            common::llm_run_args("mock", "plain", &url, "update_task_1,create_task_1", &dir);
        argv.extend(["--trials", "2"].map(String::from));
        let (r, out) = common::run_cli_owned(&common::data_dir(), &argv);
        r.unwrap();
        assert!(out.contains("pass^2"), "{out}");
        let results = std::fs::read(dir.join("results.json")).unwrap();
        let csv = std::fs::read_to_string(dir.join("tau2.csv")).unwrap();
        outputs.push((results, csv));
    }
    assert_eq!(
        outputs[0], outputs[1],
        "same inputs and seeds -> identical files"
    );
    let csv = &outputs[0].1;
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "domain,task,arm,trial,reward,components,steps,termination,simulated"
    );
    assert_eq!(lines.len(), 5);
    assert!(
        lines[1..].iter().all(|l| l.ends_with(",false")),
        "a backend that is not the sim is not labelled: {csv}"
    );
    assert!(
        lines[1].starts_with("mock,update_task_1,plain,0,1,DB=1;"),
        "{csv}"
    );
    // create_task_1 needs a create_task call; this agent only updates -> DB fails.
    assert!(
        lines[2].starts_with("mock,create_task_1,plain,0,0,DB=0;"),
        "{csv}"
    );
    let v: Value = serde_json::from_slice(&outputs[0].0).unwrap();
    assert_eq!(v["info"]["environment_info"]["domain_name"], "mock");
    assert_eq!(v["simulations"].as_array().unwrap().len(), 4);
    let sim = &v["simulations"][0];
    for k in [
        "id",
        "task_id",
        "start_time",
        "end_time",
        "duration",
        "termination_reason",
        "messages",
        "reward_info",
    ] {
        assert!(sim.get(k).is_some(), "simulation lacks {k}");
    }
    assert_eq!(sim["messages"][1]["role"], "user");
    assert_eq!(
        sim["messages"][2]["tool_calls"][0]["name"],
        "update_task_status"
    );
    assert_eq!(sim["messages"][3]["role"], "tool");
    assert_eq!(
        sim["messages"][3]["id"],
        sim["messages"][2]["tool_calls"][0]["id"]
    );

    // grade re-evaluates the file and reproduces the CSV rows' rewards.
    let rpath = tmp.path().join("run0/results.json");
    let gcsv = tmp.path().join("graded.csv");
    let (r, out) = call(&[
        "grade",
        rpath.to_str().unwrap(),
        "--csv",
        gcsv.to_str().unwrap(),
        "--arm",
        "plain",
    ]);
    r.unwrap();
    assert!(
        out.contains("graded 4/4 simulations; average reward 0.5000"),
        "{out}"
    );
    let g = std::fs::read_to_string(gcsv).unwrap();
    let rewards = |s: &str| {
        s.lines()
            .skip(1)
            .map(|l| l.split(',').nth(4).unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(rewards(&g), rewards(csv));
}

#[test]
fn bad_input_gives_clear_errors() {
    if common::data().is_none() {
        return;
    }
    let (r, _) = call(&[
        "run",
        "--domain",
        "mock",
        "--agent",
        "gold",
        "--user-model",
        "u",
        "--tasks",
        "no_such_task",
    ]);
    assert!(r
        .unwrap_err()
        .to_string()
        .contains("unknown task id \"no_such_task\""));
    let (r, _) = call(&[
        "run",
        "--domain",
        "retail",
        "--agent",
        "harness",
        "--model",
        "m",
        "--user-model",
        "u",
    ]);
    assert!(r.unwrap_err().to_string().contains("harness"));
    let (r, _) = call(&["grade", "/nonexistent/results.json"]);
    assert!(r
        .unwrap_err()
        .to_string()
        .contains("cannot read /nonexistent/results.json"));
    let cli =
        common::Cli::try_parse_from(["tau2", "--tau2-data", "/nonexistent/tau2", "replay-gold"])
            .unwrap();
    let err = run(&cli.args, &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/tau2 does not exist"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("r.json");
    std::fs::write(&bad, "{\"info\": {}}").unwrap();
    let (r, _) = call(&["grade", bad.to_str().unwrap()]);
    assert!(r
        .unwrap_err()
        .to_string()
        .contains("domain_name is missing"));
}

/// `--agent gold --user scripted` writes gold trajectories that end with user_stop (no model
/// needed), and the reward_info check lists carry whole Action / EnvAssertion objects, as
/// upstream's `ActionCheck` / `EnvAssertionCheck` require.
#[test]
fn gold_run_with_scripted_user_writes_upstream_shaped_checks() {
    if common::data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let argv = common::gold_run_args(
        "create_task_1_with_env_assertions,update_task_1,create_task_1_nl_eval",
        tmp.path(),
    );
    let (r, out) = common::run_cli_owned(&common::data_dir(), &argv);
    r.unwrap();
    assert!(
        out.contains("graded 3/3 simulations; average reward 1.0000"),
        "{out}"
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(
        v["info"]["user_info"]["implementation"],
        "lrab_scripted_user"
    );
    // no backend at all: nothing simulated
    assert_eq!(v["info"]["simulated"], false);
    let sims = v["simulations"].as_array().unwrap();
    assert!(sims.iter().all(|s| s["termination_reason"] == "user_stop"));
    let env = &sims[0]["reward_info"]["env_assertions"][0];
    assert_eq!(env["env_assertion"]["func_name"], "assert_task_status");
    assert_eq!(env["env_assertion"]["env_type"], "assistant");
    assert_eq!(env["met"], true);
    let act = &sims[1]["reward_info"]["action_checks"][0];
    assert_eq!(act["action"]["name"], "update_task_status");
    assert!(act["action"]["action_id"].is_string());
    assert!(act["action"]["arguments"].is_object());
    assert_eq!(act["action_match"], true);
    // Neither actions nor env assertions: upstream reports a matching DB check.
    assert_eq!(sims[2]["reward_info"]["db_check"]["db_match"], true);

    let (r, _) = call(&["run", "--domain", "mock", "--agent", "gold"]);
    assert!(r
        .unwrap_err()
        .to_string()
        .contains("--user-model is required for --user llm"));
}

#[test]
fn api_options_take_only_the_known_apis() {
    if common::data().is_none() {
        return;
    }
    let parse = |extra: &[&str]| {
        let mut argv = vec!["tau2", "run", "--domain", "mock"];
        argv.extend_from_slice(extra);
        common::Cli::try_parse_from(argv)
    };
    let c = parse(&["--api", "openai", "--judge-api", "ollama"]).unwrap();
    let lrab_tau2::Tau2Cmd::Run(r) = c.args.cmd else {
        panic!("not a run")
    };
    assert_eq!(r.api, lrab_tau2::Api::OpenAi);
    assert_eq!(r.user_api, None);
    assert_eq!(r.judge_api, Some(lrab_tau2::Api::Ollama));
    let c = parse(&[]).unwrap();
    let lrab_tau2::Tau2Cmd::Run(r) = c.args.cmd else {
        panic!("not a run")
    };
    assert_eq!(r.api, lrab_tau2::Api::Ollama);
    let err = parse(&["--user-api", "anthropic"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("invalid value 'anthropic' for '--user-api <USER_API>'")
            && err.contains("[possible values: ollama, openai]"),
        "{err}"
    );
}

/// `--domain`, `--agent` and `--user` take only their known values: anything else is clap's
/// error listing them (the binary exits 2 on it), and the help lists them too.
#[test]
fn fixed_value_options_take_only_their_values() {
    if common::data().is_none() {
        return;
    }
    use lrab_tau2::{AgentKind, DomainKind, Tau2Cmd, UserKind};
    let parse = |argv: &[&str]| common::Cli::try_parse_from(argv.iter().copied());
    let c = parse(&["tau2", "run", "--domain", "telecom"]).unwrap();
    let Tau2Cmd::Run(r) = c.args.cmd else {
        panic!("not a run")
    };
    assert_eq!(
        (r.domain, r.agent, r.user),
        (
            DomainKind::parse("telecom").unwrap(),
            AgentKind::Plain,
            UserKind::Llm
        )
    );
    let c = parse(&[
        "tau2", "run", "--domain", "mock", "--agent", "gold", "--user", "scripted",
    ])
    .unwrap();
    let Tau2Cmd::Run(r) = c.args.cmd else {
        panic!("not a run")
    };
    assert_eq!((r.agent, r.user), (AgentKind::Gold, UserKind::Scripted));
    let c = parse(&["tau2", "replay-gold", "--domain", "retail"]).unwrap();
    assert!(matches!(
        c.args.cmd,
        Tau2Cmd::ReplayGold {
            domain: Some(d)
        } if d.name() == "retail"
    ));
    for (argv, flag, values) in [
        (
            &["tau2", "run", "--domain", "banking"][..],
            "--domain <DOMAIN>",
            "[possible values: airline, retail, mock, telecom]",
        ),
        (
            &["tau2", "replay-gold", "--domain", "banking"][..],
            "--domain <DOMAIN>",
            "[possible values: airline, retail, mock, telecom]",
        ),
        (
            // any other name is a command-line arm (the `lrab` binary resolves it)
            &["tau2", "run", "--domain", "mock", "--agent", "no arm!"][..],
            "--agent <AGENT>",
            "(plain, harness, gold or an arm name)",
        ),
        (
            &["tau2", "run", "--domain", "mock", "--user", "x"][..],
            "--user <USER>",
            "[possible values: llm, scripted]",
        ),
    ] {
        let e = parse(argv).err().expect("a bad value is refused");
        // --agent validates a name (ValueValidation); the enums list their values
        assert!(matches!(
            e.kind(),
            clap::error::ErrorKind::InvalidValue | clap::error::ErrorKind::ValueValidation
        ));
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(
            text.contains(&format!("for '{flag}'")) && text.contains(values),
            "{text}"
        );
    }
    use clap::CommandFactory;
    let mut cmd = common::Cli::command();
    let help = cmd
        .find_subcommand_mut("run")
        .unwrap()
        .render_long_help()
        .to_string();
    for v in [
        "airline", "telecom", "plain", "harness", "gold", "llm", "scripted",
    ] {
        assert!(help.contains(v), "{v} missing from\n{help}");
    }
}
