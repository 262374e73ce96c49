//! The per-command rules, after the walk has expanded the command line: wrappers are unwrapped
//! first ([`wrappers`], shells and interpreters in [`interp`]), then the command's rules apply,
//! one table per ring ([`ring2`], [`ring3`], [`ring4`]).

mod interp;
mod ring2;
mod ring3;
mod ring4;
mod wrappers;

use crate::analyzer::{recursive_delete, Analyzer, Env, Stdin, F};
use crate::payload::{self, Lang};
use crate::Ring;
use interp::shebang_lang;
use std::path::Path;

const R2: Ring = Ring::Irreversible;
const R3: Ring = Ring::SystemMutation;
const R4: Ring = Ring::Boundary;

fn is_shell(n: &str) -> bool {
    matches!(
        n,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh" | "rbash" | "fish" | "csh" | "tcsh"
    )
}

fn interp_lang(n: &str) -> Option<Lang> {
    if n.starts_with("python") || n.starts_with("pypy") {
        return Some(Lang::Python);
    }
    Some(match n {
        "perl" => Lang::Perl,
        "node" | "nodejs" | "deno" | "bun" => Lang::Node,
        "ruby" => Lang::Ruby,
        "php" => Lang::Php,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        _ => return None,
    })
}

/// Short-option cluster contains `c` (`-rf` has `r`), or a long option equals `long`.
fn has(args: &[F], short: char, long: &str) -> bool {
    args.iter().take_while(|a| a.text != "--").any(|a| {
        let t = a.text.as_str();
        (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
            || (!long.is_empty() && t == long)
    })
}

fn operands(args: &[F]) -> Vec<F> {
    let mut out = Vec::new();
    let mut after = false;
    for a in args {
        if after {
            out.push(a.clone());
        } else if a.text == "--" {
            after = true;
        } else if !(a.text.starts_with('-') && a.text.len() > 1) || a.dynamic {
            out.push(a.clone());
        }
    }
    out
}

/// Where the walk goes after a wrapper.
pub(super) enum Flow {
    /// `args` now holds the wrapped command: look at it.
    Again,
    /// Nothing more to look at.
    Done,
    /// Not a wrapper: apply the command's rules.
    Rules,
}

pub(crate) fn command(
    a: &mut Analyzer<'_>,
    mut args: Vec<F>,
    env: &mut Env,
    stdin: Stdin,
    depth: usize,
) {
    let mut from_xargs = false;
    loop {
        if args.is_empty() {
            return;
        }
        let f0 = args[0].clone();
        if f0.dynamic {
            a.add(
                R2,
                format!(
                    "the command name is computed at run time ('{}…'), which hides what would run",
                    f0.text
                ),
                Some("write the command name literally"),
            );
            return;
        }
        if f0.glob && f0.text != "[" && f0.text != "[[" {
            a.add(
                R2,
                format!("the command name '{}' is a glob pattern", f0.text),
                Some("write the command name literally"),
            );
            return;
        }
        // a path to a symlink runs its target (`ln -s /bin/rm x; ./x -rf /`)
        let linked = if f0.text.contains('/') {
            a.path_of(&f0, env)
                .filter(|p| std::fs::symlink_metadata(&f0.text).is_ok() || p.exists())
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        } else {
            None
        };
        let name = linked.unwrap_or_else(|| f0.text.rsplit('/').next().unwrap_or("").to_string());
        let lname = name
            .to_ascii_lowercase()
            .trim_end_matches(".exe")
            .to_string();
        let rest = args[1..].to_vec();
        if let Some(v) = env.vars.get(&format!("\u{0}alias:{name}")).cloned() {
            let joined = std::iter::once(v)
                .chain(rest.iter().map(|f| f.text.clone()))
                .collect::<Vec<_>>()
                .join(" ");
            a.source(&joined, &mut env.clone(), depth + 1);
            return;
        }
        // generic: every path-like argument that is sensitive is refused
        for x in &rest {
            let t = x
                .text
                .split_once('=')
                .map(|(k, v)| {
                    if k.starts_with('-') || k == "if" || k == "of" {
                        v
                    } else {
                        x.text.as_str()
                    }
                })
                .unwrap_or(&x.text);
            let tf = F {
                text: t.to_string(),
                ..x.clone()
            };
            // plain names too when they exist: a hard link can give a secret any name
            let existing = !t.starts_with('-') && a.path_of(&tf, env).is_some_and(|p| p.exists());
            if t.contains('/') || t.starts_with('.') || t.starts_with('~') || existing {
                a.read_target(&tf, env);
            }
        }
        match wrappers::unwrap(
            a,
            &lname,
            &name,
            &rest,
            &mut args,
            env,
            &stdin,
            depth,
            &mut from_xargs,
        ) {
            Flow::Again => continue,
            Flow::Done => return,
            Flow::Rules => {}
        }
        // executing a file from the workdir: inspect it like a script
        if f0.text.contains('/') {
            if let Some(content) = a.file_content(&f0, env) {
                let lang = shebang_lang(&content);
                if lang == Lang::Shell {
                    a.source(&content, &mut env.clone(), depth + 1);
                } else {
                    payload::inspect(a, &mut env.clone(), lang, &content, false, depth + 1);
                }
            } else if a.written_opaque(&f0, env) {
                a.add(R2, format!("runs '{}', a file produced in the same command line whose content cannot be inspected", f0.text), Some("write the script with the file tool first, then run it"));
            }
        }
        rules(a, &lname, &f0.text, &rest, env, from_xargs, depth);
        return;
    }
}

const SYSTEM_DIRS: &[&str] = &[
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
    "/sbin", "/srv", "/sys", "/usr", "/var", "/run",
];

fn is_system_path(p: &Path) -> bool {
    SYSTEM_DIRS
        .iter()
        .any(|s| p == Path::new(s) || (*s != "/" && *s != "/home" && p.starts_with(s)))
}

fn sub(rest: &[F]) -> Vec<String> {
    rest.iter()
        .filter(|f| !f.text.starts_with('-'))
        .map(|f| f.text.to_ascii_lowercase())
        .collect()
}

/// One command line as the rule tables see it (after wrappers).
pub(super) struct Call<'c> {
    /// Lower-case command name (`rm`).
    pub lname: &'c str,
    /// The name as written, without its folder.
    pub name: &'c str,
    /// The command as written (`/usr/bin/rm`, `.venv/bin/pip`).
    pub full: &'c str,
    /// The arguments.
    pub rest: &'c [F],
    /// Lower-case arguments that are not options.
    pub words: Vec<String>,
    /// Every argument, lower-case.
    pub all_lower: Vec<String>,
    /// The arguments came from `xargs` (some are read from stdin).
    pub from_xargs: bool,
}

