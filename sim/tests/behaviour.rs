//! How the simulated models react to feedback, measured over many seeds with the policy
//! called directly; and that renaming a harness's markers changes nothing.

mod common;
use common::*;

use lrab_ollama::Tool;
use lrab_sim::Reactions;
use lrab_sim::{respond, Env};
use lrab_sim::{Call, Conv, Msg};
use lrab_sim::{FailureForm, Family, ModelSpec, Profile, Rate, SimConfig, TaskIndex};

/// Reactions of a middling model (the numbers are test inputs, not a profile).
const REACT: Reactions = Reactions {
    loop_stay_plain: 0.85,
    loop_stay_warned: 0.65,
    loop_stay_blocked: 0.25,
    fix_precise: 0.75,
    fix_generic: 0.25,
    persist: 0.0,
    nudge_continue: 0.5,
    lost_ctx_threshold: 12_000,
};

fn index() -> TaskIndex {
    let (idx, notes) = TaskIndex::from_pack(&lrab_tasks::Pack::builtin_dir());
    assert!(notes.is_empty(), "{notes:?}");
    idx
}

fn rich_tools() -> Vec<Tool> {
    tools_for(Toolset::Rich)
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect()
}

fn msg(role: &str, content: &str, calls: Vec<Call>) -> Msg {
    Msg {
        role: role.into(),
        content: content.into(),
        calls,
    }
}

/// The oracle's turns for `id`, each followed by a neutral successful result, until `stop`
/// says so; returns the conversation so far.
fn oracle_prefix(idx: &TaskIndex, id: &str, stop: impl Fn(&Msg) -> bool) -> Conv {
    let pack = pack();
    let prompt = pack.get(id).unwrap().render_prompt();
    let oracle = ModelSpec::from_profile(Profile::oracle());
    let mut conv = Conv {
        messages: vec![
            msg("system", "You are an agent.", vec![]),
            msg("user", &prompt, vec![]),
        ],
        tools: rich_tools(),
        ..Default::default()
    };
    for _ in 0..40 {
        let t = respond(
            &Env {
                model: &oracle,
                seed: 0,
                tasks: idx,
            },
            &conv,
        );
        let m = msg("assistant", &t.content, t.calls.clone());
        let done = stop(&m);
        conv.messages.push(m);
        if done {
            return conv;
        }
        conv.messages.push(msg("tool", "ok", vec![]));
    }
    panic!("stop condition never met");
}

fn reacting_model() -> ModelSpec {
    // no spontaneous failure; only reactions to feedback
    ModelSpec::from_profile(Profile::only(
        "sim-react",
        Family::Gemma4,
        FailureForm::EmptyTurn,
        0.0,
        REACT,
    ))
}

fn share(idx: &TaskIndex, conv: &Conv, pred: impl Fn(&lrab_sim::Turn) -> bool) -> f64 {
    let model = reacting_model();
    let n = 600;
    let hits = (0..n)
        .filter(|&seed| {
            pred(&respond(
                &Env {
                    model: &model,
                    seed,
                    tasks: idx,
                },
                conv,
            ))
        })
        .count();
    hits as f64 / n as f64
}

#[test]
fn a_blocked_call_breaks_a_loop_more_often_than_a_warning() {
    let idx = index();
    let base = oracle_prefix(&idx, "WF-02", |m| !m.calls.is_empty());
    let first = base.messages.last().unwrap().clone();
    let with_feedback = |text: &str| {
        let mut c = base.clone();
        c.messages
            .push(msg("tool", "Wrote 1538 bytes to change_log.md", vec![]));
        c.messages.push(first.clone());
        c.messages.push(msg("tool", text, vec![]));
        c
    };
    let repeats = |c: &Conv| share(&idx, c, |t| t.calls == first.calls);
    let plain = repeats(&with_feedback("Wrote 1538 bytes to change_log.md"));
    let warned = repeats(&with_feedback(
        "Wrote 1538 bytes to change_log.md\nYou made this exact call before. Do not repeat it.",
    ));
    let blocked = repeats(&with_feedback(
        "This identical call was blocked and not executed.",
    ));
    assert!(
        (plain - REACT.loop_stay_plain).abs() < 0.08,
        "plain {plain}"
    );
    assert!(
        (warned - REACT.loop_stay_warned).abs() < 0.08,
        "warned {warned}"
    );
    assert!(
        (blocked - REACT.loop_stay_blocked).abs() < 0.08,
        "blocked {blocked}"
    );
    assert!(plain > warned && warned > blocked);
}

