//! Edit blocks in the reply text (aider's edit formats, as its documentation and
//! `coders/wholefile_prompts.py`, `coders/editblock_prompts.py` describe them): no tools in
//! the request; the system prompt documents either the *file listing* (the file's path alone
//! on a line, then the whole new content between the fences it shows) or the
//! *SEARCH/REPLACE block* (the path, an opening fence, `<<<<<<< SEARCH`, lines to find,
//! `=======`, their replacement, `>>>>>>> REPLACE`, the closing fence; an empty SEARCH
//! section makes a new file). Shell commands, when the prompt asks for them, go in ```bash
//! blocks. The reply is applied after it ends; nothing comes back between its edits, so the
//! model puts every edit in one reply.
//!
//! The current content of a file is the latest listing of it the conversation shows (the
//! files the user added to the chat).

use super::{arg, tool, Action, TextProtocol};
use crate::convo::{Call, Conv};
use crate::policy::narration_re;
use lrab_ollama::Tool;

const WRITE: &str = "write_file";
const RUN: &str = "run_command";
const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Style {
    /// The whole new file in a listing.
    Whole,
    /// SEARCH/REPLACE blocks.
    SearchReplace,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditBlocks {
    pub style: Style,
    pub open: String,
    pub close: String,
    /// The prompt asks for shell commands in ```bash blocks.
    pub shell: bool,
}

fn close_of(open: &str) -> String {
    match open.strip_prefix('<') {
        Some(tag) => format!("</{tag}"),
        None => open.to_string(),
    }
}

/// The edit format a request's system prompt documents, with the fence its example uses.
pub fn detect(conv: &Conv, system: &str) -> Option<EditBlocks> {
    let shell = system.contains("```bash blocks");
    if system.contains("*file listing*") {
        let open = system
            .lines()
            .skip_while(|l| l.trim() != "path/to/filename.js")
            .nth(1)
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .unwrap_or("```")
            .to_string();
        let close = close_of(&open);
        return Some(EditBlocks {
            style: Style::Whole,
            open,
            close,
            shell,
        });
    }
    if system.contains(SEARCH) && system.contains(REPLACE) {
        // "The opening fence and code language, eg: ```python"
        let all: String = conv
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let open = all
            .split("eg: ")
            .nth(1)
            .and_then(|s| s.split("python").next())
            .filter(|f| !f.is_empty() && !f.contains(char::is_whitespace))
            .unwrap_or("```")
            .to_string();
        let close = close_of(&open);
        return Some(EditBlocks {
            style: Style::SearchReplace,
            open,
            close,
            shell,
        });
    }
    None
}

/// File listings in a text, the way aider reads them: a line starting with a fence opens a
/// block whose path is the line before it; the next line starting with a fence closes it.
/// Each listing: (line index of the path, path, content).
pub fn listings(text: &str, open: &str, close: &str) -> Vec<(usize, String, String)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = Vec::new();
    let mut cur: Option<(usize, String, String)> = None;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with(open) || line.starts_with(close) {
            match cur.take() {
                Some(l) => out.push(l),
                None if i > 0 => {
                    let name = lines[i - 1].trim().to_string();
                    if !name.is_empty() && !line.starts_with("```bash") {
                        cur = Some((i - 1, name, String::new()));
                    }
                }
                None => {}
            }
        } else if let Some((_, _, body)) = cur.as_mut() {
            body.push_str(line);
        }
    }
    out
}

impl EditBlocks {
    /// The current content of `path` as the conversation shows it (the latest listing in a
    /// message before `upto`).
    fn known(&self, conv: &Conv, upto: usize, path: &str) -> Option<String> {
        conv.messages[..upto.min(conv.messages.len())]
            .iter()
            .rev()
            .filter(|m| m.role == "user" || m.role == "system")
            .find_map(|m| {
                listings(&m.content, &self.open, &self.close)
                    .into_iter()
                    .rev()
                    .find(|(_, p, _)| p == path)
                    .map(|(_, _, c)| c)
            })
    }

    fn write(&self, conv: &Conv, path: Option<&str>, content: &str) -> String {
        let mut body = content.to_string();
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        let head = path.map(|p| format!("{p}\n")).unwrap_or_default();
        match self.style {
            Style::Whole => format!("{head}{}\n{body}{}\n", self.open, self.close),
            Style::SearchReplace => {
                let old = path.and_then(|p| self.known(conv, conv.messages.len(), p));
                let (search, replace) = match &old {
                    Some(old) => hunk(old, &body),
                    None => (String::new(), body),
                };
                format!(
                    "{head}{}{}\n{SEARCH}\n{search}{DIVIDER}\n{replace}{REPLACE}\n{}\n",
                    self.open,
                    language(path.unwrap_or_default()),
                    self.close
                )
            }
        }
    }
}

/// The code language after an opening fence, by the file's extension.
fn language(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "py" => "python",
        "md" => "markdown",
        "sh" => "bash",
        "json" => "json",
        "toml" => "toml",
        "csv" => "csv",
        _ => "",
    }
}

/// One SEARCH/REPLACE pair turning `old` into `new`: the changed lines with as much context
/// as makes the SEARCH part non-empty and found only once.
pub fn hunk(old: &str, new: &str) -> (String, String) {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let mut pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    loop {
        let search: String = a[pre..a.len() - suf].concat();
        let unique = !search.trim().is_empty() && occurrences(old, &search) == 1;
        if unique || (pre == 0 && suf == 0) {
            return (search, b[pre..b.len() - suf].concat());
        }
        pre = pre.saturating_sub(1);
        suf = suf.saturating_sub(1);
    }
}

