//! The 14 check kinds, one module each, with upstream's exact semantics (docs/scoring.md, "Check kinds").
//! Every check returns a score in [0, 1] and a human-readable detail; none panics on odd input.

use std::path::{Path, PathBuf};

use lrab_tasks::{Check, CheckSpec};

pub mod contains_any;
pub mod contains_groups;
pub mod contains_ordered;
pub mod exists;
pub mod file_min_bytes;
pub mod image_valid;
pub mod min_urls;
pub mod min_words;
pub mod not_contains;
pub mod python_compiles;
pub mod script_pass;
pub mod seed_unchanged;
pub mod spec_pytest;
pub mod structure;

/// Where a check looks: the workdir, and the pack root for `seed_rel` files.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub workdir: &'a Path,
    pub pack_root: &'a Path,
}

impl Ctx<'_> {
    /// `workdir/<artifact>`.
    pub fn path(&self, artifact: &str) -> PathBuf {
        self.workdir.join(artifact)
    }
}

/// Score and explanation of one check.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub score: f64,
    pub detail: String,
}

impl Outcome {
    pub fn pass(detail: impl Into<String>) -> Self {
        Outcome {
            score: 1.0,
            detail: detail.into(),
        }
    }
    pub fn fail(detail: impl Into<String>) -> Self {
        Outcome {
            score: 0.0,
            detail: detail.into(),
        }
    }
    pub fn bool(ok: bool, yes: impl Into<String>, no: impl Into<String>) -> Self {
        if ok {
            Outcome::pass(yes)
        } else {
            Outcome::fail(no)
        }
    }
}

/// Largest artifact a check reads (a hostile workdir must not exhaust memory).
pub const MAX_ARTIFACT_BYTES: u64 = 256 * 1024 * 1024;

/// Resolves an artifact to a regular file inside the workdir. Symlinks are followed only while
/// they stay inside the workdir, so an agent cannot point a scored name at `/dev/zero` or at
/// files elsewhere on the machine.
pub fn regular_file(
    ctx: &Ctx<'_>,
    artifact: &str,
) -> Result<(PathBuf, std::fs::Metadata), Outcome> {
    let path = ctx.path(artifact);
    let real = match path.canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Outcome::fail("missing file"))
        }
        Err(e) => return Err(Outcome::fail(format!("cannot resolve: {e}"))),
    };
    let root = ctx
        .workdir
        .canonicalize()
        .unwrap_or_else(|_| ctx.workdir.to_path_buf());
    if !real.starts_with(&root) {
        return Err(Outcome::fail(
            "resolves outside the workdir (symlink); not read",
        ));
    }
    let meta = std::fs::metadata(&real).map_err(|e| Outcome::fail(format!("cannot stat: {e}")))?;
    if meta.is_dir() {
        return Err(Outcome::fail("is a folder, not a file"));
    }
    if !meta.is_file() {
        return Err(Outcome::fail("not a regular file"));
    }
    Ok((real, meta))
}

/// Reads an artifact's bytes (see [`regular_file`]); `Err` holds the failing outcome.
pub fn read_bytes(ctx: &Ctx<'_>, artifact: &str) -> Result<Vec<u8>, Outcome> {
    let (real, meta) = regular_file(ctx, artifact)?;
    if meta.len() > MAX_ARTIFACT_BYTES {
        return Err(Outcome::fail(format!(
            "larger than {MAX_ARTIFACT_BYTES} bytes; not read"
        )));
    }
    std::fs::read(&real).map_err(|e| Outcome::fail(format!("cannot read: {e}")))
}

