//! Ring 2, irreversible operations: formatting and wiping disks, stopping the machine, deletes
//! (`rm -r`, `find -delete`, `shred`), permission changes on system paths, wiping shell history,
//! rewriting remote git history, killing system processes, deleting accounts, and the Windows
//! commands that change firewall, boot or registry. Some of these commands also have ring-4
//! rules (a write outside the workdir); they live here with the command.

use super::is_system_path;
use super::{has, operands, rules_of_find as find, Call, R2, R3, R4};
use crate::analyzer::{delete_target, recursive_delete, Analyzer, Env, F};

/// Commands that format, repartition or wipe disks (besides every `mkfs*`).
const DISK_TOOLS: &[&str] = &[
    "mke2fs",
    "mkswap",
    "wipefs",
    "fdisk",
    "sfdisk",
    "gdisk",
    "cfdisk",
    "parted",
    "blkdiscard",
    "format",
    "diskpart",
    "mkntfs",
    "zpool",
    "cryptsetup",
    "badblocks",
];

/// PowerShell words that run downloaded or encoded code or act on the whole machine.
const POWERSHELL_MACHINE: &[&str] = &[
    "iex",
    "invoke-expression",
    "downloadstring",
    "stop-computer",
    "restart-computer",
    "format-volume",
    "clear-disk",
];

/// This table's rules for the command `c` (a command name appears in one table only).
pub(super) fn apply(a: &mut Analyzer<'_>, c: &Call<'_>, env: &mut Env, depth: usize) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
    let words = &c.words;
    let w0 = c.w0();
    match lname {
        // ---- ring 2: destroys data or the machine ----
        n if n.starts_with("mkfs") || DISK_TOOLS.contains(&n) => {
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
        "rm" | "unlink" | "rmdir" | "del" | "erase" | "rd" => delete(a, c, env),
        "find" => find(a, rest, env, depth),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" | "icacls" | "takeown" => {
            permissions(a, c, env)
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
        "kill" | "pkill" | "killall" => kill(a, c),
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
        "wsl" if c.has_word("--unregister") => {
            a.add(R2, "wsl --unregister deletes a distribution".into(), None)
        }
        "powershell" | "pwsh" => powershell(a, c),
        "cmd" => {
            if let Some(i) = c.all_lower.iter().position(|x| x == "/c" || x == "/k") {
                let s: Vec<String> = rest[i + 1..].iter().map(|f| f.text.clone()).collect();
                a.source(&s.join(" "), &mut env.clone(), depth + 1);
            }
        }
        _ => {}
    }
}

/// `rm` and its Windows kin: a recursive delete is judged by what it could reach, a plain one
/// by its target; `xargs rm -r` cannot be checked at all.
fn delete(a: &mut Analyzer<'_>, c: &Call<'_>, env: &mut Env) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
    let win_recursive = rest.iter().any(|x| x.text.eq_ignore_ascii_case("/s"));
    let recursive =
        (lname == "rm" && (has(rest, 'r', "--recursive") || has(rest, 'R', ""))) || win_recursive;
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
    if c.from_xargs && recursive && ops.is_empty() {
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

/// Ownership and permission changes: on a system path (or, recursively, on home or a parent
/// of the workdir) they break the system; elsewhere they are writes.
fn permissions(a: &mut Analyzer<'_>, c: &Call<'_>, env: &mut Env) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
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
                    && (p == a.ctx.home || a.ctx.workdir.starts_with(&p) && p != a.ctx.workdir))
            {
                a.add(R2, format!("'{name}' on system path {} changes ownership/permissions the system depends on", p.display()), None);
                continue;
            }
        }
        a.write_target(x, env, name);
    }
}

/// Killing pid 1, every process, or system daemons.
fn kill(a: &mut Analyzer<'_>, c: &Call<'_>) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
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

/// PowerShell: encoded or downloaded code and machine-level cmdlets are ring 2, a recursive
/// delete ring 4.
fn powershell(a: &mut Analyzer<'_>, c: &Call<'_>) {
    let all_lower = &c.all_lower;
    let joined = all_lower.join(" ");
    if all_lower
        .iter()
        .any(|x| matches!(x.as_str(), "-enc" | "-encodedcommand" | "-e" | "-ec"))
        || POWERSHELL_MACHINE.iter().any(|k| joined.contains(k))
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
