//! Replies a real server loses: a tool call its parser could not read (Ollama answers HTTP
//! 500 with the raw parser error and the model's output is gone), and a reply cut at the
//! output cap (`done_reason: length`, usually with the unclosed call silently dropped).
//! Resending the identical request at temperature 0 reproduces the failure, so each one
//! changes the conversation: the first says what went wrong and shows the expected form, the
//! second asks for a smaller step (a large write split into write_file + append_file), every
//! third compacts the conversation, and after [`GIVE_UP`] in a row the run stops (stalled,
//! exit 0) — a parse failure never ends the run as a backend failure. Part of `resilience`.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Failures of one kind in a row after which the run stops (resumable).
pub const GIVE_UP: u32 = 9;

/// What was lost.
#[derive(Clone, Debug, PartialEq)]
pub enum Lost {
    /// The server's parser rejected the call; its error text.
    Unparsable(String),
    /// Cut at the output cap: the call that was being written, if the text shows one, and
    /// whether reasoning alone used up the cap (no text, no call).
    Cut {
        call: Option<CutCall>,
        thinking: bool,
    },
}

/// The call a cut reply was writing, as far as its text shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutCall {
    pub tool: String,
    pub path: Option<String>,
}

/// What the loop does about it.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Nudge(String),
    /// Compact the conversation, then nudge.
    CompactThenNudge(String),
    /// Stop (resumable).
    GiveUp,
}

/// Streaks of lost replies (reset by any reply that carries a call or real text).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LostReplies {
    pub unparsable: u32,
    pub cut: u32,
    pub total: u32,
}

/// The expected form of a call, shown after an unparsable one.
pub const EXPECTED_FORM: &str = "one tool call whose arguments are a JSON object, for example write_file with {\"path\": \"notes.md\", \"content\": \"# Notes\\nfirst part\\n\"} — strings in double quotes, line breaks inside strings written as \\n, no text after the call";

impl LostReplies {
    pub fn on_ok(&mut self) {
        self.unparsable = 0;
        self.cut = 0;
    }

    /// Decide about one lost reply; `next` is the next executable action, `cap` the output
    /// cap in tokens.
    pub fn on_lost(&mut self, lost: &Lost, next: &str, cap: u32) -> Action {
        self.total += 1;
        let n = match lost {
            Lost::Unparsable(_) => {
                self.unparsable += 1;
                self.cut = 0;
                self.unparsable
            }
            Lost::Cut { .. } => {
                self.cut += 1;
                self.unparsable = 0;
                self.cut
            }
        };
        if n >= GIVE_UP {
            return Action::GiveUp;
        }
        let text = match (lost, n) {
            (Lost::Unparsable(err), 1) => format!(
                "Your last tool call could not be parsed by the server ({}), so nothing ran. Write it again as {EXPECTED_FORM}. Next action: {next}",
                lrab_util::clip_chars(err.trim(), 160)
            ),
            (Lost::Unparsable(_), n) if n % 3 != 0 => format!(
                "Your tool call could not be parsed again. Make a smaller step: one short call; for a long file, write_file a first part (at most about 60 lines), then append_file the rest in further calls. Use {EXPECTED_FORM}. Next action: {next}"
            ),
            (Lost::Unparsable(_), _) => format!(
                "After repeated unparsable tool calls the conversation was shortened. Make one small call with a flat JSON object of arguments. Next action: {next}"
            ),
            (Lost::Cut { call: None, thinking: true }, n) if n % 3 != 0 => format!(
                "Your reasoning used the whole output limit ({cap} tokens) before any tool call, so nothing was done. Think in a few sentences, then make one small tool call. Next action: {next}"
            ),
            (Lost::Cut { call, .. }, 1) => format!(
                "Your last reply hit the output limit ({cap} tokens) and was cut off, so nothing from it was saved. {} Next action: {next}",
                split_advice(call.as_ref())
            ),
            (Lost::Cut { call, .. }, n) if n % 3 != 0 => format!(
                "Cut off at the output limit again. Write much less per call: at most about 40 lines. {} Next action: {next}",
                split_advice(call.as_ref())
            ),
            (Lost::Cut { call, .. }, _) => format!(
                "After repeated replies cut at the output limit the conversation was shortened. {} Next action: {next}",
                split_advice(call.as_ref())
            ),
        };
        if n % 3 == 0 {
            Action::CompactThenNudge(text)
        } else {
            Action::Nudge(text)
        }
    }
}

