//! Interpreter payloads (`python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`, awk programs and
//! script files): the same operations are looked for as in shell — running commands, recursive
//! deletes, writes and deletes outside the workdir, reads of sensitive files — with arguments
//! evaluated when they are literals (string concatenation, `os.path.join`, `expanduser`,
//! `Path.home()`, base64/hex literals). In `-c`/`-e` payloads (strict mode) code that builds a
//! command or code at run time is refused; in script files only concrete findings count.

mod tables;
mod text;

use crate::analyzer::{self, Analyzer, Env, Stdin, F, MAX_NEST};
use crate::Ring;
use tables::*;
use text::*;

/// The interpreter a payload is written for (`python -c`, `node -e`, a heredoc to `sh`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// POSIX shell.
    Shell,
    /// Python.
    Python,
    /// Perl.
    Perl,
    /// JavaScript for Node.js.
    Node,
    /// Ruby.
    Ruby,
    /// PHP.
    Php,
    /// awk programs.
    Awk,
}

/// Look for the operations shell rules care about in a payload of `lang`; `strict` (a `-c`/`-e`
/// payload) also refuses what is built at run time.
pub(crate) fn inspect(
    a: &mut Analyzer<'_>,
    env: &mut Env,
    lang: Lang,
    code: &str,
    strict: bool,
    depth: usize,
) {
    if depth > MAX_NEST {
        a.add(
            Ring::Irreversible,
            "payload nests too deeply to inspect".into(),
            None,
        );
        return;
    }
    if lang == Lang::Shell {
        a.source(code, env, depth + 1);
        return;
    }
    let p = Payload {
        lang,
        code,
        strict,
        depth,
    };
    decoded_payloads(a, env, &p);
    // `from os import system as s`, `import subprocess as sp`, `{execSync: e} = require(…)`:
    // calls through an alias are treated like the original
    let aliases = alias_names(code);
    let exec_names = with_aliases(EXEC, &aliases);
    let rmtree_names = with_aliases(RMTREE, &aliases);
    exec_calls(a, env, &p, &exec_names);
    if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php) {
        backticks(a, env, &p);
    }
    if lang == Lang::Perl {
        perl_open(a, env, &p);
    }
    if lang == Lang::Awk {
        awk(a, env, &p);
    }
    tree_deletes(a, env, &p, &rmtree_names);
    path_writes(a, env, &p);
    path_methods(a, env, code);
    two_path_calls(a, env, code);
    opens(a, env, code);
    literals(a, env, &p);
    if strict && lang == Lang::Python {
        python_dynamic(a, code);
    }
    let _ = Stdin::None;
}

/// One payload being inspected: what every scan needs to know about it.
struct Payload<'c> {
    lang: Lang,
    code: &'c str,
    strict: bool,
    depth: usize,
}

/// Decoded base64/hex literals are payloads too: inspected in the same language and as shell.
fn decoded_payloads(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>) {
    for enc in find_calls(p.code, DECODE) {
        for arg in split_args(&enc.1).iter().take(1) {
            if let Some(s) = eval_str(arg, a, env) {
                let decoded = if enc.0.contains("hex") {
                    hex(&s)
                } else {
                    crate::decode::b64(&s).map(|b| String::from_utf8_lossy(&b).into_owned())
                };
                if let Some(d) = decoded {
                    inspect(a, env, p.lang, &d, p.strict, p.depth + 1);
                    a.source_quiet(&d, env, p.depth + 1);
                }
            }
        }
    }
}

/// `names` plus the aliases the payload gives to any of them.
fn with_aliases<'n>(names: &[&'n str], aliases: &'n [(String, String)]) -> Vec<&'n str> {
    let mut out: Vec<&str> = names.to_vec();
    out.extend(
        aliases
            .iter()
            .filter(|(orig, _)| {
                names
                    .iter()
                    .any(|e| e.rsplit('.').next() == Some(orig.as_str()))
            })
            .map(|(_, al)| al.as_str()),
    );
    out
}

