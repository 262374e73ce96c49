//! DeepSeek's tool-call tokens (fullwidth bars `｜`, word separator `▁`). V3 and R1 (and the R1
//! distills, Cogito): `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`, a newline, a ```` ```json ````
//! fence holding the arguments, `<｜tool▁call▁end｜>`, all inside `<｜tool▁calls▁begin｜>` …
//! `<｜tool▁calls▁end｜>`. V3.1 dropped the type word and the fence:
//! `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}`. Step-3 spells the tokens with `_`. The ASCII
//! bar spelling some servers produce is accepted too. V3.2/V4's DSML markup is read by `invoke`.

use super::scan::{find_in, is_name, mark, skip_ws, Args, Found, Scan};

const BEGINS: [&str; 3] = [
    "<｜tool▁call▁begin｜>",
    "<|tool▁call▁begin|>",
    "<｜tool_call_begin｜>",
];
const SEPS: [&str; 3] = ["<｜tool▁sep｜>", "<|tool▁sep|>", "<｜tool_sep｜>"];
const ENDS: [&str; 3] = [
    "<｜tool▁call▁end｜>",
    "<|tool▁call▁end|>",
    "<｜tool_call_end｜>",
];

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::DEEPSEEK) {
        return;
    }
    for v in 0..BEGINS.len() {
        let begins = s.occurrences(BEGINS[v]);
        for (n, &at) in begins.iter().enumerate() {
            let limit = begins.get(n + 1).copied().unwrap_or(s.text.len());
            call(s, at, at + BEGINS[v].len(), limit, SEPS[v], ENDS[v]);
        }
    }
}

fn call(s: &mut Scan, at: usize, i: usize, limit: usize, sep: &str, end_tok: &str) {
    let t = s.text;
    let Some(sp) = find_in(t, i, limit, sep) else {
        return;
    };
    let left = t[i..sp].trim();
    let after = sp + sep.len();
    let (name, j) = if left == "function" || left.is_empty() {
        // V3/R1: the name runs to the end of the line
        let line_end = find_in(t, after, limit, "\n").unwrap_or(limit);
        let name = t[after..line_end].trim().trim_end_matches("```json").trim();
        if t[after..line_end].trim_start().starts_with('<') {
            return; // an XML invoke body (Step-3), read by `invoke`
        }
        (name, line_end)
    } else {
        (left, after)
    };
    if !is_name(name) {
        return;
    }
    let mut j = skip_ws(t, j);
    if t[j..].starts_with("```") {
        j = find_in(t, j, limit, "\n").map(|k| k + 1).unwrap_or(limit);
        j = skip_ws(t, j);
    }
    if t.as_bytes().get(j) != Some(&b'{') {
        return;
    }
    match s.json_at(j, limit) {
        Some((end, Ok(v))) => {
            let close = find_in(t, end, limit, end_tok)
                .map(|k| k + end_tok.len())
                .unwrap_or(end);
            s.push(Found::new(at, close, name, Args::Json(v), "deepseek"));
        }
        Some((_, Err(e))) => s.problem(format!("the {name} arguments are not JSON ({e})")),
        None => s.cut_off(format!("the {name} call was cut off")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn r1_and_v31() {
        expect(
            "Let me see.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>list_dir\n```json\n{\"path\": \"lib\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "deepseek",
            json!([{"name": "list_dir", "arguments": {"path": "lib"}}]),
        );
        expect(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>run_shell<｜tool▁sep｜>{\"command\":\"go build\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\":\"go.sum\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "deepseek",
            json!([{"name": "run_shell", "arguments": {"command": "go build"}}, {"name": "read_file", "arguments": {"path": "go.sum"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\":\"a");
        none("The result was <｜tool▁output▁begin｜>{\"ok\": true}<｜tool▁output▁end｜>.");
    }
}
