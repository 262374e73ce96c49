//! The lexer half of the parser: characters to tokens and words (quotes, escapes, `$…`
//! expansions, command substitutions).

use super::*;
use crate::decode::ansi_c;

const MAX_DEPTH: usize = 48;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Stop {
    Eof,
    RParen,
    RBrace,
}

pub(super) enum Tok {
    Word(Word, String),
    Op(&'static str),
    Redir(Redir),
    Eof,
}

pub(super) struct Parser {
    pub(super) s: Vec<char>,
    pub(super) i: usize,
    pub(super) depth: usize,
}

pub(super) fn is_meta(c: char) -> bool {
    matches!(
        c,
        '|' | '&' | ';' | '(' | ')' | '<' | '>' | ' ' | '\t' | '\n'
    )
}

impl Parser {
    pub(super) fn err(&self, m: &str) -> ParseError {
        ParseError {
            message: m.to_string(),
            offset: self.i,
        }
    }
    pub(super) fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    pub(super) fn peek_at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }
    pub(super) fn starts(&self, t: &str) -> bool {
        t.chars()
            .enumerate()
            .all(|(k, c)| self.peek_at(k) == Some(c))
    }

    pub(super) fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ') | Some('\t') => self.i += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.i += 2,
                Some('#') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    pub(super) fn next_tok(&mut self) -> Result<Tok, ParseError> {
        self.skip_blanks();
        let Some(c) = self.peek() else {
            return Ok(Tok::Eof);
        };
        if c == '\n' {
            self.i += 1;
            return Ok(Tok::Op("\n"));
        }
        for op in ["&&", "||", ";;", "|&", "|", "&", ";", "(", ")"] {
            if self.starts(op) && !(op == "&" && self.starts("&>")) {
                self.i += op.len();
                return Ok(Tok::Op(op));
            }
        }
        // redirection, optionally with an fd number in front
        let save = self.i;
        let mut fd = None;
        let mut k = 0;
        while self.peek_at(k).is_some_and(|c| c.is_ascii_digit()) {
            k += 1;
        }
        if k > 0 && matches!(self.peek_at(k), Some('<') | Some('>')) {
            let n: String = self.s[self.i..self.i + k].iter().collect();
            fd = n.parse().ok();
            self.i += k;
        }
        if matches!(self.peek(), Some('<') | Some('>')) || self.starts("&>") {
            if self.starts("<(") || self.starts(">(") {
                self.i = save;
            } else {
                let ops = [
                    "&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", "<>", ">&", "<&", "<", ">",
                ];
                let op = ops.iter().find(|o| self.starts(o)).copied().unwrap_or(">");
                self.i += op.len();
                self.skip_blanks();
                let (target, _) = self.word()?;
                if target.parts.is_empty() {
                    return Err(self.err("redirection without a target"));
                }
                if op == "<<" || op == "<<-" {
                    let delim = target
                        .parts
                        .iter()
                        .map(|p| match p {
                            Part::Lit { text, .. } => text.clone(),
                            _ => String::new(),
                        })
                        .collect::<String>();
                    return Ok(Tok::Redir(Redir {
                        fd,
                        op: op.to_string(),
                        target: Word {
                            parts: vec![Part::Lit {
                                text: delim,
                                quoted: true,
                            }],
                        },
                    }));
                }
                return Ok(Tok::Redir(Redir {
                    fd,
                    op: op.to_string(),
                    target,
                }));
            }
        }
        self.i = save;
        let start = self.i;
        let (w, _) = self.word()?;
        let raw: String = self.s[start..self.i].iter().collect();
        Ok(Tok::Word(w, raw))
    }

    pub(super) fn push_lit(parts: &mut Vec<Part>, c: char, quoted: bool) {
        if let Some(Part::Lit { text, quoted: q }) = parts.last_mut() {
            if *q == quoted {
                text.push(c);
                return;
            }
        }
        parts.push(Part::Lit {
            text: c.to_string(),
            quoted,
        });
    }

