//! Content errors: degraded versions of a file the model writes instead of the reference
//! content. They are generic edits of the reference bytes chosen by file kind — wrong computed
//! numbers, a missing section, a truncated list, a text too short for its purpose, a fix that
//! leaves one of the original bugs in place, a script that fails at run time, a wrong file
//! name, an image that is not a valid PNG — never aimed at a particular check. Partial credit
//! then arises from whichever checks the degraded file still passes.

use regex::Regex;
use std::sync::OnceLock;

/// How a file was degraded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    WrongNumbers,
    MissingSection,
    TruncatedList,
    ShallowText,
    PartialFix,
    RuntimeBug,
    WrongFileName,
    InvalidImage,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::WrongNumbers => "wrong_numbers",
            Kind::MissingSection => "missing_section",
            Kind::TruncatedList => "truncated_list",
            Kind::ShallowText => "shallow_text",
            Kind::PartialFix => "partial_fix",
            Kind::RuntimeBug => "runtime_bug",
            Kind::WrongFileName => "wrong_file_name",
            Kind::InvalidImage => "invalid_image",
        }
    }
}

/// A degraded write.
#[derive(Debug, Clone, PartialEq)]
pub struct Degraded {
    pub path: String,
    pub bytes: Vec<u8>,
    pub kind: Kind,
}

fn ext(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(_, e)| e)
}

fn number_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\d{2,}(\.\d+)?").expect("valid regex"))
}

fn is_list_line(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with("- ") || t.starts_with("* ") || t.starts_with('|') || {
        let d: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
        !d.is_empty() && t[d.len()..].starts_with(". ")
    }
}

/// The kinds that make sense for this file (in a fixed order).
pub fn applicable(path: &str, bytes: &[u8], original: Option<&[u8]>) -> Vec<Kind> {
    let e = ext(path);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return if e == "png" || e == "jpg" {
            vec![Kind::InvalidImage]
        } else {
            vec![]
        };
    };
    let mut v = Vec::new();
    match e {
        "py" => {
            if original.is_some_and(|o| o != bytes && !hunks(o, bytes).is_empty()) {
                v.push(Kind::PartialFix);
            }
            v.push(Kind::RuntimeBug);
        }
        "png" | "jpg" => v.push(Kind::InvalidImage),
        _ => {
            if number_re().is_match(text) {
                v.push(Kind::WrongNumbers);
            }
            if text.lines().filter(|l| l.starts_with('#')).count() >= 2 {
                v.push(Kind::MissingSection);
            }
            let lists = text.lines().filter(|l| is_list_line(l)).count();
            if lists >= 3 || (e == "csv" && text.lines().count() >= 4) {
                v.push(Kind::TruncatedList);
            }
            if matches!(e, "md" | "txt") && text.split_whitespace().count() >= 40 {
                v.push(Kind::ShallowText);
            }
            v.push(Kind::WrongFileName);
        }
    }
    v
}

/// The degraded version of kind `kind` (None when it would change nothing).
pub fn degrade(
    path: &str,
    bytes: &[u8],
    original: Option<&[u8]>,
    kind: Kind,
    u: f64,
) -> Option<Degraded> {
    let text = std::str::from_utf8(bytes).ok();
    let out = |path: String, bytes: Vec<u8>| Some(Degraded { path, bytes, kind });
    match kind {
        Kind::InvalidImage => out(path.into(), bytes[..bytes.len() * 3 / 5].to_vec()),
        Kind::WrongFileName => out(wrong_name(path), bytes.to_vec()),
        Kind::WrongNumbers => {
            let t = text?;
            let s = number_re().replace_all(t, |c: &regex::Captures| shift_number(&c[0]));
            (s != t)
                .then(|| s.into_owned().into_bytes())
                .and_then(|b| out(path.into(), b))
        }
        Kind::MissingSection => {
            let t = text?;
            let lines: Vec<&str> = t.lines().collect();
            let heads: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with('#'))
                .collect();
            if heads.len() < 2 {
                return None;
            }
            // one section after the first heading, drawn
            let k = 1 + ((u * (heads.len() - 1) as f64) as usize).min(heads.len() - 2);
            let (a, b) = (heads[k], heads.get(k + 1).copied().unwrap_or(lines.len()));
            let kept: Vec<&str> = lines[..a].iter().chain(&lines[b..]).copied().collect();
            out(path.into(), (kept.join("\n") + "\n").into_bytes())
        }
        Kind::TruncatedList => {
            let t = text?;
            let lines: Vec<&str> = t.lines().collect();
            let csv = ext(path) == "csv";
            let items: Vec<usize> = (0..lines.len())
                .filter(|&i| if csv { i > 0 } else { is_list_line(lines[i]) })
                .collect();
            if items.len() < 3 {
                return None;
            }
            let keep = (items.len() * 3 / 5).max(1);
            let drop: std::collections::BTreeSet<usize> = items[keep..].iter().copied().collect();
            let kept: Vec<&str> = (0..lines.len())
                .filter(|i| !drop.contains(i))
                .map(|i| lines[i])
                .collect();
            out(path.into(), (kept.join("\n") + "\n").into_bytes())
        }
        Kind::ShallowText => {
            let t = text?;
            let total = t.split_whitespace().count();
            let mut words = 0;
            let mut kept = Vec::new();
            for l in t.lines() {
                if words >= total * 11 / 20 {
                    break;
                }
                words += l.split_whitespace().count();
                kept.push(l);
            }
            out(path.into(), (kept.join("\n") + "\n").into_bytes())
        }
        Kind::PartialFix => {
            let (orig, fixed) = (std::str::from_utf8(original?).ok()?, text?);
            let hs = hunks(orig.as_bytes(), fixed.as_bytes());
            if hs.is_empty() {
                return None;
            }
            let h = &hs[((u * hs.len() as f64) as usize).min(hs.len() - 1)];
            let fl: Vec<&str> = fixed.lines().collect();
            let ol: Vec<&str> = orig.lines().collect();
            let mut v: Vec<&str> = fl[..h.fixed.0].to_vec();
            v.extend_from_slice(&ol[h.orig.0..h.orig.1]);
            v.extend_from_slice(&fl[h.fixed.1..]);
            out(path.into(), (v.join("\n") + "\n").into_bytes())
        }
        Kind::RuntimeBug => {
            let t = text?;
            let lines: Vec<&str> = t.lines().collect();
            // after the last top-level import (or the docstring), a name that is never defined
            let at = lines
                .iter()
                .rposition(|l| l.starts_with("import ") || l.starts_with("from "))
                .map_or(0, |i| i + 1);
            let mut v: Vec<&str> = lines[..at].to_vec();
            v.push("OUTPUT_DIR = OUTPUT_ROOT / \"out\"");
            v.extend_from_slice(&lines[at..]);
            out(path.into(), (v.join("\n") + "\n").into_bytes())
        }
    }
}

