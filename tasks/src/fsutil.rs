//! Small deterministic filesystem helpers: sorted walks, safe relative paths, sha256 manifests.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use crate::error::TaskError;

/// Every regular file under `root`, as `/`-separated relative paths, sorted.
pub fn walk_files(root: &Path) -> Result<Vec<String>, TaskError> {
    let mut out = Vec::new();
    walk_into(root, "", &mut out)?;
    out.sort();
    Ok(out)
}

fn walk_into(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), TaskError> {
    let rd = std::fs::read_dir(dir).map_err(|e| TaskError::io(dir, e))?;
    let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let ft = e.file_type().map_err(|err| TaskError::io(e.path(), err))?;
        if ft.is_dir() {
            walk_into(&e.path(), &rel, out)?;
        } else if ft.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}

/// True when `p` is a non-empty relative path that stays inside its base (no `..`, no root).
pub fn is_safe_relative(p: &str) -> bool {
    if p.is_empty() || p.contains('\\') {
        return false;
    }
    let path = Path::new(p);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && path.components().any(|c| matches!(c, Component::Normal(_)))
}

/// The last component of a `/`-separated path.
pub fn basename(p: &str) -> &str {
    p.trim_end_matches('/').rsplit('/').next().unwrap_or(p)
}

/// Hex sha256 of bytes (the suite's one implementation).
pub use lrab_util::sha256_hex;

/// Bytes with every CRLF turned into LF (upstream compares seed files this way).
pub fn crlf_to_lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// `sha256sum`-style manifest text (`<hex>  <path>` lines, sorted by path).
pub fn format_manifest(files: &BTreeMap<String, Vec<u8>>) -> String {
    let mut s = String::new();
    for (path, bytes) in files {
        s.push_str(&sha256_hex(bytes));
        s.push_str("  ");
        s.push_str(path);
        s.push('\n');
    }
    s
}

/// Parses a manifest written by [`format_manifest`] (or `sha256sum`). Errors name the line.
pub fn parse_manifest(text: &str) -> Result<BTreeMap<String, String>, crate::ManifestError> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (hash, path) = line
            .split_once("  ")
            .or_else(|| line.split_once(" *"))
            .ok_or(crate::ManifestError::Shape(i + 1))?;
        if hash.len() != 64 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(crate::ManifestError::Digest {
                line: i + 1,
                digest: hash.to_string(),
            });
        }
        out.insert(path.to_string(), hash.to_ascii_lowercase());
    }
    Ok(out)
}

/// Compares generated files with a manifest; `None` when they agree, else a description.
pub fn manifest_diff(
    files: &BTreeMap<String, Vec<u8>>,
    manifest: &BTreeMap<String, String>,
) -> Option<String> {
    let mut issues = Vec::new();
    for (path, bytes) in files {
        match manifest.get(path) {
            None => issues.push(format!("{path} not listed")),
            Some(h) if *h != sha256_hex(bytes) => issues.push(format!("{path} hash differs")),
            Some(_) => {}
        }
    }
    for path in manifest.keys() {
        if !files.contains_key(path) {
            issues.push(format!("{path} listed but not generated"));
        }
    }
    if issues.is_empty() {
        None
    } else {
        Some(issues.join("; "))
    }
}

/// Writes bytes, creating parent folders.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), TaskError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| TaskError::io(parent, e))?;
    }
    std::fs::write(path, bytes).map_err(|e| TaskError::io(path, e))
}

/// Copies a file or a directory tree (sorted, bytes only: no timestamps or modes carried over).
pub fn copy_tree(src: &Path, dst: &Path) -> Result<Vec<PathBuf>, TaskError> {
    let mut written = Vec::new();
    if src.is_dir() {
        std::fs::create_dir_all(dst).map_err(|e| TaskError::io(dst, e))?;
        for rel in walk_files(src)? {
            let bytes =
                std::fs::read(src.join(&rel)).map_err(|e| TaskError::io(src.join(&rel), e))?;
            let target = dst.join(&rel);
            write_file(&target, &bytes)?;
            written.push(target);
        }
    } else {
        let bytes = std::fs::read(src).map_err(|e| TaskError::io(src, e))?;
        write_file(dst, &bytes)?;
        written.push(dst.to_path_buf());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_relative_paths() {
        assert!(is_safe_relative("a/b.md"));
        assert!(is_safe_relative("./a"));
        assert!(!is_safe_relative("../a"));
        assert!(!is_safe_relative("a/../../b"));
        assert!(!is_safe_relative("/etc/passwd"));
        assert!(!is_safe_relative(""));
        assert!(!is_safe_relative("."));
    }

    #[test]
    fn crlf_normalisation_keeps_lone_cr() {
        assert_eq!(crlf_to_lf(b"a\r\nb\rc\r\n"), b"a\nb\rc\n");
    }

    #[test]
    fn manifest_roundtrip_and_diff() {
        let mut files = BTreeMap::new();
        files.insert("x.csv".to_string(), b"1,2\n".to_vec());
        let text = format_manifest(&files);
        let m = parse_manifest(&text).unwrap();
        assert_eq!(manifest_diff(&files, &m), None);
        files.insert("x.csv".to_string(), b"1,3\n".to_vec());
        assert!(manifest_diff(&files, &m).unwrap().contains("hash differs"));
        assert_eq!(
            parse_manifest("zz  a\n").unwrap_err().to_string(),
            "line 1: 'zz' is not a sha256 hex digest"
        );
        assert_eq!(
            parse_manifest("# c\n\nnospace\n").unwrap_err(),
            crate::ManifestError::Shape(3)
        );
    }
}
