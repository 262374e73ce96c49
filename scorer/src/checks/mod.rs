//! The 14 check kinds, one module each, with upstream's exact semantics (reference §2.2).
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

/// Reads an artifact as text (lossy UTF-8); `Err` holds the failing detail (missing file …).
pub fn read_text(path: &Path) -> Result<String, Outcome> {
    if path.is_dir() {
        return Err(Outcome::fail(format!(
            "{} is a folder, not a file",
            path.display()
        )));
    }
    match std::fs::read(path) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Outcome::fail("missing file")),
        Err(e) => Err(Outcome::fail(format!("cannot read: {e}"))),
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

    fn write(base: &Path, rel: &str, bytes: &[u8]) {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }
}
