//! Several backends per run (`--backend URL1,URL2,…`, one Ollama per GPU): which backend serves
//! the next cell, how many cells each may serve at once, and what happens when one stops
//! answering.
//!
//! * **Assignment.** A worker leases the healthy backend with the fewest cells in flight (ties:
//!   the one that has served fewest, then list order) and checks it answers `/api/tags` before
//!   the cell starts.
//! * **Capacity.** A real backend serves `--backend-slots` cells at once (default 1: Ollama's
//!   `OLLAMA_NUM_PARALLEL` is 1, so a second cell would only queue behind the first and its
//!   wall time and budget would measure the queue). The simulator serves any number. `--jobs`
//!   is capped at the sum, with a note; `--fresh-backend` needs a backend to itself, so it
//!   gives every backend one slot.
//! * **Failure.** A backend that does not answer — before a cell, or right after an attempt
//!   ran on it — is taken out of rotation. The attempt it broke is not the arm's failure: it
//!   gets no `cells.csv` row, its folder moves to `lost/`, `attempts.jsonl` records it with
//!   `backend_failure`, and the same attempt (same number) runs again on another backend. A
//!   cell broken [`MAX_BACKEND_LOSSES`] times stops the run. A backend out of rotation is
//!   probed again every [`RECHECK`] and rejoins when it answers; when none is left the run
//!   waits up to `--cell-backend-wait-secs` for one to come back, then stops with an error
//!   (`--resume` continues).

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use super::backend::{self, Backend};

/// How often a backend out of rotation is probed again.
pub const RECHECK: Duration = Duration::from_secs(30);
/// Backend failures one cell may suffer before the run stops.
pub const MAX_BACKEND_LOSSES: u32 = 3;
/// Timeout of one health probe.
const PROBE: Duration = Duration::from_secs(10);

/// Cells a set of backends can serve at once: `slots` per real backend, any number on the
/// simulator. Returns the effective `--jobs` and, when it had to be lowered, why.
pub fn cap_jobs(simulated: &[bool], slots: usize, jobs: usize) -> (usize, Option<String>) {
    let jobs = jobs.max(1);
    if simulated.iter().all(|s| *s) {
        return (jobs, None);
    }
    let slots = slots.max(1);
    let cap: usize = simulated
        .iter()
        .map(|s| if *s { jobs } else { slots })
        .sum();
    if jobs <= cap {
        return (jobs, None);
    }
    let real = simulated.iter().filter(|s| !**s).count();
    (
        cap,
        Some(format!(
            "--jobs {jobs} capped at {cap}: {real} real backend(s) × {slots} cell(s) at a time \
             (a real backend serves --backend-slots cells at once, default 1)"
        )),
    )
}

struct State {
    busy: usize,
    served: usize,
    /// Out of rotation since, why, and when it was last probed.
    down: Option<(String, Instant)>,
}

/// The backends of a run and who is using them.
pub struct Pool {
    backends: Vec<Mutex<Backend>>,
    /// Labels and URLs at the start (the cells.csv `backend` column; a restarted sim keeps
    /// its label).
    labels: Vec<String>,
    state: Mutex<Vec<State>>,
    freed: Condvar,
    slots: Vec<usize>,
}

/// One backend leased for one cell; released on drop.
pub struct Lease<'a> {
    pool: &'a Pool,
    index: usize,
}

