//! The format rescue measured on the independent text tool-call corpus (`testdata/tool_calls/`,
//! written without reading our parser): every positive and alias must come out exactly — all
//! its calls, in order, names as declared, arguments after schema coercion — and no negative
//! may yield a call. Fails below 95 % of calls recovered or on any negative turned into a call.
//!
//! The per-family table in docs/harness.md is this test's output; regenerate it with
//! `LRAB_BLESS=1 cargo test -p lrab-harness --test dialect_corpus`.

use lrab_harness::mechanisms::format_rescue::Catalog;
use lrab_harness::ToolSpec;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tools the corpus declares (its README table), as JSON schemas.
fn declared() -> Vec<ToolSpec> {
    let obj = |props: &[(&str, Value)], req: &[&str]| {
        let p: serde_json::Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        json!({"type": "object", "properties": p, "required": req})
    };
    let s = || json!({"type": "string"});
    let i = || json!({"type": "integer"});
    let t = [
        (
            "read_file",
            obj(
                &[("path", s()), ("start_line", i()), ("end_line", i())],
                &["path"],
            ),
        ),
        (
            "write_file",
            obj(
                &[
                    ("path", s()),
                    ("content", s()),
                    ("replace", json!({"type": "boolean"})),
                ],
                &["path", "content"],
            ),
        ),
        (
            "edit_file",
            obj(
                &[("path", s()), ("old", s()), ("new", s())],
                &["path", "old", "new"],
            ),
        ),
        (
            "append_file",
            obj(&[("path", s()), ("content", s())], &["path", "content"]),
        ),
        ("list_dir", obj(&[("path", s())], &[])),
        (
            "run_shell",
            obj(&[("command", s()), ("timeout", i())], &["command"]),
        ),
        (
            "todo",
            obj(
                &[
                    (
                        "action",
                        json!({"type": "string", "enum": ["create", "done", "done_all", "list"]}),
                    ),
                    (
                        "items",
                        json!({"type": "array", "items": {"type": "string"}}),
                    ),
                    ("index", i()),
                ],
                &["action"],
            ),
        ),
        ("finish", obj(&[("summary", s())], &["summary"])),
        (
            "search_files",
            obj(&[("pattern", s()), ("path", s())], &["pattern"]),
        ),
        ("rollback", obj(&[("path", s())], &["path"])),
        ("delete_file", obj(&[("path", s())], &["path"])),
    ];
    t.into_iter()
        .map(|(n, p)| ToolSpec {
            name: n.into(),
            description: String::new(),
            parameters: p,
        })
        .collect()
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tool_calls")
}

#[derive(Default)]
struct Family {
    file: String,
    samples: usize,
    samples_ok: usize,
    calls: usize,
    calls_ok: usize,
    alias_samples: usize,
    alias_ok: usize,
    negatives: usize,
    negatives_called: usize,
    failing: Vec<String>,
}

fn calls_of(cat: &Catalog, text: &str) -> Vec<Value> {
    cat.rescue(text)
        .calls
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect()
}

