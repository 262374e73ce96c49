//! read_file crawl guard: each read serves at most a window of text, and each file has a byte
//! budget (twice its size, clamped to 64 KB..512 KB). Past the budget reads are throttled to a
//! small window with a hint to process the file with a script — never refused, so a model that
//! really needs one more look still gets it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const READ_WINDOW: usize = 6000;
pub const THROTTLED_WINDOW: usize = 2000;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CrawlGuard {
    served: BTreeMap<String, u64>,
    reads: BTreeMap<String, u32>,
}

/// Per-file budget of served characters.
pub fn budget(file_size: u64) -> u64 {
    (2 * file_size).clamp(64 * 1024, 512 * 1024)
}

/// How much one read may serve and what to tell the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Allowance {
    pub window: usize,
    pub hint: Option<String>,
}

impl CrawlGuard {
    pub fn allowance(&self, rel: &str, file_size: u64) -> Allowance {
        let served = self.served.get(rel).copied().unwrap_or(0);
        let reads = self.reads.get(rel).copied().unwrap_or(0);
        if served >= budget(file_size) {
            return Allowance {
                window: THROTTLED_WINDOW,
                hint: Some(format!(
                    "[read budget for {rel} used up: reads are now limited to {THROTTLED_WINDOW} chars. Process this file with a script via run_shell (e.g. python3 to count, filter or summarize) instead of reading it piece by piece.]"
                )),
            };
        }
        let hint = if reads + 1 == 4 || reads + 1 == 10 {
            Some(format!(
                "[read #{} of {rel}: for large files a short script is faster than reading]",
                reads + 1
            ))
        } else {
            None
        };
        Allowance {
            window: READ_WINDOW,
            hint,
        }
    }
    pub fn record(&mut self, rel: &str, served: usize) {
        *self.served.entry(rel.to_string()).or_insert(0) += served as u64;
        *self.reads.entry(rel.to_string()).or_insert(0) += 1;
    }
    /// A write to the file resets its budget (the content changed).
    pub fn reset(&mut self, rel: &str) {
        self.served.remove(rel);
        self.reads.remove(rel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttles_instead_of_refusing() {
        let mut g = CrawlGuard::default();
        assert_eq!(budget(10), 64 * 1024);
        assert_eq!(budget(10_000_000), 512 * 1024);
        let size = 600_000;
        let mut throttled = false;
        for _ in 0..200 {
            let a = g.allowance("big.txt", size);
            assert!(a.window > 0);
            if a.window == THROTTLED_WINDOW {
                throttled = true;
                assert!(a.hint.unwrap().contains("script"));
                break;
            }
            g.record("big.txt", a.window);
        }
        assert!(throttled);
        g.reset("big.txt");
        assert_eq!(g.allowance("big.txt", size).window, READ_WINDOW);
    }
}
