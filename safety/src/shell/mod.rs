//! Ring 2–4 decisions for shell command lines, made on the parsed structure.
//!
//! The walk expands what can be known statically (quotes, `$'…'`, variables assigned earlier in
//! the same line, `$HOME`, `~`, `$(echo …)`, `echo … | base64 -d`, `{a,b}`), unwraps wrappers
//! (`sudo`, `env`, `timeout`, `xargs`, `sh -c`, `eval`, interpreters' `-c`/`-e` payloads) and
//! applies the rules to every command that would run. Whatever cannot be known — a command name
//! computed at run time, code streamed from the network into a shell — is refused, because the
//! kernel sandbox is the only thing that could contain it.

pub mod parse;
mod rules;
mod stat;

pub use parse::{parse, Script};

use crate::analyzer::{Analyzer, Env, Stdin, F, MAX_NEST};
use crate::paths;
use crate::{Context, Ring, Verdict};
use parse::{Cmd, Part, Simple, Word};

/// Classify a command line the model wants to run in `ctx.workdir`.
pub fn classify_shell(command: &str, ctx: &Context) -> Verdict {
    let mut a = Analyzer::new(ctx);
    let mut env = Env::new(ctx);
    a.source(command, &mut env, 0);
    a.verdict()
}

/// Classify an interpreter payload (`python -c` text, a script file) directly.
pub fn classify_payload(lang: crate::payload::Lang, code: &str, ctx: &Context) -> Verdict {
    let mut a = Analyzer::new(ctx);
    let mut env = Env::new(ctx);
    crate::payload::inspect(&mut a, &mut env, lang, code, true, 0);
    a.verdict()
}

/// The fields of one word as its parts are expanded: kept apart from the walk so that field
/// splitting follows one rule for every part that splits.
struct FieldBuilder {
    fields: Vec<F>,
    cur: F,
    started: bool,
    /// Field splitting uses $IFS as the shell would (`IFS=,; x=rm,-rf,/; $x`).
    ifs: Vec<char>,
}

impl FieldBuilder {
    fn new(env: &Env) -> Self {
        let ifs: Vec<char> = match env.vars.get("IFS") {
            Some(v) if !v.is_empty() => v.chars().chain([' ', '\t', '\n']).collect(),
            _ => vec![' ', '\t', '\n'],
        };
        FieldBuilder {
            fields: Vec::new(),
            cur: F::default(),
            started: false,
            ifs,
        }
    }

    /// Text joined to the current field as is.
    fn push(&mut self, text: &str) {
        self.cur.text.push_str(text);
        self.started = true;
    }

    /// Text whose value only run time knows: the field is dynamic (from its start if empty).
    fn push_unknown(&mut self) {
        if self.cur.text.is_empty() {
            self.cur.lead_dynamic = true;
        }
        self.cur.dynamic = true;
        self.started = true;
    }

    /// An unquoted expansion's text, split on $IFS into fields.
    fn push_split(&mut self, text: &str, dynamic: bool) {
        let mut first = true;
        for piece in text.split(|c: char| self.ifs.contains(&c)) {
            if !first && self.started {
                self.fields.push(std::mem::take(&mut self.cur));
            }
            if !first {
                self.started = false;
            }
            first = false;
            if !piece.is_empty() {
                if !self.started && self.cur.text.is_empty() {
                    self.cur.lead_dynamic = dynamic;
                }
                self.cur.text.push_str(piece);
                self.cur.dynamic |= dynamic;
                self.started = true;
            }
        }
    }

    /// The fields; an unsplit word always has one, even if empty.
    fn finish(mut self, split: bool) -> Vec<F> {
        let cur = self.cur;
        if self.started || !cur.text.is_empty() || cur.dynamic {
            self.fields.push(cur);
        }
        if !split && self.fields.is_empty() {
            self.fields.push(F::default());
        }
        self.fields
    }
}

impl<'a> Analyzer<'a> {
    /// Parse and walk shell source (a command line, an `sh -c` string, a script file).
    pub fn source(&mut self, src: &str, env: &mut Env, depth: usize) {
        if depth > MAX_NEST {
            self.add(
                Ring::Irreversible,
                "command nests shells/evals too deeply to inspect".into(),
                None,
            );
            return;
        }
        match parse(src) {
            Ok(s) => self.script(&s, env, depth),
            Err(e) => self.add(
                Ring::Irreversible,
                format!("{e}; a command that cannot be parsed cannot be checked"),
                Some("write the command in plain POSIX shell syntax"),
            ),
        }
    }

