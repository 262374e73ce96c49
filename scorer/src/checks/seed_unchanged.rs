//! `seed_unchanged`: the workdir copy of `basename(seed_rel)` equals the pack's `seed_rel` after
//! CRLF->LF normalisation (compared by sha256), so line-ending rewrites by editors do not count.

use lrab_tasks::fsutil::{basename, crlf_to_lf, sha256_hex};

use super::{read_bytes, Ctx, Outcome};

/// `Ok(())` when unchanged; `Err(detail)` otherwise.
pub fn compare(ctx: &Ctx<'_>, seed_rel: &str) -> Result<(), String> {
    let seed_path = ctx.pack_root.join(seed_rel);
    let seed = std::fs::read(&seed_path)
        .map_err(|e| format!("cannot read seed {}: {e}", seed_path.display()))?;
    let name = basename(seed_rel);
    let work = read_bytes(ctx, name).map_err(|o| format!("{name} in the workdir: {}", o.detail))?;
    if sha256_hex(&crlf_to_lf(&seed)) == sha256_hex(&crlf_to_lf(&work)) {
        Ok(())
    } else {
        Err(format!("{name} was modified"))
    }
}

pub fn run(ctx: &Ctx<'_>, seed_rel: &str) -> Outcome {
    match compare(ctx, seed_rel) {
        Ok(()) => Outcome::pass("seed unchanged"),
        Err(e) => Outcome::fail(e),
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
        assert_eq!(run(&d.ctx(), "fixtures/p/test_x.py").score, 0.0);
        std::fs::remove_file(d.work.path().join("test_x.py")).unwrap();
        assert_eq!(run(&d.ctx(), "fixtures/p/test_x.py").score, 0.0);
    }
}