/// How to split the write that did not fit.
fn split_advice(call: Option<&CutCall>) -> String {
    let path = call.and_then(|c| c.path.as_deref());
    match (call.map(|c| c.tool.as_str()), path) {
        (Some("write_file" | "append_file"), Some(p)) | (None, Some(p)) => format!(
            "Split that write: first write_file(path=\"{p}\") with a short first part (headings and the first section), then append_file(path=\"{p}\") one section per call."
        ),
        (Some(tool), _) if tool != "write_file" && tool != "append_file" => format!(
            "Make the {tool} call shorter, or do the step in several smaller calls."
        ),
        _ => "Write long files in parts: first write_file a short skeleton (headings and the first section), then append_file one section per call, each well under 1500 words.".to_string(),
    }
}

fn name_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r#"(?:"name"\s*:\s*"([A-Za-z_][\w.]{0,63})"|<function=([A-Za-z_][\w.]{0,63})>|\b(write_file|append_file|edit_file|run_shell)\s*\()"#)
            .expect("static regex")
    })
}

fn path_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r#"(?:"(?:path|file_path|filename)"\s*:\s*"([^"\n]{1,200})"|<parameter=(?:path|file_path)>\s*([^<\n]{1,200})|\bpath\s*=\s*["']([^"'\n]{1,200})["'])"#)
            .expect("static regex")
    })
}

/// The call a cut reply's text was writing (JSON, XML-parameter or call-expression forms),
/// read from its first 8 KB only.
pub fn cut_call(text: &str) -> Option<CutCall> {
    let head = match text.char_indices().nth(8192) {
        Some((i, _)) => &text[..i],
        None => text,
    };
    let tool = name_re().captures(head).and_then(|c| {
        c.iter()
            .skip(1)
            .flatten()
            .next()
            .map(|m| m.as_str().to_string())
    });
    let path = path_re().captures(head).and_then(|c| {
        c.iter()
            .skip(1)
            .flatten()
            .next()
            .map(|m| m.as_str().trim().to_string())
    });
    match (tool, path) {
        (None, None) => None,
        (tool, path) => Some(CutCall {
            tool: tool
                .map(|t| {
                    let tools = crate::table::specs_for(&crate::table::all_but_web());
                    crate::mechanisms::format_rescue::canonical_name(&t, &tools)
                })
                .unwrap_or_else(|| "write_file".into()),
            path,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unparsable_calls_escalate_compact_and_give_up() {
        let mut l = LostReplies::default();
        let lost = Lost::Unparsable("failed to parse JSON: unexpected end of JSON input".into());
        let Action::Nudge(t1) = l.on_lost(&lost, "write_file(…)", 8192) else {
            panic!()
        };
        assert!(t1.contains("could not be parsed") && t1.contains("unexpected end of JSON"));
        assert!(t1.contains("\"path\": \"notes.md\""), "{t1}");
        let Action::Nudge(t2) = l.on_lost(&lost, "x", 8192) else {
            panic!()
        };
        assert!(t2.contains("smaller step") && t2.contains("append_file"));
        assert!(matches!(
            l.on_lost(&lost, "x", 8192),
            Action::CompactThenNudge(_)
        ));
        for _ in 4..GIVE_UP {
            assert_ne!(l.on_lost(&lost, "x", 8192), Action::GiveUp);
        }
        assert_eq!(l.on_lost(&lost, "x", 8192), Action::GiveUp);
        l.on_ok();
        assert!(matches!(l.on_lost(&lost, "x", 8192), Action::Nudge(_)));
    }

    #[test]
    fn a_cut_write_is_split_by_its_path() {
        let text = "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"report.md\", \"content\": \"# Report\\n";
        let call = cut_call(text).unwrap();
        assert_eq!(
            call,
            CutCall {
                tool: "write_file".into(),
                path: Some("report.md".into())
            }
        );
        let mut l = LostReplies::default();
        let cut = Lost::Cut {
            call: Some(call),
            thinking: false,
        };
        let Action::Nudge(t) = l.on_lost(&cut, "n", 8192) else {
            panic!()
        };
        assert!(
            t.contains("write_file(path=\"report.md\")")
                && t.contains("append_file(path=\"report.md\")"),
            "{t}"
        );
        assert!(t.contains("8192 tokens"));
        let xml = "<function=write_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n<parameter=content>\nimport os";
        assert_eq!(cut_call(xml).unwrap().path.as_deref(), Some("src/app.py"));
        assert_eq!(cut_call("# A long report about the data\nSection 1"), None);
        let blind = Lost::Cut {
            call: None,
            thinking: false,
        };
        let Action::Nudge(t) = l.on_lost(&blind, "n", 8192) else {
            panic!()
        };
        assert!(t.contains("at most about 40 lines") && t.contains("append_file"));
        let mut l = LostReplies::default();
        let thought = Lost::Cut {
            call: None,
            thinking: true,
        };
        let Action::Nudge(t) = l.on_lost(&thought, "n", 4096) else {
            panic!()
        };
        assert!(
            t.contains("reasoning used the whole output limit (4096 tokens)"),
            "{t}"
        );
    }
}