/// Changes the last digit of a number (keeps its length and format).
fn shift_number(n: &str) -> String {
    let mut chars: Vec<char> = n.chars().collect();
    if let Some(i) = chars.iter().rposition(|c| c.is_ascii_digit()) {
        let d = chars[i].to_digit(10).unwrap_or(0);
        chars[i] = char::from_digit((d + 3) % 10, 10).unwrap_or('0');
    }
    chars.into_iter().collect()
}

/// A near miss of a file name: `_` before the first digit run, else a `_final` suffix.
fn wrong_name(path: &str) -> String {
    let (dir, file) = match path.rsplit_once('/') {
        Some((d, f)) => (format!("{d}/"), f),
        None => (String::new(), path),
    };
    let (stem, e) = file.rsplit_once('.').unwrap_or((file, ""));
    let dot = if e.is_empty() { "" } else { "." };
    let new_stem = match stem.find(|c: char| c.is_ascii_digit()) {
        Some(i) if i > 0 && !stem[..i].ends_with('_') => format!("{}_{}", &stem[..i], &stem[i..]),
        _ => format!("{stem}_final"),
    };
    format!("{dir}{new_stem}{dot}{e}")
}

/// One changed region: `orig.0..orig.1` was replaced by `fixed.0..fixed.1` (line indices).
#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    pub orig: (usize, usize),
    pub fixed: (usize, usize),
}

/// Line hunks between two texts (longest common subsequence; the files are small).
pub fn hunks(orig: &[u8], fixed: &[u8]) -> Vec<Hunk> {
    let (Ok(a), Ok(b)) = (std::str::from_utf8(orig), std::str::from_utf8(fixed)) else {
        return vec![];
    };
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    if a.len() * b.len() > 4_000_000 {
        return vec![];
    }
    let (n, m) = (a.len(), b.len());
    let mut l = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            l[i][j] = if a[i] == b[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            if let Some((oi, oj)) = open.take() {
                out.push(Hunk {
                    orig: (oi, i),
                    fixed: (oj, j),
                });
            }
            i += 1;
            j += 1;
        } else {
            open.get_or_insert((i, j));
            if j < m && (i == n || l[i][j + 1] >= l[i + 1][j]) {
                j += 1;
            } else {
                i += 1;
            }
        }
    }
    if let Some((oi, oj)) = open {
        out.push(Hunk {
            orig: (oi, n),
            fixed: (oj, m),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degradations_change_what_they_say() {
        let md =
            b"# Title\nintro 1105 MPa\n## A\n- one\n- two\n- three\n- four\n- five\n## B\ntext\n";
        let k = applicable("r.md", md, None);
        assert!(
            k.contains(&Kind::WrongNumbers)
                && k.contains(&Kind::MissingSection)
                && k.contains(&Kind::TruncatedList)
        );
        let d = degrade("r.md", md, None, Kind::WrongNumbers, 0.0).unwrap();
        assert!(String::from_utf8(d.bytes).unwrap().contains("1108"));
        let d = degrade("r.md", md, None, Kind::TruncatedList, 0.0).unwrap();
        assert!(!String::from_utf8(d.bytes).unwrap().contains("- five"));
        let d = degrade("r.md", md, None, Kind::MissingSection, 0.99).unwrap();
        let t = String::from_utf8(d.bytes).unwrap();
        assert!(t.contains("## A") && !t.contains("## B"), "{t}");
        assert_eq!(wrong_name("a/review_round1.md"), "a/review_round_1.md");
        assert_eq!(wrong_name("notes.md"), "notes_final.md");
        let orig = b"def f(x):\n    return x+1\n\ndef g(x):\n    return x*3\n";
        let fixed = b"def f(x):\n    return x\n\ndef g(x):\n    return x*2\n";
        assert_eq!(hunks(orig, fixed).len(), 2);
        let d = degrade("m.py", fixed, Some(orig), Kind::PartialFix, 0.0).unwrap();
        assert_eq!(
            String::from_utf8(d.bytes).unwrap(),
            "def f(x):\n    return x+1\n\ndef g(x):\n    return x*2\n"
        );
        let d = degrade(
            "s.py",
            b"import os\nprint(1)\n",
            None,
            Kind::RuntimeBug,
            0.0,
        )
        .unwrap();
        assert!(String::from_utf8(d.bytes)
            .unwrap()
            .starts_with("import os\nOUTPUT_DIR"));
        assert_eq!(
            applicable("f.png", &[0x89, 0xff, 0x00], None),
            vec![Kind::InvalidImage]
        );
    }
}
