//! One form's rate: `logit(p) = logit(base) + ctx_slope·ctx/8192 + tools_slope·max(0, tools − 6)`.
//! A logistic keeps every rate in [0, 1] however long the context grows, and lets one number
//! (the slope) say how strongly a long prompt or a long tool list hurts a model.

use serde::{Deserialize, Serialize};

/// A rate that grows (or shrinks) with context length and tool count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// The rate with no context and at most six tools.
    pub base: f64,
    /// Added to the logit per 8192 tokens of prompt.
    #[serde(default)]
    pub ctx_slope: f64,
    /// Added to the logit per tool beyond six.
    #[serde(default)]
    pub tools_slope: f64,
}

impl Rate {
    pub fn flat(base: f64) -> Rate {
        Rate {
            base,
            ctx_slope: 0.0,
            tools_slope: 0.0,
        }
    }

    /// The rate for this prompt. Context is bucketed (2k tokens) so small wording changes do
    /// not move it.
    pub fn at(&self, ctx_tokens: u64, n_tools: usize) -> f64 {
        let ctx = (ctx_tokens / 2048 * 2048) as f64 / 8192.0;
        let extra = n_tools.saturating_sub(6) as f64;
        logistic_from(self.base, self.ctx_slope * ctx + self.tools_slope * extra)
    }
}

/// `base` moved by `shift` on the logit scale (0 and 1 stay where they are).
pub fn logistic_from(base: f64, shift: f64) -> f64 {
    if base <= 0.0 {
        return 0.0;
    }
    if base >= 1.0 {
        return 1.0;
    }
    let l = (base / (1.0 - base)).ln() + shift;
    1.0 / (1.0 + (-l).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_rates_stay_in_range() {
        let r = Rate {
            base: 0.05,
            ctx_slope: 1.0,
            tools_slope: 0.2,
        };
        assert!((r.at(0, 3) - 0.05).abs() < 1e-12);
        assert!(r.at(16_384, 3) > r.at(8192, 3));
        assert!(r.at(1_000_000, 60) <= 1.0);
        assert!(r.at(0, 12) > r.at(0, 6));
        assert_eq!(Rate::flat(0.0).at(100_000, 50), 0.0);
        assert_eq!(logistic_from(1.0, -5.0), 1.0);
    }
}
