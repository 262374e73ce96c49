//! Pipeline tests with the harness's own tools (per-dialect behaviour is pinned by the
//! dialect tests in `harness/tests/dialect_*.rs` and the corpus).

use super::*;
use serde_json::json;

fn tools() -> Vec<ToolSpec> {
    crate::tools::table::specs_for(&crate::tools::table::all_but_web())
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
