//! Fuzz-style tests of the format rescue, seeded so every run is the same:
//! * every prefix of every corpus positive (a reply cut off at the output cap) gives a prefix
//!   of the expected calls — never a different call, never a call with a cut-off value
//!   (except the one unterminated shape, a ReAct plain-text input, whose cut can't be seen);
//! * random text built from markers, brackets, quotes and bytes, and random edits of corpus
//!   replies, never panic, and every call they give names a declared tool with object arguments;
//! * hostile replies — binary garbage, a megabyte on one line, 10,000 arguments, nesting
//!   10,000 deep, 100,000 markers — give no call (or a short problem) and return.

use lrab_harness::mechanisms::format_rescue::{Catalog, MAX_ARGS};
use lrab_harness::table;
use lrab_harness::ToolSpec;
use lrab_util::SplitMix64;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

fn catalog() -> Catalog {
    let specs: Vec<ToolSpec> = table::specs_for(&table::all_but_web());
    Catalog::new(&specs)
}

fn corpus() -> Vec<(String, String, Vec<Value>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tool_calls");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for f in files {
        let doc: toml::Value = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for section in ["positive", "alias", "negative"] {
            for s in doc
                .get(section)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
            {
                let want: Vec<Value> = s
                    .get("expect")
                    .map(|e| serde_json::from_str(e.as_str().unwrap()).unwrap())
                    .unwrap_or_default();
                out.push((
                    s["id"].as_str().unwrap().to_string(),
                    s["text"].as_str().unwrap().to_string(),
                    want,
                ));
            }
        }
    }
    out
}

fn calls(cat: &Catalog, text: &str) -> (Vec<Value>, Vec<&'static str>) {
    let r = cat.rescue(text);
    let c = r
        .calls
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    (c, r.dialects)
}

fn assert_sane(cat: &Catalog, text: &str) {
    let r = cat.rescue(text);
    for c in &r.calls {
        assert!(
            table::all_but_web().contains(&c.name.as_str()),
            "{c:?} from {text:?}"
        );
        assert!(c.arguments.is_object(), "{c:?} from {text:?}");
        assert!(c.arguments.as_object().unwrap().len() <= MAX_ARGS);
    }
    if let Some(p) = &r.problem {
        assert!(p.len() <= 300, "problem too long: {p}");
    }
}

