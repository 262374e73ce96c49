//! Fingerprints the simulator's own sources (FNV-1a over every file of `src/`, in path order) as
//! `LRAB_SIM_SOURCE_HASH`, so that results cached against one version of the simulator (the
//! calibration's evaluations) are never reused by another. The committed profiles are left out:
//! an evaluation is keyed by the bytes of the profiles it served, and writing freshly fitted
//! profiles must not invalidate the evaluation that verified them.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let mut all = Vec::new();
    println!("cargo:rerun-if-changed=src");
    files(&root.join("src"), &mut all);
    all.sort();
    let mut h = lrab_util::FNV1A_START;
    let mut eat = |bytes: &[u8]| h = lrab_util::fnv1a(h, bytes);
    for p in &all {
        let rel = p.strip_prefix(&root).unwrap_or(p);
        eat(rel.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&std::fs::read(p).unwrap_or_default());
        eat(&[0]);
    }
    println!("cargo:rustc-env=LRAB_SIM_SOURCE_HASH={h:016x}");
}
