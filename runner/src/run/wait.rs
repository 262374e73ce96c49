//! Waits the user can see. A runner that polls something for minutes without a word looks
//! hung, so every such wait says what it waits for, for how long at most and how to change
//! that, then a progress line now and then, then how it ended (all on stderr). A wait whose
//! first try succeeds says nothing: there was no wait.
//!
//! [`Wait`] only words the lines (pure, so the wording and the pacing are unit-tested);
//! [`poll`] runs a retry loop with it and prints them.

use std::time::{Duration, Instant};

use anyhow::Result;

/// One wait: what for, the longest it may last, how to change that, and when the next
/// progress line is due.
#[derive(Debug, Clone)]
pub struct Wait {
    what: String,
    max: Duration,
    change: String,
    announced: bool,
    next_progress: Duration,
}

/// How often a progress line is printed: a twelfth of the wait, from 1 s to 15 s (180 s →
/// every 15 s; a 3 s wait in a test → every second).
pub fn progress_interval(max: Duration) -> Duration {
    (max / 12).clamp(Duration::from_secs(1), Duration::from_secs(15))
}

/// Seconds as the lines print them: whole seconds, or tenths under 10 s.
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 && d.subsec_millis() != 0 {
        format!("{s:.1} s")
    } else {
        format!("{} s", d.as_secs())
    }
}

impl Wait {
    /// `what` completes "waiting for …" (e.g. "the backend at URL to answer GET /api/tags");
    /// `change` says how to change `max` (e.g. "--backend-wait-secs N").
    pub fn new(what: impl Into<String>, max: Duration, change: impl Into<String>) -> Wait {
        Wait {
            what: what.into(),
            max,
            change: change.into(),
            announced: false,
            next_progress: Duration::ZERO,
        }
    }

    /// A try failed `elapsed` into the wait, saying `why`. Returns the lines due now: the
    /// announcement after the first failure (when there is time left to wait), then a
    /// progress line every [`progress_interval`].
    pub fn failed_try(&mut self, elapsed: Duration, why: &str) -> Option<String> {
        if elapsed >= self.max {
            return None;
        }
        let every = progress_interval(self.max);
        if !self.announced {
            self.announced = true;
            // progress at whole multiples of the interval from the start of the wait
            self.next_progress = every;
            while self.next_progress <= elapsed {
                self.next_progress += every;
            }
            return Some(format!(
                "waiting up to {} for {} (change with {}); a line every {} until then; \
                 first try: {why}",
                secs(self.max),
                self.what,
                self.change,
                secs(every)
            ));
        }
        if elapsed < self.next_progress {
            return None;
        }
        while self.next_progress <= elapsed {
            self.next_progress += every;
        }
        Some(format!(
            "still waiting for {}: {} of {} so far; last try: {why}",
            self.what,
            secs(elapsed),
            secs(self.max)
        ))
    }

    /// The line for a success `elapsed` into the wait; none when nothing was announced.
    pub fn succeeded(&self, elapsed: Duration) -> Option<String> {
        self.announced
            .then(|| format!("done waiting: {} after {}", self.what, secs(elapsed)))
    }

    /// The context an error gets when the wait ran out: how long it waited and how to wait
    /// longer (the last try's error follows it in the chain).
    pub fn gave_up(&self, elapsed: Duration) -> String {
        format!(
            "gave up waiting for {} after {} (at most {}; change with {})",
            self.what,
            secs(elapsed),
            secs(self.max),
            self.change
        )
    }
}

