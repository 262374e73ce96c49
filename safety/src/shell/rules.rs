//! The per-command rules, after wrappers are unwrapped. Each rule names the ring it belongs to.

use super::{Analyzer, Env, Stdin, F};
use crate::paths::{self, Place};
use crate::payload::{self, Lang};
use crate::Ring;
use std::path::{Path, PathBuf};

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
        match lname.as_str() {
            "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "time" | "nohup"
            | "builtin" | "exec" | "setsid" | "coproc" | "unbuffer" | "busybox" | "toybox"
            | "caffeinate" => {
                args.remove(0);
                while args.first().is_some_and(|x| x.text.starts_with('-')) && lname != "!" {
                    args.remove(0);
                }
                continue;
            }
            "fi" | "done" | "esac" | "for" | "case" | "in" | "select" | "{" | "}" | "function"
            | "return" | "break" | "continue" => return,
            "command" => {
                if rest
                    .first()
                    .is_some_and(|x| x.text == "-v" || x.text == "-V")
                {
                    return;
                }
                args.remove(0);
                while args.first().is_some_and(|x| x.text.starts_with('-')) {
                    args.remove(0);
                }
                continue;
            }
            "sudo" | "doas" | "pkexec" | "run0" => {
                a.add(
                    R3,
                    format!("'{name}' runs commands as root"),
                    Some("do the work as the current user inside the working directory"),
                );
                args.remove(0);
                while let Some(x) = args.first() {
                    if !x.text.starts_with('-') {
                        break;
                    }
                    let takes = matches!(
                        x.text.as_str(),
                        "-u" | "-g" | "-C" | "-D" | "-h" | "-p" | "-r" | "-t" | "-U"
                    );
                    args.remove(0);
                    if takes && !args.is_empty() {
                        args.remove(0);
                    }
                }
                continue;
            }
            "su" | "runuser" => {
                a.add(R3, format!("'{name}' switches user"), None);
                if let Some(i) = rest
                    .iter()
                    .position(|x| x.text == "-c" || x.text == "--command")
                {
                    if let Some(c) = rest.get(i + 1) {
                        shell_string(a, c, env, depth);
                    }
                }
                return;
            }
            "chroot" => {
                a.add(R3, "'chroot' changes the root directory".into(), None);
                args.drain(..2.min(args.len()));
                continue;
            }
            "env" => {
                args.remove(0);
                while let Some(x) = args.first().cloned() {
                    if x.text == "-u"
                        || x.text == "-C"
                        || x.text == "--chdir"
                        || x.text == "--unset"
                    {
                        args.drain(..2.min(args.len()));
                    } else if x.text == "-S" || x.text == "--split-string" {
                        args.remove(0);
                        if let Some(s) = args.first().cloned() {
                            args.remove(0);
                            let mut split: Vec<F> = s.text.split_whitespace().map(F::lit).collect();
                            split.append(&mut args);
                            args = split;
                        }
                    } else if x.text.starts_with('-') {
                        args.remove(0);
                    } else if let Some((k, v)) = x.text.split_once('=').filter(|(k, _)| {
                        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    }) {
                        a.check_env_assign(k, v);
                        args.remove(0);
                    } else {
                        break;
                    }
                }
                continue;
            }
            "nice" | "ionice" | "timeout" | "stdbuf" | "chrt" | "taskset" | "flock"
            | "cpulimit" => {
                args.remove(0);
                while let Some(x) = args.first() {
                    let t = x.text.clone();
                    if t == "-c" && lname == "flock" {
                        if let Some(c) = args.get(1).cloned() {
                            shell_string(a, &c, env, depth);
                        }
                        return;
                    }
                    if t.starts_with('-') {
                        let takes = matches!(
                            t.as_str(),
                            "-n" | "-c" | "-s" | "-k" | "-o" | "-e" | "-i" | "-l" | "-p" | "-w"
                        );
                        args.remove(0);
                        if takes && !args.is_empty() && lname != "stdbuf" {
                            args.remove(0);
                        }
                    } else {
                        break;
                    }
                }
                // the positional that is not a command: timeout's DURATION, flock's FILE,
                // taskset's mask, chrt's priority
                if matches!(lname.as_str(), "timeout" | "flock" | "taskset" | "chrt")
                    && !args.is_empty()
                {
                    args.remove(0);
                }
                continue;
            }
            "watch" => {
                let ops = operands(&rest);
                let cmd = ops
                    .iter()
                    .map(|f| f.text.clone())
                    .collect::<Vec<_>>()
                    .join(" ");
                if ops.iter().any(|f| f.dynamic) {
                    a.add(R2, "watch runs a command computed at run time".into(), None);
                } else {
                    a.source(&cmd, &mut env.clone(), depth + 1);
                }
                return;
            }
            "xargs" => {
                args.remove(0);
                while let Some(x) = args.first() {
                    let t = x.text.clone();
                    if !t.starts_with('-') {
                        break;
                    }
                    let takes = matches!(
                        t.as_str(),
                        "-I" | "-n"
                            | "-P"
                            | "-d"
                            | "-L"
                            | "-s"
                            | "-a"
                            | "-E"
                            | "-i"
                            | "--delimiter"
                            | "--arg-file"
                            | "--max-args"
                            | "--max-procs"
                    );
                    args.remove(0);
                    if takes && !args.is_empty() {
                        args.remove(0);
                    }
                }
                if args.is_empty() {
                    return;
                }
                from_xargs = true;
                continue;
            }
            "eval" => {
                if rest.iter().any(|f| f.dynamic) {
                    a.add(
                        R2,
                        "eval of text computed at run time cannot be inspected".into(),
                        Some("run the command directly"),
                    );
                } else {
                    let src = rest
                        .iter()
                        .map(|f| f.text.clone())
                        .collect::<Vec<_>>()
                        .join(" ");
                    a.source(&src, env, depth + 1);
                }
                return;
            }
            "source" | "." => {
                if let Some(f) = rest.first() {
                    script_file(a, f, env, Lang::Shell, depth);
                }
                return;
            }
            "trap" => {
                if let Some(c) = rest.first() {
                    shell_string(a, c, env, depth);
                }
                return;
            }
            "alias" => {
                for x in &rest {
                    if let Some((k, v)) = x.text.split_once('=') {
                        if x.dynamic {
                            a.add(
                                R2,
                                format!("alias '{k}' is defined from run-time text"),
                                None,
                            );
                        } else {
                            env.vars.insert(format!("\u{0}alias:{k}"), v.to_string());
                            a.source(v, &mut env.clone(), depth + 1);
                        }
                    }
                }
                return;
            }
            "script" | "expect" | "capsh" | "sg" | "newgrp" => {
                if let Some(i) = rest.iter().position(|x| {
                    x.text == "--command"
                        || (x.text.starts_with('-')
                            && !x.text.starts_with("--")
                            && x.text.ends_with('c'))
                }) {
                    if let Some(c) = rest.get(i + 1) {
                        shell_string(a, c, env, depth);
                    }
                }
                return;
            }
            "systemd-run" | "strace" | "ltrace" | "unshare" | "nsenter" | "setpriv"
            | "firejail" | "bwrap" | "proot" | "fakeroot" | "faketime" | "valgrind"
            | "torsocks" | "proxychains" | "proxychains4" | "catchsegv" | "chpst" | "runcon" => {
                // the wrapped command starts at the first argument that is a known program
                let known = |t: &str| {
                    let n = t.rsplit('/').next().unwrap_or(t);
                    is_shell(n)
                        || interp_lang(n).is_some()
                        || n.starts_with("mkfs")
                        || matches!(
                            n,
                            "rm" | "dd"
                                | "shred"
                                | "shutdown"
                                | "reboot"
                                | "halt"
                                | "poweroff"
                                | "chmod"
                                | "chown"
                                | "crontab"
                                | "kill"
                                | "wipefs"
                                | "fdisk"
                                | "mv"
                                | "cp"
                                | "tee"
                                | "find"
                                | "git"
                                | "apt"
                                | "apt-get"
                                | "pip"
                                | "pip3"
                                | "env"
                                | "sudo"
                                | "xargs"
                                | "cat"
                                | "truncate"
                                | "ln"
                                | "sed"
                        )
                };
                match args
                    .iter()
                    .skip(1)
                    .position(|x| !x.dynamic && known(&x.text))
                {
                    Some(i) => {
                        args.drain(..=i);
                        continue;
                    }
                    None => {
                        if lname == "unshare" || lname == "nsenter" {
                            a.add(R3, format!("'{name}' enters or creates namespaces"), None);
                        }
                        return;
                    }
                }
            }
            n if is_shell(n) => {
                run_shell(a, &rest, env, stdin, depth);
                return;
            }
            n if interp_lang(n).is_some() => {
                run_interp(
                    a,
                    interp_lang(n).unwrap_or(Lang::Python),
                    &rest,
                    env,
                    stdin,
                    depth,
                );
                return;
            }
            _ => {}
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
        let _ = stdin;
        return;
    }
}

