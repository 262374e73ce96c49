//! Runs compared with different thinking settings (`--think`, cells.csv `think` column; files
//! without the column ran with thinking off) get a caveat naming each setting and its files;
//! runs of one setting get none.

use lrab_analysis::{run, AnalyzeArgs};
use std::path::{Path, PathBuf};

/// A cells.csv of two arms × three tasks; `think` adds the column with that value.
fn cells(dir: &Path, name: &str, think: Option<&str>) -> PathBuf {
    let mut header = lrab_records::HEADER_V1.join(",");
    if think.is_some() {
        header.push_str(",turns,cached_prompt_tokens,uncached_prompt_tokens,backend_kind,think");
    }
    let mut s = format!("{header}\n");
    for (k, arm) in ["harness", "opencode"].iter().enumerate() {
        for t in 1..=3 {
            let score = 0.2 * t as f64 + 0.1 * k as f64;
            s.push_str(&format!(
                "{name},{arm},m,WF-0{t},1,0,0,{score:.3},,,10.0,0,completed,ollama,false,,,,,cells/x,{}",
                if think.is_some() { 3 } else { 1 }
            ));
            if let Some(th) = think {
                s.push_str(&format!(",,,,ollama,{th}"));
            }
            s.push('\n');
        }
    }
    let p = dir.join(format!("{name}.csv"));
    std::fs::write(&p, s).unwrap();
    p
}

fn report(inputs: Vec<PathBuf>, out: PathBuf) -> String {
    run(&AnalyzeArgs {
        resamples: 200,
        quiet: true,
        ..AnalyzeArgs::new(inputs, out.clone())
    })
    .unwrap();
    std::fs::read_to_string(out.join("report.md")).unwrap()
}

#[test]
fn runs_of_different_thinking_settings_are_flagged() {
    let d = tempfile::tempdir().unwrap();
    let old = cells(d.path(), "old", None);
    let on = cells(d.path(), "on", Some("on"));
    let off = cells(d.path(), "off", Some("off"));
    let md = report(vec![old.clone(), on], d.path().join("a"));
    assert!(md.contains("differ in thinking"), "{md}");
    assert!(
        md.contains("off in ") && md.contains("old.csv") && md.contains("on in "),
        "{md}"
    );
    let md = report(vec![old, off], d.path().join("b"));
    assert!(!md.contains("differ in thinking"), "{md}");
}
