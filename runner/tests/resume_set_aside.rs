//! A runner stopped in the middle of a cell (SIGKILL: a crash or the OOM killer; SIGTERM: a
//! Slurm requeue or scancel) leaves an attempt folder without a `cells.csv` row. The resume must
//! set that folder aside where it can be seen (`interrupted/`, named on stderr and in
//! `interrupted.jsonl`), run the attempt again in a fresh folder, and leave `cells/` holding
//! recorded attempts only; `lrab merge` carries the set-aside folders along and refuses an input
//! with a real orphan (a folder under `cells/` without a row that no resume set aside).

mod common;

use common::{col, csv_lines, lrab, quick, running_below_after, sh_arm, text};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Writes its pid and a partial answer, then holds while the file `hold` beside the arm file
/// exists (so the test can stop the runner in the middle of the cell), then exits.
const HOLDER: &str = "echo $$ > arm.pid; printf 'S001 Ti aging\\n' > shortlist.md; \
while [ -e \"${0%/*}/hold\" ]; do sleep 0.05; done; exit 0\n";

const IN_FLIGHT: &str = "cells/holder/sim-2b/WF-01/r0/a0";
const ASIDE: &str = "interrupted/holder/sim-2b/WF-01/r0/a0-1";

struct World {
    dir: tempfile::TempDir,
    arms: PathBuf,
    out: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let arms = dir.path().join("arms");
        std::fs::create_dir(&arms).unwrap();
        sh_arm(&arms, "holder", HOLDER);
        World {
            out: dir.path().join("results"),
            arms,
            dir,
        }
    }

    fn run_dir(&self) -> PathBuf {
        self.out.join("r")
    }

    /// Starts the two-cell run with the arm holding, waits until the first cell's arm is
    /// running, marks its folder and stops the runner with `sig`.
    fn stop_mid_cell(&self, sig: i32) {
        std::fs::write(self.arms.join("hold"), "").unwrap();
        let mut child = quick("run", &self.arms, &self.out, (200, 2000, 200))
            .args([
                "--arms",
                "holder",
                "--models",
                "sim-2b",
                "--tasks",
                "WF-01,WF-02",
            ])
            .args(["--run-id", "r"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let a = self.run_dir().join(IN_FLIGHT);
        let t0 = Instant::now();
        while !a.join("workdir/arm.pid").exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "the arm never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::write(a.join("STOPPED-MID-CELL"), "").unwrap();
        // SAFETY: a signal to the runner this test spawned.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        child.wait().unwrap();
        assert!(!self.run_dir().join("cells.csv").exists(), "no row yet");
        std::fs::remove_file(self.arms.join("hold")).unwrap();
    }

    fn resume(&self) -> String {
        let o = lrab()
            .args(["run", "--no-progress", "--resume"])
            .arg(self.run_dir())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    }

    fn merge(&self, out: &str) -> (Option<i32>, String, PathBuf) {
        let to = self.dir.path().join(out);
        let o = lrab()
            .arg("merge")
            .arg("--out")
            .arg(&to)
            .arg(self.run_dir())
            .output()
            .unwrap();
        (o.status.code(), text(&o), to)
    }
}

/// The `attempt_dir` of every row of a run's `cells.csv`.
fn recorded(run: &Path) -> Vec<String> {
    let t = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let mut rows = csv_lines(&t);
    rows.remove(0);
    rows.iter().map(|r| r[col("attempt_dir")].clone()).collect()
}

/// Every attempt folder under `cells/` (depth 5), relative to the run folder, sorted.
fn folders(run: &Path) -> Vec<String> {
    let mut level = vec![PathBuf::from("cells")];
    for _ in 0..5 {
        level = level
            .iter()
            .flat_map(|rel| {
                std::fs::read_dir(run.join(rel))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| rel.join(e.file_name()))
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    let mut v: Vec<String> = level.iter().map(|p| p.display().to_string()).collect();
    v.sort();
    v
}

fn journal(run: &Path) -> Vec<lrab_records::InterruptedRecord> {
    lrab_records::read_jsonl_lenient(&run.join("interrupted.jsonl"))
        .map(|(v, _)| v)
        .unwrap_or_default()
}

fn stopped_mid_cell_is_set_aside_rerun_and_merged(sig: i32) {
    let w = World::new();
    w.stop_mid_cell(sig);
    let run = w.run_dir();
    let said = w.resume();
    assert!(
        said.contains(&format!(
            "resume: set aside {IN_FLIGHT} -> {ASIDE}: no cells.csv row"
        )),
        "the resume names the folder it set aside and why:\n{said}"
    );
    // the interrupted attempt, as it was, is under interrupted/ and in the journal
    assert!(run.join(ASIDE).join("STOPPED-MID-CELL").is_file());
    let j = journal(&run);
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(
        (j[0].from.as_str(), j[0].attempt_dir.as_str()),
        (IN_FLIGHT, ASIDE)
    );
    assert_eq!(
        (j[0].cell, j[0].attempt, j[0].scored),
        (Some(0), Some(0), false)
    );
    // it ran again in a fresh folder: every folder under cells/ has exactly one row
    let mut rec = recorded(&run);
    rec.sort();
    assert_eq!(rec.len(), 2, "{rec:?}");
    assert_eq!(folders(&run), rec, "cells/ holds recorded attempts only");
    assert!(!run.join(IN_FLIGHT).join("STOPPED-MID-CELL").exists());
    assert!(run.join(IN_FLIGHT).join("score.json").is_file());
    let left = running_below_after(w.dir.path(), Duration::from_secs(5));
    assert!(left.is_empty(), "processes left behind: {left:?}");
    // merge accepts the set-aside folder and carries it along
    let (code, said, merged) = w.merge("merged");
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("0 missing"), "{said}");
    assert!(merged.join(ASIDE).join("STOPPED-MID-CELL").is_file());
    assert_eq!(journal(&merged).len(), 1);
    assert_eq!(folders(&merged).len(), 2);
    // a real orphan (under cells/, no row, never set aside) is refused, naming it and the fix
    let orphan = "cells/holder/sim-2b/WF-02/r0/a7";
    std::fs::create_dir_all(run.join(orphan)).unwrap();
    let (code, said, refused) = w.merge("refused");
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains(orphan) && said.contains("lrab run --resume"),
        "{said}"
    );
    assert!(!refused.exists(), "nothing written");
    // … and the resume sets it aside too (it is no attempt of the plan that is still to run)
    let said = w.resume();
    let line = (said.lines())
        .find(|l| l.starts_with(&format!("resume: set aside {orphan} -> ")))
        .unwrap_or_else(|| panic!("the orphan is named:\n{said}"));
    assert!(!line.ends_with("runs again"), "a7 is not pending: {line}");
    assert_eq!(journal(&run).len(), 2);
    let (code, said, _) = w.merge("merged-again");
    assert_eq!(code, Some(0), "{said}");
}

#[test]
fn sigkilled_runner_mid_cell_leaves_no_orphan() {
    stopped_mid_cell_is_set_aside_rerun_and_merged(libc::SIGKILL);
}

#[test]
fn sigtermed_runner_mid_cell_leaves_no_orphan() {
    stopped_mid_cell_is_set_aside_rerun_and_merged(libc::SIGTERM);
}