fn shebang_lang(content: &str) -> Lang {
    let first = content.lines().next().unwrap_or("");
    if !first.starts_with("#!") {
        return Lang::Shell;
    }
    let interp = first
        .split_whitespace()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .filter(|w| *w != "#!" && *w != "env")
        .map(|w| w.trim_start_matches("#!"))
        .find(|w| !w.is_empty() && *w != "env" && !w.starts_with('-'))
        .unwrap_or("sh");
    interp_lang(interp).unwrap_or(Lang::Shell)
}

fn shell_string(a: &mut Analyzer<'_>, f: &F, env: &mut Env, depth: usize) {
    if f.dynamic {
        a.add(
            R2,
            "a shell runs a command string computed at run time, which cannot be inspected".into(),
            Some("run the command directly instead of through a generated string"),
        );
    } else {
        let mut sub = env.clone();
        a.source(&f.text, &mut sub, depth + 1);
    }
}

fn script_file(a: &mut Analyzer<'_>, f: &F, env: &mut Env, lang: Lang, depth: usize) {
    if f.text == "-" {
        return;
    }
    if let Some(p) = a.path_of(f, env) {
        let s = p.to_string_lossy();
        if s.starts_with("/dev/") || s.starts_with("/proc/") {
            a.add(
                R2,
                format!(
                    "runs a script from the stream '{}', which cannot be inspected",
                    f.text
                ),
                Some("write the script to a file in the working directory first"),
            );
            return;
        }
    }
    match a.file_content(f, env) {
        Some(c) if lang == Lang::Shell => {
            let mut sub = env.clone();
            a.source(&c, &mut sub, depth + 1)
        }
        Some(c) => payload::inspect(a, &mut env.clone(), lang, &c, false, depth + 1),
        None if f.dynamic || a.written_opaque(f, env) => {
            a.add(R2, format!("runs script '{}' whose content is produced at run time and cannot be inspected", f.text), Some("write the script with the file tool first, then run it"));
        }
        None => {}
    }
}

