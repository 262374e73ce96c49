//! `seed_unchanged`: the workdir copy of `basename(seed_rel)` equals the pack's `seed_rel` after
//! CRLF->LF normalisation (compared by sha256), so line-ending rewrites by editors do not count.

use lrab_tasks::{basename, crlf_to_lf};
use lrab_util::sha256_hex;

use super::{read_bytes, Ctx, Outcome};

/// Why a seed file does not count as unchanged; displays as the check's detail.
#[derive(Debug, thiserror::Error)]
pub enum SeedChange {
    /// The pack's own copy of the seed cannot be read.
    #[error("cannot read seed {}: {err}", .path.display())]
    UnreadableSeed {
        /// The seed in the pack.
        path: std::path::PathBuf,
        /// Why it cannot be read.
        err: std::io::Error,
    },
    /// The workdir copy is missing or unreadable; `detail` is the reading check's detail.
    #[error("{name} in the workdir: {detail}")]
    Workdir {
        /// The seed's file name.
        name: String,
        /// What reading it found.
        detail: String,
    },
    /// The workdir copy differs from the seed (beyond line endings).
    #[error("{0} was modified")]
    Modified(String),
}

/// `Ok(())` when unchanged; otherwise what changed.
pub fn compare(ctx: &Ctx<'_>, seed_rel: &str) -> Result<(), SeedChange> {
    let seed_path = ctx.pack_root.join(seed_rel);
    let seed = std::fs::read(&seed_path).map_err(|err| SeedChange::UnreadableSeed {
        path: seed_path.clone(),
        err,
    })?;
    let name = basename(seed_rel);
    let work = read_bytes(ctx, name).map_err(|o| SeedChange::Workdir {
        name: name.to_string(),
        detail: o.detail,
    })?;
    if sha256_hex(&crlf_to_lf(&seed)) == sha256_hex(&crlf_to_lf(&work)) {
        Ok(())
    } else {
        Err(SeedChange::Modified(name.to_string()))
    }
}

pub fn run(ctx: &Ctx<'_>, seed_rel: &str) -> Outcome {
    match compare(ctx, seed_rel) {
        Ok(()) => Outcome::pass("seed unchanged"),
        Err(e) => Outcome::fail(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn crlf_is_not_a_change_but_edits_are() {
        let d = Dirs::new();
        d.write_pack("fixtures/p/test_x.py", "def test():\n    assert 1\n");
        d.write("test_x.py", "def test():\r\n    assert 1\r\n");
        assert_eq!(run(&d.ctx(), "fixtures/p/test_x.py").score, 1.0);
        d.write("test_x.py", "def test():\n    assert True\n");
        let o = run(&d.ctx(), "fixtures/p/test_x.py");
        assert_eq!(
            (o.score, o.detail.as_str()),
            (0.0, "test_x.py was modified")
        );
        std::fs::remove_file(d.work.path().join("test_x.py")).unwrap();
        let o = run(&d.ctx(), "fixtures/p/test_x.py");
        assert_eq!(o.score, 0.0);
        assert!(
            o.detail.starts_with("test_x.py in the workdir: "),
            "{}",
            o.detail
        );
        assert!(matches!(
            compare(&d.ctx(), "fixtures/p/missing.py"),
            Err(SeedChange::UnreadableSeed { .. })
        ));
    }
}
