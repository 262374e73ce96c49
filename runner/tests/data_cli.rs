//! `lrab data` and the commands that read published data, in a place without it: `LRAB_DATA` and
//! the cache pointed at empty folders (exactly a clone with no `../shared` beside it). Each says
//! which file is missing and how to get it; the carried figures are still found.

mod common;

use std::path::Path;
use std::process::Output;

fn lrab_without_data(dir: &Path, args: &[&str]) -> Output {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    common::lrab()
        .args(args)
        .env("LRAB_DATA", dir.join("data"))
        .env("LRAB_DATA_CACHE", dir.join("cache"))
        .env_remove("TAU2_DATA_DIR")
        .env_remove("LRAB_MINGBIRD_DATA")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn status_names_every_file_and_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let o = lrab_without_data(tmp.path(), &["data", "status"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let carried = lrab_data::carried_dir().join("mingbird/lrab_scores.csv");
    assert!(
        t.contains(&format!(
            "ok       mingbird/lrab_scores.csv  {}",
            carried.display()
        )),
        "{t}"
    );
    assert!(
        t.contains("missing  tau2/domains/airline/tasks.json  (lrab data fetch)"),
        "{t}"
    );
    assert!(
        t.contains("missing  mingbird/prompts_control.json  (lrab data fetch)"),
        "{t}"
    );
    assert!(
        t.contains(&format!(
            "looked in: LRAB_DATA={}",
            tmp.path().join("data").display()
        )),
        "{t}"
    );
}

#[test]
fn commands_without_their_data_say_which_file_and_how_to_get_it() {
    let tmp = tempfile::tempdir().unwrap();
    let o = lrab_without_data(tmp.path(), &["tau2", "replay-gold", "--domain", "mock"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("no tau2 data: tau2/") && t.contains("`lrab data fetch`"),
        "{t}"
    );
    let o = lrab_without_data(
        tmp.path(),
        &[
            "safety",
            "--executor",
            "direct",
            "--prompts",
            "--only",
            "OWN-R4-01",
        ],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("--prompts: mingbird/prompts_") && t.contains("`lrab data fetch`"),
        "{t}"
    );
    let o = lrab_without_data(tmp.path(), &["data", "fetch", "--only", "nothing/"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--only nothing/: no data file matches"),
        "{}",
        text(&o)
    );
}
