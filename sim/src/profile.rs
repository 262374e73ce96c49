//! Failure profiles: one rate table per simulated model.
//!
//! Rates are per model turn (per step for `LostInMiddle`, per Python-file write for
//! `BrokenCode`). They are design choices shaped after the failure forms documented upstream
//! (text-form tool calls, loops, false finishes, early stops, empty turns); they are **not**
//! measurements of real models. `docs/sim.md` prints the same tables.

use serde::{Deserialize, Serialize};

/// The injected failure forms. Each can be forced alone through [`Profile::only`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureForm {
    /// The whole reply is JSON text: `{"name": …, "arguments": {…}}`.
    TextCallJson,
    /// `name(key:<|"|>value<|"|>)` with a tokenizer placeholder as quotes.
    TextCallPlaceholder,
    /// A bare call expression `name(key="value")`.
    TextCallBare,
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
    /// Rambles until `num_predict` is exhausted (`done_reason: "length"`).
    Runaway,
    /// Calls another offered tool with the step's arguments.
    WrongTool,
    /// Writes a Python file that does not compile (fixed only after feedback).
    BrokenCode,
    /// Forgets a middle step of the plan once the context is long.
    LostInMiddle,
}

impl FailureForm {
    pub const ALL: [FailureForm; 12] = [
        FailureForm::TextCallJson,
        FailureForm::TextCallPlaceholder,
        FailureForm::TextCallBare,
        FailureForm::RepeatCall,
        FailureForm::FalseDone,
        FailureForm::Abandon,
        FailureForm::EmptyTurn,
        FailureForm::ThinkOnly,
        FailureForm::Runaway,
        FailureForm::WrongTool,
        FailureForm::BrokenCode,
        FailureForm::LostInMiddle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FailureForm::TextCallJson => "text_call_json",
            FailureForm::TextCallPlaceholder => "text_call_placeholder",
            FailureForm::TextCallBare => "text_call_bare",
            FailureForm::RepeatCall => "repeat_call",
            FailureForm::FalseDone => "false_done",
            FailureForm::Abandon => "abandon",
            FailureForm::EmptyTurn => "empty_turn",
            FailureForm::ThinkOnly => "think_only",
            FailureForm::Runaway => "runaway",
            FailureForm::WrongTool => "wrong_tool",
            FailureForm::BrokenCode => "broken_code",
            FailureForm::LostInMiddle => "lost_in_middle",
        }
    }

    pub fn parse(s: &str) -> Option<FailureForm> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// One row of a profile table: `rate = base * (1 + ctx_slope * ctx/8k) * (1 + tools_slope *
/// max(0, tools - 6))`, capped at 0.95.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FormRate {
    pub form: FailureForm,
    pub base: f64,
    /// Growth per 8k tokens of context.
    pub ctx_slope: f64,
    /// Growth per tool offered beyond six.
    pub tools_slope: f64,
}

const fn r(form: FailureForm, base: f64, ctx_slope: f64, tools_slope: f64) -> FormRate {
    FormRate {
        form,
        base,
        ctx_slope,
        tools_slope,
    }
}

/// How the model reacts to feedback.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reactions {
    /// Chance of repeating once more when in a loop and nothing was said.
    pub loop_stay_plain: f64,
    /// … when the result carried a warning about repeating but the call ran.
    pub loop_stay_warned: f64,
    /// … when the call was not executed (blocked).
    pub loop_stay_blocked: f64,
    /// Chance of rewriting a file when an error names it with a line number.
    pub fix_precise: f64,
    /// … when the error names no file and line.
    pub fix_generic: f64,
    /// Distance (tokens between the last statement of the task and the end of the
    /// conversation) above which `LostInMiddle` can apply.
    pub lost_ctx_threshold: u64,
}

/// A simulated model's failure profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    pub rates: Vec<FormRate>,
    pub reactions: Reactions,
}

use FailureForm::*;

/// sim-2b: the published 2B model's failure mix (format errors dominate, loops, early stops).
pub const TABLE_2B: [FormRate; 12] = [
    r(TextCallJson, 0.030, 0.20, 0.10),
    r(TextCallPlaceholder, 0.030, 0.20, 0.10),
    r(TextCallBare, 0.025, 0.20, 0.10),
    r(RepeatCall, 0.040, 0.30, 0.00),
    r(FalseDone, 0.020, 0.30, 0.00),
    r(Abandon, 0.012, 0.40, 0.05),
    r(EmptyTurn, 0.025, 0.30, 0.00),
    r(ThinkOnly, 0.015, 0.20, 0.00),
    r(Runaway, 0.006, 0.20, 0.00),
    r(WrongTool, 0.030, 0.10, 0.10),
    r(BrokenCode, 0.300, 0.00, 0.00),
    r(LostInMiddle, 0.250, 0.00, 0.00),
];
pub const REACT_2B: Reactions = Reactions {
    loop_stay_plain: 0.85,
    loop_stay_warned: 0.65,
    loop_stay_blocked: 0.25,
    fix_precise: 0.75,
    fix_generic: 0.25,
    lost_ctx_threshold: 12_000,
};

