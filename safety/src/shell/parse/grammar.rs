//! The grammar half of the parser: tokens to lists, pipelines, commands, redirections and
//! function definitions.

use super::lexer::{Parser, Stop, Tok};
use super::*;

impl Parser {
    pub(super) fn list(&mut self, stop: Stop) -> Result<Script, ParseError> {
        let mut items = Vec::new();
        let mut pipelines: Vec<Pipeline> = Vec::new();
        let mut cmds: Vec<Cmd> = Vec::new();
        loop {
            let save = self.i;
            let tok = self.next_tok()?;
            match tok {
                Tok::Eof => {
                    if stop != Stop::Eof {
                        return Err(self.err("missing closing bracket"));
                    }
                    break;
                }
                Tok::Op(")") if stop == Stop::RParen => break,
                Tok::Op(")") => {
                    // `case` patterns: tolerated, the pattern text is data
                    continue;
                }
                Tok::Op(op @ ("|" | "|&")) => {
                    let _ = op;
                    if cmds.is_empty() {
                        return Err(self.err("pipe without a command"));
                    }
                }
                Tok::Op(op @ ("&&" | "||")) => {
                    let _ = op;
                    if cmds.is_empty() {
                        return Err(self.err("&& or || without a command"));
                    }
                    pipelines.push(Pipeline {
                        cmds: std::mem::take(&mut cmds),
                    });
                }
                Tok::Op(op @ (";" | "&" | "\n" | ";;")) => {
                    if !cmds.is_empty() {
                        pipelines.push(Pipeline {
                            cmds: std::mem::take(&mut cmds),
                        });
                    }
                    if !pipelines.is_empty() {
                        items.push(AndOr {
                            pipelines: std::mem::take(&mut pipelines),
                            background: op == "&",
                        });
                    }
                }
                Tok::Op("(") => {
                    let inner = self.nested(Stop::RParen)?;
                    let redirs = self.trailing_redirs()?;
                    cmds.push(Cmd::Subshell(inner, redirs));
                }
                Tok::Word(_, raw) if raw == "}" && stop == Stop::RBrace => break,
                Tok::Word(_, raw) if raw == "{" => {
                    let inner = self.nested(Stop::RBrace)?;
                    let redirs = self.trailing_redirs()?;
                    cmds.push(Cmd::Group(inner, redirs));
                }
                Tok::Word(w, raw) => {
                    self.i = save;
                    let _ = (w, raw);
                    let cmd = self.command()?;
                    cmds.push(cmd);
                }
                Tok::Redir(_) => {
                    self.i = save;
                    let cmd = self.command()?;
                    cmds.push(cmd);
                }
                Tok::Op(_) => return Err(self.err("unexpected operator")),
            }
        }
        if !cmds.is_empty() {
            pipelines.push(Pipeline { cmds });
        }
        if !pipelines.is_empty() {
            items.push(AndOr {
                pipelines,
                background: false,
            });
        }
        Ok(Script { items })
    }

    pub(super) fn trailing_redirs(&mut self) -> Result<Vec<Redir>, ParseError> {
        let mut out = Vec::new();
        loop {
            let save = self.i;
            match self.next_tok()? {
                Tok::Redir(r) => out.push(r),
                _ => {
                    self.i = save;
                    return Ok(out);
                }
            }
        }
    }

