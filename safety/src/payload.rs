//! Interpreter payloads (`python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`, awk programs and
//! script files): the same operations are looked for as in shell — running commands, recursive
//! deletes, writes and deletes outside the workdir, reads of sensitive files — with arguments
//! evaluated when they are literals (string concatenation, `os.path.join`, `expanduser`,
//! `Path.home()`, base64/hex literals). In `-c`/`-e` payloads (strict mode) code that builds a
//! command or code at run time is refused; in script files only concrete findings count.

use crate::shell::{Analyzer, Env, Stdin, F};
use crate::Ring;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Shell,
    Python,
    Perl,
    Node,
    Ruby,
    Php,
    Awk,
}

/// Calls that run a shell command line (first argument) or an argv list.
const EXEC: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "os.execvp",
    "os.execv",
    "os.execl",
    "os.execlp",
    "os.spawnlp",
    "os.spawnvp",
    "pty.spawn",
    "commands.getoutput",
    "system",
    "exec",
    "qx",
    "execSync",
    "execFileSync",
    "spawnSync",
    "spawn",
    "execFile",
    "child_process.exec",
    "shell_exec",
    "passthru",
    "popen",
    "proc_open",
    "Open3.capture2",
    "Open3.popen3",
    "IO.popen",
    "Kernel.system",
    "%x",
];
const RMTREE: &[&str] = &[
    "rmSync",
    "rmdirSync",
    "shutil.rmtree",
    "rmtree",
    "remove_tree",
    "FileUtils.rm_rf",
    "FileUtils.rm_r",
    "FileUtils.remove_dir",
    "fs.rmSync",
    "fs.rmdirSync",
    "fs.promises.rm",
    "fs.rm",
    "rimraf",
];
const DELETE: &[&str] = &[
    "unlinkSync",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "unlink",
    "File.delete",
    "File.unlink",
    "fs.unlinkSync",
    "fs.unlink",
    "FileUtils.rm",
    "rmdir",
];
const WRITE: &[&str] = &[
    "writeFileSync",
    "appendFileSync",
    "writeFile",
    "appendFile",
    "createWriteStream",
    "truncateSync",
    "chmodSync",
    "chownSync",
    "write_text",
    "write_bytes",
    "fs.writeFileSync",
    "fs.appendFileSync",
    "fs.writeFile",
    "fs.createWriteStream",
    "File.write",
    "file_put_contents",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "fs.chmodSync",
    "fs.truncateSync",
];
const TWO_PATH_WRITE: &[&str] = &[
    "shutil.copy",
    "shutil.copyfile",
    "shutil.copy2",
    "shutil.copytree",
    "shutil.move",
    "os.rename",
    "os.replace",
    "fs.copyFileSync",
    "fs.renameSync",
    "FileUtils.cp",
    "FileUtils.mv",
    "copy",
    "rename",
    "os.symlink",
    "os.link",
    "fs.symlinkSync",
    "fs.linkSync",
    "File.symlink",
    "File.link",
    "symlink",
    "link",
];

