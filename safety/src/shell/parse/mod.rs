//! A parser for POSIX shell command lines (plus the bash spellings models use: `$'…'`, here-strings,
//! `&>`, `<( … )`, `{a,b}`). It produces structure, not execution: words keep track of which parts
//! were quoted and which are expansions, so the classifier decides on what would actually run
//! rather than on substrings (`echo "rm -rf /"` is data; `r''m -rf /` is `rm`).

mod grammar;
mod lexer;

use lexer::{Parser, Stop};

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
