//! A parser for POSIX shell command lines (plus the bash spellings models use: `$'…'`, here-strings,
//! `&>`, `<( … )`, `{a,b}`). It produces structure, not execution: words keep track of which parts
//! were quoted and which are expansions, so the classifier decides on what would actually run
//! rather than on substrings (`echo "rm -rf /"` is data; `r''m -rf /` is `rm`).

/// A list of and-or chains separated by `;`, `&` or newlines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    pub items: Vec<AndOr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AndOr {
    /// Pipelines joined by `&&` / `||` (the operator does not matter for safety: any may run).
    pub pipelines: Vec<Pipeline>,
    pub background: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    pub cmds: Vec<Cmd>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cmd {
    Simple(Simple),
    /// `( … )`: runs in a subshell.
    Subshell(Script, Vec<Redir>),
    /// `{ …; }`.
    Group(Script, Vec<Redir>),
    /// `name() body` / `function name body`.
    FuncDef {
        name: String,
        body: Box<Cmd>,
    },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Simple {
    /// Leading `NAME=value` words.
    pub assigns: Vec<(String, Word)>,
    pub words: Vec<Word>,
    pub redirs: Vec<Redir>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Redir {
    pub fd: Option<u32>,
    /// One of `<`, `>`, `>>`, `>|`, `<>`, `&>`, `&>>`, `>&`, `<&`, `<<`, `<<-`, `<<<`.
    pub op: String,
    /// The target; for here-documents the body (as a literal).
    pub target: Word,
}

impl Redir {
    pub fn is_write(&self) -> bool {
        matches!(self.op.as_str(), ">" | ">>" | ">|" | "<>" | "&>" | "&>>")
            || (self.op == ">&" && !self.target.is_fd_like())
    }
    /// Here-document or here-string: the target is data fed to stdin.
    pub fn is_stdin_data(&self) -> bool {
        matches!(self.op.as_str(), "<<" | "<<-" | "<<<")
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Word {
    pub parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Lit {
        text: String,
        quoted: bool,
    },
    /// `$NAME`, `${NAME}`, `${NAME:-default}`; `default` is kept so it can be used when the
    /// variable is unknown.
    Param {
        name: String,
        default: Option<Box<Word>>,
        quoted: bool,
    },
    /// `$( … )`, backticks, `<( … )`, `>( … )`.
    CmdSub {
        script: Script,
        quoted: bool,
    },
    /// `<( … )` / `>( … )`: runs the script and becomes a `/dev/fd/N` path.
    ProcSub {
        script: Script,
    },
    /// `$(( … ))`: a number computed at run time.
    Arith {
        quoted: bool,
    },
    /// Unquoted `~` or `~user` at the start of a word.
    Tilde(String),
}

impl Word {
    pub fn lit(s: &str) -> Word {
        Word {
            parts: vec![Part::Lit {
                text: s.to_string(),
                quoted: true,
            }],
        }
    }
    /// The text when the word has no expansions at all.
    pub fn literal(&self) -> Option<String> {
        let mut s = String::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, .. } => s.push_str(text),
                _ => return None,
            }
        }
        Some(s)
    }
    fn is_fd_like(&self) -> bool {
        self.literal()
            .is_some_and(|s| s == "-" || (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "shell syntax error at character {}: {}",
            self.offset, self.message
        )
    }
}

/// Parse a command line. Nesting is bounded so hostile input cannot exhaust the stack.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    let mut p = Parser {
        s: src.chars().collect(),
        i: 0,
        depth: 0,
    };
    let script = p.list(Stop::Eof)?;
    if p.i < p.s.len() {
        return Err(p.err("unexpected text"));
    }
    Ok(script)
}

const MAX_DEPTH: usize = 48;

#[derive(Clone, Copy, PartialEq)]
enum Stop {
    Eof,
    RParen,
    RBrace,
}

enum Tok {
    Word(Word, String),
    Op(&'static str),
    Redir(Redir),
    Eof,
}

struct Parser {
    s: Vec<char>,
    i: usize,
    depth: usize,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        '|' | '&' | ';' | '(' | ')' | '<' | '>' | ' ' | '\t' | '\n'
    )
}

