//! Quiet-wait (upstream's protocol; docs/runner.md, step 5): after the arm exits, children it
//! left behind may still be writing; poll the workdir until its file list and sizes stay unchanged for `stable`, at most
//! `max`. The runner only waits while members of the arm's process group are still alive —
//! once the group is empty nothing of the arm can change the workdir any more.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

/// Durations of the quiet-wait; upstream: poll 5 s, stable 20 s, max 180 s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuietConfig {
    pub poll: Duration,
    pub stable: Duration,
    pub max: Duration,
}

impl QuietConfig {
    /// The quiet-wait of a run (defaults: `lrab_records::RunSpec::default`).
    pub fn of(spec: &lrab_records::RunSpec) -> Self {
        QuietConfig {
            poll: Duration::from_millis(spec.quiet_poll_ms),
            stable: Duration::from_millis(spec.quiet_stable_ms),
            max: Duration::from_millis(spec.quiet_max_ms),
        }
    }
}

/// Relative path → size of every file below `dir`.
pub fn snapshot(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, m.len());
            }
        }
    }
    out
}

/// Waits until `dir` is quiet or `still_running()` turns false; returns the time waited.
pub fn wait(dir: &Path, cfg: QuietConfig, mut still_running: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    let mut last = snapshot(dir);
    let mut since = Instant::now();
    while start.elapsed() < cfg.max && still_running() {
        std::thread::sleep(cfg.poll.min(cfg.max.saturating_sub(start.elapsed())));
        let now = snapshot(dir);
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= cfg.stable {
            break;
        }
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_a_writer_then_returns() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("grow.txt");
        let p2 = p.clone();
        let w = std::thread::spawn(move || {
            for i in 0..5 {
                std::fs::write(&p2, "x".repeat(i + 1)).unwrap();
                std::thread::sleep(Duration::from_millis(40));
            }
        });
        let cfg = QuietConfig {
            poll: Duration::from_millis(10),
            stable: Duration::from_millis(100),
            max: Duration::from_secs(5),
        };
        let waited = wait(d.path(), cfg, || true);
        w.join().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap().len(), 5);
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(5));
        // Nobody running: returns at once.
        assert!(wait(d.path(), cfg, || false) < Duration::from_millis(50));
    }
}
