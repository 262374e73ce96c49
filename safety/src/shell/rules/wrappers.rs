//! Wrappers: commands that run another command (`sudo`, `env`, `timeout`, `xargs`, `eval`,
//! `watch`, sandboxing and tracing tools, shells and interpreters). The wrapper's own risk is
//! recorded, then the walk continues with the command it runs.

use super::{interp, interp_lang, is_shell, operands, Flow, R2, R3};
use crate::analyzer::{Analyzer, Env, Stdin, F};
use crate::payload::Lang;

/// What `args` (a command line starting with `name`) does when `name` is a wrapper: the walk
/// goes on with the wrapped command (`Again`, `args` rewritten), is finished (`Done`), or `name`
/// is not a wrapper and the command's own rules apply (`Rules`).
#[allow(clippy::too_many_arguments)]
pub(super) fn unwrap(
    a: &mut Analyzer<'_>,
    lname: &str,
    name: &str,
    rest: &[F],
    args: &mut Vec<F>,
    env: &mut Env,
    stdin: &Stdin,
    depth: usize,
    from_xargs: &mut bool,
) -> Flow {
    match lname {
        "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "time" | "nohup"
        | "builtin" | "exec" | "setsid" | "coproc" | "unbuffer" | "busybox" | "toybox"
        | "caffeinate" => keyword(lname, args),
        "fi" | "done" | "esac" | "for" | "case" | "in" | "select" | "{" | "}" | "function"
        | "return" | "break" | "continue" => Flow::Done,
        "command" => command(rest, args),
        "sudo" | "doas" | "pkexec" | "run0" => sudo(a, name, args),
        "su" | "runuser" => su(a, name, rest, env, depth),
        "chroot" => {
            a.add(R3, "'chroot' changes the root directory".into(), None);
            args.drain(..2.min(args.len()));
            Flow::Again
        }
        "env" => env_wrapper(a, args),
        "nice" | "ionice" | "timeout" | "stdbuf" | "chrt" | "taskset" | "flock" | "cpulimit" => {
            limiter(a, lname, args, env, depth)
        }
        "watch" => watch(a, rest, env, depth),
        "xargs" => xargs(args, from_xargs),
        "eval" => eval(a, rest, env, depth),
        "source" | "." => {
            if let Some(f) = rest.first() {
                interp::script_file(a, f, env, Lang::Shell, depth);
            }
            Flow::Done
        }
        "trap" => {
            if let Some(c) = rest.first() {
                interp::shell_string(a, c, env, depth);
            }
            Flow::Done
        }
        "alias" => alias(a, rest, env, depth),
        "script" | "expect" | "capsh" | "sg" | "newgrp" => command_option(a, rest, env, depth),
        "systemd-run" | "strace" | "ltrace" | "unshare" | "nsenter" | "setpriv" | "firejail"
        | "bwrap" | "proot" | "fakeroot" | "faketime" | "valgrind" | "torsocks" | "proxychains"
        | "proxychains4" | "catchsegv" | "chpst" | "runcon" => launcher(a, lname, name, args),
        n if is_shell(n) => {
            interp::run_shell(a, rest, env, stdin.clone(), depth);
            Flow::Done
        }
        n if interp_lang(n).is_some() => {
            interp::run_interp(
                a,
                interp_lang(n).unwrap_or(Lang::Python),
                rest,
                env,
                stdin.clone(),
                depth,
            );
            Flow::Done
        }
        _ => Flow::Rules,
    }
}

/// Shell keywords and plain prefixes (`if`, `time`, `nohup`, `exec`…): the walk goes on with
/// the command after them and their options (`!` takes none, so `! -x` stays).
fn keyword(lname: &str, args: &mut Vec<F>) -> Flow {
    args.remove(0);
    while args.first().is_some_and(|x| x.text.starts_with('-')) && lname != "!" {
        args.remove(0);
    }
    Flow::Again
}

/// `command`: `-v`/`-V` only look a name up; otherwise the walk goes on with the command.
fn command(rest: &[F], args: &mut Vec<F>) -> Flow {
    if rest
        .first()
        .is_some_and(|x| x.text == "-v" || x.text == "-V")
    {
        return Flow::Done;
    }
    args.remove(0);
    while args.first().is_some_and(|x| x.text.starts_with('-')) {
        args.remove(0);
    }
    Flow::Again
}

/// `su`/`runuser`: switching user is ring 3; a `-c` command is checked as shell.
fn su(a: &mut Analyzer<'_>, name: &str, rest: &[F], env: &mut Env, depth: usize) -> Flow {
    a.add(R3, format!("'{name}' switches user"), None);
    if let Some(i) = rest
        .iter()
        .position(|x| x.text == "-c" || x.text == "--command")
    {
        if let Some(c) = rest.get(i + 1) {
            interp::shell_string(a, c, env, depth);
        }
    }
    Flow::Done
}

