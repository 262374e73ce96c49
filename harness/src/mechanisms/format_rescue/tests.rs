//! Pipeline tests with the harness's own tools (per-dialect behaviour is pinned by the
//! dialect tests in `harness/tests/dialect_*.rs` and the corpus).

use super::*;
use serde_json::json;

fn tools() -> Vec<ToolSpec> {
    crate::table::specs_for(&crate::table::all_but_web())
}

fn one(text: &str) -> (String, Value) {
    let c = rescue(text, &tools()).unwrap_or_else(|| panic!("no call in {text:?}"));
    assert_eq!(c.len(), 1, "{c:?}");
    (c[0].name.clone(), c[0].arguments.clone())
}

#[test]
fn the_three_old_shapes_still_work() {
    let (n, a) = one(r#"{"name": "write_file", "arguments": {"path": "a.md", "content": "x"}}"#);
    assert_eq!(
        (n.as_str(), a),
        ("write_file", json!({"path": "a.md", "content": "x"}))
    );
    let (n, a) = one("```json\n{\"run_shell\": {\"cmd\": \"ls\"}}\n```");
    assert_eq!((n.as_str(), a), ("run_shell", json!({"command": "ls"})));
    let (n, a) = one(
        r#"<tool_call>{"name": "create_file", "arguments": "{\"file_path\": \"b.py\", \"text\": \"print(1)\"}"}</tool_call>"#,
    );
    assert_eq!(
        (n.as_str(), a),
        ("write_file", json!({"path": "b.py", "content": "print(1)"}))
    );
    let (n, a) = one("read_file(path:<|\"|>data.csv<|\"|>)");
    assert_eq!((n.as_str(), a), ("read_file", json!({"path": "data.csv"})));
    let (n, a) = one("call:write_file{path:<|\"|>n.md<|\"|>,content:<|\"|>a, b: \"c\"<|\"|>}");
    assert_eq!(
        (n.as_str(), a),
        (
            "write_file",
            json!({"path": "n.md", "content": "a, b: \"c\""})
        )
    );
    let (_, a) = one("run_shell(command=\"python3 a.py\", timeout=30)");
    assert_eq!(a, json!({"command": "python3 a.py", "timeout": 30}));
    let (_, a) = one("todo(action=\"create\", items=\"[\\\"a\\\", \\\"b\\\"]\")");
    assert_eq!(a, json!({"action": "create", "items": ["a", "b"]}));
}

#[test]
fn mentions_are_not_calls() {
    let t = tools();
    for text in [
        "I will now call read_file(path=\"a\") to look.",
        "read_file(path=\"a\") and then more",
        "open_door(key=\"x\")",
        r#"{"name": "launch_rocket", "arguments": {}}"#,
        r#"{"result": 42}"#,
        "<think>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</think>Nothing to do.",
        "",
    ] {
        assert!(rescue(text, &t).is_none(), "{text}");
    }
}

#[test]
fn several_calls_in_order_across_prose() {
    let c = rescue(
        "First this.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\nthen\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {}}\n</tool_call>",
        &tools(),
    )
    .unwrap();
    let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["read_file", "list_dir"]);
}

#[test]
fn limits_give_a_problem_not_a_call() {
    let t = tools();
    let mut args = String::new();
    for k in 0..10_000 {
        args.push_str(&format!("\"a{k}\": {k},"));
    }
    let text = format!("<tool_call>{{\"name\": \"write_file\", \"arguments\": {{{args} \"path\": \"x\"}}}}</tool_call>");
    let r = rescue_detailed(&text, &t);
    assert!(r.calls.is_empty());
    assert!(r.problem.unwrap().contains("10001 arguments"));
    let big = "x".repeat(MAX_REPLY_BYTES + 1);
    let r = rescue_detailed(&big, &t);
    assert!(r.calls.is_empty() && r.problem.unwrap().contains("bytes"));
    let r = rescue_detailed(
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>",
        &t,
    );
    assert!(r.problem.unwrap().contains("get_weather"));
}

#[test]
fn canonical_name_and_args_use_the_declared_tools() {
    let t = tools();
    assert_eq!(canonical_name("functions.bash", &t), "run_shell");
    assert_eq!(canonical_name("create_file", &t), "write_file");
    assert_eq!(canonical_name("launch_rocket", &t), "launch_rocket");
    assert_eq!(
        canonical_args(
            "edit_file",
            json!({"file_path": "a", "old_string": "x", "new_string": "y"}),
            &t
        ),
        json!({"path": "a", "old": "x", "new": "y"})
    );
    assert_eq!(
        canonical_args("run_shell", json!({"command": "ls", "timeout": "30"}), &t),
        json!({"command": "ls", "timeout": 30})
    );
}