    pub fn script(&mut self, s: &Script, env: &mut Env, depth: usize) {
        for item in &s.items {
            for p in &item.pipelines {
                self.pipeline(&p.cmds, env, depth);
            }
        }
    }

    fn pipeline(&mut self, cmds: &[Cmd], env: &mut Env, depth: usize) {
        for (i, c) in cmds.iter().enumerate() {
            let stdin = if i == 0 {
                Stdin::None
            } else {
                match self.static_pipeline(&cmds[..i], env) {
                    Ok(t) => Stdin::Static(t),
                    Err(producer) => Stdin::Unknown(producer),
                }
            };
            // a pipeline stage runs in a subshell: `cd` there does not leak, but we stay
            // conservative and let assignments/cd of a single command apply
            if cmds.len() > 1 {
                let mut sub = env.clone();
                self.cmd(c, &mut sub, stdin, depth);
                env.opaque_files.extend(sub.opaque_files);
                env.files.extend(sub.files);
            } else {
                self.cmd(c, env, stdin, depth);
            }
        }
    }

    fn cmd(&mut self, c: &Cmd, env: &mut Env, stdin: Stdin, depth: usize) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        match c {
            Cmd::Simple(s) => self.simple(s, env, stdin, depth),
            Cmd::Subshell(s, r) | Cmd::Group(s, r) => {
                for rd in r {
                    self.redir(rd, env, None, depth);
                }
                let mut sub = env.clone();
                self.script(
                    s,
                    if matches!(c, Cmd::Group(..)) {
                        env
                    } else {
                        &mut sub
                    },
                    depth + 1,
                );
            }
            Cmd::FuncDef { name, body } => {
                if calls_name(body, name) {
                    self.add(
                        Ring::Irreversible,
                        format!("function '{name}' calls itself (fork bomb pattern); it would exhaust the machine"),
                        None,
                    );
                }
                let mut sub = env.clone();
                self.cmd(body, &mut sub, Stdin::None, depth + 1);
            }
        }
    }

    fn simple(&mut self, s: &Simple, env: &mut Env, stdin: Stdin, depth: usize) {
        let mut assigned = Vec::new();
        for (name, w) in &s.assigns {
            let f = self.expand_one(w, env, depth);
            self.check_assignment(name, &f);
            assigned.push((name.clone(), f));
        }
        let mut fields = Vec::new();
        for w in &s.words {
            fields.extend(self.expand(w, env, depth));
        }
        if fields.is_empty() {
            for (n, f) in assigned {
                if f.dynamic {
                    env.vars.remove(&n);
                } else {
                    env.vars.insert(n, f.text);
                }
            }
            for rd in &s.redirs {
                self.redir(rd, env, None, depth);
            }
            return;
        }
        // stdin from a here-document / here-string overrides the pipe
        let mut stdin = stdin;
        for rd in &s.redirs {
            if rd.is_stdin_data() {
                let body = if rd.op == "<<<" {
                    let f = self.expand_one(&rd.target, env, depth);
                    if f.dynamic {
                        Stdin::Unknown("a here-string with run-time content".into())
                    } else {
                        Stdin::Static(format!("{}\n", f.text))
                    }
                } else {
                    Stdin::Static(rd.target.literal().unwrap_or_default())
                };
                stdin = body;
            } else if rd.op == "<" {
                let f = self.expand_one(&rd.target, env, depth);
                self.read_target(&f, env);
                stdin = match self.file_content(&f, env) {
                    Some(t) => Stdin::Static(t),
                    None => Stdin::Unknown(format!("file '{}'", f.text)),
                };
            }
        }
        // what the command prints, if it is static (for `echo … > script.sh`)
        let out = stat::eval_simple(&fields, &stdin, env, self);
        for rd in &s.redirs {
            if !rd.is_stdin_data() && rd.op != "<" {
                self.redir(rd, env, out.clone(), depth);
            }
        }
        // `cd` changes where relative paths point for the rest of the line
        if fields[0].text == "cd" && !fields[0].dynamic {
            let target = fields
                .iter()
                .skip(1)
                .find(|f| !f.text.starts_with('-') || f.text == "-");
            env.cwd = match (target, &env.cwd) {
                (None, _) => Some(self.ctx.home.clone()),
                (Some(t), Some(cwd)) if !t.dynamic && t.text != "-" => {
                    Some(paths::resolve(&t.text, cwd, &self.ctx.home))
                }
                _ => None,
            };
            return;
        }
        for (n, f) in &assigned {
            if n == "PATH" && !f.dynamic {
                // a PATH pointing into the workdir could shadow any command name; fine, the
                // names are still checked as written
            }
        }
        rules::command(self, fields, env, stdin, depth);
    }

    fn check_assignment(&mut self, name: &str, f: &F) {
        match name {
            "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST"
                if f.text.is_empty() || f.text == "0" || f.text == "/dev/null" =>
            {
                self.add(
                    Ring::Irreversible,
                    format!("setting {name}={} wipes or disables shell history", f.text),
                    None,
                )
            }
            "LD_PRELOAD" | "LD_LIBRARY_PATH" | "LD_AUDIT" => self.add(
                Ring::SystemMutation,
                format!("{name} injects code into every program that runs"),
                None,
            ),
            _ => {}
        }
    }

    /// Redirection: writes are checked; a statically known output is remembered as file content.
    fn redir(&mut self, rd: &parse::Redir, env: &mut Env, out: Option<String>, depth: usize) {
        if rd.op == ">&" || rd.op == "<&" {
            if let Some(t) = rd.target.literal() {
                if t == "-" || t.chars().all(|c| c.is_ascii_digit()) {
                    return;
                }
            }
        }
        if rd.is_stdin_data() {
            return;
        }
        let f = self.expand_one(&rd.target, env, depth);
        if rd.is_write() {
            if let Some(p) = self.write_target(&f, env, "redirection") {
                match out {
                    Some(o) if rd.op == ">" || rd.op == ">|" => {
                        env.files.insert(p, o);
                    }
                    _ => {
                        env.files.remove(&p);
                        env.opaque_files.push(p);
                    }
                }
            }
        } else {
            self.read_target(&f, env);
        }
    }

    // ---------- expansion ----------

    pub fn expand_one(&mut self, w: &Word, env: &mut Env, depth: usize) -> F {
        let fs = self.expand_inner(w, env, depth, false);
        let mut out = F::default();
        for (i, f) in fs.into_iter().enumerate() {
            if i > 0 {
                out.text.push(' ');
            }
            out.text.push_str(&f.text);
            out.dynamic |= f.dynamic;
            out.lead_dynamic |= i == 0 && f.lead_dynamic;
            out.glob |= f.glob;
        }
        out
    }

    pub fn expand(&mut self, w: &Word, env: &mut Env, depth: usize) -> Vec<F> {
        let fs = self.expand_inner(w, env, depth, true);
        let all_unquoted = w
            .parts
            .iter()
            .all(|p| matches!(p, Part::Lit { quoted: false, .. }));
        if all_unquoted && fs.len() == 1 {
            if let Some(v) = brace_expand(&fs[0].text) {
                return v
                    .into_iter()
                    .map(|t| F {
                        glob: fs[0].glob,
                        ..F::lit(&t)
                    })
                    .collect();
            }
        }
        fs
    }

    fn expand_inner(&mut self, w: &Word, env: &mut Env, depth: usize, split: bool) -> Vec<F> {
        let mut b = FieldBuilder::new(env);
        for p in &w.parts {
            match p {
                Part::Lit { text, quoted } => {
                    if !quoted && text.chars().any(|c| matches!(c, '*' | '?' | '[')) {
                        b.cur.glob = true;
                    }
                    b.push(text);
                }
                Part::Tilde(user) => {
                    let h = if user.is_empty() {
                        self.ctx.home.to_string_lossy().to_string()
                    } else if user == "root" {
                        "/root".into()
                    } else {
                        format!("/home/{user}")
                    };
                    b.push(&h);
                }
                Part::Param {
                    name,
                    default,
                    quoted,
                } => match self.param_value(name, default.as_deref(), env, depth) {
                    Some(v) if split && !quoted => b.push_split(&v, false),
                    Some(v) => b.push(&v),
                    None => b.push_unknown(),
                },
                Part::Arith { .. } => b.push("0"),
                Part::ProcSub { script } => {
                    let mut sub = env.clone();
                    self.script(script, &mut sub, depth + 1);
                    // a pipe path whose content is produced at run time
                    b.push("/dev/fd/63");
                    b.cur.dynamic = true;
                }
                Part::CmdSub { script, quoted } => {
                    // the substitution runs: check it
                    let mut sub = env.clone();
                    self.script(script, &mut sub, depth + 1);
                    match self.static_script(script, env) {
                        Ok(v) => {
                            let v = v.trim_end_matches('\n');
                            if split && !quoted {
                                b.push_split(v, false)
                            } else {
                                b.push(v);
                            }
                        }
                        Err(_) => b.push_unknown(),
                    }
                }
            }
        }
        b.finish(split)
    }

    /// A parameter's static value: the variable if known (a name with a NUL never is), else a
    /// default that expands statically; `None` when only run time can tell.
    fn param_value(
        &mut self,
        name: &str,
        default: Option<&Word>,
        env: &mut Env,
        depth: usize,
    ) -> Option<String> {
        let val = if name.contains('\u{0}') {
            None
        } else {
            env.vars.get(name).cloned()
        };
        match val {
            Some(v) => Some(v),
            None => default.and_then(|d| {
                let f = self.expand_one(d, env, depth);
                (!f.dynamic).then_some(f.text)
            }),
        }
    }

    /// Static stdout of a whole script (only for a single pipeline), or (`Err`) the first
    /// producer that is not static: an analysis result, not an error message.
    pub(crate) fn static_script(&mut self, s: &Script, env: &mut Env) -> Result<String, String> {
        if s.items.len() != 1 || s.items[0].pipelines.len() != 1 {
            return Err("a compound command".into());
        }
        self.static_pipeline(&s.items[0].pipelines[0].cmds, env)
    }

    /// Static stdout of a pipeline, or (`Err`) the first producer that is not static.
    pub(crate) fn static_pipeline(
        &mut self,
        cmds: &[Cmd],
        env: &mut Env,
    ) -> Result<String, String> {
        let mut stdin = Stdin::None;
        for c in cmds {
            let Cmd::Simple(s) = c else {
                return Err("a compound command".into());
            };
            let mut fields = Vec::new();
            let saved = self.findings.len();
            for w in &s.words {
                fields.extend(self.expand(w, env, MAX_NEST));
            }
            // findings were already recorded by the main walk; do not double count
            self.findings.truncate(saved);
            for rd in &s.redirs {
                if rd.op == "<<<" {
                    let f = self.expand_one(&rd.target, env, MAX_NEST);
                    self.findings.truncate(saved);
                    stdin = if f.dynamic {
                        Stdin::Unknown("here-string".into())
                    } else {
                        Stdin::Static(format!("{}\n", f.text))
                    };
                } else if rd.is_stdin_data() {
                    stdin = Stdin::Static(rd.target.literal().unwrap_or_default());
                }
            }
            if fields.is_empty() || fields.iter().any(|f| f.dynamic) {
                return Err(fields.first().map(|f| f.text.clone()).unwrap_or_default());
            }
            match stat::eval_simple(&fields, &stdin, env, self) {
                Some(o) => stdin = Stdin::Static(o),
                None => return Err(fields[0].text.clone()),
            }
        }
        match stdin {
            Stdin::Static(s) => Ok(s),
            _ => Err(String::new()),
        }
    }

    /// Walk shell source found inside a decoded payload without reporting parse errors (the
    /// decoded text may just as well be code in the payload's own language).
    pub fn source_quiet(&mut self, src: &str, env: &mut Env, depth: usize) {
        if depth <= MAX_NEST {
            if let Ok(s) = parse(src) {
                self.script(&s, &mut env.clone(), depth);
            }
        }
    }
}

