//! Profiles: every number a simulated model runs on, as data (one TOML file per model under
//! `sim/profiles/`, validated on load). The built-in files are compiled in; `--profiles DIR`
//! replaces them. `docs/sim.md` says where each number comes from.

mod load;
mod rate;

use serde::{Deserialize, Serialize};

pub use load::{builtin, load_dir, load_file, parse};
pub use rate::{logistic_from, Prompt, Rate};

use crate::dialect::Family;

/// The failure forms a model can show. Each can be forced alone with [`Profile::only`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureForm {
    /// The call is written as text in one of the family's documented shapes that the server's
    /// parser does not pick up (it reaches the client as content).
    TextCall,
    /// The call is inside the family's call markers but does not parse: depending on the family
    /// the server answers HTTP 500, drops it silently or swallows the rest of the reply.
    MalformedCall,
    /// A well-formed call that lacks a required argument (the client's validation rejects it).
    BadArgs,
    /// The previous call again, identically (starts a loop).
    RepeatCall,
    /// Claims the task is done while steps remain (text, or the finish tool when offered).
    FalseDone,
    /// Stops with a text turn that neither calls a tool nor claims completion.
    Abandon,
    /// Empty content, no tool call.
    EmptyTurn,
    /// Only thinking (or an unclosed `<think>` block), no answer and no call.
    ThinkOnly,
    /// Rambles until the output cap (`done_reason: "length"`).
    Runaway,
    /// Calls another offered tool with the step's main argument.
    WrongTool,
    /// Writes a degraded version of a file instead of the reference content (per write).
    ContentError,
    /// Forgets a middle step of the plan once the task statement lies far back (per step).
    LostInMiddle,
}

impl FailureForm {
    pub const ALL: [FailureForm; 12] = [
        FailureForm::TextCall,
        FailureForm::MalformedCall,
        FailureForm::BadArgs,
        FailureForm::RepeatCall,
        FailureForm::FalseDone,
        FailureForm::Abandon,
        FailureForm::EmptyTurn,
        FailureForm::ThinkOnly,
        FailureForm::Runaway,
        FailureForm::WrongTool,
        FailureForm::ContentError,
        FailureForm::LostInMiddle,
    ];

    /// The forms drawn once per turn (the others are drawn per write or per step).
    pub const PER_TURN: [FailureForm; 10] = [
        FailureForm::TextCall,
        FailureForm::MalformedCall,
        FailureForm::BadArgs,
        FailureForm::RepeatCall,
        FailureForm::FalseDone,
        FailureForm::Abandon,
        FailureForm::EmptyTurn,
        FailureForm::ThinkOnly,
        FailureForm::Runaway,
        FailureForm::WrongTool,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FailureForm::TextCall => "text_call",
            FailureForm::MalformedCall => "malformed_call",
            FailureForm::BadArgs => "bad_args",
            FailureForm::RepeatCall => "repeat_call",
            FailureForm::FalseDone => "false_done",
            FailureForm::Abandon => "abandon",
            FailureForm::EmptyTurn => "empty_turn",
            FailureForm::ThinkOnly => "think_only",
            FailureForm::Runaway => "runaway",
            FailureForm::WrongTool => "wrong_tool",
            FailureForm::ContentError => "content_error",
            FailureForm::LostInMiddle => "lost_in_middle",
        }
    }

    pub fn parse(s: &str) -> Option<FailureForm> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// How the model reacts to what comes back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reactions {
    /// Chance of repeating once more when in a loop and nothing was said.
    pub loop_stay_plain: f64,
    /// … when the result warned about repeating but the call ran.
    pub loop_stay_warned: f64,
    /// … when the call was not executed (blocked).
    pub loop_stay_blocked: f64,
    /// Chance of a correct rewrite after an error naming the file with a line, a failing test
    /// or the missing item.
    pub fix_precise: f64,
    /// … after an error that names only the file.
    pub fix_generic: f64,
    /// Share of content errors the model repeats whatever it is told (drawn once per file).
    pub persist: f64,
    /// Chance that the model goes on working after a user message that only asks it to
    /// continue (otherwise it stops again).
    pub nudge_continue: f64,
    /// Distance in tokens between the last statement of the task and the end of the
    /// conversation above which `lost_in_middle` can apply.
    pub lost_ctx_threshold: u64,
}

