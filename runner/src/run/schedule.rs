//! Step 3 of a run: run the pending cells, serially or with `--jobs` workers, on the backend
//! pool (pool.rs): each worker leases a backend, runs a cell's attempts (attempt/) under the
//! retry rule (cell.rs), and applies the backend-loss policy — an attempt a backend broke is
//! journalled, set aside and run again, under the same number, on another backend; a cell
//! broken [`pool::MAX_BACKEND_LOSSES`] times stops the run.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Result;

use super::backend::Backend;
use super::cell::CellEnv;
use super::matrix::Cell;
use super::open::Opened;
use super::plan::Plan;
use super::progress::Progress;
use super::{attempt, pool, Session};

/// What the workers did.
pub struct Ran {
    pub attempts_run: usize,
    /// Runner time outside the arms' launches, per attempt.
    pub overheads: Vec<Duration>,
}

/// A cell waiting to run: the cell, its next attempt, the backend losses it has suffered.
type Queued = (Cell, u32, u32);

/// The work queue and what the workers share.
struct Shared<'a> {
    plan: &'a Plan,
    session: &'a Session,
    opened: &'a Opened,
    pool: pool::Pool,
    progress: &'a Progress,
    queue: Mutex<VecDeque<Queued>>,
    ran: Mutex<Ran>,
    first_error: Mutex<Option<anyhow::Error>>,
}

impl Shared<'_> {
    /// Keeps the first error; the workers stop at their next cell.
    fn fail(&self, e: anyhow::Error) {
        let mut f = self.first_error.lock().unwrap();
        if f.is_none() {
            *f = Some(e);
        }
    }

    /// One worker: cells from the queue until it is empty or a worker failed.
    fn work(&self) {
        loop {
            if self.first_error.lock().unwrap().is_some() {
                return;
            }
            let Some(q) = self.queue.lock().unwrap().pop_front() else {
                return;
            };
            if let Err(e) = self.cell(q) {
                return self.fail(e);
            }
        }
    }

    /// Runs the attempts of one cell on a leased backend.
    fn cell(&self, (c, first, losses): Queued) -> Result<()> {
        let (plan, session) = (self.plan, self.session);
        let lease = (self.pool.acquire(session.cell_backend_wait))
            .map_err(|e| e.context(format!("cell {}", c.label())))?;
        let i = lease.index();
        let (url, simulated, backend_kind) = {
            let mut b = lease.backend();
            if session.fresh_backend {
                b.refresh(&plan.spec.models)?;
            }
            (b.url.clone(), b.simulated, b.kind)
        };
        let lost = || self.pool.lost(i);
        let env = CellEnv {
            run_dir: &self.opened.run_dir,
            run_id: &self.opened.run_id,
            pack: &plan.pack,
            checks: &plan.checks[&c.task],
            backend_label: self.pool.label(i),
            backend_url: &url,
            simulated,
            backend_kind,
            config: &plan.spec,
            backend_lost: Some(&lost),
        };
        self.progress.start_cell(&c.label());
        let task = plan.pack.get(&c.task).expect("validated");
        let arm = plan.arm(&c.arm);
        let mut a = first;
        loop {
            match attempt::run_attempt(&env, arm, task, &c, a) {
                Ok(r) => {
                    let last = !r.needs_retry() || a >= plan.spec.retries;
                    self.progress.attempt(&r.record, last);
                    let mut ran = self.ran.lock().unwrap();
                    ran.overheads.push(r.overhead);
                    ran.attempts_run += 1;
                    if last {
                        return Ok(());
                    }
                    a += 1;
                }
                Err(e) => return self.backend_lost(&env, i, c, a, losses, e),
            }
        }
    }

    /// An attempt that failed: when its backend broke it, that is not the arm's failure — it
    /// is journalled and queued to run again elsewhere; any other failure stops the run.
    fn backend_lost(
        &self,
        env: &CellEnv<'_>,
        i: usize,
        c: Cell,
        a: u32,
        losses: u32,
        e: anyhow::Error,
    ) -> Result<()> {
        let why = match e.downcast_ref::<pool::BackendLost>() {
            Some(l) => Some(l.reason.clone()),
            None => self.pool.lost(i),
        };
        let Some(why) = why else {
            return Err(e.context(format!("cell {}", c.label())));
        };
        self.pool.mark_down(i, &why);
        pool::record_lost(env, &c, a, &e, &why)?;
        if losses + 1 >= pool::MAX_BACKEND_LOSSES {
            anyhow::bail!(
                "cell {}: {} backends stopped answering during it ({why}); stopping",
                c.label(),
                losses + 1
            );
        }
        self.queue.lock().unwrap().push_front((c, a, losses + 1));
        Ok(())
    }
}

/// Runs `opened.todo` on `backends`; the first error stops every worker and is returned.
pub fn run(
    plan: &Plan,
    session: &Session,
    opened: &Opened,
    backends: Vec<Backend>,
    progress: &Progress,
) -> Result<Ran> {
    // `--fresh-backend` restarts or unloads a backend between cells: it needs it to itself.
    let slots = if session.fresh_backend {
        1
    } else {
        session.backend_slots
    };
    let flags: Vec<bool> = (backends.iter())
        .map(|b| b.simulated && !session.fresh_backend)
        .collect();
    let (jobs, capped) = pool::cap_jobs(&flags, slots, session.jobs);
    if let Some(note) = capped {
        eprintln!("note: {note}");
    }
    let fresh_slots = if session.fresh_backend { 1 } else { jobs };
    let shared = Shared {
        plan,
        session,
        opened,
        pool: pool::Pool::new(backends, slots, fresh_slots),
        progress,
        queue: Mutex::new(
            opened
                .todo
                .iter()
                .map(|(c, a)| (c.clone(), *a, 0))
                .collect(),
        ),
        ran: Mutex::new(Ran {
            attempts_run: 0,
            overheads: Vec::new(),
        }),
        first_error: Mutex::new(None),
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| shared.work());
        }
    });
    if let Some(e) = shared.first_error.into_inner().unwrap() {
        return Err(e);
    }
    Ok(shared.ran.into_inner().unwrap())
}
