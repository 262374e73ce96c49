//! One form's rate: `logit(p) = logit(base) + ctx_slope·ctx/8192 + opening_slope·opening/8192 +
//! tools_slope·max(0, tools − 6)`. A logistic keeps every rate in [0, 1] however long the
//! context grows, and lets one number (a slope) say how strongly a long conversation, a long
//! opening (the instructions and tool definitions a request starts with, up to the task) or a
//! long tool list hurts a model.

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
    /// Added to the logit per 8192 tokens of the request's opening: everything up to and
    /// including the task statement (system text, tool definitions, the task), which does not
    /// grow as the conversation does.
    #[serde(default)]
    pub opening_slope: f64,
    /// Added to the logit per tool beyond six.
    #[serde(default)]
    pub tools_slope: f64,
}

impl Rate {
    pub fn flat(base: f64) -> Rate {
        Rate {
            base,
            ctx_slope: 0.0,
            opening_slope: 0.0,
            tools_slope: 0.0,
        }
    }

    /// The rate for this prompt. Context and opening are bucketed (2k tokens) so small wording
    /// changes do not move them.
    pub fn at(&self, p: Prompt) -> f64 {
        let bucket = |t: u64| (t / 2048 * 2048) as f64 / 8192.0;
        let extra = p.tools.saturating_sub(6) as f64;
        logistic_from(
            self.base,
            self.ctx_slope * bucket(p.ctx)
                + self.opening_slope * bucket(p.opening)
                + self.tools_slope * extra,
        )
    }
}

/// What a rate depends on in one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prompt {
    /// Tokens of the whole prompt.
    pub ctx: u64,
    /// Tokens of its opening (up to and including the task statement, tool definitions too).
    pub opening: u64,
    /// Tools offered.
    pub tools: usize,
}

impl Prompt {
    /// A prompt whose opening is all of it (no conversation yet).
    pub fn flat(ctx: u64, tools: usize) -> Prompt {
        Prompt {
            ctx,
            opening: ctx,
            tools,
        }
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
            opening_slope: 0.0,
            tools_slope: 0.2,
        };
        let at = |c, t| r.at(Prompt::flat(c, t));
        assert!((at(0, 3) - 0.05).abs() < 1e-12);
        assert!(at(16_384, 3) > at(8192, 3));
        assert!(at(1_000_000, 60) <= 1.0);
        assert!(at(0, 12) > at(0, 6));
        assert_eq!(Rate::flat(0.0).at(Prompt::flat(100_000, 50)), 0.0);
        // the opening slope sees the opening only, however long the conversation grew
        let o = Rate {
            opening_slope: 2.0,
            ctx_slope: 0.0,
            ..r
        };
        let p = |ctx, opening| {
            o.at(Prompt {
                ctx,
                opening,
                tools: 3,
            })
        };
        assert_eq!(p(30_000, 1000), p(1000, 1000));
        assert!(p(9000, 8192) > p(9000, 1000));
        assert_eq!(logistic_from(1.0, -5.0), 1.0);
    }
}