impl Lease<'_> {
    pub fn index(&self) -> usize {
        self.index
    }

    /// The backend itself (exclusive while held; with one slot, the lease is exclusive too).
    pub fn backend(&self) -> MutexGuard<'_, Backend> {
        lock(&self.pool.backends[self.index])
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut st = lock(&self.pool.state);
        st[self.index].busy = st[self.index].busy.saturating_sub(1);
        drop(st);
        self.pool.freed.notify_all();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pool {
    /// `slots` cells at once per real backend (the simulator: `jobs`).
    pub fn new(backends: Vec<Backend>, slots: usize, jobs: usize) -> Pool {
        let slots = backends
            .iter()
            .map(|b| {
                if b.simulated {
                    jobs.max(1)
                } else {
                    slots.max(1)
                }
            })
            .collect();
        Pool {
            labels: backends.iter().map(|b| b.label.clone()).collect(),
            state: Mutex::new(
                backends
                    .iter()
                    .map(|_| State {
                        busy: 0,
                        served: 0,
                        down: None,
                    })
                    .collect(),
            ),
            backends: backends.into_iter().map(Mutex::new).collect(),
            freed: Condvar::new(),
            slots,
        }
    }

    pub fn label(&self, i: usize) -> &str {
        &self.labels[i]
    }

    fn url(&self, i: usize) -> String {
        lock(&self.backends[i]).url.clone()
    }

    /// Changes of rotation are printed even with `--no-progress`: they are not progress.
    fn note(&self, msg: String) {
        eprintln!("note: {msg}");
    }

    /// Takes backend `i` out of rotation.
    pub fn mark_down(&self, i: usize, why: &str) {
        let mut st = lock(&self.state);
        if st[i].down.is_none() {
            st[i].down = Some((why.to_string(), Instant::now()));
            drop(st);
            self.note(format!(
                "backend {} stopped answering ({why}); taken out of rotation, probed again every {} s",
                self.labels[i],
                RECHECK.as_secs()
            ));
        }
    }

    /// Whether backend `i` still answers after an attempt: `Some(reason)` when two probes a
    /// second apart both fail.
    pub fn lost(&self, i: usize) -> Option<String> {
        let url = self.url(i);
        let mut why = String::new();
        for n in 0..2 {
            if n > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            match backend::health(&url, PROBE) {
                Ok(_) => return None,
                Err(e) => why = lrab_util::error_chain(e.as_ref()),
            }
        }
        Some(why)
    }

    /// Leases a healthy backend with a free slot, waiting while all are busy; when none
    /// answers for `wait`, an error naming each and why.
    pub fn acquire(&self, wait: Duration) -> Result<Lease<'_>> {
        let start = Instant::now();
        // a wait for a backend to come back is said, paced and bounded like any (wait.rs)
        let mut said = super::wait::Wait::new(
            "a backend to answer again (none is left in rotation)",
            wait,
            "--cell-backend-wait-secs N",
        );
        loop {
            self.reprobe();
            let pick = {
                let mut st = lock(&self.state);
                let i = (0..st.len())
                    .filter(|&i| st[i].down.is_none() && st[i].busy < self.slots[i])
                    .min_by_key(|&i| (st[i].busy, st[i].served, i));
                if let Some(i) = i {
                    st[i].busy += 1;
                    st[i].served += 1;
                }
                i
            };
            if let Some(i) = pick {
                let lease = Lease {
                    pool: self,
                    index: i,
                };
                match backend::health(&self.url(i), PROBE) {
                    Ok(_) => return Ok(lease),
                    Err(e) => {
                        self.mark_down(i, &lrab_util::error_chain(e.as_ref()));
                        continue;
                    }
                }
            }
            let st = lock(&self.state);
            if st.iter().all(|s| s.down.is_some()) {
                if start.elapsed() >= wait {
                    let why: Vec<String> = st
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            format!(
                                "{}: {}",
                                self.labels[i],
                                s.down.as_ref().map(|d| d.0.as_str()).unwrap_or("")
                            )
                        })
                        .collect();
                    bail!(
                        "no backend answers after {} s ({}); start one and continue with --resume",
                        wait.as_secs(),
                        why.join("; ")
                    );
                }
                drop(st);
                let out = format!("{} out of rotation", self.labels.join(", "));
                if let Some(line) = said.failed_try(start.elapsed(), &out) {
                    self.note(line);
                }
                std::thread::sleep(Duration::from_millis(500));
            } else {
                let _ = self
                    .freed
                    .wait_timeout(st, Duration::from_secs(1))
                    .unwrap_or_else(|p| p.into_inner());
            }
        }
    }

    /// Probes the backends out of rotation that are due: every [`RECHECK`], or every half
    /// second once none is left (then the run is waiting for one to come back).
    fn reprobe(&self) {
        let due: Vec<usize> = {
            let st = lock(&self.state);
            let all_down = st.iter().all(|s| s.down.is_some());
            (0..st.len())
                .filter(|&i| match &st[i].down {
                    Some((_, at)) => all_down || at.elapsed() >= RECHECK,
                    None => false,
                })
                .collect()
        };
        for i in due {
            let ok = backend::health(&self.url(i), Duration::from_secs(2)).is_ok();
            let mut st = lock(&self.state);
            if ok {
                st[i].down = None;
                drop(st);
                self.note(format!(
                    "backend {} answers again; back in rotation",
                    self.labels[i]
                ));
                self.freed.notify_all();
            } else if let Some(d) = st[i].down.as_mut() {
                d.1 = Instant::now();
            }
        }
    }
}