#[test]
fn a_precise_error_is_fixed_more_often_than_a_generic_one() {
    let idx = index();
    let base = oracle_prefix(&idx, "WF-01", |m| {
        m.content.contains("running `python3 build_tables.py`")
    });
    let with_feedback = |text: &str| {
        let mut c = base.clone();
        c.messages.push(msg("tool", text, vec![]));
        c
    };
    let fixes = |c: &Conv| {
        share(&idx, c, |t| {
            t.calls
                .first()
                .is_some_and(|c| c.args["path"] == "build_tables.py")
        })
    };
    let precise = fixes(&with_feedback(
        "Traceback (most recent call last):\n  File \"build_tables.py\", line 12\n    def unfinished(:\nSyntaxError: invalid syntax",
    ));
    let generic = fixes(&with_feedback(
        "The command failed; build_tables.py did not work.",
    ));
    let unrelated = fixes(&with_feedback("(no output)"));
    assert!(
        (precise - REACT.fix_precise).abs() < 0.08,
        "precise {precise}"
    );
    assert!(
        (generic - REACT.fix_generic).abs() < 0.08,
        "generic {generic}"
    );
    assert_eq!(unrelated, 0.0);
}

#[test]
fn failure_rates_grow_with_tools_offered_and_shrink_with_the_base_rate() {
    let idx = index();
    let pack = pack();
    let prompt = pack.get("WF-03").unwrap().render_prompt();
    let mut few = Conv {
        messages: vec![msg("system", "agent", vec![]), msg("user", &prompt, vec![])],
        tools: rich_tools(),
        ..Default::default()
    };
    let model = |name: &str, base: f64| {
        let mut p = Profile::only(name, Family::Gemma4, FailureForm::TextCall, 0.0, REACT);
        p.forms.insert(
            FailureForm::TextCall,
            Rate {
                base,
                ctx_slope: 0.0,
                opening_slope: 0.0,
                tools_slope: 0.15,
            },
        );
        ModelSpec::from_profile(p)
    };
    let rate = |model: &ModelSpec, c: &Conv| {
        (0..800u64)
            .filter(|&s| {
                respond(
                    &Env {
                        model,
                        seed: s,
                        tasks: &idx,
                    },
                    c,
                )
                .form
                    == Some(FailureForm::TextCall)
            })
            .count() as f64
            / 800.0
    };
    let (small, big) = (model("t-small", 0.05), model("t-big", 0.005));
    let r_few = rate(&small, &few);
    let mut extra: Vec<Tool> = (0..12)
        .map(|i| {
            serde_json::from_value(tool(&format!("extra_tool_{i}"), &[("x", "string")], &["x"]))
                .unwrap()
        })
        .collect();
    few.tools.append(&mut extra);
    let r_many = rate(&small, &few);
    let r_big = rate(&big, &few);
    assert!(r_many > r_few * 1.5, "{r_few} -> {r_many}");
    assert!(r_big < r_many / 5.0, "{r_big} vs {r_many}");
}

#[test]
fn renaming_the_harness_markers_changes_nothing() {
    let sim = start(SimConfig {
        seed: 3,
        ..Default::default()
    });
    let pack = pack();
    for id in ["WF-02", "WF-04"] {
        let prompt = pack.get(id).unwrap().render_prompt();
        let run = |marker: &str, system: &str| {
            let (_t, wd, _m) = fresh(&pack, id);
            let mut a = Agent::new(&sim.url(), "sim-2b", Api::Native, Toolset::Rich);
            a.marker = marker.into();
            a.system = system.into();
            a.block_repeats = true;
            a.rescue_text_calls = true;
            a.finish_gate = true;
            a.nudges = 5;
            a.max_turns = 40;
            let tr = a.run(&prompt, &wd);
            tr.messages
                .into_iter()
                .filter(|m| m["role"] == "assistant")
                .collect::<Vec<_>>()
        };
        let ours = run(
            "[lrab-harness] ",
            "You are lrab-harness, an agent. Use the tools.",
        );
        let renamed = run("<<other agent>> ", "You are Zed, an agent. Use the tools.");
        assert!(ours.len() > 3);
        assert_eq!(
            ours, renamed,
            "{id}: behaviour changed when only markers were renamed"
        );
    }
}

/// The step a turn works on, from its narration (`Step 2/5: …` → 2).
fn step_of(t: &lrab_sim::Turn) -> Option<usize> {
    let rest = t.content.strip_prefix("Step ")?;
    rest.split('/').next()?.parse().ok()
}