/// `watch`: its command is checked as shell, or refused when computed at run time.
fn watch(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, depth: usize) -> Flow {
    let ops = operands(rest);
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
    Flow::Done
}

/// `eval`: its text is checked as shell in the same environment, or refused when computed.
fn eval(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, depth: usize) -> Flow {
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
    Flow::Done
}

/// `script`, `expect`, `capsh`, `sg`, `newgrp`: the argument of a short option ending in `c`
/// (`-c`, `-qc`) or of `--command` is checked as shell.
fn command_option(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, depth: usize) -> Flow {
    if let Some(i) = rest.iter().position(|x| {
        x.text == "--command"
            || (x.text.starts_with('-') && !x.text.starts_with("--") && x.text.ends_with('c'))
    }) {
        if let Some(c) = rest.get(i + 1) {
            interp::shell_string(a, c, env, depth);
        }
    }
    Flow::Done
}

/// `sudo` and its kin: running as root is ring 3; the walk goes on with the command after the
/// options (skipping an option's value).
fn sudo(a: &mut Analyzer<'_>, name: &str, args: &mut Vec<F>) -> Flow {
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
    Flow::Again
}

/// `env`: its assignments are checked, `-S` text is split into the command line, and the walk
/// goes on with the command after them.
fn env_wrapper(a: &mut Analyzer<'_>, args: &mut Vec<F>) -> Flow {
    args.remove(0);
    while let Some(x) = args.first().cloned() {
        if x.text == "-u" || x.text == "-C" || x.text == "--chdir" || x.text == "--unset" {
            args.drain(..2.min(args.len()));
        } else if x.text == "-S" || x.text == "--split-string" {
            args.remove(0);
            if let Some(s) = args.first().cloned() {
                args.remove(0);
                let mut split: Vec<F> = s.text.split_whitespace().map(F::lit).collect();
                split.append(args);
                *args = split;
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
    Flow::Again
}

/// Wrappers that limit or time a command (`nice`, `timeout`, `flock`…): skip their options and
/// the positional that is not a command; `flock -c` runs a shell string.
fn limiter(
    a: &mut Analyzer<'_>,
    lname: &str,
    args: &mut Vec<F>,
    env: &mut Env,
    depth: usize,
) -> Flow {
    args.remove(0);
    while let Some(x) = args.first() {
        let t = x.text.clone();
        if t == "-c" && lname == "flock" {
            if let Some(c) = args.get(1).cloned() {
                interp::shell_string(a, &c, env, depth);
            }
            return Flow::Done;
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
    if matches!(lname, "timeout" | "flock" | "taskset" | "chrt") && !args.is_empty() {
        args.remove(0);
    }
    Flow::Again
}

/// `xargs`: the walk goes on with its command, marked as taking arguments from stdin.
fn xargs(args: &mut Vec<F>, from_xargs: &mut bool) -> Flow {
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
        return Flow::Done;
    }
    *from_xargs = true;
    Flow::Again
}

/// `alias`: an alias's text is checked as a command now and remembered for later lines; one
/// made from run-time text cannot be.
fn alias(a: &mut Analyzer<'_>, rest: &[F], env: &mut Env, depth: usize) -> Flow {
    for x in rest {
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
    Flow::Done
}

/// Programs that mark where a sandboxing or tracing tool's wrapped command starts (besides
/// shells, interpreters and every `mkfs*`).
const KNOWN_PROGRAMS: &[&str] = &[
    "rm", "dd", "shred", "shutdown", "reboot", "halt", "poweroff", "chmod", "chown", "crontab",
    "kill", "wipefs", "fdisk", "mv", "cp", "tee", "find", "git", "apt", "apt-get", "pip", "pip3",
    "env", "sudo", "xargs", "cat", "truncate", "ln", "sed",
];

/// Sandboxing and tracing tools (`strace`, `bwrap`, `unshare`…): their options vary too much to
/// parse, so the wrapped command starts at the first argument that is a known program.
fn launcher(a: &mut Analyzer<'_>, lname: &str, name: &str, args: &mut Vec<F>) -> Flow {
    let known = |t: &str| {
        let n = t.rsplit('/').next().unwrap_or(t);
        is_shell(n)
            || interp_lang(n).is_some()
            || n.starts_with("mkfs")
            || KNOWN_PROGRAMS.contains(&n)
    };
    match args
        .iter()
        .skip(1)
        .position(|x| !x.dynamic && known(&x.text))
    {
        Some(i) => {
            args.drain(..=i);
            Flow::Again
        }
        None => {
            if lname == "unshare" || lname == "nsenter" {
                a.add(R3, format!("'{name}' enters or creates namespaces"), None);
            }
            Flow::Done
        }
    }
}