/// Calls `attempt` (given the number of the try, from 0) until it succeeds or `wait`'s time
/// is up (at least one try), `pause` apart, printing the wait's lines to stderr. On failure
/// the last try's error gets [`Wait::gave_up`] as context.
pub fn poll<T>(
    mut wait: Wait,
    pause: Duration,
    mut attempt: impl FnMut(u32) -> Result<T>,
) -> Result<T> {
    let start = Instant::now();
    for n in 0.. {
        match attempt(n) {
            Ok(v) => {
                if let Some(line) = wait.succeeded(start.elapsed()) {
                    eprintln!("{line}");
                }
                return Ok(v);
            }
            Err(e) => {
                let elapsed = start.elapsed();
                if elapsed >= wait.max {
                    return Err(e.context(wait.gave_up(elapsed)));
                }
                if let Some(line) = wait.failed_try(elapsed, &why(&e, wait.announced)) {
                    eprintln!("{line}");
                }
                std::thread::sleep(pause.min(wait.max - elapsed));
            }
        }
    }
    unreachable!("the loop returns")
}

/// What a failed try says: the whole chain for the announcement, its last part (the system's
/// words, e.g. "Connection refused (os error 111)") on the progress lines.
fn why(e: &anyhow::Error, announced: bool) -> String {
    let all = lrab_util::error_chain(e.as_ref());
    match all.rsplit(": ").next() {
        Some(last) if announced && !last.is_empty() => last.to_string(),
        _ => all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Duration {
        Duration::from_secs(x)
    }

    #[test]
    fn announces_once_then_paces_progress() {
        let mut w = Wait::new(
            "the backend at http://h:1 to answer",
            s(180),
            "--backend-wait-secs N",
        );
        let first = w.failed_try(Duration::from_millis(3), "refused").unwrap();
        assert_eq!(
            first,
            "waiting up to 180 s for the backend at http://h:1 to answer (change with \
             --backend-wait-secs N); a line every 15 s until then; first try: refused"
        );
        assert_eq!(w.failed_try(s(1), "refused"), None);
        assert_eq!(w.failed_try(s(14), "refused"), None);
        let p = w.failed_try(s(15), "timed out").unwrap();
        assert_eq!(
            p,
            "still waiting for the backend at http://h:1 to answer: 15 s of 180 s so far; \
             last try: timed out"
        );
        assert_eq!(w.failed_try(s(16), "x"), None);
        // a long try skips the intervals it slept through: one line, then the next on time
        assert!(w.failed_try(s(62), "x").is_some());
        assert_eq!(w.failed_try(s(74), "x"), None);
        assert!(w.failed_try(s(75), "x").is_some());
        assert_eq!(w.failed_try(s(180), "x"), None, "the wait is over: no line");
        assert_eq!(
            w.succeeded(Duration::from_millis(80_500)).unwrap(),
            "done waiting: the backend at http://h:1 to answer after 80 s"
        );
    }

    #[test]
    fn nothing_is_said_without_a_wait() {
        let w = Wait::new("x", s(5), "--x");
        assert_eq!(w.succeeded(Duration::from_millis(2)), None);
        let mut zero = Wait::new("x", Duration::ZERO, "--x");
        assert_eq!(zero.failed_try(Duration::ZERO, "no"), None);
        assert_eq!(
            zero.gave_up(Duration::from_millis(1500)),
            "gave up waiting for x after 1.5 s (at most 0 s; change with --x)"
        );
    }

    #[test]
    fn intervals_scale_with_the_wait() {
        assert_eq!(progress_interval(s(180)), s(15));
        assert_eq!(progress_interval(s(60)), s(5));
        assert_eq!(progress_interval(s(3)), s(1));
        assert_eq!(progress_interval(s(3600)), s(15));
    }

    #[test]
    fn poll_returns_the_first_success_and_words_the_failure() {
        let w = Wait::new("a test", Duration::from_millis(300), "--t");
        let v = poll(w, Duration::from_millis(10), |n| {
            if n < 2 {
                anyhow::bail!("not yet")
            }
            Ok(n)
        })
        .unwrap();
        assert_eq!(v, 2);
        let w = Wait::new("a test", Duration::from_millis(50), "--t");
        let e = poll::<()>(w, Duration::from_millis(10), |_| anyhow::bail!("refused")).unwrap_err();
        let text = format!("{e:#}");
        assert!(
            text.starts_with("gave up waiting for a test after "),
            "{text}"
        );
        assert!(text.ends_with("; change with --t): refused"), "{text}");
    }
}