#[test]
fn an_answer_that_the_earlier_identical_call_succeeded_counts_the_step_as_done() {
    // e.g. after compaction the earlier success is out of view and only the harness's answer
    // to the repeat says it happened
    let idx = index();
    let base = oracle_prefix(&idx, "WF-02", |m| !m.calls.is_empty());
    let first = base.messages.last().unwrap().clone();
    let path = first.calls[0].args["path"].as_str().unwrap().to_string();
    let answered = |text: &str| {
        let mut c = base.clone();
        c.messages.push(msg("tool", text, vec![]));
        c
    };
    let next_step = |c: &Conv| {
        let steps: Vec<Option<usize>> = (0..50)
            .map(|seed| {
                step_of(&respond(
                    &Env {
                        model: &reacting_model(),
                        seed,
                        tasks: &idx,
                    },
                    c,
                ))
            })
            .collect();
        assert!(steps.windows(2).all(|w| w[0] == w[1]), "{steps:?}");
        steps[0]
    };
    let unchanged = answered(&format!(
        "unchanged: {path} already has exactly this content (written at turn 3); this identical call was not executed again.\nNext action: write the next file"
    ));
    let blocked = answered("[not executed: this call was blocked by the guard.]");
    assert_eq!(
        step_of(&lrab_sim::Turn {
            content: first.content.clone(),
            ..Default::default()
        }),
        Some(1)
    );
    assert_eq!(next_step(&unchanged), Some(2), "done: go on");
    assert_eq!(next_step(&blocked), Some(1), "not run: try again");
    // an earlier result that reported an error is not "done", whatever the wrapper says
    let broken = answered(&format!(
        "unchanged: {path} already has exactly this content (written at turn 3).\nResult at turn 3:\nerror: cannot write '{path}': Permission denied"
    ));
    assert_eq!(next_step(&broken), Some(1));
}

#[test]
fn a_tool_taken_away_or_given_back_does_not_undo_what_was_done() {
    let idx = index();
    let model = reacting_model();
    let next = |c: &Conv| {
        respond(
            &Env {
                model: &model,
                seed: 0,
                tasks: &idx,
            },
            c,
        )
    };
    let without = |name: &str| -> Vec<Tool> {
        rich_tools()
            .into_iter()
            .filter(|t| t.function.name != name)
            .collect()
    };
    // step 1 written with write_file; then write_file is paused (not offered)
    let mut c = oracle_prefix(&idx, "WF-02", |m| !m.calls.is_empty());
    c.messages
        .push(msg("tool", "wrote change_log.md (now 1538 bytes)", vec![]));
    c.tools = without("write_file");
    let t = next(&c);
    assert_eq!(step_of(&t), Some(2), "{}", t.content);
    assert_eq!(
        t.calls[0].name, "run_shell",
        "written through the shell now"
    );
    // that heredoc write done, write_file is offered again: step 3 next, not step 2 again
    c.messages
        .push(msg("assistant", &t.content, t.calls.clone()));
    c.messages.push(msg("tool", "[exit 0]", vec![]));
    c.tools = rich_tools();
    let t = next(&c);
    assert_eq!(step_of(&t), Some(3), "{}", t.content);
    assert_eq!(t.calls[0].name, "write_file");

    // a command run with one shell tool stays done when the shell is offered under another
    // name (judged from the call's own argument names)
    let mut c = oracle_prefix(&idx, "WF-01", |m| {
        m.content.contains("running `python3 build_tables.py`")
    });
    let run = c.messages.last().unwrap().calls[0].clone();
    c.messages
        .push(msg("tool", "[exit 0]\nwrote tables", vec![]));
    c.tools = tools_for(Toolset::ShellOnly)
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    let t = next(&c);
    assert!(
        t.calls
            .iter()
            .all(|x| x.args["command"] != run.args["command"]),
        "ran the finished command again: {t:?}"
    );

    // a wrong-tool call carries only the path: still not done
    let mut c = oracle_prefix(&idx, "WF-02", |m| !m.calls.is_empty());
    let last = c.messages.last_mut().unwrap();
    last.calls = vec![Call {
        name: "read_file".into(),
        args: serde_json::json!({"path": "change_log.md"}),
    }];
    c.messages.push(msg("tool", "file content", vec![]));
    assert_eq!(step_of(&next(&c)), Some(1));
}