#[test]
fn every_cut_off_reply_gives_a_prefix_of_its_calls() {
    let cat = catalog();
    let mut checked = 0;
    let mut bad = Vec::new();
    for (id, text, want) in corpus() {
        if want.is_empty() {
            continue;
        }
        let ends: Vec<usize> = (0..text.len())
            .filter(|&k| text.is_char_boundary(k))
            .collect();
        for k in ends {
            let (got, dialects) = calls(&cat, &text[..k]);
            checked += 1;
            let n = got.len();
            if n <= want.len() && got[..] == want[..n] {
                continue;
            }
            // a plain-text ReAct input has no terminator: its cut is invisible in the text
            let last_ok =
                n >= 1 && got[..n - 1] == want[..n - 1] && dialects.last() == Some(&"react");
            if !last_ok {
                bad.push(format!("{id} cut at {k}: {}", Value::Array(got)));
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
    assert!(
        bad.is_empty(),
        "{} cut-off replies gave other calls:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

const FRAGMENTS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "<parameter=",
    "</parameter>",
    "</function>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "to=functions.",
    "<|channel|>",
    "<|message|>",
    "<|call|>",
    "<|tool_call>",
    "call:",
    "<tool_call|>",
    "<|\"|>",
    "<think>",
    "</think>",
    "<invoke name=\"",
    "\">",
    "</invoke>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "functools[",
    ">>>",
    "Action: ",
    "\nAction Input: ",
    "```json\n",
    "```tool_code\n",
    "```",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"",
    "'",
    ":",
    ",",
    "=",
    "\\",
    "\n",
    " ",
    "read_file",
    "run_shell",
    "write_file",
    "path",
    "command",
    "\"name\"",
    "\"arguments\"",
    "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
    "True",
    "None",
    "null",
    "123",
    "-4.5",
    "é",
    "👋",
    "\u{0}",
    "\u{7}",
    "\u{fffd}",
    "<",
    ">",
    "|",
];

#[test]
fn random_text_never_panics_and_calls_are_declared() {
    let cat = catalog();
    let mut rng = SplitMix64(0x5eed_0014);
    for _ in 0..4000 {
        let n = 1 + rng.below(40);
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
        }
        assert_sane(&cat, &s);
    }
}

#[test]
fn edited_corpus_replies_never_panic() {
    let cat = catalog();
    let mut rng = SplitMix64(0xed17_0014);
    let samples = corpus();
    for _ in 0..3000 {
        let (_, text, _) = &samples[rng.below(samples.len())];
        let mut b: Vec<u8> = text.as_bytes().to_vec();
        for _ in 0..1 + rng.below(4) {
            if b.is_empty() {
                break;
            }
            let i = rng.below(b.len());
            match rng.below(4) {
                0 => {
                    b.remove(i);
                }
                1 => b.insert(i, FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes()[0]),
                2 => {
                    let j = (i + rng.below(16)).min(b.len());
                    let piece = b[i..j].to_vec();
                    b.splice(i..i, piece);
                }
                _ => b[i] = (rng.next_u64() & 0xff) as u8,
            }
        }
        assert_sane(&cat, &String::from_utf8_lossy(&b));
    }
}

#[test]
fn hostile_replies_are_bounded() {
    let cat = catalog();
    let mut rng = SplitMix64(0xbad_0014);
    let garbage: Vec<u8> = (0..1 << 20)
        .map(|_| (rng.next_u64() & 0xff) as u8)
        .collect();
    let mut many_args = String::from("{\"name\": \"write_file\", \"arguments\": {");
    let mut many_kw = String::from("[write_file(");
    let mut many_xml = String::from("<tool_call>\n<function=write_file>\n");
    for k in 0..10_000 {
        many_args.push_str(&format!("\"a{k}\": {k}, "));
        many_kw.push_str(&format!("a{k}={k}, "));
        many_xml.push_str(&format!("<parameter=a{k}>\n{k}\n</parameter>\n"));
    }
    many_args.push_str("\"path\": \"x\"}}");
    many_kw.push_str("path='x')]");
    many_xml.push_str("</function>\n</tool_call>");
    let deep = |open: &str, close: &str, wrap: (&str, &str)| {
        format!(
            "{}{}1{}{}",
            wrap.0,
            open.repeat(10_000),
            close.repeat(10_000),
            wrap.1
        )
    };
    let cases: Vec<(&str, String)> = vec![
        (
            "binary garbage 1 MiB",
            String::from_utf8_lossy(&garbage).into_owned(),
        ),
        ("one line 1 MB", "x".repeat(1_000_000)),
        ("one line 1 MB of braces", "{".repeat(1_000_000)),
        (
            "one line 1 MB of open strings",
            "{\"a\": \"".repeat(150_000),
        ),
        (
            "1 MB of call markers",
            "<tool_call>{\"name\": \"".repeat(45_000),
        ),
        (
            "100k xml openers",
            "<function=read_file>\n<parameter=path>\n".repeat(2_500),
        ),
        ("100k think tags", "<think>".repeat(100_000)),
        (
            "100k harmony messages",
            "<|channel|>analysis<|message|>".repeat(30_000),
        ),
        (
            "10,000 JSON arguments",
            format!("<tool_call>{many_args}</tool_call>"),
        ),
        ("10,000 bare JSON arguments", many_args.clone()),
        ("10,000 keyword arguments", many_kw),
        ("10,000 XML parameters", many_xml),
        (
            "JSON nested 10,000 deep",
            deep(
                "[",
                "]",
                (
                    "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": ",
                    "}}</tool_call>",
                ),
            ),
        ),
        (
            "bare JSON nested 10,000 deep",
            deep("{\"a\":", "}", ("", "")),
        ),
        (
            "pythonic nested 10,000 deep",
            deep("[", "]", ("[read_file(path=", ")]")),
        ),
        (
            "gemma nested 10,000 deep",
            deep(
                "[",
                "]",
                ("<|tool_call>call:read_file{path:", "}<tool_call|>"),
            ),
        ),
        ("over the size limit", "a".repeat(3 << 20)),
    ];
    for (what, text) in cases {
        let t0 = Instant::now();
        let r = cat.rescue(&text);
        eprintln!(
            "{what}: {} bytes, {:?}, {} calls, problem: {:?}",
            text.len(),
            t0.elapsed(),
            r.calls.len(),
            r.problem
        );
        assert!(r.calls.is_empty(), "{what} gave {:?}", r.calls);
        if let Some(p) = &r.problem {
            assert!(p.len() <= 300);
        }
    }
}