/// Calls that run a command: a literal one is checked as shell, a computed one refused
/// (strict).
fn exec_calls(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>, exec_names: &[&str]) {
    for (name, args) in find_calls(p.code, exec_names) {
        let list = split_args(&args);
        let Some(first) = list.first() else { continue };
        let cmd = if first.trim_start().starts_with('[') {
            let inner = first.trim().trim_start_matches('[').trim_end_matches(']');
            let parts: Option<Vec<String>> = split_args(inner)
                .iter()
                .map(|x| eval_str(x, a, env))
                .collect();
            parts.map(|v| {
                v.iter()
                    .map(|x| shell_quote(x))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        } else if EXEC_PROGRAM_ARGS.contains(&name.as_str())
            || (p.lang == Lang::Perl && list.len() > 1 && name == "system")
        {
            program_and_args(&list, a, env)
        } else {
            eval_str(first, a, env)
        };
        match cmd {
            Some(c) => a.source(&c, &mut env.clone(), p.depth + 1),
            None if p.strict => {
                a.add(Ring::Irreversible, format!("{name}(…) runs a command or code built at run time, which cannot be inspected"), Some("write the literal command"));
            }
            None => {}
        }
    }
}

/// A program + argument list call's command line, or `None` if any part is computed (options
/// objects and `os.P_*` modes are not part of it).
fn program_and_args(list: &[String], a: &Analyzer<'_>, env: &Env) -> Option<String> {
    let mut v = Vec::new();
    let mut ok = true;
    for p in list {
        let p = p.trim();
        if p.starts_with('[') {
            for q in split_args(p.trim_start_matches('[').trim_end_matches(']')) {
                match eval_str(&q, a, env) {
                    Some(s) => v.push(shell_quote(&s)),
                    None => ok = false,
                }
            }
        } else if p.starts_with('{') || p.starts_with("os.P_") {
        } else {
            match eval_str(p, a, env) {
                Some(s) => v.push(shell_quote(&s)),
                None => ok = false,
            }
        }
    }
    ok.then(|| v.join(" "))
}

/// Backticks / `%x` / `qx` in perl, ruby, php: run as shell; with interpolation uncheckable.
fn backticks(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>) {
    for s in backtick_strings(p.code) {
        if s.contains("#{") || (p.lang != Lang::Ruby && s.contains('$')) {
            if p.strict {
                a.add(
                    Ring::Irreversible,
                    "backtick command with interpolation cannot be inspected".into(),
                    None,
                );
            }
        } else {
            a.source(&s, &mut env.clone(), p.depth + 1);
        }
    }
}

/// Perl's `open(F, "| cmd")` runs a command, `open(F, ">path")` writes, anything else reads.
fn perl_open(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>) {
    for (_, args) in find_calls(p.code, &["open"]) {
        let list = split_args(&args);
        let strs: Vec<String> = list
            .iter()
            .skip(1)
            .filter_map(|x| eval_str(x, a, env))
            .collect();
        if let Some(mode) = strs.first() {
            let m = mode.trim();
            if let Some(cmd) = m.strip_prefix('|').or_else(|| m.strip_suffix('|')) {
                a.source(cmd.trim(), &mut env.clone(), p.depth + 1);
            } else if m.starts_with('>') || m.starts_with("+<") {
                let path = m.trim_start_matches(['>', '+', '<']).trim();
                let path = if path.is_empty() {
                    strs.get(1).cloned().unwrap_or_default()
                } else {
                    path.to_string()
                };
                a.write_target(&F::lit(&path), env, "open for writing");
            } else {
                a.read_target(&F::lit(m.trim_start_matches('<').trim()), env);
            }
        }
    }
}

/// awk's `system()`, `print > "file"` and `print | "cmd"`.
fn awk(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>) {
    let code = p.code;
    for (_, args) in find_calls(code, &["system"]) {
        if let Some(s) = split_args(&args).first().and_then(|x| eval_str(x, a, env)) {
            a.source(&s, &mut env.clone(), p.depth + 1);
        } else if p.strict {
            a.add(
                Ring::Irreversible,
                "awk system() with a computed command".into(),
                None,
            );
        }
    }
    for s in string_literals(code) {
        if code.contains(&format!("> \"{s}\"")) || code.contains(&format!(">> \"{s}\"")) {
            a.write_target(&F::lit(&s), env, "awk print >");
        }
        if code.contains(&format!("| \"{s}\"")) || code.contains(&format!("|\"{s}\"")) {
            a.source(&s, &mut env.clone(), p.depth + 1);
        }
    }
}

/// Tree deletes (`shutil.rmtree`, `fs.rmSync(…, {recursive})`): judged like `rm -r`.
fn tree_deletes(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>, rmtree_names: &[&str]) {
    for (name, args) in find_calls(p.code, rmtree_names) {
        let list = split_args(&args);
        let recursive = if name.ends_with("Sync") || name.starts_with("fs.") {
            args.contains("recursive")
        } else {
            true
        };
        if let Some(first) = list.first() {
            match eval_str(first, a, env) {
                Some(path) if recursive => {
                    analyzer::recursive_delete(a, &F::lit(&path), env, &format!("{name}()"))
                }
                Some(path) => a
                    .write_target(&F::lit(&path), env, &name)
                    .map(|_| ())
                    .unwrap_or(()),
                None if p.strict => a.add(
                    Ring::Boundary,
                    format!("{name}() of a path computed at run time"),
                    Some("name the directory inside the working directory literally"),
                ),
                None => {}
            }
        }
    }
}

/// Calls that delete or write the path in their first argument.
fn path_writes(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>) {
    for (name, args) in find_calls(p.code, DELETE)
        .into_iter()
        .chain(find_calls(p.code, WRITE))
    {
        if let Some(first) = split_args(&args).first() {
            match eval_str(first, a, env) {
                Some(path) => {
                    a.write_target(&F::lit(&path), env, &format!("{name}()"));
                }
                None if p.strict => a.add(
                    Ring::Boundary,
                    format!("{name}() of a path computed at run time cannot be checked"),
                    Some("name the file inside the working directory literally"),
                ),
                None => {}
            }
        }
    }
}

/// `Path(...).write_text` / `.unlink` / `.rmdir` write; other methods on a path read it.
fn path_methods(a: &mut Analyzer<'_>, env: &mut Env, code: &str) {
    for (method, recv) in path_method_calls(code) {
        if let Some(p) = eval_str(&recv, a, env) {
            if PATH_WRITE_METHODS.contains(&method.as_str()) {
                a.write_target(&F::lit(&p), env, &format!("Path.{method}()"));
            } else {
                a.read_target(&F::lit(&p), env);
            }
        }
    }
}

/// Copies, moves and links: the destination is written; a move's source too, a link's target
/// must not be sensitive (or, for a hard link, outside), a copy's source is read.
fn two_path_calls(a: &mut Analyzer<'_>, env: &mut Env, code: &str) {
    for (name, args) in find_calls(code, TWO_PATH_WRITE) {
        let list = split_args(&args);
        if list.len() >= 2 {
            let src = eval_str(&list[0], a, env);
            if let Some(d) = eval_str(&list[1], a, env) {
                a.write_target(&F::lit(&d), env, &format!("{name}()"));
            }
            if let Some(s) = src {
                if name.contains("move") || name.contains("rename") || name.contains("mv") {
                    a.write_target(&F::lit(&s), env, &format!("{name}() source"));
                } else if name.contains("link") {
                    link_source(a, env, &name, &s);
                } else {
                    a.read_target(&F::lit(&s), env);
                }
            }
        }
    }
}

/// A link to a sensitive file (or a hard link to anything outside) reaches past the workdir.
fn link_source(a: &mut Analyzer<'_>, env: &Env, name: &str, s: &str) {
    let p = crate::paths::resolve(s, env.cwd.as_deref().unwrap_or(&a.ctx.workdir), &a.ctx.home);
    if crate::paths::is_sensitive(&p, &a.ctx.home)
        || (!name.contains("sym") && crate::paths::place(&p, a.ctx) == crate::paths::Place::Outside)
    {
        a.add(
            Ring::Boundary,
            format!(
                "{name}() links to {} outside the working directory",
                p.display()
            ),
            None,
        );
    }
}

/// `open(path, mode)` in python/ruby/node-ish, `File.open`: written by a writing mode, else read.
fn opens(a: &mut Analyzer<'_>, env: &mut Env, code: &str) {
    for (_, args) in find_calls(code, OPEN) {
        let list = split_args(&args);
        let Some(p) = list.first().and_then(|x| eval_str(x, a, env)) else {
            continue;
        };
        let mode = list
            .get(1)
            .and_then(|x| eval_str(x.trim().trim_start_matches("mode="), a, env))
            .unwrap_or_default();
        if mode.contains(['w', 'a', 'x', '+']) {
            a.write_target(&F::lit(&p), env, "open for writing");
        } else {
            a.read_target(&F::lit(&p), env);
        }
    }
}

/// String literals: one naming a sensitive file is a read attempt; naming a credential
/// (strict), or a sensitive home entry while the payload builds home paths, is refused.
fn literals(a: &mut Analyzer<'_>, env: &mut Env, p: &Payload<'_>) {
    let code = p.code;
    let home_ref =
        HOME_REF.iter().any(|k| code.contains(k)) || code.contains("'~") || code.contains("\"~");
    let lits = string_literals(code);
    for s in &lits {
        if s.starts_with('/') || s.starts_with('~') || s.starts_with("..") || s.starts_with("$HOME")
        {
            a.read_target(&F::lit(s), env);
        }
    }
    if p.strict {
        for s in &lits {
            let name = s.trim_matches('/');
            if matches!(name, "id_rsa" | "id_ed25519" | "id_ecdsa")
                || lrab_util::HOME_CREDENTIALS.contains(&name)
            {
                a.add(
                    Ring::Boundary,
                    format!("payload names '{s}', a credential location"),
                    Some("work only with files inside the working directory"),
                );
            }
        }
    }
    if home_ref {
        for s in &lits {
            let first = s.trim_start_matches('/').split('/').next().unwrap_or("");
            if crate::paths::HOME_SENSITIVE
                .iter()
                .any(|h| h.split('/').next() == Some(first))
                || crate::paths::is_env_file(first)
            {
                a.add(
                    Ring::Boundary,
                    format!("payload builds a path to '{s}' in the home directory (sensitive)"),
                    Some("work only with files inside the working directory"),
                );
            }
        }
    }
}

/// Python that builds and runs code at run time cannot be inspected; a literal `__import__` or
/// a decoded literal (inspected above) is excused, reflection never.
fn python_dynamic(a: &mut Analyzer<'_>, code: &str) {
    if !PY_EXEC
        .iter()
        .chain(PY_REFLECTIVE)
        .any(|k| code.contains(k))
    {
        return;
    }
    let decoded_any = code.contains("b64decode") || code.contains("fromhex");
    let literal_import = code.contains("__import__('") || code.contains("__import__(\"");
    let reflective = PY_REFLECTIVE.iter().any(|k| code.contains(k));
    if !(decoded_any || literal_import) || reflective {
        a.add(Ring::Irreversible, "payload builds and runs code at run time (exec/eval/getattr), which cannot be inspected".into(), Some("write the code plainly"));
    }
}
