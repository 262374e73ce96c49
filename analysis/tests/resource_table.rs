//! The paper's resource table (upstream's `resource_table_2609.md`) from the published per-cell
//! files, row for row, and from a run of ours (what it records; the rest `n/a`).

use lrab_analysis::resource_table::ResourceTable;
use lrab_analysis::{analyze, load, Config};
use std::path::PathBuf;

/// A published data file (carried in `data/mingbird/`, found through the data lookup), or
/// `None` with `skipped: <file>: <why>` when it cannot be had (the suite's one test gate).
fn data(name: &str) -> Option<PathBuf> {
    lrab_data::test_file(&format!("mingbird/{name}"))
}

fn table(files: &[PathBuf]) -> (ResourceTable, String) {
    let ds = load(files).unwrap();
    let cfg = Config {
        resamples: 10,
        ..Config::default()
    };
    let t = analyze(&ds, &cfg).unwrap().resource_table.unwrap();
    let md = t.markdown();
    (t, md)
}

#[test]
fn the_papers_resource_table_from_the_published_files() {
    let names = [
        "lrab_scores.csv",
        "failure_forms_2609.csv",
        "turns_resource.csv",
    ];
    let Some(files) = names.iter().map(|n| data(n)).collect::<Option<Vec<_>>>() else {
        return;
    };
    let (_, md) = table(&files);
    // The paper's rows (its timeout column gives the count; ours also the cells with a mode).
    for want in [
        "| Mingbird | 72 | 585.5 (n=72) | 440.5 | 46.6 (n=72) | 33.5 | 46.2 | 14624 | 0/72 |",
        "| agent-mini | 72 | 233.5 (n=72) | 116.4 | 11.5 (n=72) | 7 | n/a (not recorded) | n/a (not recorded) | 0/72 |",
        "| goose | 72 | 866.4 (n=71) | 692.4 | 28.6 (n=72) | 15 | n/a (not recorded) | n/a (not recorded) | 1/72 |",
        "| opencode | 72 | 633.4 (n=72) | 450.1 | 23.0 (n=72) | 5 | n/a (not recorded) | n/a (not recorded) | 0/72 |",
        "| gemma4_e2b | Mingbird | 18 | 384.1 (n=18) | 135.8 | 32.9 (n=18) | 33 | 36.8 | 8938 | 0/18 |",
        "| gemma4_e2b | all arms | 72 | 140.2 (n=72) | 57.9 | 11.4 (n=72) | 5 | 36.8 | 8938 | 0/72 |",
        "| qwen3.5_4b | goose | 18 | 1037.8 (n=17) | 1121.5 | 58.2 (n=18) | 32 | n/a (not recorded) | n/a (not recorded) | 1/18 |",
        "| qwen3.5_4b | all arms | 72 | 776.2 (n=71) | 629.8 | 56.4 (n=72) | 37 | 74.1 | 19162 | 1/72 |",
        "| gemma4_12b | all arms | 72 | 903.1 (n=72) | 569.3 | 16.6 (n=72) | 11.5 | 31 | 9277 | 0/72 |",
        "| ornith1.5_35b | Mingbird | 18 | 514.8 (n=18) | 437.8 | 50.2 (n=18) | 41 | 42.9 | 20112 | 0/18 |",
        "| ornith1.5_35b | all arms | 72 | 497.9 (n=72) | 409.3 | 25.4 (n=72) | 17.5 | 42.9 | 20112 | 0/72 |",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }
}

#[test]
fn a_run_gives_what_it_records_and_says_what_it_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("cells.csv");
    let head =
        "run_id,arm,model,task,tier,repeat,attempt,score,wall_seconds,failure_mode,tool_calls,turns";
    let rows = [
        "r,harness,m,WF-01,1,0,0,1,100,completed,4,5",
        "r,harness,m,WF-02,1,0,0,0,600,timeout,,",
        "r,harness,m,WF-03,2,0,0,0.5,30,completed,10,12",
    ];
    std::fs::write(&csv, format!("{head}\n{}\n", rows.join("\n"))).unwrap();
    let (t, md) = table(&[csv]);
    let r = &t.by_arm[0];
    assert_eq!((r.arm.as_str(), r.cells), ("harness", 3));
    assert_eq!(r.tool_calls, Some((7.0, 7.0, 2)));
    assert_eq!(r.timeouts, Some((1, 3)));
    assert!(
        md.contains(
            "| harness | 3 | 243.3 (n=3) | 100 | 7.0 (n=2) | 7 | 8.5 | n/a (not recorded) | 1/3 |"
        ),
        "{md}"
    );
}
