use super::*;
use launch::{read_prompt, PromptError};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The shortest complete `run` command line, then `extra`.
fn run_line(extra: &[&str]) -> Vec<String> {
    let mut v = s(&[
        "run",
        "--model",
        "m",
        "--prompt-file",
        "p",
        "--workdir",
        ".",
    ]);
    v.extend(s(extra));
    v
}

#[test]
fn parses_the_arm_protocol() {
    let c = parse(
        &s(&[
            "run",
            "--model",
            "m:1b",
            "--prompt-file",
            "task_input.txt",
            "--workdir",
            ".",
            "--api=openai",
            "--ablate",
            "anti_loop",
            "--num-ctx",
            "8192",
            "--time-budget",
            "90",
        ]),
        Some("clock"),
        None,
    )
    .unwrap();
    let Command::Run(a) = c else { panic!() };
    assert_eq!(a.model, "m:1b");
    assert_eq!(a.api, Api::OpenAi);
    assert!(a.ablate.off(Mechanism::AntiLoop) && a.ablate.off(Mechanism::Clock));
    assert_eq!(a.num_ctx, Some(8192));
    assert_eq!(a.tool_protocol, ProtocolArg::Auto);
    assert_eq!(a.time_budget, Some(90.0));
    assert_eq!(a.backend_url, "http://127.0.0.1:11434");
    assert!(!a.allow_unconfined);
    let c = parse(&run_line(&["--allow-unconfined"]), None, None).unwrap();
    let Command::Run(a) = c else { panic!() };
    assert!(a.allow_unconfined);
    assert_eq!(a.web_search, None);
    let v = run_line(&["--web-search", "http://127.0.0.1:8888/search"]);
    let Command::Run(a) = parse(&v, None, None).unwrap() else {
        panic!()
    };
    assert_eq!(
        a.web_search.as_deref(),
        Some("http://127.0.0.1:8888/search")
    );
    let e = parse(&run_line(&["--web-search", "file:///tmp/x"]), None, None).unwrap_err();
    assert!(
        e.contains("--web-search") && e.contains("not allowed"),
        "{e}"
    );
}

#[test]
fn usage_errors_are_clear() {
    assert!(parse(&s(&["run", "--model"]), None, None)
        .unwrap_err()
        .contains("--model needs a value"));
    assert!(parse(&s(&["run", "--workdir", "."]), None, None)
        .unwrap_err()
        .contains("--model is required"));
    assert!(parse(&s(&["run", "--max-turns", "x"]), None, None)
        .unwrap_err()
        .contains("not a valid number"));
    assert!(parse(&s(&["run", "--ablate", "nope"]), None, None)
        .unwrap_err()
        .contains("unknown mechanism"));
    assert!(parse(&s(&["fly"]), None, None).is_err());
    assert_eq!(
        parse(&s(&["prefill"]), None, None).unwrap(),
        Command::Prefill
    );
}

#[test]
fn the_clap_command_line_keeps_the_harness_words() {
    let run = |extra: &[&str]| parse(&run_line(extra), None, None);
    let e = run(&["--api", "grpc"]).unwrap_err();
    assert!(
        e.starts_with("--api: 'grpc'") && e.contains("ollama, openai"),
        "{e}"
    );
    let e = run(&["--bogus"]).unwrap_err();
    assert_eq!(e, "unknown option '--bogus'");
    let e = run(&["--time-budget", "-1"]).unwrap_err();
    assert!(e.contains("--time-budget") && e.contains("positive"), "{e}");
    assert!(run(&["--num-ctx", "512"])
        .unwrap_err()
        .contains("at least 1024"));
    let Command::Run(a) = run(&["--ablate", "clock", "--ablate=anti_loop"]).unwrap() else {
        panic!()
    };
    assert!(a.ablate.off(Mechanism::Clock) && a.ablate.off(Mechanism::AntiLoop));
    assert_eq!(
        parse(&run_line(&[]), None, Some("http://h:1")).map(|c| match c {
            Command::Run(a) => a.backend_url,
            _ => String::new(),
        }),
        Ok("http://h:1".to_string())
    );
    for help in [&[][..], &["help"], &["--help"], &["run", "--help"]] {
        match parse(&s(help), None, None) {
            Ok(Command::Help(t)) => assert!(t.contains("Usage"), "{t}"),
            other => panic!("{help:?}: {other:?}"),
        }
    }
    assert_eq!(parse(&s(&["-V"]), None, None), Ok(Command::Version));
    assert_eq!(
        parse(&s(&["mechanisms"]), None, None),
        Ok(Command::Mechanisms)
    );
}

#[test]
fn a_bad_web_endpoint_names_where_it_came_from() {
    assert_eq!(web_endpoint(None, None).unwrap(), None);
    assert_eq!(web_endpoint(Some(" "), Some("http://e")).unwrap(), None);
    assert_eq!(
        web_endpoint(None, Some(" http://e:8888 "))
            .unwrap()
            .as_deref(),
        Some("http://e:8888")
    );
    let e = web_endpoint(Some("ftp://x"), Some("http://e")).unwrap_err();
    assert_eq!(e.from, "--web-search");
    assert!(matches!(
        e.err,
        crate::tools::web::TargetError::Scheme { .. }
    ));
    assert!(
        e.to_string()
            .starts_with("--web-search: scheme 'ftp://' is not allowed"),
        "{e}"
    );
    let e = web_endpoint(None, Some("nohost")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "LRAB_WEB_SEARCH: 'nohost' is not an absolute http(s) URL"
    );
}

#[test]
fn a_missing_or_empty_prompt_file_is_named() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("task_input.txt");
    let e = read_prompt(&p).unwrap_err();
    assert!(matches!(e, PromptError::Read { .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with(&format!("cannot read prompt file '{}': ", p.display())),
        "{e}"
    );
    std::fs::write(&p, " \n\t").unwrap();
    let e = read_prompt(&p).unwrap_err();
    assert!(matches!(e, PromptError::Empty { .. }));
    assert_eq!(
        e.to_string(),
        format!("prompt file '{}' is empty", p.display())
    );
    std::fs::write(&p, "Do it.\n").unwrap();
    assert_eq!(read_prompt(&p).unwrap(), "Do it.\n");
}
