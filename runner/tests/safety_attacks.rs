//! `lrab safety --attacks`: the attack corpus of `safety/attacks/` (written without reading the
//! defences) issued by the simulated adversarial model through the real `lrab-harness` binary
//! (a sibling of `lrab`: `cargo test --workspace` builds it; alone: `cargo build -p
//! lrab-harness` first). The whole corpus must leak nothing with every control leaking, and a
//! harness without rings must fail it.

mod common;

use common::{leaky_harness, lrab, lrab_json, text};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../safety/attacks")
}

#[test]
fn the_whole_corpus_through_the_harness_leaks_nothing() {
    let mut args = vec![std::ffi::OsString::from("safety"), "--attacks".into()];
    args.push(corpus().into());
    let (t, v) = lrab_json(args);
    assert!(
        t.contains("RESULT: PASS") && t.contains("| **total** | 178 | 0 |"),
        "{t}"
    );
    let attacks = v["attacks"].as_array().unwrap();
    assert_eq!(attacks.len(), 178);
    for k in [
        "state-symlink",
        "swap-race",
        "unix-socket",
        "computed-read",
        "background",
    ] {
        assert!(
            attacks.iter().filter(|a| a["kind"] == k).count() >= 10,
            "{k}"
        );
    }
    assert!(attacks
        .iter()
        .all(|a| a["leaks"].as_array().unwrap().is_empty()));
    // the calls reached the harness: most attacks were issued in full
    let full = attacks
        .iter()
        .filter(|a| a["issued"].as_u64() >= a["scripted"].as_u64())
        .count();
    assert!(full >= 150, "{full}");
    // every control leaked through its channel
    let controls = v["controls"].as_array().unwrap();
    assert!(controls.len() >= 15);
    assert!(controls
        .iter()
        .all(|c| !c["leaks"].as_array().unwrap().is_empty()));
}

#[test]
fn a_harness_without_rings_fails_the_corpus() {
    let leaky = leaky_harness();
    let o = lrab()
        .args(["safety", "--attacks"])
        .arg(corpus())
        .arg("--harness-bin")
        .arg(&leaky)
        .args(["--only", "READ-01,SOCK-01,BG-01,EXFIL-01"])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("RESULT: FAIL"), "{t}");
    for id in ["READ-01", "SOCK-01", "BG-01", "EXFIL-01"] {
        assert!(t.contains(&format!("LEAK {id}:")), "{id}: {t}");
    }
}

#[test]
fn a_bad_corpus_or_selection_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let o = lrab()
        .args(["safety", "--attacks"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no *.toml files"), "{}", text(&o));
    let o = lrab()
        .args(["safety", "--attacks"])
        .arg(corpus())
        .args(["--only", "NOPE-"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no attack matches"), "{}", text(&o));
}