    /// Read one word (stops at an unquoted metacharacter).
    pub(super) fn word(&mut self) -> Result<(Word, bool), ParseError> {
        let mut parts = Vec::new();
        let at_start = true;
        if at_start && self.peek() == Some('~') {
            self.i += 1;
            let mut user = String::new();
            while let Some(c) = self.peek() {
                if c == '/' || is_meta(c) || c == '"' || c == '\'' || c == '$' {
                    break;
                }
                user.push(c);
                self.i += 1;
            }
            parts.push(Part::Tilde(user));
        }
        while let Some(c) = self.peek() {
            if is_meta(c) {
                if (c == '<' || c == '>') && self.peek_at(1) == Some('(') && parts.is_empty() {
                    self.i += 2;
                    let script = self.nested(Stop::RParen)?;
                    parts.push(Part::ProcSub { script });
                    continue;
                }
                break;
            }
            match c {
                '\\' => {
                    self.i += 1;
                    match self.peek() {
                        Some('\n') => self.i += 1,
                        Some(n) => {
                            Self::push_lit(&mut parts, n, true);
                            self.i += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.i += 1;
                    let mut t = String::new();
                    loop {
                        match self.peek() {
                            None => return Err(self.err("unterminated single quote")),
                            Some('\'') => {
                                self.i += 1;
                                break;
                            }
                            Some(ch) => {
                                t.push(ch);
                                self.i += 1;
                            }
                        }
                    }
                    parts.push(Part::Lit {
                        text: t,
                        quoted: true,
                    });
                }
                '"' => {
                    self.i += 1;
                    self.dquoted(&mut parts)?;
                }
                '`' => {
                    let script = self.backtick()?;
                    parts.push(Part::CmdSub {
                        script,
                        quoted: false,
                    });
                }
                '$' => self.dollar(&mut parts, false)?,
                _ => {
                    Self::push_lit(&mut parts, c, false);
                    self.i += 1;
                }
            }
        }
        Ok((Word { parts }, true))
    }

    pub(super) fn dquoted(&mut self, parts: &mut Vec<Part>) -> Result<(), ParseError> {
        // an empty "" still makes a (quoted, empty) word
        parts.push(Part::Lit {
            text: String::new(),
            quoted: true,
        });
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated double quote")),
                Some('"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some('\\') => {
                    self.i += 1;
                    match self.peek() {
                        Some(n @ ('$' | '`' | '"' | '\\')) => {
                            Self::push_lit(parts, n, true);
                            self.i += 1;
                        }
                        Some('\n') => self.i += 1,
                        _ => Self::push_lit(parts, '\\', true),
                    }
                }
                Some('`') => {
                    let script = self.backtick()?;
                    parts.push(Part::CmdSub {
                        script,
                        quoted: true,
                    });
                }
                Some('$') => self.dollar(parts, true)?,
                Some(c) => {
                    Self::push_lit(parts, c, true);
                    self.i += 1;
                }
            }
        }
    }

