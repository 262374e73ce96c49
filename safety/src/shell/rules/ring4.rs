//! Ring 4, the workdir boundary: commands that write files (`cp`, `mv`, `tee`, `sed -i`, `tar
//! -x`, `curl -o`, …) are checked where they write, links must not lead out of the workdir, and
//! recursive readers must not read the home directory's credentials.

use super::{has, is_system_path, operands, Call, R4};
use crate::analyzer::{delete_target, Analyzer, Env, F};
use crate::paths::{self, Place};
use std::path::{Path, PathBuf};

/// This table's rules for the command `c` (a command name appears in one table only).
pub(super) fn apply(a: &mut Analyzer<'_>, c: &Call<'_>, env: &mut Env) {
    let (lname, name, rest) = (c.lname, c.name, c.rest);
    match lname {
        "mklink" => a.add(
            R4,
            "mklink creates links that can lead out of the working directory".into(),
            None,
        ),
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

/// Commands that read whole directory trees: pointing one at the home directory (or above it)
/// reads the credentials in it.
pub(super) fn recursive_read(a: &mut Analyzer<'_>, lname: &str, rest: &[F], env: &Env) {
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