/// Found by the second independent corpus round (`testdata/tool_calls/r2_*.toml`); the samples
/// here are our own.
#[test]
fn round_two_findings() {
    // a byte window ending inside a multi-byte character (DeepSeek's `｜`) lost the call
    let dsml = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"write_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">m.py</｜DSML｜parameter>\n<｜DSML｜parameter name=\"content\" string=\"true\">S = \"</b>\"\nT = '{x}'</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
    let (n, a) = one(dsml);
    assert_eq!(
        (n.as_str(), a),
        (
            "write_file",
            json!({"path": "m.py", "content": "S = \"</b>\"\nT = '{x}'"})
        )
    );
    // a marked list cut off by the output cap: its complete first object is not a call
    for cut in [
        "[TOOL_CALLS][{\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}, {\"name\": \"read_fi",
        "<|tool_call|>[{\"name\": \"list_dir\", \"arguments\": {}}, {\"name\": \"run_shell\", \"arguments\": {\"comm",
    ] {
        assert_eq!(rescue(cut, &tools()), None, "{cut}");
    }
    // the same list closed is two calls
    let whole = "[TOOL_CALLS][{\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"src/a.rs\"}}]";
    assert_eq!(rescue(whole, &tools()).map(|c| c.len()), Some(2));
    // syntax shown as an example is not a call; the same block introduced as an action is
    let shown = "The reply format looks like this, for example:\n\n```json\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \"docs\"}}\n```\n";
    assert_eq!(rescue(shown, &tools()), None);
    let acted = "Listing the docs folder first:\n\n```json\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \"docs\"}}\n```\n";
    assert_eq!(one(acted).0, "list_dir");
    let py_shown = "An example call:\n[list_dir(path=\"docs\")]";
    assert_eq!(rescue(py_shown, &tools()), None);
    // a marker is a call wherever it stands, even after such a line
    let marked = "For example:\n<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"path\": \"docs\"}}</tool_call>";
    assert_eq!(one(marked).0, "list_dir");
    // a raw line break inside a one-line Python string, as models write file contents
    let (n, a) = one(
        "<|tool_call_start|>[append_file(path=\"log.txt\", content=\"one\ntwo\")]<|tool_call_end|>",
    );
    assert_eq!(
        (n.as_str(), a),
        (
            "append_file",
            json!({"path": "log.txt", "content": "one\ntwo"})
        )
    );
    assert_eq!(
        rescue(
            "<|tool_call_start|>[append_file(path=\"log.txt\", content=\"one\ntwo",
            &tools()
        ),
        None
    );
    // SmolLM3's python tools: `<code>call</code>` on its own line; inside a sentence a mention
    let (n, a) = one("Let me look.\n<code>list_dir(path=\"tests\")</code>\n");
    assert_eq!((n.as_str(), a), ("list_dir", json!({"path": "tests"})));
    assert_eq!(
        rescue(
            "Use <code>list_dir(path=\"tests\")</code> to see them.",
            &tools()
        ),
        None
    );
    assert_eq!(rescue("<code>print(sum([1, 2]))</code>", &tools()), None);
}

/// Found by the third independent corpus round (`testdata/tool_calls/r3_*.toml`, leak shapes
/// from bug reports and hard negatives); the samples here are our own.
#[test]
fn round_three_findings() {
    // call syntax inside a fence of another language is source or quoted output
    for quoted in [
        "Add this fixture:\n```go\nconst sample = `<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"path\": \"a\"}}</tool_call>`\n```\n",
        "It failed before:\n```text\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.md\"}}\n</tool_call>\n```\n",
        "```diff\n+ // {\"name\": \"delete_file\", \"arguments\": {\"path\": \"c\"}}\n```",
    ] {
        assert_eq!(rescue(quoted, &tools()), None, "{quoted}");
    }
    // the same call in a json fence is one
    let acted =
        "Now:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.md\"}}\n```\n";
    assert_eq!(one(acted).0, "read_file");
    // a marked call in a fence shown as what a call looks like
    let shown = "A Hermes call looks like this:\n```\n<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}</tool_call>\n```\n";
    assert_eq!(rescue(shown, &tools()), None);
    // log records that carry a name and arguments beside their own fields are data
    let log = "{\"at\": \"10:00\", \"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}, \"exit\": 0}";
    assert_eq!(rescue(log, &tools()), None);
    // … but a family marker makes the same object a call
    let marked = format!("<tool_call>{log}</tool_call>");
    assert_eq!(one(&marked).0, "run_shell");
    // Gemma 4's Python keyword fallback inside its call token
    let (n, a) = one("<|tool_call>call:read_file(path=\"a/b.txt\", start_line=3)");
    assert_eq!(
        (n.as_str(), a),
        ("read_file", json!({"path": "a/b.txt", "start_line": 3}))
    );
    // Kimi-K2-Thinking's section inside a think block that it closed afterwards
    let kimi = "<think>Checking first. <|tool_calls_section_begin|><|tool_call_begin|>functions.list_dir:0<|tool_call_argument_begin|>{\"path\": \"lib\"}<|tool_call_end|><|tool_calls_section_end|></think>";
    let (n, a) = one(kimi);
    assert_eq!((n.as_str(), a), ("list_dir", json!({"path": "lib"})));
    // other families' syntax in a closed think block stays reasoning
    assert_eq!(
        rescue(
            "<think><tool_call>{\"name\": \"list_dir\", \"arguments\": {}}</tool_call></think>Done.",
            &tools()
        ),
        None
    );
}