#[test]
fn corpus_recall_and_negatives() {
    let cat = Catalog::new(&declared());
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("testdata/tool_calls")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 28, "corpus files missing: {}", files.len());
    let mut fams: BTreeMap<String, Family> = BTreeMap::new();
    let mut report = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let doc: toml::Value =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let family = doc["family"].as_str().unwrap().to_string();
        let fam = fams.entry(family.clone()).or_default();
        fam.file = path.file_name().unwrap().to_string_lossy().into_owned();
        for section in ["positive", "alias"] {
            for s in doc
                .get(section)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
            {
                let id = s["id"].as_str().unwrap();
                let want: Vec<Value> = serde_json::from_str(s["expect"].as_str().unwrap()).unwrap();
                let got = calls_of(&cat, s["text"].as_str().unwrap());
                let ok = got == want;
                if section == "alias" {
                    fam.alias_samples += 1;
                    fam.alias_ok += usize::from(ok);
                }
                fam.samples += 1;
                fam.calls += want.len();
                if ok {
                    fam.samples_ok += 1;
                    fam.calls_ok += want.len();
                } else {
                    fam.failing.push(id.to_string());
                    report.push(format!(
                        "MISS {id}\n  want {}\n  got  {}",
                        Value::Array(want),
                        Value::Array(got)
                    ));
                }
            }
        }
        for s in doc
            .get("negative")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
        {
            let id = s["id"].as_str().unwrap();
            let got = calls_of(&cat, s["text"].as_str().unwrap());
            fam.negatives += 1;
            if !got.is_empty() {
                fam.negatives_called += 1;
                fam.failing.push(id.to_string());
                report.push(format!("NEGATIVE {id} became {}", Value::Array(got)));
            }
        }
    }
    for r in &report {
        eprintln!("{r}");
    }
    let table = render(&fams);
    eprintln!("{table}");
    check_docs(&table);

    let calls: usize = fams.values().map(|f| f.calls).sum();
    let ok: usize = fams.values().map(|f| f.calls_ok).sum();
    let neg: usize = fams.values().map(|f| f.negatives_called).sum();
    let families = fams.values().filter(|f| f.samples > 0).count();
    assert!(families >= 27, "families with positives: {families}");
    assert!(
        ok as f64 >= 0.95 * calls as f64,
        "recovered {ok} of {calls} calls ({:.1} %), below 95 %",
        100.0 * ok as f64 / calls as f64
    );
    assert_eq!(neg, 0, "negatives turned into calls");
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "—".into()
    } else {
        format!("{:.1} %", 100.0 * a as f64 / b as f64)
    }
}

fn render(fams: &BTreeMap<String, Family>) -> String {
    let mut out = String::from(
        "| family | file | samples exact | calls recovered | recall | aliases exact | negatives → call | not recovered |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut tot = Family::default();
    for (name, f) in fams {
        out.push_str(&format!(
            "| {name} | `{}` | {}/{} | {}/{} | {} | {}/{} | {}/{} | {} |\n",
            f.file,
            f.samples_ok,
            f.samples,
            f.calls_ok,
            f.calls,
            pct(f.calls_ok, f.calls),
            f.alias_ok,
            f.alias_samples,
            f.negatives_called,
            f.negatives,
            if f.failing.is_empty() {
                String::new()
            } else {
                f.failing
                    .iter()
                    .map(|i| format!("`{i}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
        tot.samples += f.samples;
        tot.samples_ok += f.samples_ok;
        tot.calls += f.calls;
        tot.calls_ok += f.calls_ok;
        tot.alias_samples += f.alias_samples;
        tot.alias_ok += f.alias_ok;
        tot.negatives += f.negatives;
        tot.negatives_called += f.negatives_called;
    }
    out.push_str(&format!(
        "| **all** | | {}/{} | {}/{} | **{}** | {}/{} | **{}/{}** | |\n",
        tot.samples_ok,
        tot.samples,
        tot.calls_ok,
        tot.calls,
        pct(tot.calls_ok, tot.calls),
        tot.alias_ok,
        tot.alias_samples,
        tot.negatives_called,
        tot.negatives
    ));
    out
}

const BEGIN: &str =
    "<!-- dialect-corpus-table:begin (generated by harness/tests/dialect_corpus.rs) -->";
const END: &str = "<!-- dialect-corpus-table:end -->";

/// docs/harness.md must carry this run's table; `LRAB_BLESS=1` writes it.
fn check_docs(table: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/harness.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/harness.md lacks the {BEGIN} … {END} markers");
    };
    let current = &doc[b + BEGIN.len()..e];
    let want = format!("\n{table}");
    if current == want {
        return;
    }
    if std::env::var("LRAB_BLESS").is_ok_and(|v| v == "1") {
        let new = format!("{}{BEGIN}{want}{}", &doc[..b], &doc[e..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    panic!("the corpus table in docs/harness.md is stale; regenerate it with LRAB_BLESS=1 cargo test -p lrab-harness --test dialect_corpus");
}
