//! The backend retry ladder: transient errors (unreachable, 5xx, broken stream) are retried
//! with exponential backoff; request errors are returned at once.

use super::{BackendError, ChatRequest, Model};
use crate::messages::Reply;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub base_ms: u64,
    pub cap_ms: u64,
    /// Attempts in total for one call (the first one included).
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            base_ms: 2000,
            cap_ms: 60_000,
            max_attempts: 6,
        }
    }
}

impl RetryPolicy {
    /// Delay before retry number `n` (1-based): base·2^(n-1), capped.
    pub fn backoff(&self, n: u32) -> Duration {
        let exp = n.saturating_sub(1).min(20);
        Duration::from_millis(self.base_ms.saturating_mul(1u64 << exp).min(self.cap_ms))
    }
}

/// Call `model` with retries. `sleep` is injected so tests do not wait; `on_retry` sees each
/// transient failure (for the event log).
pub fn call_with_retry<M: Model + ?Sized>(
    model: &mut M,
    req: &ChatRequest<'_>,
    policy: &RetryPolicy,
    sleep: &mut dyn FnMut(Duration),
    on_retry: &mut dyn FnMut(&BackendError, u32),
) -> Result<Reply, BackendError> {
    let mut attempt = 1;
    loop {
        match model.chat(req) {
            Ok(r) => return Ok(r),
            Err(e) if e.is_transient() && attempt < policy.max_attempts => {
                on_retry(&e, attempt);
                sleep(policy.backoff(attempt));
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::ScriptedModel;

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(1), Duration::from_secs(2));
        assert_eq!(p.backoff(3), Duration::from_secs(8));
        assert_eq!(p.backoff(10), Duration::from_secs(60));
    }

    #[test]
    fn transient_errors_are_retried_request_errors_are_not() {
        let mut m = ScriptedModel::new(vec![
            Err(BackendError::Server {
                status: 500,
                message: "x".into(),
            }),
            Err(BackendError::Unreachable("y".into())),
            Ok(Reply::text("fine")),
        ]);
        let req = ChatRequest {
            messages: &[],
            tools: &[],
            num_predict: 1,
        };
        let mut slept = Vec::new();
        let mut seen = 0;
        let r = call_with_retry(
            &mut m,
            &req,
            &RetryPolicy::default(),
            &mut |d| slept.push(d),
            &mut |_, _| seen += 1,
        )
        .unwrap();
        assert_eq!(r.content, "fine");
        assert_eq!(slept, vec![Duration::from_secs(2), Duration::from_secs(4)]);
        assert_eq!(seen, 2);
        let mut m = ScriptedModel::new(vec![Err(BackendError::ModelNotFound("m".into()))]);
        let e = call_with_retry(
            &mut m,
            &req,
            &RetryPolicy::default(),
            &mut |_| {},
            &mut |_, _| {},
        );
        assert!(matches!(e, Err(BackendError::ModelNotFound(_))));
    }
}
