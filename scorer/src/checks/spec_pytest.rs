//! `spec_pytest`: 0 if the seed spec file was modified (so editing the tests earns nothing);
//! otherwise run the command and look for the expected substring in stdout+stderr.

use super::{script_pass, seed_unchanged, Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, seed_rel: &str, cmd: &str, expect: &str, timeout_s: u64) -> Outcome {
    if let Err(e) = seed_unchanged::compare(ctx, seed_rel) {
        return Outcome::fail(format!("spec not intact: {e}"));
    }
    script_pass::run(ctx, cmd, Some(expect), timeout_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    const SPEC: &str = "from inv import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_add0():\n    assert add(0, 0) == 0\n";

    #[test]
    fn real_pytest_with_seed_guard() {
        let d = Dirs::new();
        d.write_pack("fixtures/proj/test_inv.py", SPEC);
        d.write("test_inv.py", SPEC.replace('\n', "\r\n"));
        d.write("inv.py", "def add(a, b):\n    return a - b\n");
        let c = d.ctx();
        let cmd = "python3 -m pytest test_inv.py -q";
        let o = run(&c, "fixtures/proj/test_inv.py", cmd, "2 passed", 120);
        assert_eq!(o.score, 0.0, "{}", o.detail);
        d.write("inv.py", "def add(a, b):\n    return a + b\n");
        let o = run(&c, "fixtures/proj/test_inv.py", cmd, "2 passed", 120);
        assert_eq!(o.score, 1.0, "{}", o.detail);
        // Scoring leaves no caches behind in the workdir.
        assert!(!d.work.path().join(".pytest_cache").exists());
        assert!(!d.work.path().join("__pycache__").exists());
        // Weakening the spec makes it fail even though pytest would pass.
        d.write(
            "test_inv.py",
            "def test_add():\n    pass\n\ndef test_b():\n    pass\n",
        );
        let o = run(&c, "fixtures/proj/test_inv.py", cmd, "2 passed", 120);
        assert_eq!(o.score, 0.0);
        assert!(o.detail.contains("modified"));
    }
}