/// Reads an artifact as text (lossy UTF-8).
pub fn read_text(ctx: &Ctx<'_>, artifact: &str) -> Result<String, Outcome> {
    read_bytes(ctx, artifact).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// File name for a temporary copy of an artifact (its basename, or a neutral one).
pub(crate) fn basename_py(artifact: &str) -> String {
    let b = lrab_tasks::basename(artifact);
    if b.is_empty() || b == "." || b == ".." {
        "module.py".to_string()
    } else {
        b.to_string()
    }
}

/// Runs one check.
pub fn run(ctx: &Ctx<'_>, spec: &CheckSpec) -> Outcome {
    let a = spec.artifact.as_str();
    match &spec.check {
        Check::Exists {} => exists::run(ctx, a),
        Check::ContainsAny { any_of } => contains_any::run(ctx, a, any_of),
        Check::NotContains { none_of } => not_contains::run(ctx, a, none_of),
        Check::ContainsGroups { groups, min_ratio } => {
            contains_groups::run(ctx, a, groups, *min_ratio)
        }
        Check::ContainsOrdered { ordered } => contains_ordered::run(ctx, a, ordered),
        Check::MinWords { min_words } => min_words::run(ctx, a, *min_words),
        Check::Structure {
            required_sections, ..
        } => structure::run(ctx, a, required_sections),
        Check::PythonCompiles {} => python_compiles::run(ctx, a),
        Check::FileMinBytes { min_bytes } => file_min_bytes::run(ctx, a, *min_bytes),
        Check::MinUrls { min_urls } => min_urls::run(ctx, a, *min_urls),
        Check::ImageValid {
            min_width,
            min_height,
        } => image_valid::run(ctx, a, *min_width, *min_height),
        Check::ScriptPass {
            command,
            expect_stdout,
            timeout_s,
        } => script_pass::run(ctx, command, expect_stdout.as_deref(), *timeout_s),
        Check::SeedUnchanged { seed_rel } => seed_unchanged::run(ctx, seed_rel),
        Check::SpecPytest {
            seed_rel,
            command,
            expect_stdout,
            timeout_s,
        } => spec_pytest::run(ctx, seed_rel, command, expect_stdout, *timeout_s),
    }
}

/// Shared test helpers: a temp workdir with files.
#[cfg(test)]
pub(crate) mod testutil {
    use super::Ctx;
    use std::path::Path;

    pub struct Dirs {
        pub work: tempfile::TempDir,
        pub pack: tempfile::TempDir,
    }

    impl Dirs {
        pub fn new() -> Self {
            Dirs {
                work: tempfile::tempdir().unwrap(),
                pack: tempfile::tempdir().unwrap(),
            }
        }
        pub fn ctx(&self) -> Ctx<'_> {
            Ctx {
                workdir: self.work.path(),
                pack_root: self.pack.path(),
            }
        }
        pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
            write(self.work.path(), rel, bytes.as_ref());
        }
        pub fn write_pack(&self, rel: &str, bytes: impl AsRef<[u8]>) {
            write(self.pack.path(), rel, bytes.as_ref());
        }
    }

    #[test]
    fn symlinks_out_of_the_workdir_and_devices_are_not_read() {
        let d = Dirs::new();
        d.write_pack("secret.txt", "top secret words here");
        std::os::unix::fs::symlink(
            d.pack.path().join("secret.txt"),
            d.work.path().join("leak.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.work.path().join("zero.md")).unwrap();
        d.write("real.md", "inside words");
        std::os::unix::fs::symlink("real.md", d.work.path().join("alias.md")).unwrap();
        let c = d.ctx();
        let leak = crate::checks::read_text(&c, "leak.md").unwrap_err();
        assert!(
            leak.detail.contains("outside the workdir"),
            "{}",
            leak.detail
        );
        assert_eq!(
            crate::checks::contains_any::run(&c, "leak.md", &s(&["secret"])).score,
            0.0
        );
        assert_eq!(crate::checks::min_words::run(&c, "zero.md", 1).score, 0.0);
        assert_eq!(
            crate::checks::file_min_bytes::run(&c, "zero.md", 0).score,
            0.0
        );
        assert_eq!(
            crate::checks::read_text(&c, "alias.md").unwrap(),
            "inside words"
        );
    }

    fn write(base: &Path, rel: &str, bytes: &[u8]) {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }
}
