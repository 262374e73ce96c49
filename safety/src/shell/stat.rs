//! Static evaluation of the few commands whose output can be known without running them
//! (`echo`, `printf`, `cat` of known text, `base64 -d`, `xxd -r -p`, `rev`, `tr`), so that
//! decode-and-execute chains are inspected instead of trusted.

use crate::analyzer::{Analyzer, Env, Stdin, F};
use crate::decode::b64;

pub(crate) fn eval_simple(
    fields: &[F],
    stdin: &Stdin,
    env: &Env,
    a: &Analyzer<'_>,
) -> Option<String> {
    if fields.iter().any(|f| f.dynamic) {
        return None;
    }
    let name = fields.first()?.text.rsplit('/').next()?.to_string();
    let args: Vec<&str> = fields[1..].iter().map(|f| f.text.as_str()).collect();
    let input = || match stdin {
        Stdin::Static(s) => Some(s.clone()),
        _ => None,
    };
    match name.as_str() {
        "echo" => {
            let mut i = 0;
            let mut newline = true;
            let mut esc = false;
            while i < args.len()
                && args[i].starts_with('-')
                && args[i].len() > 1
                && args[i][1..].chars().all(|c| "neE".contains(c))
            {
                newline &= !args[i].contains('n');
                esc |= args[i].contains('e');
                i += 1;
            }
            let mut s = args[i..].join(" ");
            if esc {
                s = crate::decode::ansi_c(&s);
            }
            if newline {
                s.push('\n');
            }
            Some(s)
        }
        "printf" => {
            let fmt = args.first()?;
            Some(printf(fmt, &args[1..]))
        }
        "cat" => {
            let files: Vec<&F> = fields[1..]
                .iter()
                .filter(|f| !f.text.starts_with('-'))
                .collect();
            if files.is_empty() {
                return input();
            }
            let mut out = String::new();
            for f in files {
                out.push_str(&a.file_content(f, env)?);
            }
            Some(out)
        }
        "base64" | "base32"
            if args
                .iter()
                .any(|x| matches!(*x, "-d" | "--decode" | "-D" | "-di" | "-id")) =>
        {
            let file = args.iter().find(|x| !x.starts_with('-'));
            let data = match file {
                Some(f) => a.file_content(&F::lit(f), env)?,
                None => input()?,
            };
            let bytes = if name == "base64" {
                b64(&data)?
            } else {
                return None;
            };
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        "openssl"
            if args.contains(&"-d")
                && (args.contains(&"base64")
                    || args.contains(&"-base64")
                    || args.contains(&"-a")) =>
        {
            Some(String::from_utf8_lossy(&b64(&input()?)?).into_owned())
        }
        "xxd" if args.contains(&"-r") && args.contains(&"-p") => {
            let h: String = input()?.chars().filter(|c| c.is_ascii_hexdigit()).collect();
            let bytes: Vec<u8> = (0..h.len() / 2)
                .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
                .collect();
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        "rev" => Some(
            input()?
                .lines()
                .map(|l| l.chars().rev().collect::<String>() + "\n")
                .collect(),
        ),
        "tr" if args.len() == 2 => {
            let (from, to) = (tr_set(args[0]), tr_set(args[1]));
            if from.is_empty() || to.is_empty() {
                return None;
            }
            Some(
                input()?
                    .chars()
                    .map(|c| match from.iter().position(|&x| x == c) {
                        Some(i) => *to.get(i).unwrap_or(to.last().unwrap_or(&c)),
                        None => c,
                    })
                    .collect(),
            )
        }
        "which" | "type" => Some(format!("{}\n", args.iter().find(|x| !x.starts_with('-'))?)),
        "command" if args.first() == Some(&"-v") => Some(format!("{}\n", args.get(1)?)),
        "true" | ":" => Some(String::new()),
        "pwd" => Some(format!("{}\n", env.cwd.as_ref()?.display())),
        _ => None,
    }
}

fn tr_set(s: &str) -> Vec<char> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if i + 2 < c.len() && c[i + 1] == '-' {
            let (a, b) = (c[i] as u32, c[i + 2] as u32);
            if a <= b && b - a < 256 {
                out.extend((a..=b).filter_map(char::from_u32));
            }
            i += 3;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn printf(fmt: &str, args: &[&str]) -> String {
    let fmt = crate::decode::ansi_c(fmt);
    let mut out = String::new();
    let mut ai = 0;
    let c: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    loop {
        while i < c.len() {
            if c[i] == '%' && i + 1 < c.len() {
                let k = c[i + 1];
                i += 2;
                match k {
                    '%' => out.push('%'),
                    's' | 'd' | 'i' | 'u' => {
                        out.push_str(args.get(ai).copied().unwrap_or(""));
                        ai += 1;
                    }
                    'b' => {
                        out.push_str(&crate::decode::ansi_c(args.get(ai).copied().unwrap_or("")));
                        ai += 1;
                    }
                    'c' => {
                        out.extend(args.get(ai).and_then(|s| s.chars().next()));
                        ai += 1;
                    }
                    _ => {}
                }
            } else {
                out.push(c[i]);
                i += 1;
            }
        }
        if ai == 0 || ai >= args.len() {
            break;
        }
        i = 0;
    }
    out
}
