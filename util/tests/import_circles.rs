//! No import circle inside a crate: for every crate of the workspace, the modules (one a
//! source file) and the `crate::`/`super::`/`self::` paths each names form a graph, and no two
//! modules side by side may reach each other through it. A path from module `a::x::y` to
//! `a::z::w` is an edge between the siblings `a::x` and `a::z` (their subtrees import each
//! other); a module naming its own ancestor or descendant (a parent's re-exports, a child's
//! `use super::*`) is no edge. The fix for a circle is to put what both sides need below them.
//!
//! Run alone: `cargo test -p lrab-util --test import_circles`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles not broken yet (each: crate, its modules; measured 2026-12-06). Listed so this test
/// guards everything else now: a circle inside one of these sets passes (a part may be broken
/// first), any other fails. Take an entry out once its circle is broken (the owners of these
/// crates are breaking them while other work lands, so a gone circle is not an error here).
const KNOWN: &[(&str, &[&str])] = &[];

type Module = Vec<String>;

/// The module path of a source file of a library (`src/a/b.rs`, `src/a/b/mod.rs` → `a::b`).
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Module = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            // a binary's own modules are another crate
            if p.file_name().is_some_and(|n| n != "bin") {
                rs_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("main.rs") {
            out.push(p);
        }
    }
}

/// Every path of a `use` tree (`a::{b, c::{d, e as f}}` → `a::b`, `a::c::d`, `a::c::e`).
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let t = tree.split(" as ").next().unwrap_or_default().trim();
        return vec![t.trim_end_matches("::").to_string()];
    };
    let close = tree.rfind('}').unwrap_or(tree.len());
    let prefix: String = tree[..open]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let inner = &tree[open + 1..close];
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let part = inner[start..i].trim();
                start = i + 1;
                if !part.is_empty() {
                    out.extend(expand(part).into_iter().map(|p| format!("{prefix}{p}")));
                }
            }
            _ => {}
        }
    }
    out
}

/// The `crate::`, `super::` and `self::` paths a source text names (comments left out).
fn paths_in(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    // use statements (braces expanded), each from a line that starts one to its `;`
    let lines: Vec<&str> = code.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let l = l.trim_start();
        let l = (["pub(crate) ", "pub(super) ", "pub "].iter())
            .find_map(|p| l.strip_prefix(p))
            .unwrap_or(l);
        let Some(first) = l.strip_prefix("use ") else {
            continue;
        };
        let mut tree = first.to_string();
        for next in &lines[i + 1..] {
            if tree.contains(';') {
                break;
            }
            tree.push_str(next);
        }
        let tree = tree.split(';').next().unwrap_or_default();
        let tree_chars = |c: char| c.is_alphanumeric() || " _:{},*\t".contains(c);
        if tree.chars().all(tree_chars) && tree.matches('{').count() == tree.matches('}').count() {
            out.extend(expand(tree));
        }
    }
    // paths written inline
    let bytes = code.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(head).map(|i| i + from) {
            from = i + head.len();
            let before = i.checked_sub(1).map(|j| bytes[j] as char);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| e + i);
            out.push(code[i..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path names, from module `at`: its longest prefix that is a module.
fn resolve(at: &Module, path: &str, modules: &BTreeSet<Module>) -> Option<Module> {
    let mut segs = path.split("::").filter(|s| !s.is_empty());
    let mut base: Module = match segs.next()? {
        "crate" => Vec::new(),
        "self" => at.clone(),
        "super" => at[..at.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let rest: Vec<&str> = segs.collect();
    let mut i = 0;
    while rest.get(i) == Some(&"super") {
        base.pop()?;
        i += 1;
    }
    let mut best = base.clone();
    for s in &rest[i..] {
        base.push(s.to_string());
        if modules.contains(&base) {
            best = base.clone();
        } else {
            break;
        }
    }
    Some(best)
}

/// The import graph of one crate's library: module → modules it names (not its ancestors or
/// descendants).
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut g: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    let mut lifted = Vec::new();
    for f in &files {
        let at = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let edges = g.entry(at.clone()).or_default();
        for p in paths_in(&text) {
            let Some(to) = resolve(&at, &p, &modules) else {
                continue;
            };
            if to.starts_with(&at) || at.starts_with(&to) {
                continue;
            }
            // lifted to the two sides under the modules' nearest common ancestor
            let common = at.iter().zip(&to).take_while(|(a, b)| a == b).count();
            edges.insert(to[..=common].to_vec());
            let from = at[..=common].to_vec();
            if from != at {
                lifted.push((from, to[..=common].to_vec()));
            }
        }
    }
    for (from, to) in lifted {
        g.entry(from).or_default().insert(to);
    }
    g
}

/// The strongly connected parts of more than one module (Tarjan), each sorted.
fn circles(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Module) {
        let n = t.index.len();
        t.index.insert(v, (n, n));
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some((w, _)) = t.g.get_key_value(w) else {
                continue;
            };
            if !t.index.contains_key(w) {
                visit(t, w);
                let low = t.index[w].1.min(t.index[v].1);
                t.index.get_mut(v).unwrap().1 = low;
            } else if t.on.contains(w) {
                let low = t.index[w].0.min(t.index[v].1);
                t.index.get_mut(v).unwrap().1 = low;
            }
        }
        if t.index[v].0 == t.index[v].1 {
            let mut part = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                part.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                t.out.push(part);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn finds_a_circle_and_ignores_parents() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path();
    std::fs::create_dir_all(src.join("agent")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod agent;\npub use agent::Run;\n").unwrap();
    std::fs::write(
        src.join("agent/mod.rs"),
        "mod a;\nmod b;\npub use a::Run;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("agent/a.rs"),
        "use super::{b::{Turn, x as y}, Run};\npub struct Run;\n",
    )
    .unwrap();
    std::fs::write(src.join("agent/b.rs"), "// crate::agent::a is a comment\n").unwrap();
    assert_eq!(circles(&graph(src)), Vec::<Vec<String>>::new());
    std::fs::write(src.join("agent/b.rs"), "fn f() { crate::agent::a::g() }\n").unwrap();
    assert_eq!(circles(&graph(src)), [["agent::a", "agent::b"]]);
}

#[test]
fn no_import_circle_inside_a_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() > 5, "the workspace's crates: {crates:?}");
    for c in &crates {
        let name = c.file_name().unwrap().to_string_lossy().into_owned();
        for circle in circles(&graph(&c.join("src"))) {
            found.push((name.clone(), circle));
        }
    }
    let within = |ms: &[&str], c: &[String]| c.iter().all(|m| ms.contains(&m.as_str()));
    let known = |n: &str, c: &[String]| KNOWN.iter().any(|(k, ms)| *k == n && within(ms, c));
    let new: Vec<String> = (found.iter())
        .filter(|(n, c)| !known(n, c))
        .map(|(n, c)| format!("{n}: {}", c.join(" ↔ ")))
        .collect();
    assert!(
        new.is_empty(),
        "import circles inside a crate:\n{}",
        new.join("\n")
    );
}