fn stdin_payload(
    a: &mut Analyzer<'_>,
    stdin: Stdin,
    env: &mut Env,
    lang: Lang,
    who: &str,
    depth: usize,
) {
    match stdin {
        Stdin::None => {}
        Stdin::Static(s) if lang == Lang::Shell => a.source(&s, &mut env.clone(), depth + 1),
        Stdin::Static(s) => payload::inspect(a, &mut env.clone(), lang, &s, true, depth + 1),
        Stdin::Unknown(p) => a.add(
            R2,
            format!("pipes the output of '{p}' into {who}: code that cannot be inspected before it runs (download/decode-and-execute)"),
            Some("save the script to a file in the working directory, read it, then run it"),
        ),
    }
}

fn run_shell(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, stdin: Stdin, depth: usize) {
    let mut i = 0;
    while i < rest.len() {
        let t = rest[i].text.as_str();
        if t == "-c" || (t.starts_with('-') && !t.starts_with("--") && t.contains('c')) {
            match rest.get(i + 1) {
                Some(c) => shell_string(a, c, env, depth),
                None => a.add(R2, "shell -c without a command".into(), None),
            }
            return;
        }
        if t == "-o" || t == "+o" || t == "--rcfile" || t == "--init-file" {
            i += 2;
            continue;
        }
        if t.starts_with('-') || t.starts_with('+') {
            i += 1;
            continue;
        }
        script_file(a, &rest[i], env, Lang::Shell, depth);
        return;
    }
    stdin_payload(a, stdin, env, Lang::Shell, "a shell", depth);
}

fn run_interp(
    a: &mut Analyzer<'_>,
    lang: Lang,
    rest: &[F],
    env: &mut Env,
    stdin: Stdin,
    depth: usize,
) {
    let mut i = 0;
    let mut in_place = false;
    while i < rest.len() {
        let f = &rest[i];
        let t = f.text.as_str();
        let code_flag = match lang {
            Lang::Python => {
                t == "-c"
                    || (t.starts_with('-')
                        && !t.starts_with("--")
                        && t.ends_with('c')
                        && t.len() <= 4)
            }
            Lang::Perl | Lang::Ruby => {
                t.starts_with('-') && !t.starts_with("--") && (t.ends_with('e') || t.ends_with('E'))
            }
            Lang::Node => matches!(t, "-e" | "--eval" | "-p" | "--print" | "-pe"),
            Lang::Php => t == "-r",
            _ => false,
        };
        if lang == Lang::Perl && t.starts_with("-i")
            || (lang == Lang::Perl && t.starts_with('-') && t.contains('i') && !t.starts_with("--"))
        {
            in_place = true;
        }
        if code_flag {
            let Some(code) = rest.get(i + 1) else { return };
            if code.dynamic {
                a.add(
                    R2,
                    "interpreter runs code computed at run time, which cannot be inspected".into(),
                    Some("write the script to a file in the working directory first"),
                );
            } else {
                payload::inspect(a, &mut env.clone(), lang, &code.text, true, depth + 1);
            }
            if in_place {
                for x in operands(&rest[i + 2..]) {
                    a.write_target(&x, env, "perl -i");
                }
            }
            return;
        }
        if lang == Lang::Python && t == "-m" {
            let module = rest.get(i + 1).map(|f| f.text.clone()).unwrap_or_default();
            if module == "pip" || module == "ensurepip" {
                let mut v = vec![F::lit("pip")];
                v.extend(rest[i + 2..].iter().cloned());
                rules(a, "pip", "pip", &rest[i + 2..], env, false, depth);
                let _ = v;
            }
            return;
        }
        if t.starts_with('-') && t != "-" {
            let takes = matches!(
                (lang, t),
                (Lang::Python, "-W" | "-X" | "-Q")
                    | (Lang::Awk, "-F" | "-v" | "-f")
                    | (Lang::Perl, "-I" | "-M")
                    | (Lang::Node, "-r" | "--require")
            );
            if lang == Lang::Awk && t == "-f" {
                if let Some(f) = rest.get(i + 1) {
                    script_file(a, f, env, lang, depth);
                }
                return;
            }
            i += if takes { 2 } else { 1 };
            continue;
        }
        if lang == Lang::Awk {
            if f.dynamic {
                a.add(R2, "awk program computed at run time".into(), None);
            } else {
                payload::inspect(a, &mut env.clone(), lang, &f.text, true, depth + 1);
            }
            return;
        }
        if t == "-" {
            break;
        }
        script_file(a, f, env, lang, depth);
        return;
    }
    stdin_payload(a, stdin, env, lang, "an interpreter", depth);
}