    pub(super) fn backtick(&mut self) -> Result<Script, ParseError> {
        self.i += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated backquote")),
                Some('`') => {
                    self.i += 1;
                    break;
                }
                Some('\\') => {
                    self.i += 1;
                    if let Some(n) = self.peek() {
                        if !matches!(n, '$' | '`' | '\\') {
                            inner.push('\\');
                        }
                        inner.push(n);
                        self.i += 1;
                    }
                }
                Some(c) => {
                    inner.push(c);
                    self.i += 1;
                }
            }
        }
        if self.depth >= MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        let mut sub = Parser {
            s: inner.chars().collect(),
            i: 0,
            depth: self.depth + 1,
        };
        let script = sub.list(Stop::Eof).map_err(|e| ParseError {
            message: e.message,
            offset: self.i,
        })?;
        Ok(script)
    }

    pub(super) fn nested(&mut self, stop: Stop) -> Result<Script, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.depth += 1;
        let r = self.list(stop);
        self.depth -= 1;
        r
    }

    pub(super) fn dollar(&mut self, parts: &mut Vec<Part>, quoted: bool) -> Result<(), ParseError> {
        self.i += 1; // '$'
        match self.peek() {
            Some('\'') if !quoted => {
                self.i += 1;
                let part = self.ansi_c_quoted()?;
                parts.push(part);
            }
            Some('"') if !quoted => {
                self.i += 1;
                self.dquoted(parts)?;
            }
            Some('(') if self.peek_at(1) == Some('(') => {
                self.i += 2;
                self.skip_arith()?;
                parts.push(Part::Arith { quoted });
            }
            Some('(') => {
                self.i += 1;
                let script = self.nested(Stop::RParen)?;
                parts.push(Part::CmdSub { script, quoted });
            }
            Some('{') => {
                self.i += 1;
                let part = self.braced_param(quoted)?;
                parts.push(part);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        name.push(c);
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                parts.push(Part::Param {
                    name,
                    default: None,
                    quoted,
                });
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.i += 1;
                parts.push(Part::Param {
                    name: c.to_string(),
                    default: None,
                    quoted,
                });
            }
            _ => Self::push_lit(parts, '$', quoted),
        }
        Ok(())
    }

    /// The rest of `$'…'` (after the quote): its escapes decoded as the shell would.
    fn ansi_c_quoted(&mut self) -> Result<Part, ParseError> {
        let mut raw = String::new();
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated $'…'")),
                Some('\\') => {
                    raw.push('\\');
                    self.i += 1;
                    if let Some(n) = self.peek() {
                        raw.push(n);
                        self.i += 1;
                    }
                }
                Some('\'') => {
                    self.i += 1;
                    break;
                }
                Some(c) => {
                    raw.push(c);
                    self.i += 1;
                }
            }
        }
        Ok(Part::Lit {
            text: ansi_c(&raw),
            quoted: true,
        })
    }

    /// Skip the rest of `$(( … ))` (after the `((`): its value is never needed, only its end.
    fn skip_arith(&mut self) -> Result<(), ParseError> {
        let mut depth = 2usize;
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == '(' {
                depth += 1;
            } else if c == ')' {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
        }
        if depth != 0 {
            return Err(self.err("unterminated $(( … ))"));
        }
        Ok(())
    }

    /// The rest of `${…}` (after the brace). A name the analysis must not trust (indirection
    /// `${!x}`, a modifier other than a default) is marked opaque with a NUL.
    fn braced_param(&mut self, quoted: bool) -> Result<Part, ParseError> {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || (name.is_empty() && "!#@*?$-".contains(c)) {
                name.push(c);
                self.i += 1;
            } else {
                break;
            }
        }
        let mut default = None;
        if self.peek() == Some('}') {
            self.i += 1;
        } else {
            default = self.param_modifier()?;
            if default.is_none() {
                name = format!("{name}\u{0}opaque");
            }
        }
        if name.starts_with('!') {
            name = format!("{name}\u{0}opaque");
        }
        Ok(Part::Param {
            name,
            default,
            quoted,
        })
    }

    /// A `${name…}` modifier up to its closing brace: a `:-`/`-` (or `:=`/`=`) default is kept
    /// as a word, everything else is opaque (`None`).
    fn param_modifier(&mut self) -> Result<Option<Box<Word>>, ParseError> {
        let is_default =
            self.starts(":-") || self.starts("-") || self.starts(":=") || self.starts("=");
        let mut depth = 1usize;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == '\\' {
                self.i += 2;
                continue;
            }
            if c == '{' {
                depth += 1;
            }
            if c == '}' {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            self.i += 1;
        }
        if self.peek() != Some('}') {
            return Err(self.err("unterminated ${ … }"));
        }
        let body: String = self.s[start..self.i].iter().collect();
        self.i += 1;
        if !is_default {
            return Ok(None);
        }
        let d = body.trim_start_matches(':');
        let d = &d[1..];
        let mut sub = Parser {
            s: d.chars().collect(),
            i: 0,
            depth: self.depth + 1,
        };
        let (w, _) = sub.word()?;
        Ok(Some(Box::new(w)))
    }
}