/// An attempt the backend broke (it stopped answering while the arm ran): not recorded as the
/// arm's, rerun elsewhere. Carries what `attempts.jsonl` records of it.
#[derive(Debug)]
pub struct BackendLost {
    pub attempt_dir: PathBuf,
    pub command: Vec<String>,
    /// The URL the arm was given.
    pub backend_url: String,
    /// (wall seconds, exit code, timed out, survivors) of each launch.
    pub phases: Vec<(f64, Option<i32>, bool, bool)>,
    pub reason: String,
}

impl std::fmt::Display for BackendLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the backend stopped answering during {} ({})",
            self.attempt_dir.display(),
            self.reason
        )
    }
}

impl std::error::Error for BackendLost {}

/// Moves a broken attempt's folder out of `cells/` to `lost/<same path>-<k>` (first free k), so
/// the rerun starts in a fresh folder and `cells/` holds counted attempts only. Returns the
/// new folder relative to the run folder.
pub fn set_aside(run_dir: &Path, attempt_dir: &Path) -> Result<String> {
    set_aside_under(run_dir, attempt_dir, "lost")
}

/// [`set_aside`] into another folder of the run (`interrupted/` for the resume's set-asides).
pub fn set_aside_under(run_dir: &Path, attempt_dir: &Path, under: &str) -> Result<String> {
    let rel = attempt_dir.strip_prefix(run_dir).unwrap_or(attempt_dir);
    let rel = rel.strip_prefix("cells").unwrap_or(rel);
    let base = run_dir.join(under).join(rel);
    let mut k = 1;
    let dest = loop {
        let d = PathBuf::from(format!("{}-{k}", base.display()));
        if !d.exists() {
            break d;
        }
        k += 1;
    };
    if let Some(p) = dest.parent() {
        std::fs::create_dir_all(p)?;
    }
    if attempt_dir.exists() {
        std::fs::rename(attempt_dir, &dest).map_err(|e| {
            anyhow::anyhow!("move {} to {}: {e}", attempt_dir.display(), dest.display())
        })?;
    }
    Ok(dest
        .strip_prefix(run_dir)
        .unwrap_or(&dest)
        .to_string_lossy()
        .into_owned())
}

