//! Llama 3.1–3.3's `<|python_tag|>`: a JSON call object `{"name", "parameters"}` follows
//! (several separated by `;`), or a pythonic call of a builtin (`brave_search.call(…)`), and
//! `<|eom_id|>`/`<|eot_id|>` may follow as text. The same objects without the tag are read
//! by `generic_json` as weak evidence.

use super::json_calls;
use super::pylit::Py;
use super::scan::{mark, skip_ws, Arg, Args, Found, Scan};

const TAG: &str = "<|python_tag|>";

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::PYTHON_TAG) {
        return;
    }
    let tags = s.occurrences(TAG);
    for (n, &at) in tags.iter().enumerate() {
        let limit = tags.get(n + 1).copied().unwrap_or(s.text.len());
        let i = skip_ws(s.text, at + TAG.len());
        match s.text.as_bytes().get(i) {
            Some(b'{' | b'[') => {
                let vals = s.json_seq(i, limit);
                let end = vals.last().map(|v| v.1).unwrap_or(i);
                for (_, _, v) in &vals {
                    json_calls::push(s, at, end, v, "llama3-json", false);
                }
            }
            Some(_) => {
                let mut p = Py::new(&s.text[..limit], i);
                if let Ok(c) = p.call() {
                    let args = c.args.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
                    s.push(Found::new(
                        at,
                        c.end,
                        &c.name,
                        Args::Pairs(args),
                        "llama3-builtin",
                    ));
                }
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn python_tag() {
        expect(
            "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}; {\"name\": \"list_dir\", \"parameters\": {\"path\": \"b\"}}<|eom_id|>",
            "llama3-json",
            json!([{"name": "read_file", "arguments": {"path": "a"}}, {"name": "list_dir", "arguments": {"path": "b"}}]),
        );
        none("<|python_tag|>wolfram_alpha.call(query=\"2+2\")<|eom_id|>");
    }
}