/// How a model's content errors depend on the task and on how far the run has gone:
/// `logit(p) = logit(base) + tier_slope·(tier − 1) + progress_slope·(share of steps done)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentRates {
    pub base: f64,
    pub tier_slope: f64,
    pub progress_slope: f64,
}

/// Modelled speed of the model on the reference laptop (docs/sim.md says which numbers are
/// fitted and which are measured).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Speed {
    /// Prefill time of a cold prompt of n tokens: `a + b·n + c·n²` seconds.
    pub prefill_a: f64,
    pub prefill_b: f64,
    pub prefill_c: f64,
    /// Generated tokens per second.
    pub decode_tps: f64,
    /// Seconds to load the model (first request, or a changed `num_ctx`).
    pub load_s: f64,
}

impl Speed {
    /// Seconds to prefill `new` tokens after `cached` ones are already in the KV cache.
    pub fn prefill_s(&self, cached: u64, new: u64) -> f64 {
        let t = |n: f64| self.prefill_b * n + self.prefill_c * n * n;
        let (c, n) = (cached as f64, (cached + new) as f64);
        if new == 0 {
            return 0.0;
        }
        self.prefill_a + (t(n) - t(c)).max(0.0)
    }

    pub fn decode_s(&self, tokens: u64) -> f64 {
        tokens as f64 / self.decode_tps.max(1e-9)
    }
}

/// One simulated model's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Model name served (`sim-2b`).
    pub name: String,
    /// Tool-call dialect and the server parser that goes with it.
    pub family: Family,
    /// Parameter count shown by `/api/show` (billions).
    pub params_b: f64,
    pub thinking: bool,
    /// Where the numbers come from (printed by docs and the calibration report).
    pub origin: String,
    pub speed: Speed,
    pub forms: std::collections::BTreeMap<FailureForm, Rate>,
    pub content: ContentRates,
    pub reactions: Reactions,
}

/// A model that never fails and reacts perfectly.
pub const REACT_ORACLE: Reactions = Reactions {
    loop_stay_plain: 0.0,
    loop_stay_warned: 0.0,
    loop_stay_blocked: 0.0,
    fix_precise: 1.0,
    fix_generic: 1.0,
    persist: 0.0,
    nudge_continue: 1.0,
    lost_ctx_threshold: u64::MAX,
};

/// The oracle's speed: the measured 4B curve (nothing is fitted to it; it only gives the
/// durations a plausible size).
pub const SPEED_ORACLE: Speed = Speed {
    prefill_a: 0.97,
    prefill_b: 2.13e-4,
    prefill_c: 0.0,
    decode_tps: 26.0,
    load_s: 2.0,
};

impl Profile {
    /// `sim-oracle`: every rate zero.
    pub fn oracle() -> Profile {
        Profile {
            name: "sim-oracle".into(),
            family: Family::Qwen35,
            params_b: 35.0,
            thinking: true,
            origin: "no failures by construction".into(),
            speed: SPEED_ORACLE,
            forms: Default::default(),
            content: ContentRates {
                base: 0.0,
                tier_slope: 0.0,
                progress_slope: 0.0,
            },
            reactions: REACT_ORACLE,
        }
    }

    /// A model with exactly one failure form at a fixed rate (no context or tool scaling) and
    /// the given reactions; tests use it to trigger one form alone.
    pub fn only(
        name: &str,
        family: Family,
        form: FailureForm,
        rate: f64,
        like: Reactions,
    ) -> Profile {
        let mut p = Profile::oracle();
        p.name = name.into();
        p.family = family;
        p.thinking = false;
        p.params_b = 2.0;
        p.origin = format!("single form {} at {rate}", form.name());
        p.reactions = like;
        if form == FailureForm::ContentError {
            p.content.base = rate;
        } else {
            p.forms.insert(form, Rate::flat(rate));
        }
        p
    }

