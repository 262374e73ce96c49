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
    let home_ref = [
        "expanduser",
        "HOME",
        "Path.home",
        "homedir",
        "ENV['HOME']",
        "$ENV{HOME}",
        "getenv",
    ]
    .iter()
    .any(|k| code.contains(k))
        || code.contains("'~")
        || code.contains("\"~");
    // decoded literals are payloads too
    for enc in find_calls(
        code,
        &[
            "b64decode",
            "base64.b64decode",
            "base64.decodebytes",
            "atob",
            "Buffer.from",
            "decode_base64",
            "unpack",
            "bytes.fromhex",
            "fromhex",
            "base64_decode",
        ],
    ) {
        for arg in split_args(&enc.1).iter().take(1) {
            if let Some(s) = eval_str(arg, a, env) {
                let decoded = if enc.0.contains("hex") {
                    hex(&s)
                } else {
                    crate::decode::b64(&s).map(|b| String::from_utf8_lossy(&b).into_owned())
                };
                if let Some(d) = decoded {
                    inspect(a, env, lang, &d, strict, depth + 1);
                    a.source_quiet(&d, env, depth + 1);
                }
            }
        }
    }
    // `from os import system as s`, `import subprocess as sp`, `{execSync: e} = require(…)`:
    // calls through an alias are treated like the original
    let aliases = alias_names(code);
    let mut exec_names: Vec<&str> = EXEC.to_vec();
    exec_names.extend(
        aliases
            .iter()
            .filter(|(orig, _)| {
                EXEC.iter()
                    .any(|e| e.rsplit('.').next() == Some(orig.as_str()))
            })
            .map(|(_, al)| al.as_str()),
    );
    let mut rmtree_names: Vec<&str> = RMTREE.to_vec();
    rmtree_names.extend(
        aliases
            .iter()
            .filter(|(orig, _)| {
                RMTREE
                    .iter()
                    .any(|e| e.rsplit('.').next() == Some(orig.as_str()))
            })
            .map(|(_, al)| al.as_str()),
    );
    for (name, args) in find_calls(code, &exec_names) {
        let list = split_args(&args);
        let Some(first) = list.first() else { continue };
        let cmd = if first.trim_start().starts_with('[') {
            let inner = first.trim().trim_start_matches('[').trim_end_matches(']');
            let parts: Option<Vec<String>> = split_args(inner)
                .iter()
                .map(|p| eval_str(p, a, env))
                .collect();
            parts.map(|v| {
                v.iter()
                    .map(|p| shell_quote(p))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        } else if matches!(
            name.as_str(),
            "execFileSync"
                | "spawnSync"
                | "spawn"
                | "execFile"
                | "os.execvp"
                | "os.execlp"
                | "os.spawnlp"
        ) || (lang == Lang::Perl && list.len() > 1 && name == "system")
        {
            // program + argument list
            let mut v = Vec::new();
            let mut ok = true;
            for p in &list {
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
        } else {
            eval_str(first, a, env)
        };
        match cmd {
            Some(c) => a.source(&c, &mut env.clone(), depth + 1),
            None if strict => {
                a.add(Ring::Irreversible, format!("{name}(…) runs a command or code built at run time, which cannot be inspected"), Some("write the literal command"));
            }
            None => {}
        }
    }
    // backticks / %x / qx in perl, ruby, php
    if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php) {
        for s in backtick_strings(code) {
            if s.contains("#{") || (lang != Lang::Ruby && s.contains('$')) {
                if strict {
                    a.add(
                        Ring::Irreversible,
                        "backtick command with interpolation cannot be inspected".into(),
                        None,
                    );
                }
            } else {
                a.source(&s, &mut env.clone(), depth + 1);
            }
        }
    }
    if lang == Lang::Perl {
        // open(F, "| cmd") / open(F, ">path")
        for (_, args) in find_calls(code, &["open"]) {
            let list = split_args(&args);
            let strs: Vec<String> = list
                .iter()
                .skip(1)
                .filter_map(|x| eval_str(x, a, env))
                .collect();
            if let Some(mode) = strs.first() {
                let m = mode.trim();
                if let Some(cmd) = m.strip_prefix('|').or_else(|| m.strip_suffix('|')) {
                    a.source(cmd.trim(), &mut env.clone(), depth + 1);
                } else if m.starts_with('>') || m.starts_with("+<") {
                    let p = m.trim_start_matches(['>', '+', '<']).trim();
                    let p = if p.is_empty() {
                        strs.get(1).cloned().unwrap_or_default()
                    } else {
                        p.to_string()
                    };
                    a.write_target(&F::lit(&p), env, "open for writing");
                } else {
                    a.read_target(&F::lit(m.trim_start_matches('<').trim()), env);
                }
            }
        }
    }
    if lang == Lang::Awk {
        for (_, args) in find_calls(code, &["system"]) {
            if let Some(s) = split_args(&args).first().and_then(|x| eval_str(x, a, env)) {
                a.source(&s, &mut env.clone(), depth + 1);
            } else if strict {
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
                a.source(&s, &mut env.clone(), depth + 1);
            }
        }
    }
    for (name, args) in find_calls(code, &rmtree_names) {
        let list = split_args(&args);
        let recursive = if name.ends_with("Sync") || name.starts_with("fs.") {
            args.contains("recursive")
        } else {
            true
        };
        if let Some(first) = list.first() {
            match eval_str(first, a, env) {
                Some(p) if recursive => {
                    analyzer::recursive_delete(a, &F::lit(&p), env, &format!("{name}()"))
                }
                Some(p) => a
                    .write_target(&F::lit(&p), env, &name)
                    .map(|_| ())
                    .unwrap_or(()),
                None if strict => a.add(
                    Ring::Boundary,
                    format!("{name}() of a path computed at run time"),
                    Some("name the directory inside the working directory literally"),
                ),
                None => {}
            }
        }
    }
    for (name, args) in find_calls(code, DELETE)
        .into_iter()
        .chain(find_calls(code, WRITE))
    {
        if let Some(first) = split_args(&args).first() {
            match eval_str(first, a, env) {
                Some(p) => {
                    a.write_target(&F::lit(&p), env, &format!("{name}()"));
                }
                None if strict => a.add(
                    Ring::Boundary,
                    format!("{name}() of a path computed at run time cannot be checked"),
                    Some("name the file inside the working directory literally"),
                ),
                None => {}
            }
        }
    }
    // Path(...).write_text / .unlink / .rmdir / open via Path
    for (method, recv) in path_method_calls(code) {
        if let Some(p) = eval_str(&recv, a, env) {
            match method.as_str() {
                "write_text" | "write_bytes" | "unlink" | "rmdir" | "touch" | "mkdir" | "chmod"
                | "symlink_to" | "hardlink_to" => {
                    a.write_target(&F::lit(&p), env, &format!("Path.{method}()"));
                }
                _ => a.read_target(&F::lit(&p), env),
            }
        }
    }
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
                    let p = crate::paths::resolve(
                        &s,
                        env.cwd.as_deref().unwrap_or(&a.ctx.workdir),
                        &a.ctx.home,
                    );
                    if crate::paths::is_sensitive(&p, &a.ctx.home)
                        || (!name.contains("sym")
                            && crate::paths::place(&p, a.ctx) == crate::paths::Place::Outside)
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
                } else {
                    a.read_target(&F::lit(&s), env);
                }
            }
        }
    }
    // open(path, mode) in python/ruby/node-ish, File.open
    for (_, args) in find_calls(
        code,
        &[
            "open",
            "File.open",
            "io.open",
            "codecs.open",
            "openSync",
            "fopen",
            "readFileSync",
            "File.read",
            "file_get_contents",
        ],
    ) {
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
    // any literal that names a sensitive file is a read attempt
    let lits = string_literals(code);
    for s in &lits {
        if s.starts_with('/') || s.starts_with('~') || s.starts_with("..") || s.starts_with("$HOME")
        {
            a.read_target(&F::lit(s), env);
        }
    }
    if strict {
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
    if strict
        && lang == Lang::Python
        && [
            "exec(",
            "eval(",
            "compile(",
            "__import__(",
            "getattr(",
            "__dict__",
            "vars(",
            "globals(",
            "__getattribute__",
            "importlib",
            "methodcaller",
        ]
        .iter()
        .any(|k| code.contains(k))
    {
        let decoded_any = code.contains("b64decode") || code.contains("fromhex");
        let literal_import = code.contains("__import__('") || code.contains("__import__(\"");
        let reflective = [
            "getattr(",
            "__dict__",
            "vars(",
            "globals(",
            "__getattribute__",
            "importlib",
            "methodcaller",
        ]
        .iter()
        .any(|k| code.contains(k));
        if !(decoded_any || literal_import) || reflective {
            a.add(Ring::Irreversible, "payload builds and runs code at run time (exec/eval/getattr), which cannot be inspected".into(), Some("write the code plainly"));
        }
    }
    let _ = Stdin::None;
}
