//! Reference solutions are functions of their inputs.
//!
//! The generated tasks (LH-01..03) take every truth their checks use from the generator, so a
//! variant on any seed must check clean: `lrab generate` writes variants and `lrab tasks check`
//! scores them with the real scorer (reference 1.0, untouched and partial at the documented
//! scores). WF-09's reference measures timings, yet its workdir must be the same bytes on every
//! run.

mod common;

use common::{lrab, text};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Seeds besides each task's default that every generated task must also pass on.
const OTHER_SEEDS: [u64; 2] = [17, 2026];

fn builtin_pack() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/lrab")
}

/// Generates `task` on its default seed and on [`OTHER_SEEDS`] into a fresh pack, then checks
/// that pack: every variant must pass, and different seeds must give different data.
fn variants_check_clean(task: &str, default_seed: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("heldout");
    let mut manifests: BTreeMap<String, String> = BTreeMap::new();
    for seed in std::iter::once(default_seed).chain(OTHER_SEEDS) {
        let id = format!("{task}-s{seed}");
        let out = pack.join(&id);
        let o = lrab()
            .args(["generate", "--task", task, "--seed", &seed.to_string()])
            .arg("--pack")
            .arg(builtin_pack())
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "generate {id}: {}", text(&o));
        let m = std::fs::read_to_string(out.join("generated.sha256")).unwrap();
        assert!(
            !manifests.values().any(|other| *other == m),
            "{id}: same generated data as another seed"
        );
        manifests.insert(id, m);
    }
    let o = lrab()
        .args(["tasks", "check", "--pack"])
        .arg(&pack)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for id in manifests.keys() {
        let row = t
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row for {id}: {t}"));
        assert!(row.trim_end().ends_with("PASS"), "{row}\n{t}");
    }
    let summary = format!("{} passed, 0 failed, 0 invalid", manifests.len());
    assert!(t.contains(&summary), "{t}");
}

#[test]
fn lh01_variants_check_clean_on_every_seed() {
    variants_check_clean("LH-01", 4101);
}

#[test]
fn lh02_variants_check_clean_on_every_seed() {
    variants_check_clean("LH-02", 4202);
}

#[test]
fn lh03_variants_check_clean_on_every_seed() {
    variants_check_clean("LH-03", 4303);
}

/// Every file below `dir`, by relative path.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    lrab_tasks::walk_files(dir)
        .unwrap()
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

#[test]
fn wf09_reference_writes_the_same_bytes_on_every_run() {
    use lrab_tasks::{apply_solution, materialize, Pack, SolutionKind};
    let pack = Pack::load(builtin_pack()).unwrap();
    let task = pack.get("WF-09").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let runs: Vec<BTreeMap<String, Vec<u8>>> = ["a", "b"]
        .iter()
        .map(|name| {
            let wd = tmp.path().join(name);
            materialize(&pack, task, &wd, None).unwrap();
            let reference = task.solution(SolutionKind::Reference).unwrap();
            apply_solution(&wd, &reference).unwrap();
            snapshot(&wd)
        })
        .collect();
    for measured in ["profile_baseline.txt", "speedup_report.md"] {
        assert!(runs[0].contains_key(measured), "{measured} not written");
    }
    assert_eq!(
        runs[0].keys().collect::<Vec<_>>(),
        runs[1].keys().collect::<Vec<_>>()
    );
    let differ: Vec<&String> = runs[0]
        .iter()
        .filter(|(rel, bytes)| runs[1][*rel] != **bytes)
        .map(|(rel, _)| rel)
        .collect();
    assert!(differ.is_empty(), "differ between two runs: {differ:?}");
}
