//! The run manifest (`manifest.json`, typed in `lrab_records::manifest`) and the facts about
//! the machine and the code it records: the host, the suite's git commit and the task pack's
//! hash, so `lrab merge` can tell shards of one run from shards built from different code.

use std::path::Path;

pub use lrab_records::{ArmInfo, BackendInfo, Manifest, UNKNOWN_COMMIT};

/// The suite's git commit: `LRAB_SUITE_COMMIT` given at build time (for builds from a tarball
/// or in an image without `.git`), else the commit the build script found (`build.rs`), else
/// `git rev-parse HEAD` of the source tree the binary was built from, else [`UNKNOWN_COMMIT`].
pub fn suite_commit() -> String {
    let baked = option_env!("LRAB_SUITE_COMMIT").or(option_env!("LRAB_BUILD_COMMIT"));
    if let Some(c) = baked.map(str::trim).filter(|c| !c.is_empty()) {
        return c.to_string();
    }
    git_head(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|| UNKNOWN_COMMIT.into())
}

fn git_head(dir: &Path) -> Option<String> {
    if !dir.is_dir() {
        return None;
    }
    let o = lrab_tasks::process::run_argv(
        "git",
        &["rev-parse", "HEAD"],
        dir,
        std::time::Duration::from_secs(5),
    )
    .ok()?;
    let c = o.stdout.trim();
    (o.success() && !c.is_empty()).then(|| c.to_string())
}

/// This machine's host name (`gethostname`), or `unknown`.
pub fn host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is ours and its length is passed; the result is NUL-terminated or
    // truncated, and we stop at the first NUL either way.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(h) if rc == 0 && !h.is_empty() => h.to_string(),
        _ => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_commit_are_recorded() {
        assert!(!host().is_empty());
        let c = suite_commit();
        // built from this checkout: a full hex commit (or a baked-in one), never empty
        assert!(
            c == UNKNOWN_COMMIT || c.chars().all(|x| x.is_ascii_hexdigit()),
            "{c}"
        );
        let d = tempfile::tempdir().unwrap();
        assert_eq!(git_head(d.path()), None, "not a git checkout");
        assert_eq!(git_head(&d.path().join("gone")), None);
    }
}
