//! Ring 3, system mutation in an unattended run: scheduled jobs, installing (and removing)
//! system packages, services, mounts, kernel modules, firewall, network and clock settings,
//! accounts. A person could confirm these; an unattended run refuses them.

use super::{has, Call, R2, R3};
use crate::analyzer::{Analyzer, Env, F};
use crate::paths::{self, Place};

/// Package managers whose first word says whether they install or remove.
const PACKAGE_MANAGERS: &[&str] = &[
    "apt", "apt-get", "aptitude", "yum", "dnf", "zypper", "apk", "pacman", "snap", "flatpak",
    "brew", "port", "emerge", "winget", "choco", "scoop", "conda", "mamba", "gem", "cargo", "go",
    "rustup",
];

/// A package manager's subcommands that remove software.
const PACKAGE_REMOVE: &[&str] = &[
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

/// A package manager's subcommands that install or upgrade software.
const PACKAGE_INSTALL: &[&str] = &[
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

/// `systemctl` subcommands that only read (`""`: `systemctl` alone lists units).
const SYSTEMCTL_READ_ONLY: &[&str] = &[
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

/// `systemctl` subcommands that stop the machine.
const SYSTEMCTL_STOPS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "emergency",
    "rescue",
];

/// Commands that change system configuration (mounts, modules, firewall, accounts, clock…)
/// unless `system_config_read_only` says this call only reads.
const SYSTEM_CONFIG: &[&str] = &[
    "mount",
    "umount",
    "swapon",
    "swapoff",
    "modprobe",
    "insmod",
    "rmmod",
    "sysctl",
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "firewall-cmd",
    "hostnamectl",
    "timedatectl",
    "useradd",
    "usermod",
    "groupadd",
    "adduser",
    "addgroup",
    "passwd",
    "chpasswd",
    "visudo",
    "update-alternatives",
    "ldconfig",
    "chsh",
    "locale-gen",
    "dpkg-reconfigure",
    "hwclock",
    "setcap",
    "losetup",
];

/// This table's rules for the command `c` (a command name appears in one table only).
pub(super) fn apply(a: &mut Analyzer<'_>, c: &Call<'_>, env: &mut Env) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
    let words = &c.words;
    let w0 = c.w0();
    match lname {
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
        "setx" | "schtasks" | "at" | "batch" | "launchctl" | "update-rc.d" | "chkconfig" => a.add(
            R3,
            format!("'{name}' changes the persistent environment or schedules jobs"),
            None,
        ),
        "sc" if matches!(w0, "create" | "delete" | "config" | "stop" | "start") => {
            a.add(R3, "sc changes Windows services".into(), None)
        }
        // ---- packages ----
        n if PACKAGE_MANAGERS.contains(&n) => packages(a, c),
        "dpkg" | "rpm" => dpkg(a, c),
        n if n.starts_with("pip") || n == "pipx" || n == "uv" => pip(a, c, env),
        "npm" | "pnpm" | "yarn" => npm(a, c),
        // ---- ring 3: system state ----
        "systemctl" => {
            if SYSTEMCTL_STOPS.contains(&w0) {
                a.add(R2, format!("systemctl {w0} stops the machine"), None);
            } else if !SYSTEMCTL_READ_ONLY.contains(&w0) {
                a.add(R3, format!("systemctl {w0} changes system services"), None);
            }
        }
        "service" if words.len() >= 2 && !matches!(words[1].as_str(), "status") => a.add(
            R3,
            "service start/stop changes system services".into(),
            None,
        ),
        // a read-only call falls through to no rule
        n if SYSTEM_CONFIG.contains(&n) && !system_config_read_only(c) => {
            a.add(R3, format!("'{name}' changes system configuration"), None)
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
        _ => {}
    }
}

/// A package manager: removing software is ring 2, installing it system-wide ring 3
/// (`cargo`/`go` only for their `install`/`get`; `pacman` by its `-R`/`-S`/`-U` options).
fn packages(a: &mut Analyzer<'_>, c: &Call<'_>) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
    let w0 = c.w0();
    let pac_remove = lname == "pacman" && rest.iter().any(|x| x.text.starts_with("-R"));
    let pac_install = lname == "pacman"
        && rest
            .iter()
            .any(|x| x.text.starts_with("-S") || x.text.starts_with("-U"));
    if pac_remove || (lname != "pacman" && PACKAGE_REMOVE.contains(&w0)) {
        a.add(
            R2,
            format!("'{name} {w0}' removes installed software"),
            None,
        );
    } else if pac_install
        || (lname != "pacman"
            && PACKAGE_INSTALL.contains(&w0)
            && !(lname == "cargo" && w0 != "install")
            && !(lname == "go" && w0 != "install" && w0 != "get"))
    {
        a.add(R3, format!("'{name} {w0}' installs software system-wide"), Some("use what is already installed, or a virtual environment inside the working directory"));
    }
}

/// `dpkg`/`rpm`: removing packages is ring 2, installing them ring 3.
fn dpkg(a: &mut Analyzer<'_>, c: &Call<'_>) {
    let (name, rest) = (c.name, c.rest);
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

/// `pip`/`pipx`/`uv`: uninstalling is ring 2; installing is ring 3 unless into a target inside
/// the workdir, by a virtual environment's own pip there, or a dry run.
fn pip(a: &mut Analyzer<'_>, c: &Call<'_>, env: &mut Env) {
    let (n, name, full, rest) = (c.lname, c.name, c.full, c.rest);
    let words = &c.words;
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
            .is_some_and(|p| matches!(paths::place(&p, a.ctx), Place::Inside | Place::Writable));
        let venv_pip = full.contains('/')
            && a.path_of(&F::lit(full), env)
                .is_some_and(|p| p.starts_with(&a.ctx.workdir));
        if !(local_target || venv_pip || args_w.contains(&"--dry-run")) {
            a.add(R3, format!("'{name} install' changes the system's Python packages"), Some("use a virtual environment inside the working directory (`python3 -m venv .venv`)"));
        }
    }
}

/// `npm`/`pnpm`/`yarn`: only global packages concern the system.
fn npm(a: &mut Analyzer<'_>, c: &Call<'_>) {
    let (name, rest) = (c.name, c.rest);
    let global = rest
        .iter()
        .any(|x| matches!(x.text.as_str(), "-g" | "--global"))
        || c.w0() == "global";
    if global
        && c.words
            .iter()
            .any(|w| matches!(w.as_str(), "uninstall" | "remove" | "rm" | "un" | "r"))
    {
        a.add(R2, format!("'{name}' removes global packages"), None);
    } else if global {
        a.add(R3, format!("'{name} -g' installs global packages"), None);
    }
}

/// The calls of `SYSTEM_CONFIG` commands that only read: `mount` alone, `sysctl` without a
/// setting, firewall listings.
fn system_config_read_only(c: &Call<'_>) -> bool {
    let (lname, rest) = (c.lname, c.rest);
    (lname == "mount" && rest.is_empty())
        || (lname == "sysctl" && !rest.iter().any(|x| x.text == "-w" || x.text.contains('=')))
        || (matches!(
            lname,
            "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd"
        ) && rest.iter().any(|x| {
            matches!(
                x.text.as_str(),
                "-L" | "-S" | "list" | "status" | "--list-all"
            )
        }))
}
