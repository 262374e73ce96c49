//! Shells and interpreters: the command string (`sh -c`), script file or stdin they run is
//! walked as shell or inspected as a payload in its language.

use super::{operands, rules, R2};
use crate::analyzer::{Analyzer, Env, Stdin, F};
use crate::payload::{self, Lang};

pub(super) fn shebang_lang(content: &str) -> Lang {
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
    super::interp_lang(interp).unwrap_or(Lang::Shell)
}

pub(super) fn shell_string(a: &mut Analyzer<'_>, f: &F, env: &mut Env, depth: usize) {
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

pub(super) fn script_file(a: &mut Analyzer<'_>, f: &F, env: &mut Env, lang: Lang, depth: usize) {
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

pub(super) fn run_shell(
    a: &mut Analyzer<'_>,
    rest: &[F],
    env: &mut Env,
    stdin: Stdin,
    depth: usize,
) {
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

pub(super) fn run_interp(
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