fn calls_name(c: &Cmd, name: &str) -> bool {
    fn script_calls(s: &Script, name: &str) -> bool {
        s.items.iter().any(|i| {
            i.pipelines
                .iter()
                .any(|p| p.cmds.iter().any(|c| calls_name(c, name)))
        })
    }
    match c {
        Cmd::Simple(s) => s
            .words
            .first()
            .and_then(|w| w.literal())
            .is_some_and(|w| w == name),
        Cmd::Subshell(s, _) | Cmd::Group(s, _) => script_calls(s, name),
        Cmd::FuncDef { body, .. } => calls_name(body, name),
    }
}

/// Bash brace expansion of one unquoted word (`{rm,-rf,/}` → three words, `a{b,c}` → two).
fn brace_expand(t: &str) -> Option<Vec<String>> {
    let open = t.find('{')?;
    let close = open + t[open..].find('}')?;
    let inner = &t[open + 1..close];
    if !inner.contains(',') || inner.contains('{') {
        return None;
    }
    let (pre, post) = (&t[..open], &t[close + 1..]);
    let mut out = Vec::new();
    for alt in inner.split(',') {
        let w = format!("{pre}{alt}{post}");
        match brace_expand(&w) {
            Some(v) => out.extend(v),
            None => out.push(w),
        }
        if out.len() > 256 {
            return None;
        }
    }
    Some(out)
}