/// A recursive delete of `f` (ring 2 for `/`-like targets, ring 4 outside the workdir).
pub(crate) fn recursive_delete(a: &mut Analyzer<'_>, f: &F, env: &Env, how: &str) {
    if f.lead_dynamic || (f.dynamic && f.text.trim_matches('/').is_empty()) {
        a.add(
            R4,
            format!("{how}: the target is computed at run time, so it could be anything (even /)"),
            Some("name the directory inside the working directory literally"),
        );
        return;
    }
    let mut text = f.text.clone();
    let mut children = how.starts_with("find");
    if f.glob {
        // the directory whose children the pattern names
        let comps: Vec<&str> = text.split('/').collect();
        let k = comps
            .iter()
            .position(|c| c.contains(['*', '?', '[']))
            .unwrap_or(comps.len());
        text = comps[..k].join("/");
        if text.is_empty() {
            text = if f.text.starts_with('/') {
                "/".into()
            } else {
                ".".into()
            };
        }
        children = true;
    }
    let Some(p) = a.path_of(
        &F {
            text: text.clone(),
            ..F::default()
        },
        env,
    ) else {
        a.add(
            R4,
            format!(
                "{how}: the target '{}' is relative to a directory unknown here",
                f.text
            ),
            Some("use a path inside the working directory"),
        );
        return;
    };
    let home = a.ctx.home.clone();
    let top_level = p.parent().is_none_or(|q| q == Path::new("/"));
    let ancestor = a.ctx.workdir.starts_with(&p) && p != a.ctx.workdir || home.starts_with(&p);
    if p == Path::new("/")
        || (top_level && !children)
        || (top_level && p == Path::new("/"))
        || ancestor && !children
        || p == home
    {
        a.add(R2, format!("{how} of '{}' ({}) would wipe the system, the home directory or a parent of the workdir", f.text, p.display()), None);
        return;
    }
    match paths::place(&p, a.ctx) {
        Place::Inside | Place::Writable => {
            if a.ctx.protected.iter().any(|q| p.starts_with(q)) {
                a.add(R4, format!("{how} of harness state '{}'", f.text), None);
            }
        }
        Place::Workdir if children => {}
        Place::Workdir => a.add(R4, format!("{how} of the working directory itself"), Some("delete the subdirectories you created by name")),
        Place::Outside => a.add(
            R4,
            format!("{how} of '{}' ({}), which is outside the working directory; recursive deletes are only allowed inside it", f.text, p.display()),
            Some(&format!("if these files are yours, list them (`find {} -type f`) and delete each one with `rm FILE` after checking it — or leave them", f.text)),
        ),
    }
}