/// Journals an attempt the backend broke (`attempts.jsonl`, `backend_failure` set) and moves
/// its folder to `lost/`; it has no `cells.csv` row and is rerun under the same number.
pub fn record_lost(
    env: &super::cell::CellEnv<'_>,
    c: &super::matrix::Cell,
    attempt: u32,
    e: &anyhow::Error,
    why: &str,
) -> Result<()> {
    let dir = env.run_dir.join(c.rel_dir()).join(format!("a{attempt}"));
    let l = e.downcast_ref::<BackendLost>();
    let moved = set_aside(env.run_dir, &dir)?;
    let rec = lrab_records::AttemptRecord {
        schema_version: lrab_records::SCHEMA_VERSION,
        cell: c.index,
        arm: c.arm.clone(),
        model: c.model.clone(),
        task: c.task.clone(),
        repeat: c.repeat,
        attempt,
        attempt_dir: moved,
        command: l.map(|l| l.command.clone()).unwrap_or_default(),
        backend: Some(env.backend_label.to_string()),
        backend_url: l.map_or_else(|| env.backend_url.to_string(), |l| l.backend_url.clone()),
        backend_kind: Some(env.backend_kind),
        think: Some(env.config.think),
        confined: Some(!env.config.unconfined_arms),
        backend_failure: Some(match l {
            Some(_) => why.to_string(),
            None => format!(
                "{why} (the attempt failed: {})",
                lrab_util::error_chain(e.as_ref())
            ),
        }),
        phases: l
            .map(|l| {
                (l.phases.iter())
                    .map(
                        |&(wall, code, timed_out, survivors)| lrab_records::PhaseRecord {
                            wall: (wall * 1000.0).round() / 1000.0,
                            code,
                            timed_out,
                            survivors,
                        },
                    )
                    .collect()
            })
            .unwrap_or_default(),
        quiet_wait_seconds: 0.0,
        modelled_wall_seconds: None,
        sim_ledger: None,
        runner_overhead_seconds: 0.0,
        scoring_seconds: 0.0,
        failure_mode: lrab_records::FailureMode::Error,
        score: 0.0,
        score_error: None,
        retry: true,
    };
    lrab_records::append_jsonl(&env.run_dir.join("attempts.jsonl"), &rec)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_capped_by_what_real_backends_serve() {
        assert_eq!(
            cap_jobs(&[true], 1, 4),
            (4, None),
            "the sim serves any number"
        );
        assert_eq!(cap_jobs(&[true, true], 1, 8).0, 8);
        assert_eq!(cap_jobs(&[false], 1, 1), (1, None));
        let (j, note) = cap_jobs(&[false, false, false], 1, 5);
        assert_eq!(j, 3);
        let note = note.unwrap();
        assert!(
            note.contains("--jobs 5 capped at 3") && note.contains("3 real"),
            "{note}"
        );
        assert_eq!(cap_jobs(&[false, false], 2, 4), (4, None));
        assert_eq!(cap_jobs(&[false, false], 2, 6).0, 4);
        assert_eq!(cap_jobs(&[false], 0, 0), (1, None), "at least one");
    }

    #[test]
    fn broken_attempts_are_set_aside_under_lost() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("cells/x/m/WF-01/r0/a0");
        std::fs::create_dir_all(a.join("workdir")).unwrap();
        assert_eq!(set_aside(d.path(), &a).unwrap(), "lost/x/m/WF-01/r0/a0-1");
        assert!(!a.exists() && d.path().join("lost/x/m/WF-01/r0/a0-1/workdir").is_dir());
        std::fs::create_dir_all(&a).unwrap();
        assert_eq!(set_aside(d.path(), &a).unwrap(), "lost/x/m/WF-01/r0/a0-2");
    }

    #[test]
    fn a_dead_backend_is_left_out_and_all_dead_is_an_error_naming_them() {
        let sim = Backend::start_with(&backend::BackendSpec::Sim, Duration::from_secs(1), 0, false)
            .unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dead_url = format!("http://{}", l.local_addr().unwrap());
        drop(l);
        let dead = Backend::plain(&dead_url, dead_url.clone());
        let alone = Pool::new(vec![Backend::plain(&dead_url, dead_url.clone())], 1, 1);
        let e = alone
            .acquire(Duration::from_millis(600))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(&dead_url) && e.contains("no backend answers"),
            "{e}"
        );
        let pool = Pool::new(vec![dead, sim], 1, 2);
        // the dead one is tried first (list order), found dead, and the sim is leased
        let a = pool.acquire(Duration::from_secs(1)).unwrap();
        assert_eq!(a.index(), 1);
        assert!(lock(&pool.state)[0].down.is_some());
        assert!(pool.lost(0).is_some() && pool.lost(1).is_none());
        drop(a);
        // a backend out of rotation that answers again rejoins
        pool.mark_down(1, "test");
        assert_eq!(pool.acquire(Duration::from_secs(5)).unwrap().index(), 1);
        assert!(lock(&pool.state)[1].down.is_none());
    }
}
