//! `python_compiles`: a real `python3 -m py_compile` on a copy of the file in a temporary folder,
//! so no `__pycache__` appears in the scored workdir.

use std::time::Duration;

use super::{read_bytes, Ctx, Outcome};
use crate::command;

/// Interpreter used for compilation (`LRAB_PYTHON` overrides).
pub fn python() -> String {
    std::env::var("LRAB_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

pub fn run(ctx: &Ctx<'_>, artifact: &str) -> Outcome {
    let bytes = match read_bytes(ctx, artifact) {
        Ok(b) => b,
        Err(o) => return o,
    };
    let tmp = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => return Outcome::fail(format!("cannot create temp dir: {e}")),
    };
    let name = crate::checks::basename_py(artifact);
    let copy = tmp.path().join(name);
    if let Err(e) = std::fs::write(&copy, &bytes) {
        return Outcome::fail(format!("cannot copy: {e}"));
    }
    let copy_s = copy.to_string_lossy().into_owned();
    match command::run_argv(
        &python(),
        &["-m", "py_compile", &copy_s],
        tmp.path(),
        Duration::from_secs(60),
    ) {
        Ok(o) if o.success() => Outcome::pass("compiles"),
        Ok(o) if o.timed_out => Outcome::fail("py_compile timed out"),
        Ok(o) => {
            let msg = o.tail(300).replace(&copy_s, artifact);
            Outcome::fail(format!("does not compile: {msg}"))
        }
        Err(e) => Outcome::fail(format!("cannot run {}: {e}", python())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn compiles_fails_and_leaves_no_cache() {
        let d = Dirs::new();
        d.write("ok.py", "def f(x):\n    return x + 1\n");
        d.write("bad.py", "def f(x)\n    return x\n");
        assert_eq!(run(&d.ctx(), "ok.py").score, 1.0);
        let bad = run(&d.ctx(), "bad.py");
        assert_eq!(bad.score, 0.0);
        assert!(bad.detail.contains("bad.py"), "{}", bad.detail);
        assert_eq!(run(&d.ctx(), "none.py").score, 0.0);
        assert!(!d.work.path().join("__pycache__").exists());
    }
}
