//! Bakes the suite's git commit into the binary (`LRAB_BUILD_COMMIT`), so a binary copied into
//! an image or onto a cluster node still knows which source it was built from. An explicit
//! `LRAB_SUITE_COMMIT` at build time wins; outside a git checkout nothing is baked in and the
//! runner falls back (runner/src/run/manifest.rs).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
    (o.status.success() && !s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=LRAB_SUITE_COMMIT");
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(c) = git(&["rev-parse", "HEAD"]) {
        println!("cargo:rustc-env=LRAB_BUILD_COMMIT={c}");
    }
    // rebuild when HEAD moves: the worktree's HEAD, the branch refs, packed refs
    if let Some(d) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={d}/HEAD");
    }
    if let Some(d) = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        println!("cargo:rerun-if-changed={d}/refs/heads");
        println!("cargo:rerun-if-changed={d}/packed-refs");
    }
}