/// sim-4b.
pub const TABLE_4B: [FormRate; 12] = [
    r(TextCallJson, 0.012, 0.20, 0.08),
    r(TextCallPlaceholder, 0.006, 0.20, 0.08),
    r(TextCallBare, 0.010, 0.20, 0.08),
    r(RepeatCall, 0.020, 0.30, 0.00),
    r(FalseDone, 0.012, 0.30, 0.00),
    r(Abandon, 0.006, 0.40, 0.05),
    r(EmptyTurn, 0.010, 0.30, 0.00),
    r(ThinkOnly, 0.010, 0.20, 0.00),
    r(Runaway, 0.004, 0.20, 0.00),
    r(WrongTool, 0.015, 0.10, 0.08),
    r(BrokenCode, 0.180, 0.00, 0.00),
    r(LostInMiddle, 0.150, 0.00, 0.00),
];
pub const REACT_4B: Reactions = Reactions {
    loop_stay_plain: 0.75,
    loop_stay_warned: 0.50,
    loop_stay_blocked: 0.15,
    fix_precise: 0.85,
    fix_generic: 0.35,
    lost_ctx_threshold: 16_000,
};

/// sim-12b.
pub const TABLE_12B: [FormRate; 12] = [
    r(TextCallJson, 0.006, 0.15, 0.05),
    r(TextCallPlaceholder, 0.004, 0.15, 0.05),
    r(TextCallBare, 0.004, 0.15, 0.05),
    r(RepeatCall, 0.012, 0.25, 0.00),
    r(FalseDone, 0.010, 0.25, 0.00),
    r(Abandon, 0.004, 0.30, 0.03),
    r(EmptyTurn, 0.005, 0.20, 0.00),
    r(ThinkOnly, 0.004, 0.20, 0.00),
    r(Runaway, 0.002, 0.20, 0.00),
    r(WrongTool, 0.008, 0.10, 0.05),
    r(BrokenCode, 0.100, 0.00, 0.00),
    r(LostInMiddle, 0.100, 0.00, 0.00),
];
pub const REACT_12B: Reactions = Reactions {
    loop_stay_plain: 0.60,
    loop_stay_warned: 0.40,
    loop_stay_blocked: 0.10,
    fix_precise: 0.90,
    fix_generic: 0.45,
    lost_ctx_threshold: 24_000,
};

/// sim-35b.
pub const TABLE_35B: [FormRate; 12] = [
    r(TextCallJson, 0.002, 0.10, 0.03),
    r(TextCallPlaceholder, 0.001, 0.10, 0.03),
    r(TextCallBare, 0.001, 0.10, 0.03),
    r(RepeatCall, 0.006, 0.20, 0.00),
    r(FalseDone, 0.006, 0.20, 0.00),
    r(Abandon, 0.002, 0.20, 0.02),
    r(EmptyTurn, 0.002, 0.20, 0.00),
    r(ThinkOnly, 0.002, 0.20, 0.00),
    r(Runaway, 0.001, 0.20, 0.00),
    r(WrongTool, 0.004, 0.10, 0.03),
    r(BrokenCode, 0.050, 0.00, 0.00),
    r(LostInMiddle, 0.050, 0.00, 0.00),
];
pub const REACT_35B: Reactions = Reactions {
    loop_stay_plain: 0.40,
    loop_stay_warned: 0.25,
    loop_stay_blocked: 0.05,
    fix_precise: 0.95,
    fix_generic: 0.60,
    lost_ctx_threshold: 48_000,
};

/// sim-oracle: every rate is zero; it reacts perfectly.
pub const REACT_ORACLE: Reactions = Reactions {
    loop_stay_plain: 0.0,
    loop_stay_warned: 0.0,
    loop_stay_blocked: 0.0,
    fix_precise: 1.0,
    fix_generic: 1.0,
    lost_ctx_threshold: u64::MAX,
};