impl Parser {
    fn err(&self, m: &str) -> ParseError {
        ParseError {
            message: m.to_string(),
            offset: self.i,
        }
    }
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn peek_at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }
    fn starts(&self, t: &str) -> bool {
        t.chars()
            .enumerate()
            .all(|(k, c)| self.peek_at(k) == Some(c))
    }

    fn skip_blanks(&mut self) {
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

    fn next_tok(&mut self) -> Result<Tok, ParseError> {
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

    fn push_lit(parts: &mut Vec<Part>, c: char, quoted: bool) {
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
    fn word(&mut self) -> Result<(Word, bool), ParseError> {
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

    fn dquoted(&mut self, parts: &mut Vec<Part>) -> Result<(), ParseError> {
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

    fn backtick(&mut self) -> Result<Script, ParseError> {
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

    fn nested(&mut self, stop: Stop) -> Result<Script, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.depth += 1;
        let r = self.list(stop);
        self.depth -= 1;
        r
    }

    fn dollar(&mut self, parts: &mut Vec<Part>, quoted: bool) -> Result<(), ParseError> {
        self.i += 1; // '$'
        match self.peek() {
            Some('\'') if !quoted => {
                self.i += 1;
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
                parts.push(Part::Lit {
                    text: ansi_c(&raw),
                    quoted: true,
                });
            }
            Some('"') if !quoted => {
                self.i += 1;
                self.dquoted(parts)?;
            }
            Some('(') if self.peek_at(1) == Some('(') => {
                self.i += 2;
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
                parts.push(Part::Arith { quoted });
            }
            Some('(') => {
                self.i += 1;
                let script = self.nested(Stop::RParen)?;
                parts.push(Part::CmdSub { script, quoted });
            }
            Some('{') => {
                self.i += 1;
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric()
                        || c == '_'
                        || (name.is_empty() && "!#@*?$-".contains(c))
                    {
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
                    // modifiers: keep a `:-`/`-` default, treat everything else as opaque
                    let is_default = self.starts(":-")
                        || self.starts("-")
                        || self.starts(":=")
                        || self.starts("=");
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
                    if is_default {
                        let d = body.trim_start_matches(':');
                        let d = &d[1..];
                        let mut sub = Parser {
                            s: d.chars().collect(),
                            i: 0,
                            depth: self.depth + 1,
                        };
                        let (w, _) = sub.word()?;
                        default = Some(Box::new(w));
                    } else {
                        name = format!("{name}\u{0}opaque");
                    }
                }
                if name.starts_with('!') {
                    name = format!("{name}\u{0}opaque");
                }
                parts.push(Part::Param {
                    name,
                    default,
                    quoted,
                });
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

    fn list(&mut self, stop: Stop) -> Result<Script, ParseError> {
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

    fn trailing_redirs(&mut self) -> Result<Vec<Redir>, ParseError> {
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
    fn command(&mut self) -> Result<Cmd, ParseError> {
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

    fn func_body(&mut self) -> Result<Cmd, ParseError> {
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

/// Decode the escapes of bash's `$'…'` quoting.
pub fn ansi_c(raw: &str) -> String {
    let c: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let hex = |s: &[char]| -> (u32, usize) {
        let mut v = 0u32;
        let mut n = 0;
        for ch in s {
            match ch.to_digit(16) {
                Some(d) => {
                    v = v * 16 + d;
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    while i < c.len() {
        if c[i] != '\\' || i + 1 >= c.len() {
            out.push(c[i]);
            i += 1;
            continue;
        }
        i += 1;
        let e = c[i];
        i += 1;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'x' => {
                let end = (i + 2).min(c.len());
                let (v, n) = hex(&c[i..end]);
                i += n;
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            'u' | 'U' => {
                let end = (i + if e == 'u' { 4 } else { 8 }).min(c.len());
                let (v, n) = hex(&c[i..end]);
                i += n;
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let mut n = 0;
                while n < 2 && i < c.len() && c[i].is_digit(8) {
                    v = v * 8 + c[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &Script) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for i in &s.items {
            for p in &i.pipelines {
                for c in &p.cmds {
                    if let Cmd::Simple(sc) = c {
                        out.push(
                            sc.words
                                .iter()
                                .map(|w| w.literal().unwrap_or_else(|| "<dyn>".into()))
                                .collect(),
                        );
                    }
                }
            }
        }
        out
    }

    #[test]
    fn quotes_escapes_and_ansi_c_are_removed() {
        let s = parse(r#"r''m -"r"f \/ $'\x41\101'"#).unwrap();
        assert_eq!(words(&s), vec![vec!["rm", "-rf", "/", "AA"]]);
    }

    #[test]
    fn lists_pipes_and_redirections() {
        let s = parse("a | b && c; d & e 2>&1 >out <in").unwrap();
        assert_eq!(s.items.len(), 3);
        assert_eq!(s.items[0].pipelines.len(), 2);
        assert_eq!(s.items[0].pipelines[0].cmds.len(), 2);
        assert!(s.items[1].background);
        let Cmd::Simple(e) = &s.items[2].pipelines[0].cmds[0] else {
            panic!()
        };
        let ops: Vec<&str> = e.redirs.iter().map(|r| r.op.as_str()).collect();
        assert_eq!(ops, vec![">&", ">", "<"]);
        assert!(e.redirs[1].is_write() && !e.redirs[0].is_write());
    }

    #[test]
    fn substitutions_subshells_functions_heredocs() {
        let s = parse("echo $(ls `pwd`) ${X:-d} $((1+2)); (cd a && ls); f() { g; }\ncat <<EOF\nbody $X\nEOF\necho after").unwrap();
        assert_eq!(s.items.len(), 5);
        assert!(matches!(s.items[1].pipelines[0].cmds[0], Cmd::Subshell(..)));
        assert!(matches!(
            s.items[2].pipelines[0].cmds[0],
            Cmd::FuncDef { .. }
        ));
        let Cmd::Simple(c) = &s.items[3].pipelines[0].cmds[0] else {
            panic!()
        };
        assert_eq!(c.redirs[0].target.literal().unwrap(), "body $X\n");
        assert_eq!(
            words(&s).last().unwrap(),
            &vec!["echo".to_string(), "after".to_string()]
        );
    }

    #[test]
    fn assignments_and_errors() {
        let s = parse("A=1 B=\"x y\" cmd arg").unwrap();
        let Cmd::Simple(c) = &s.items[0].pipelines[0].cmds[0] else {
            panic!()
        };
        assert_eq!(c.assigns.len(), 2);
        assert_eq!(c.assigns[1].1.literal().unwrap(), "x y");
        for bad in [
            "echo 'x",
            "echo \"x",
            "$(ls",
            "| a",
            "a && || b",
            "echo ${x",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