/// How often `needle` occurs in `hay`, overlaps counted.
fn occurrences(hay: &str, needle: &str) -> usize {
    (0..hay.len())
        .filter(|&i| hay.is_char_boundary(i) && hay[i..].starts_with(needle))
        .count()
}

/// Applies SEARCH/REPLACE to `old` (the first occurrence; an empty SEARCH appends).
fn apply(old: &str, search: &str, replace: &str) -> Option<String> {
    if search.trim().is_empty() {
        return Some(format!("{old}{replace}"));
    }
    let i = old.find(search)?;
    Some(format!(
        "{}{replace}{}",
        &old[..i],
        &old[i + search.len()..]
    ))
}

/// SEARCH/REPLACE blocks the way aider finds them: a `<<<<<<< SEARCH` line, the path on the
/// nearest line above it that is not a fence, the block up to `>>>>>>> REPLACE` (fences inside
/// it are content). Each: (line index of the path, path, block from the SEARCH line on).
fn sr_blocks(lines: &[&str]) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != SEARCH {
            i += 1;
            continue;
        }
        let head = (0..i).rev().find(|&j| {
            let l = lines[j].trim();
            !l.is_empty() && !l.starts_with("```") && !l.starts_with('<')
        });
        let end = (i..lines.len()).find(|&j| lines[j].trim_end() == REPLACE);
        match (head, end) {
            (Some(h), Some(e)) => {
                out.push((h, lines[h].trim().to_string(), lines[i..=e].concat()));
                i = e + 1;
            }
            _ => break,
        }
    }
    out
}

fn note_before(lines: &[&str], at: usize) -> String {
    lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| narration_re().is_match(l))
        .unwrap_or("")
        .to_string()
}

impl TextProtocol for EditBlocks {
    fn tools(&self) -> Vec<Tool> {
        let mut t = vec![tool(WRITE, &[("path", "string"), ("content", "string")])];
        if self.shell {
            t.push(tool(RUN, &[("command", "string")]));
        }
        t
    }

    fn one_shot(&self) -> bool {
        true
    }

    fn render(&self, conv: &Conv, actions: &[Action], tail: &str) -> String {
        let mut out = String::new();
        for a in actions {
            if !a.note.is_empty() {
                out.push_str(&format!("{}\n\n", a.note));
            }
            match a.call.name.as_str() {
                WRITE => {
                    let content = arg(&a.call, "content").unwrap_or_default();
                    out.push_str(&self.write(conv, arg(&a.call, "path"), content));
                }
                _ => {
                    let cmd = arg(&a.call, "command").unwrap_or_default();
                    out.push_str(&format!("```bash\n{cmd}\n```\n"));
                }
            }
            out.push('\n');
        }
        out.push_str(tail);
        out
    }

    fn parse(&self, conv: &Conv, at: usize, content: &str) -> Vec<Action> {
        let lines: Vec<&str> = content.split_inclusive('\n').collect();
        let mut found: Vec<(usize, Action)> = Vec::new();
        let call = |name: &str, args| Call {
            name: name.into(),
            args,
        };
        let blocks = match self.style {
            Style::Whole => listings(content, &self.open, &self.close),
            Style::SearchReplace => sr_blocks(&lines),
        };
        for (i, path, body) in blocks {
            let body = match self.style {
                Style::Whole => Some(body),
                Style::SearchReplace => self.read_block(conv, at, &path, &body),
            };
            if let Some(body) = body {
                let args = serde_json::json!({"path": path, "content": body});
                let note = note_before(&lines, i);
                found.push((
                    i,
                    Action {
                        note,
                        call: call(WRITE, args),
                    },
                ));
            }
        }
        if self.shell {
            for (i, l) in lines.iter().enumerate() {
                if l.trim_end() == "```bash" {
                    let cmd: Vec<&str> = lines[i + 1..]
                        .iter()
                        .take_while(|l| !l.starts_with("```"))
                        .copied()
                        .collect();
                    let args = serde_json::json!({"command": cmd.concat().trim_end()});
                    let note = note_before(&lines, i);
                    found.push((
                        i,
                        Action {
                            note,
                            call: call(RUN, args),
                        },
                    ));
                }
            }
        }
        found.sort_by_key(|(i, _)| *i);
        found.into_iter().map(|(_, a)| a).collect()
    }
}

impl EditBlocks {
    /// The whole new content a SEARCH/REPLACE block stands for.
    fn read_block(&self, conv: &Conv, at: usize, path: &str, body: &str) -> Option<String> {
        let lines: Vec<&str> = body.split_inclusive('\n').collect();
        let div = lines.iter().position(|l| l.trim_end() == DIVIDER)?;
        let end = lines.iter().rposition(|l| l.trim_end() == REPLACE)?;
        let search = lines.get(1..div)?.concat();
        let replace = lines.get(div + 1..end)?.concat();
        let (search, replace) = (search.as_str(), replace.as_str());
        match self.known(conv, at, path) {
            None => Some(replace.to_string()),
            Some(old) => apply(&old, search, replace).or_else(|| {
                // the listing already shows the edit applied
                old.contains(replace).then_some(old)
            }),
        }
    }
}

#[cfg(test)]
mod tests;