impl Call<'_> {
    /// The first non-option argument (a subcommand), or "".
    pub fn w0(&self) -> &str {
        self.words.first().map(String::as_str).unwrap_or("")
    }
    /// Some argument is `w` (lower-case).
    pub fn has_word(&self, w: &str) -> bool {
        self.all_lower.iter().any(|x| x == w)
    }
}

/// The rules of a command after wrappers: recursive readers, then the command's table.
pub(super) fn rules(
    a: &mut Analyzer<'_>,
    lname: &str,
    full: &str,
    rest: &[F],
    env: &mut Env,
    from_xargs: bool,
    depth: usize,
) {
    let c = Call {
        lname,
        name: full.rsplit('/').next().unwrap_or(full),
        full,
        rest,
        words: sub(rest),
        all_lower: rest.iter().map(|f| f.text.to_ascii_lowercase()).collect(),
        from_xargs,
    };
    ring4::recursive_read(a, lname, rest, env);
    ring2::apply(a, &c, env, depth);
    ring3::apply(a, &c, env);
    ring4::apply(a, &c, env);
}

impl Analyzer<'_> {
    /// An `env NAME=VALUE` assignment: wiping shell history (ring 2) or injecting code into
    /// every program (ring 3).
    pub(crate) fn check_env_assign(&mut self, k: &str, v: &str) {
        match k {
            "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST"
                if v.is_empty() || v == "0" || v == "/dev/null" =>
            {
                self.add(
                    R2,
                    format!("setting {k}={v} wipes or disables shell history"),
                    None,
                )
            }
            "LD_PRELOAD" | "LD_AUDIT" => {
                self.add(R3, format!("{k} injects code into every program"), None)
            }
            _ => {}
        }
    }
}

pub(super) fn rules_of_find(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, depth: usize) {
    let mut roots = Vec::new();
    let mut i = 0;
    while i < rest.len() && matches!(rest[i].text.as_str(), "-H" | "-L" | "-P") {
        i += 1;
    }
    while i < rest.len()
        && !(rest[i].text.starts_with('-') || rest[i].text == "(" || rest[i].text == "!")
    {
        roots.push(rest[i].clone());
        i += 1;
    }
    if roots.is_empty() {
        roots.push(F::lit("."));
    }
    let expr = &rest[i..];
    let deletes = expr.iter().any(|x| x.text == "-delete");
    if deletes {
        for r in &roots {
            recursive_delete(a, r, env, "find -delete");
        }
    }
    let mut k = 0;
    while k < expr.len() {
        let t = expr[k].text.as_str();
        if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = expr[k + 1..]
                .iter()
                .position(|x| x.text == ";" || x.text == "+")
                .map(|e| k + 1 + e)
                .unwrap_or(expr.len());
            let cmd = &expr[k + 1..end];
            // the command runs once per found file: substitute each root for `{}`
            for r in &roots {
                let inst: Vec<F> = cmd
                    .iter()
                    .map(|x| {
                        if x.text.contains("{}") {
                            F {
                                text: x.text.replace("{}", &r.text),
                                ..r.clone()
                            }
                        } else {
                            x.clone()
                        }
                    })
                    .collect();
                let name = inst
                    .first()
                    .map(|f| f.text.rsplit('/').next().unwrap_or("").to_string())
                    .unwrap_or_default();
                if name == "rm" || name == "shred" || name == "unlink" {
                    // deleting every match under the root is a recursive delete of the root
                    recursive_delete(a, r, env, &format!("find -exec {name}"));
                }
                command(a, inst, &mut env.clone(), Stdin::None, depth + 1);
            }
            k = end + 1;
            continue;
        }
        if matches!(t, "-fprint" | "-fprintf" | "-fls" | "-fprint0") {
            if let Some(f) = expr.get(k + 1) {
                a.write_target(f, env, "find -fprint");
            }
        }
        k += 1;
    }
}