    /// Whether this is `sim-oracle`: nothing can go wrong, and it is exempt from the output
    /// cap. (A profile whose rates are all zero still reacts to feedback as its reactions say.)
    pub fn is_oracle(&self) -> bool {
        self.name == "sim-oracle"
    }

    /// The effective per-turn rate of a form for this prompt.
    pub fn rate(&self, form: FailureForm, p: Prompt) -> f64 {
        self.forms.get(&form).map_or(0.0, |r| r.at(p))
    }

    /// The chance that one write carries a content error.
    pub fn content_rate(&self, tier: u8, progress: f64) -> f64 {
        rate::logistic_from(
            self.content.base,
            self.content.tier_slope * (tier.max(1) - 1) as f64
                + self.content.progress_slope * progress.clamp(0.0, 1.0),
        )
    }
}

/// Markdown of a profile's numbers (docs/sim.md carries the same text; a test checks it).
pub fn table_markdown(p: &Profile) -> String {
    let mut s = format!(
        "family `{}`; {}\n\n| form | base rate | ctx slope (logit per 8k) | opening slope (logit per 8k) | tools slope (logit per tool > 6) |\n|---|---|---|---|---|\n",
        p.family.name(),
        p.origin
    );
    for (f, r) in &p.forms {
        s.push_str(&format!(
            "| {} | {:.4} | {:.3} | {:.3} | {:.3} |\n",
            f.name(),
            r.base,
            r.ctx_slope,
            r.opening_slope,
            r.tools_slope
        ));
    }
    let c = &p.content;
    let x = &p.reactions;
    let v = &p.speed;
    s.push_str(&format!(
        "\nContent errors: base {:.4} per write, tier slope {:.3}, progress slope {:.3} (logit).\n\
         Reactions: loop continues {:.2} (no feedback) / {:.2} (warned) / {:.2} (blocked); fix after precise feedback {:.2}, after generic feedback {:.2}; {:.2} of content errors persist; a nudge works {:.2}; lost in the middle beyond {} tokens.\n\
         Speed: prefill {:.3} s + {:.3e}·n + {:.3e}·n² s, decode {:.1} tok/s, load {:.2} s.\n",
        c.base, c.tier_slope, c.progress_slope,
        x.loop_stay_plain, x.loop_stay_warned, x.loop_stay_blocked, x.fix_precise, x.fix_generic,
        x.persist, x.nudge_continue, x.lost_ctx_threshold,
        v.prefill_a, v.prefill_b, v.prefill_c, v.decode_tps, v.load_s
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_shrink_with_size() {
        let ps = builtin();
        let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["sim-2b", "sim-4b", "sim-12b", "sim-35b"]);
        for p in &ps {
            assert!(!p.is_oracle(), "{}", p.name);
        }
        assert!(Profile::oracle().is_oracle());
        assert_eq!(
            Profile::oracle().rate(FailureForm::Abandon, Prompt::flat(100_000, 40)),
            0.0
        );
    }

    #[test]
    fn form_names_roundtrip() {
        for f in FailureForm::ALL {
            assert_eq!(FailureForm::parse(f.name()), Some(f));
        }
    }

    #[test]
    fn prefill_counts_only_new_tokens() {
        let s = SPEED_ORACLE;
        assert_eq!(s.prefill_s(5000, 0), 0.0);
        assert!(s.prefill_s(5000, 100) < s.prefill_s(0, 5100));
        let dense = Speed {
            prefill_c: 7.06e-8,
            ..s
        };
        // dense attention: later tokens cost more
        assert!(dense.prefill_s(10_000, 1000) > dense.prefill_s(0, 1000));
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    /// docs/sim.md carries the numbers of the committed profiles.
    #[test]
    fn docs_show_the_profile_tables() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/sim.md"))
            .expect("docs/sim.md exists");
        let all = builtin();
        if std::env::var_os("LRAB_PRINT_TABLES").is_some() {
            for p in &all {
                println!("### {}\n\n{}", p.name, table_markdown(p));
            }
        }
        for p in all {
            let t = table_markdown(&p);
            assert!(
                doc.contains(t.as_str()),
                "docs/sim.md lacks the current table of {}:\n{t}",
                p.name
            );
        }
    }
}