    /// A simple command or a function definition.
    pub(super) fn command(&mut self) -> Result<Cmd, ParseError> {
        let mut simple = Simple::default();
        // here-document slots: indexes of redirs that need a body
        let mut heredoc_idx: Vec<(usize, String, bool)> = Vec::new();
        loop {
            let save = self.i;
            let tok = self.next_tok()?;
            match tok {
                Tok::Word(w, raw) => {
                    // function definition `name() { … }`
                    if simple.words.is_empty() && simple.assigns.is_empty() && self.starts("()") {
                        self.i += 2;
                        let body = self.func_body()?;
                        return Ok(Cmd::FuncDef {
                            name: raw,
                            body: Box::new(body),
                        });
                    }
                    if simple.words.is_empty() && raw == "function" {
                        self.skip_blanks();
                        let (nw, _) = self.word()?;
                        let name = nw.literal().unwrap_or_default();
                        self.skip_blanks();
                        if self.starts("()") {
                            self.i += 2;
                        }
                        let body = self.func_body()?;
                        return Ok(Cmd::FuncDef {
                            name,
                            body: Box::new(body),
                        });
                    }
                    if simple.words.is_empty() {
                        if let Some((name, value)) = split_assign(&w) {
                            simple.assigns.push((name, value));
                            continue;
                        }
                    }
                    simple.words.push(w);
                }
                Tok::Redir(r) => {
                    if r.op == "<<" || r.op == "<<-" {
                        let delim = r.target.literal().unwrap_or_default();
                        heredoc_idx.push((simple.redirs.len(), delim, r.op == "<<-"));
                    }
                    simple.redirs.push(r);
                }
                _ => {
                    self.i = save;
                    break;
                }
            }
        }
        if !heredoc_idx.is_empty() {
            // Bodies follow the end of this line: read them now, in order.
            let mut j = self.i;
            while j < self.s.len() && self.s[j] != '\n' {
                j += 1;
            }
            // Only the current line's remainder may hold more commands; we read bodies after it.
            let rest_line: Vec<char> = self.s[self.i..j].to_vec();
            let after = if j < self.s.len() { j + 1 } else { j };
            let mut k = after;
            for (idx, delim, strip) in heredoc_idx {
                let mut body = String::new();
                while k < self.s.len() {
                    let start = k;
                    while k < self.s.len() && self.s[k] != '\n' {
                        k += 1;
                    }
                    let line: String = self.s[start..k].iter().collect();
                    if k < self.s.len() {
                        k += 1;
                    }
                    let cmp = if strip {
                        line.trim_start_matches('\t').to_string()
                    } else {
                        line
                    };
                    if cmp == delim {
                        break;
                    }
                    body.push_str(&cmp);
                    body.push('\n');
                }
                simple.redirs[idx].target = Word::lit(&body);
            }
            // splice: keep the rest of the current line, drop the consumed bodies
            let mut ns: Vec<char> = self.s[..self.i].to_vec();
            ns.extend(rest_line);
            ns.push('\n');
            let resume = ns.len();
            ns.extend_from_slice(&self.s[k..]);
            let _ = resume;
            self.s = ns;
        }
        Ok(Cmd::Simple(simple))
    }

    pub(super) fn func_body(&mut self) -> Result<Cmd, ParseError> {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.i += 1;
            } else {
                break;
            }
        }
        match self.next_tok()? {
            Tok::Word(_, raw) if raw == "{" => {
                let inner = self.nested(Stop::RBrace)?;
                Ok(Cmd::Group(inner, self.trailing_redirs()?))
            }
            Tok::Op("(") => {
                let inner = self.nested(Stop::RParen)?;
                Ok(Cmd::Subshell(inner, self.trailing_redirs()?))
            }
            _ => Err(self.err("function body must be { … } or ( … )")),
        }
    }
}

/// `NAME=value` as an assignment, when NAME is an unquoted identifier.
fn split_assign(w: &Word) -> Option<(String, Word)> {
    let Some(Part::Lit {
        text,
        quoted: false,
    }) = w.parts.first()
    else {
        return None;
    };
    let eq = text.find('=')?;
    let name = &text[..eq];
    if name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.chars().next()?.is_ascii_digit()
    {
        return None;
    }
    let mut parts = Vec::new();
    let rest = &text[eq + 1..];
    if !rest.is_empty() {
        parts.push(Part::Lit {
            text: rest.to_string(),
            quoted: false,
        });
    }
    parts.extend(w.parts[1..].iter().cloned());
    Some((name.to_string(), Word { parts }))
}