pub(crate) fn inspect(
    a: &mut Analyzer<'_>,
    env: &mut Env,
    lang: Lang,
    code: &str,
    strict: bool,
    depth: usize,
) {
    if depth > crate::shell::MAX_NEST {
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
                    crate::shell::stat_b64(&s)
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
                    crate::shell::recursive_delete_pub(a, &F::lit(&p), env, &format!("{name}()"))
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
            if matches!(
                name,
                "id_rsa"
                    | "id_ed25519"
                    | "id_ecdsa"
                    | ".ssh"
                    | ".aws"
                    | ".gnupg"
                    | ".netrc"
                    | ".git-credentials"
                    | ".kube"
            ) {
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

fn hex(s: &str) -> Option<String> {
    let h: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    let b: Vec<u8> = (0..h.len() / 2)
        .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
        .collect();
    Some(String::from_utf8_lossy(&b).into_owned())
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `name(args)` occurrences (also `name args;` for perl/ruby style calls without parens).
pub(crate) fn find_calls(code: &str, names: &[&str]) -> Vec<(String, String)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    for name in names {
        let nc: Vec<char> = name.chars().collect();
        let mut i = 0;
        while i + nc.len() <= c.len() {
            if c[i..i + nc.len()] == nc[..] {
                let before_ok = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_');
                let mut j = i + nc.len();
                while j < c.len() && c[j] == ' ' {
                    j += 1;
                }
                if before_ok && j < c.len() && c[j] == '(' {
                    if let Some(end) = matching(&c, j) {
                        out.push((name.to_string(), c[j + 1..end].iter().collect()));
                        i = end;
                        continue;
                    }
                } else if before_ok
                    && j > i + nc.len()
                    && j < c.len()
                    && (c[j] == '\'' || c[j] == '"')
                    && !name.contains('.')
                {
                    let end = c[j..]
                        .iter()
                        .position(|&x| x == ';' || x == '\n')
                        .map(|e| j + e)
                        .unwrap_or(c.len());
                    out.push((name.to_string(), c[j..end].iter().collect()));
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
    }
    out
}

fn matching(c: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut q: Option<char> = None;
    let mut i = open;
    while i < c.len() {
        let ch = c[i];
        if let Some(qc) = q {
            if ch == '\\' {
                i += 2;
                continue;
            }
            if ch == qc {
                q = None;
            }
        } else if ch == '\'' || ch == '"' || ch == '`' {
            q = Some(ch);
        } else if ch == '(' || ch == '[' || ch == '{' {
            depth += 1;
        } else if ch == ')' || ch == ']' || ch == '}' {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// Split an argument list at top-level commas.
pub(crate) fn split_args(s: &str) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut q: Option<char> = None;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if let Some(qc) = q {
            cur.push(ch);
            if ch == '\\' && i + 1 < c.len() {
                cur.push(c[i + 1]);
                i += 2;
                continue;
            }
            if ch == qc {
                q = None;
            }
        } else {
            match ch {
                '\'' | '"' | '`' => {
                    q = Some(ch);
                    cur.push(ch);
                }
                '(' | '[' | '{' => {
                    depth += 1;
                    cur.push(ch);
                }
                ')' | ']' | '}' => {
                    depth -= 1;
                    cur.push(ch);
                }
                ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
                _ => cur.push(ch),
            }
        }
        i += 1;
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn unescape(s: &str) -> String {
    crate::shell::parse::ansi_c(s)
}

/// Evaluate a literal-ish expression to a string: literals, `+`/`.` concatenation,
/// `os.path.join`, `expanduser`, `Path(...)`, `Path.home()`, `/` on paths, `$HOME`/`HOME` lookups.
pub(crate) fn eval_str(expr: &str, a: &Analyzer<'_>, env: &Env) -> Option<String> {
    let e = expr.trim();
    let e = e
        .strip_prefix("r")
        .filter(|r| r.starts_with('\'') || r.starts_with('"'))
        .unwrap_or(e);
    let e = e
        .strip_prefix("b")
        .filter(|r| r.starts_with('\'') || r.starts_with('"'))
        .unwrap_or(e);
    let e = e
        .strip_prefix("f")
        .filter(|r| r.starts_with('\'') || r.starts_with('"'))
        .unwrap_or(e);
    if e.is_empty() {
        return None;
    }
    let home = a.ctx.home.to_string_lossy().to_string();
    // a single literal
    if let Some(q) = e.chars().next().filter(|c| matches!(c, '\'' | '"' | '`')) {
        let inner = &e[1..];
        if let Some(end) = find_close(inner, q) {
            if end + 1 == inner.len() {
                let raw = &inner[..end];
                if q == '`' && raw.contains("${")
                    || q == '"' && (raw.contains("#{") || raw.contains("${"))
                {
                    return None;
                }
                return Some(unescape(raw));
            }
        }
    }
    match e {
        "Path.home()"
        | "pathlib.Path.home()"
        | "os.homedir()"
        | "require('os').homedir()"
        | "Dir.home"
        | "ENV['HOME']"
        | "$ENV{HOME}"
        | "$ENV{'HOME'}"
        | "os.environ['HOME']"
        | "os.environ[\"HOME\"]"
        | "os.getenv('HOME')"
        | "os.getenv(\"HOME\")"
        | "os.environ.get('HOME')"
        | "process.env.HOME"
        | "$_SERVER['HOME']"
        | "getenv('HOME')" => return Some(home),
        "os.getcwd()" | "process.cwd()" | "Dir.pwd" | "Path.cwd()" | "'.'" => {
            return Some(env.cwd.as_ref()?.to_string_lossy().to_string())
        }
        _ => {}
    }
    // concatenation at top level
    for op in ['+', '.', '/'] {
        let parts = split_top(e, op);
        if parts.len() > 1 {
            let mut s = String::new();
            for (i, p) in parts.iter().enumerate() {
                let v = eval_str(p, a, env)?;
                if op == '/' && i > 0 {
                    s.push('/');
                }
                s.push_str(&v);
            }
            return Some(s);
        }
    }
    for (pre, join) in [
        ("os.path.join(", true),
        ("path.join(", true),
        ("File.join(", true),
        ("Path(", false),
        ("pathlib.Path(", false),
        ("os.path.expanduser(", false),
        ("os.path.abspath(", false),
        ("os.path.realpath(", false),
        ("str(", false),
        ("File.expand_path(", false),
        ("path.resolve(", true),
    ] {
        if let Some(inner) = e.strip_prefix(pre).and_then(|r| r.strip_suffix(')')) {
            if inner.is_empty() {
                return Some(".".into());
            }
            let parts: Option<Vec<String>> = split_args(inner)
                .iter()
                .map(|p| eval_str(p, a, env))
                .collect();
            let parts = parts?;
            let s = if join {
                let mut acc = String::new();
                for p in parts {
                    if p.starts_with('/') || acc.is_empty() {
                        acc = p;
                    } else {
                        acc = format!("{}/{}", acc.trim_end_matches('/'), p);
                    }
                }
                acc
            } else {
                parts.first()?.clone()
            };
            return Some(crate::paths::expand_home(&s, &a.ctx.home));
        }
    }
    None
}

fn find_close(s: &str, q: char) -> Option<usize> {
    let mut esc = false;
    for (i, ch) in s.char_indices() {
        if esc {
            esc = false;
            continue;
        }
        if ch == '\\' {
            esc = true;
            continue;
        }
        if ch == q {
            return Some(i);
        }
    }
    None
}

fn split_top(s: &str, op: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut q: Option<char> = None;
    let mut esc = false;
    for ch in s.chars() {
        if let Some(qc) = q {
            cur.push(ch);
            if esc {
                esc = false;
            } else if ch == '\\' {
                esc = true;
            } else if ch == qc {
                q = None;
            }
            continue;
        }
        match ch {
            '\'' | '"' | '`' => {
                q = Some(ch);
                cur.push(ch);
            }
            '(' | '[' | '{' => {
                depth += 1;
                cur.push(ch);
            }
            ')' | ']' | '}' => {
                depth -= 1;
                cur.push(ch);
            }
            c if c == op && depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    out.push(cur);
    if out.iter().any(|p| p.trim().is_empty()) {
        return vec![s.to_string()];
    }
    out
}

/// Every quoted string literal in the code (escapes decoded).
pub(crate) fn string_literals(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let q = c[i];
        if q == '\'' || q == '"' {
            let mut j = i + 1;
            let mut s = String::new();
            while j < c.len() && c[j] != q {
                if c[j] == '\\' && j + 1 < c.len() {
                    s.push(c[j]);
                    j += 1;
                }
                s.push(c[j]);
                j += 1;
            }
            out.push(unescape(&s));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn backtick_strings(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find('`') {
        let after = &rest[i + 1..];
        match after.find('`') {
            Some(j) => {
                out.push(after[..j].to_string());
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    for pre in ["qx{", "qx(", "qx/", "%x(", "%x{"] {
        let close = match pre.chars().last() {
            Some('{') => '}',
            Some('(') => ')',
            _ => '/',
        };
        let mut r = code;
        while let Some(i) = r.find(pre) {
            let after = &r[i + pre.len()..];
            match after.find(close) {
                Some(j) => {
                    out.push(after[..j].to_string());
                    r = &after[j + 1..];
                }
                None => break,
            }
        }
    }
    out
}

/// `Path(expr).method(` → (method, expr).
fn path_method_calls(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (_, inner) in find_calls(code, &["Path", "pathlib.Path"]) {
        let needle = format!("Path({inner}).");
        if let Some(i) = code.find(&needle) {
            let rest = &code[i + needle.len()..];
            let method: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((method, format!("Path({inner})")));
        }
    }
    out
}

/// `(original, alias)` pairs from `import a as b`, `from m import a as b`, and JS destructuring
/// `{ a: b }`.
fn alias_names(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .filter(|w| !w.is_empty())
        .collect();
    for w in words.windows(3) {
        if w[1] == "as" {
            out.push((
                w[0].rsplit('.').next().unwrap_or(w[0]).to_string(),
                w[2].to_string(),
            ));
        }
    }
    for w in words.windows(2) {
        if let Some(orig) = w[0].strip_suffix(':') {
            if !orig.is_empty() {
                out.push((orig.to_string(), w[1].to_string()));
            }
        }
    }
    out
}