impl Profile {
    fn from_table(name: &str, table: &[FormRate], reactions: Reactions) -> Self {
        Profile {
            name: name.to_string(),
            rates: table.to_vec(),
            reactions,
        }
    }
    pub fn oracle() -> Self {
        Self::from_table("oracle", &[], REACT_ORACLE)
    }
    pub fn p2b() -> Self {
        Self::from_table("2b", &TABLE_2B, REACT_2B)
    }
    pub fn p4b() -> Self {
        Self::from_table("4b", &TABLE_4B, REACT_4B)
    }
    pub fn p12b() -> Self {
        Self::from_table("12b", &TABLE_12B, REACT_12B)
    }
    pub fn p35b() -> Self {
        Self::from_table("35b", &TABLE_35B, REACT_35B)
    }

    /// A profile with exactly one failure form at a fixed rate (no context or tool scaling)
    /// and the reactions of `like`; used by tests to trigger one form alone.
    pub fn only(form: FailureForm, rate: f64, like: Reactions) -> Self {
        Profile {
            name: format!("only-{}", form.name()),
            rates: vec![r(form, rate, 0.0, 0.0)],
            reactions: Reactions { ..like },
        }
    }

    /// The oracle never fails, not even at the `num_predict` limit.
    pub fn is_oracle(&self) -> bool {
        self.name == "oracle"
    }

    /// The effective rate of a form for this context length and tool count.
    pub fn rate(&self, form: FailureForm, ctx_tokens: u64, n_tools: usize) -> f64 {
        let Some(row) = self.rates.iter().find(|r| r.form == form) else {
            return 0.0;
        };
        // context is bucketed (2k tokens) so small wording changes do not move the rate
        let ctx_k = (ctx_tokens / 2048 * 2048) as f64 / 8192.0;
        let extra_tools = n_tools.saturating_sub(6) as f64;
        let v = row.base * (1.0 + row.ctx_slope * ctx_k) * (1.0 + row.tools_slope * extra_tools);
        v.min(0.95)
    }
}

/// Markdown rendering of a profile's table, used by `docs/sim.md` and checked by a test.
pub fn table_markdown(p: &Profile) -> String {
    let mut s = String::from("| form | base rate | ctx slope (per 8k) | tools slope (per tool > 6) |\n|---|---|---|---|\n");
    for r in &p.rates {
        s.push_str(&format!(
            "| {} | {:.3} | {:.2} | {:.2} |\n",
            r.form.name(),
            r.base,
            r.ctx_slope,
            r.tools_slope
        ));
    }
    let x = &p.reactions;
    s.push_str(&format!(
        "\nReactions: loop continues {:.2} (no feedback) / {:.2} (warned) / {:.2} (blocked); \
         fix after a file:line error {:.2}, after a generic error {:.2}; lost in the middle once the task statement is more than {} tokens back.\n",
        x.loop_stay_plain, x.loop_stay_warned, x.loop_stay_blocked, x.fix_precise, x.fix_generic, x.lost_ctx_threshold
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_shrink_with_size_and_grow_with_context_and_tools() {
        let ps = [
            Profile::p2b(),
            Profile::p4b(),
            Profile::p12b(),
            Profile::p35b(),
        ];
        for f in FailureForm::ALL {
            let v: Vec<f64> = ps.iter().map(|p| p.rate(f, 4096, 8)).collect();
            assert!(v.windows(2).all(|w| w[0] >= w[1]), "{f:?} {v:?}");
        }
        let p = Profile::p2b();
        assert!(p.rate(TextCallJson, 30_000, 10) > p.rate(TextCallJson, 1_000, 5));
        assert!(p.rate(Abandon, 40_000, 6) > p.rate(Abandon, 1_000, 6));
        assert_eq!(Profile::oracle().rate(TextCallJson, 100_000, 40), 0.0);
        assert!(Profile::oracle().is_oracle());
    }

    #[test]
    fn form_names_roundtrip() {
        for f in FailureForm::ALL {
            assert_eq!(FailureForm::parse(f.name()), Some(f));
        }
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    /// docs/sim.md carries the same tables as the code.
    #[test]
    fn docs_show_the_code_tables() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/sim.md"))
            .expect("docs/sim.md exists");
        let tables: Vec<(String, String)> = [
            Profile::p2b(),
            Profile::p4b(),
            Profile::p12b(),
            Profile::p35b(),
        ]
        .iter()
        .map(|p| (p.name.clone(), table_markdown(p)))
        .collect();
        if std::env::var_os("LRAB_PRINT_TABLES").is_some() {
            for (name, t) in &tables {
                println!("### sim-{name}\n\n{t}");
            }
        }
        for (name, t) in &tables {
            assert!(
                doc.contains(t.as_str()),
                "docs/sim.md lacks the current table of sim-{name}:\n{t}"
            );
        }
    }
}