fn delete_target(a: &mut Analyzer<'_>, f: &F, env: &Env, how: &str) {
    if let Some(p) = a.path_of(f, env) {
        if paths::is_history_file(&p, &a.ctx.home) {
            a.add(
                R2,
                format!("{how} deletes shell history {}", p.display()),
                None,
            );
            return;
        }
        if p == Path::new("/") || p.parent() == Some(Path::new("/")) {
            a.add(
                R2,
                format!("{how} of top-level system path {}", p.display()),
                None,
            );
            return;
        }
    }
    a.write_target(f, env, how);
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

/// Commands that read whole directory trees: pointing one at the home directory (or above it)
/// reads the credentials in it.
fn recursive_read(a: &mut Analyzer<'_>, lname: &str, rest: &[F], env: &Env) {
    let recursive = match lname {
        "cp" | "scp" => {
            has(rest, 'r', "--recursive") || has(rest, 'R', "") || has(rest, 'a', "--archive")
        }
        "rsync" | "tar" | "rg" | "zip" | "7z" | "ag" => true,
        "grep" | "egrep" | "fgrep" => {
            has(rest, 'r', "--recursive") || has(rest, 'R', "--dereference-recursive")
        }
        _ => false,
    };
    if !recursive {
        return;
    }
    for x in operands(rest) {
        let Some(p) = a.path_of(&x, env) else {
            continue;
        };
        let roots = [a.ctx.home.clone(), std::path::PathBuf::from("/root")];
        if roots.iter().any(|h| h.starts_with(&p)) {
            a.add(
                R4,
                format!(
                    "'{lname}' reads the whole tree under '{}' ({}), which holds credentials",
                    x.text,
                    p.display()
                ),
                Some("name the files you need inside the working directory"),
            );
            return;
        }
    }
}

fn rules(
    a: &mut Analyzer<'_>,
    lname: &str,
    full: &str,
    rest: &[F],
    env: &mut Env,
    from_xargs: bool,
    depth: usize,
) {
    let name = full.rsplit('/').next().unwrap_or(full);
    let words = sub(rest);
    recursive_read(a, lname, rest, env);
    let w0 = words.first().map(String::as_str).unwrap_or("");
    let all_lower: Vec<String> = rest.iter().map(|f| f.text.to_ascii_lowercase()).collect();
    let has_word = |w: &str| all_lower.iter().any(|x| x == w);
    match lname {
        // ---- ring 2: destroys data or the machine ----
        n if n.starts_with("mkfs")
            || matches!(
                n,
                "mke2fs"
                    | "mkswap"
                    | "wipefs"
                    | "fdisk"
                    | "sfdisk"
                    | "gdisk"
                    | "cfdisk"
                    | "parted"
                    | "blkdiscard"
                    | "format"
                    | "diskpart"
                    | "mkntfs"
                    | "zpool"
                    | "cryptsetup"
                    | "badblocks"
            ) =>
        {
            a.add(R2, format!("'{name}' formats or repartitions disks"), None)
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" | "kexec" | "killall5"
            if lname != "init" || matches!(w0, "0" | "6" | "1" | "s") =>
        {
            a.add(R2, format!("'{name}' stops or restarts the machine"), None)
        }
        "dd" => {
            for x in rest {
                if let Some(t) = x.text.strip_prefix("of=") {
                    a.write_target(
                        &F {
                            text: t.to_string(),
                            ..x.clone()
                        },
                        env,
                        "dd",
                    );
                }
            }
        }
        "shred" | "srm" | "wipe" => {
            for x in operands(rest) {
                delete_target(a, &x, env, name);
            }
        }
        "rm" | "unlink" | "rmdir" | "del" | "erase" | "rd" => {
            let win_recursive = rest.iter().any(|x| x.text.eq_ignore_ascii_case("/s"));
            let recursive = (lname == "rm"
                && (has(rest, 'r', "--recursive") || has(rest, 'R', "")))
                || win_recursive;
            if rest.iter().any(|x| x.text == "--no-preserve-root") {
                a.add(R2, "rm --no-preserve-root".into(), None);
            }
            let ops: Vec<F> = operands(rest)
                .into_iter()
                .filter(|x| !(x.text.starts_with('/') && x.text.len() == 2 && win_recursive))
                .map(|x| F {
                    text: x.text.replace('\\', "/"),
                    ..x
                })
                .collect();
            if from_xargs && recursive && ops.is_empty() {
                a.add(
                    R4,
                    format!("{name} -r with targets read from stdin (xargs) cannot be checked"),
                    Some("delete named directories inside the working directory"),
                );
            }
            for x in &ops {
                if recursive {
                    recursive_delete(a, x, env, &format!("recursive delete ({name})"));
                } else {
                    delete_target(a, x, env, name);
                }
            }
        }
        "find" => find(a, rest, env, depth),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" | "icacls" | "takeown" => {
            let ops = operands(rest);
            let targets: Vec<F> = if lname == "icacls" || lname == "takeown" {
                ops.clone()
            } else {
                ops.iter().skip(1).cloned().collect()
            };
            let recursive = has(rest, 'R', "--recursive");
            for x in &targets {
                if let Some(p) = a.path_of(x, env) {
                    if is_system_path(&p)
                        || (recursive
                            && (p == a.ctx.home
                                || a.ctx.workdir.starts_with(&p) && p != a.ctx.workdir))
                    {
                        a.add(R2, format!("'{name}' on system path {} changes ownership/permissions the system depends on", p.display()), None);
                        continue;
                    }
                }
                a.write_target(x, env, name);
            }
        }
        "crontab" => {
            if has(rest, 'r', "") {
                a.add(
                    R2,
                    "crontab -r deletes every scheduled job without a backup".into(),
                    None,
                );
            } else if !has(rest, 'l', "") {
                a.add(R3, "crontab installs scheduled jobs".into(), None);
            }
        }
        "history" if has(rest, 'c', "") || has(rest, 'd', "") || has(rest, 'w', "") => {
            a.add(R2, "history -c/-d/-w wipes shell history".into(), None);
        }
        "unset" if words.iter().any(|w| w == "histfile") => {
            a.add(R2, "unset HISTFILE disables shell history".into(), None);
        }
        "export" | "declare" | "typeset" | "readonly" | "local" => {
            for x in rest {
                if let Some((k, v)) = x.text.split_once('=') {
                    a.check_env_assign(k, v);
                    if !x.dynamic {
                        env.vars.insert(k.to_string(), v.to_string());
                    } else {
                        env.vars.remove(k);
                    }
                }
            }
        }
        "set" if words.iter().any(|w| w == "history") && rest.iter().any(|f| f.text == "+o") => {
            a.add(R2, "set +o history disables shell history".into(), None);
        }
        "git" => git(a, rest, env),
        "kill" | "pkill" | "killall" => {
            let ops = operands(rest);
            if lname == "kill"
                && (ops.iter().any(|x| x.text == "-1" || x.text == "1")
                    || rest.iter().any(|x| x.text == "-1"))
            {
                a.add(R2, "kill of pid 1 or of every process".into(), None);
            }
            if lname != "kill"
                && ops
                    .iter()
                    .any(|x| matches!(x.text.as_str(), "init" | "systemd" | "sshd" | "-u"))
            {
                a.add(R2, format!("'{name}' of system processes"), None);
            }
        }
        "userdel" | "deluser" | "groupdel" | "delgroup" => {
            a.add(R2, format!("'{name}' deletes accounts"), None)
        }
        "reg" if matches!(w0, "add" | "delete" | "import" | "load" | "restore") => a.add(
            R2,
            "reg add/delete edits the Windows registry (persistence)".into(),
            None,
        ),
        "netsh" | "vssadmin" | "bcdedit" | "cipher" | "wmic" | "fsutil" => a.add(
            R2,
            format!("'{name}' changes firewall, boot, shadow copies or disks"),
            None,
        ),
        "wsl" if has_word("--unregister") => {
            a.add(R2, "wsl --unregister deletes a distribution".into(), None)
        }
        "powershell" | "pwsh" => {
            let joined = all_lower.join(" ");
            if all_lower
                .iter()
                .any(|x| matches!(x.as_str(), "-enc" | "-encodedcommand" | "-e" | "-ec"))
                || [
                    "iex",
                    "invoke-expression",
                    "downloadstring",
                    "stop-computer",
                    "restart-computer",
                    "format-volume",
                    "clear-disk",
                ]
                .iter()
                .any(|k| joined.contains(k))
            {
                a.add(
                    R2,
                    "PowerShell with encoded/downloaded code or machine-level cmdlets".into(),
                    None,
                );
            } else if joined.contains("remove-item") && joined.contains("-recurse") {
                a.add(R4, "PowerShell recursive delete".into(), None);
            }
        }
        "cmd" => {
            if let Some(i) = all_lower.iter().position(|x| x == "/c" || x == "/k") {
                let s: Vec<String> = rest[i + 1..].iter().map(|f| f.text.clone()).collect();
                a.source(&s.join(" "), &mut env.clone(), depth + 1);
            }
        }
        "mklink" => a.add(
            R4,
            "mklink creates links that can lead out of the working directory".into(),
            None,
        ),
        "setx" | "schtasks" | "at" | "batch" | "launchctl" | "update-rc.d" | "chkconfig" => a.add(
            R3,
            format!("'{name}' changes the persistent environment or schedules jobs"),
            None,
        ),
        "sc" if matches!(w0, "create" | "delete" | "config" | "stop" | "start") => {
            a.add(R3, "sc changes Windows services".into(), None)
        }
        // ---- packages ----
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "apk" | "pacman" | "snap"
        | "flatpak" | "brew" | "port" | "emerge" | "winget" | "choco" | "scoop" | "conda"
        | "mamba" | "gem" | "cargo" | "go" | "rustup" => {
            let remove = [
                "remove",
                "purge",
                "autoremove",
                "autopurge",
                "erase",
                "del",
                "uninstall",
                "rm",
                "un",
            ];
            let install = [
                "install",
                "upgrade",
                "full-upgrade",
                "dist-upgrade",
                "update",
                "reinstall",
                "add",
                "-s",
                "-u",
                "-syu",
                "-sy",
                "-syyu",
                "get",
            ];
            let pac_remove = lname == "pacman" && rest.iter().any(|x| x.text.starts_with("-R"));
            let pac_install = lname == "pacman"
                && rest
                    .iter()
                    .any(|x| x.text.starts_with("-S") || x.text.starts_with("-U"));
            if pac_remove || (lname != "pacman" && remove.contains(&w0)) {
                a.add(
                    R2,
                    format!("'{name} {w0}' removes installed software"),
                    None,
                );
            } else if pac_install
                || (lname != "pacman"
                    && install.contains(&w0)
                    && !(lname == "cargo" && w0 != "install")
                    && !(lname == "go" && w0 != "install" && w0 != "get"))
            {
                a.add(R3, format!("'{name} {w0}' installs software system-wide"), Some("use what is already installed, or a virtual environment inside the working directory"));
            }
        }
        "dpkg" | "rpm" => {
            if rest.iter().any(|x| {
                matches!(
                    x.text.as_str(),
                    "-r" | "--remove" | "-P" | "--purge" | "-e" | "--erase"
                )
            }) {
                a.add(R2, format!("'{name}' removes installed packages"), None);
            } else if rest.iter().any(|x| {
                matches!(
                    x.text.as_str(),
                    "-i" | "--install" | "-U" | "--configure" | "-ivh" | "-Uvh"
                )
            }) {
                a.add(R3, format!("'{name}' installs packages"), None);
            }
        }
        n if n.starts_with("pip") || n == "pipx" || n == "uv" => {
            let args_w: Vec<&str> = rest.iter().map(|f| f.text.as_str()).collect();
            let sub0 = words
                .iter()
                .find(|w| *w != "pip")
                .map(String::as_str)
                .unwrap_or("");
            if sub0 == "uninstall" || (n == "uv" && words.iter().any(|w| w == "uninstall")) {
                a.add(
                    R2,
                    format!("'{name} uninstall' removes installed packages"),
                    None,
                );
            } else if sub0 == "install" {
                let local_target = args_w
                    .iter()
                    .position(|x| matches!(*x, "-t" | "--target" | "--prefix" | "--root"))
                    .and_then(|i| rest.get(i + 1))
                    .and_then(|f| a.path_of(f, env))
                    .is_some_and(|p| {
                        matches!(paths::place(&p, a.ctx), Place::Inside | Place::Writable)
                    });
                let venv_pip = full.contains('/')
                    && a.path_of(&F::lit(full), env)
                        .is_some_and(|p| p.starts_with(&a.ctx.workdir));
                if !(local_target || venv_pip || args_w.contains(&"--dry-run")) {
                    a.add(R3, format!("'{name} install' changes the system's Python packages"), Some("use a virtual environment inside the working directory (`python3 -m venv .venv`)"));
                }
            }
        }
        "npm" | "pnpm" | "yarn" => {
            let global = rest
                .iter()
                .any(|x| matches!(x.text.as_str(), "-g" | "--global"))
                || w0 == "global";
            if global
                && words
                    .iter()
                    .any(|w| matches!(w.as_str(), "uninstall" | "remove" | "rm" | "un" | "r"))
            {
                a.add(R2, format!("'{name}' removes global packages"), None);
            } else if global {
                a.add(R3, format!("'{name} -g' installs global packages"), None);
            }
        }
        // ---- ring 3: system state ----
        "systemctl" => {
            let read_only = [
                "status",
                "show",
                "list-units",
                "list-unit-files",
                "is-active",
                "is-enabled",
                "is-failed",
                "cat",
                "list-timers",
                "--version",
                "",
            ];
            if matches!(
                w0,
                "poweroff"
                    | "reboot"
                    | "halt"
                    | "kexec"
                    | "suspend"
                    | "hibernate"
                    | "emergency"
                    | "rescue"
            ) {
                a.add(R2, format!("systemctl {w0} stops the machine"), None);
            } else if !read_only.contains(&w0) {
                a.add(R3, format!("systemctl {w0} changes system services"), None);
            }
        }
        "service" if words.len() >= 2 && !matches!(words[1].as_str(), "status") => a.add(
            R3,
            "service start/stop changes system services".into(),
            None,
        ),
        "mount"
        | "umount"
        | "swapon"
        | "swapoff"
        | "modprobe"
        | "insmod"
        | "rmmod"
        | "sysctl"
        | "iptables"
        | "ip6tables"
        | "nft"
        | "ufw"
        | "firewall-cmd"
        | "hostnamectl"
        | "timedatectl"
        | "useradd"
        | "usermod"
        | "groupadd"
        | "adduser"
        | "addgroup"
        | "passwd"
        | "chpasswd"
        | "visudo"
        | "update-alternatives"
        | "ldconfig"
        | "chsh"
        | "locale-gen"
        | "dpkg-reconfigure"
        | "hwclock"
        | "setcap"
        | "losetup" => {
            let read_only = (lname == "mount" && rest.is_empty())
                || (lname == "sysctl"
                    && !rest.iter().any(|x| x.text == "-w" || x.text.contains('=')))
                || (matches!(
                    lname,
                    "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd"
                ) && rest.iter().any(|x| {
                    matches!(
                        x.text.as_str(),
                        "-L" | "-S" | "list" | "status" | "--list-all"
                    )
                }));
            if !read_only {
                a.add(R3, format!("'{name}' changes system configuration"), None);
            }
        }
        "ip" if words.iter().any(|w| {
            matches!(
                w.as_str(),
                "add" | "del" | "delete" | "set" | "flush" | "change" | "replace"
            )
        }) =>
        {
            a.add(R3, "ip changes network configuration".into(), None)
        }
        "ifconfig" if words.len() >= 2 => {
            a.add(R3, "ifconfig changes network interfaces".into(), None)
        }
        "hostname" if !words.is_empty() => a.add(R3, "hostname changes the host name".into(), None),
        "date" if has(rest, 's', "--set") => {
            a.add(R3, "date -s sets the system clock".into(), None)
        }
        "ln" => ln(a, rest, env),
        "mknod" | "mkfifo" => {
            for x in operands(rest).iter().take(1) {
                a.write_target(x, env, name);
            }
        }
        // ---- writers: ring 4 when the target is outside ----
        "cp" | "mv" | "install" | "rsync" | "scp" => {
            let ops = operands(rest);
            let t_dir = rest
                .iter()
                .position(|x| x.text == "-t" || x.text == "--target-directory")
                .and_then(|i| rest.get(i + 1).cloned());
            if let Some(t) = t_dir {
                a.write_target(&t, env, name);
            } else if let Some(dst) = ops.last() {
                if ops.len() >= 2 {
                    a.write_target(dst, env, name);
                }
            }
            if lname == "mv" {
                for x in ops.iter().take(ops.len().saturating_sub(1)) {
                    delete_target(a, x, env, "mv (source)");
                }
            }
        }
        "touch" | "mkdir" | "truncate" | "tee" | "sponge" => {
            let mut skip_next = false;
            for x in rest {
                if skip_next {
                    skip_next = false;
                    continue;
                }
                if lname == "truncate" && (x.text == "-s" || x.text == "-r")
                    || lname == "mkdir" && x.text == "-m"
                {
                    skip_next = true;
                    continue;
                }
                if x.text.starts_with('-') && x.text.len() > 1 {
                    continue;
                }
                a.write_target(x, env, name);
            }
        }
        "sed" | "gsed"
            if rest
                .iter()
                .any(|x| x.text.starts_with("-i") || x.text == "--in-place") =>
        {
            let ops = operands(rest);
            let has_e = rest.iter().any(|x| x.text == "-e" || x.text == "-f");
            for x in ops.iter().skip(if has_e { 0 } else { 1 }) {
                a.write_target(x, env, "sed -i");
            }
        }
        "tar" => {
            let extract = rest.iter().any(|x| {
                x.text.starts_with('-') && x.text.contains('x')
                    || x.text == "x"
                    || x.text.starts_with('x')
            });
            if let Some(i) = rest
                .iter()
                .position(|x| x.text == "-C" || x.text == "--directory")
            {
                if extract {
                    if let Some(d) = rest.get(i + 1) {
                        a.write_target(d, env, "tar -C");
                    }
                }
            }
            if extract
                && rest
                    .iter()
                    .any(|x| x.text == "-P" || x.text == "--absolute-names")
            {
                a.add(R4, "tar -P extracts to absolute paths".into(), None);
            }
        }
        "unzip" => {
            if let Some(i) = rest.iter().position(|x| x.text == "-d") {
                if let Some(d) = rest.get(i + 1) {
                    a.write_target(d, env, "unzip -d");
                }
            }
        }
        "curl" | "wget" => {
            for (i, x) in rest.iter().enumerate() {
                if matches!(
                    x.text.as_str(),
                    "-o" | "--output" | "-O" | "--output-document" | "-P" | "--directory-prefix"
                ) && !(lname == "curl" && x.text == "-O")
                {
                    if let Some(t) = rest.get(i + 1) {
                        a.write_target(t, env, name);
                    }
                }
            }
        }
        _ => {}
    }
}

impl Analyzer<'_> {
    pub(crate) fn check_env_assign(&mut self, k: &str, v: &str) {
        let f = F::lit(v);
        self.check_assignment_pub(k, &f);
    }
    fn check_assignment_pub(&mut self, k: &str, f: &F) {
        match k {
            "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST"
                if f.text.is_empty() || f.text == "0" || f.text == "/dev/null" =>
            {
                self.add(
                    R2,
                    format!("setting {k}={} wipes or disables shell history", f.text),
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

fn git(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env) {
    // `-c core.sshCommand=…`, `-c core.pager=…`, `-c alias.x=!…` run shell commands
    for w in rest.windows(2) {
        if w[0].text == "-c" {
            if let Some((k, v)) = w[1].text.split_once('=') {
                let k = k.to_ascii_lowercase();
                if k.ends_with("command")
                    || k.ends_with("pager")
                    || k.ends_with("editor")
                    || k.starts_with("alias.")
                    || k.contains("hookspath")
                    || k.ends_with("fsmonitor")
                {
                    let v = v.trim_start_matches('!');
                    a.source(v, &mut env.clone(), 1);
                }
            }
        }
    }
    let mut i = 0;
    while i < rest.len() && rest[i].text.starts_with('-') {
        i += if matches!(rest[i].text.as_str(), "-C" | "-c") {
            2
        } else {
            1
        };
    }
    let Some(sub) = rest.get(i) else { return };
    let args = &rest[i + 1..];
    match sub.text.as_str() {
        "push" => {
            let forced = args.iter().any(|x| {
                let t = x.text.as_str();
                matches!(
                    t,
                    "-f" | "--force" | "--mirror" | "--delete" | "-d" | "--prune"
                ) || t.starts_with("--force-with-lease")
                    || t.starts_with("--force-if-includes")
                    || (t.starts_with('-') && !t.starts_with("--") && t.contains('f'))
                    || (!t.starts_with('-') && (t.starts_with('+') || t.starts_with(':')))
            });
            if forced {
                a.add(
                    R2,
                    "git push --force/--delete/--mirror rewrites or deletes remote history".into(),
                    Some("push normally, or create a new branch"),
                );
            }
        }
        "config"
            if args
                .iter()
                .any(|x| x.text == "--global" || x.text == "--system") =>
        {
            a.add(
                R3,
                "git config --global/--system edits user/system configuration".into(),
                Some("use `git config` without --global inside the repository"),
            )
        }
        "clone" => {
            let ops = operands(args);
            if ops.len() >= 2 {
                a.write_target(&ops[1], env, "git clone");
            }
        }
        _ => {}
    }
}

fn find(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, depth: usize) {
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

fn ln(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env) {
    let symbolic = has(rest, 's', "--symbolic");
    let ops = operands(rest);
    if ops.is_empty() {
        return;
    }
    let (targets, link): (Vec<F>, Option<F>) = if ops.len() == 1 {
        (ops.clone(), None)
    } else {
        (ops[..ops.len() - 1].to_vec(), ops.last().cloned())
    };
    if let Some(l) = &link {
        a.write_target(l, env, "ln");
    }
    for t in &targets {
        // a symlink's target is relative to the link's directory
        let base: Option<PathBuf> =
            if symbolic && !t.text.starts_with('/') && !t.text.starts_with('~') {
                link.as_ref()
                    .and_then(|l| a.path_of(l, env))
                    .and_then(|p| p.parent().map(Path::to_path_buf))
            } else {
                None
            };
        let p = match base {
            Some(b) => Some(paths::resolve(&t.text, &b, &a.ctx.home)),
            None => a.path_of(t, env),
        };
        let Some(p) = p else {
            if t.lead_dynamic {
                a.add(R4, "link target computed at run time".into(), None);
            }
            continue;
        };
        if paths::is_sensitive(&p, &a.ctx.home) {
            a.add(R4, format!("link to sensitive path {}", p.display()), None);
        } else if !symbolic && paths::place(&p, a.ctx) == Place::Outside {
            a.add(R4, format!("hard link to {} outside the working directory would let writes change that file", p.display()), Some("copy the file into the working directory instead"));
        } else if symbolic
            && (is_system_path(&p) || paths::place(&p, a.ctx) == Place::Outside)
            && link
                .as_ref()
                .and_then(|l| a.path_of(l, env))
                .is_some_and(|l| paths::place(&l, a.ctx) != Place::Outside)
        {
            // reading through such a link is harmless; writes through it are caught by the
            // path resolution of later commands and by the sandbox
        }
    }
}
