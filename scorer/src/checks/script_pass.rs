//! `script_pass`: run a shell command in the workdir; 1 if the expected substring appears in
//! stdout+stderr, or, without an expectation, if it exits 0.

use std::time::Duration;

use super::{Ctx, Outcome};
use crate::command;

/// Details carry no command output: it often holds timings, and score.json must be
/// byte-identical for identical workdirs.
fn code_text(code: Option<i32>) -> String {
    code.map_or_else(|| "by signal".to_string(), |c| c.to_string())
}

pub fn run(ctx: &Ctx<'_>, cmd: &str, expect: Option<&str>, timeout_s: u64) -> Outcome {
    let o = match command::run_shell(cmd, ctx.workdir, Duration::from_secs(timeout_s)) {
        Ok(o) => o,
        Err(e) => return Outcome::fail(format!("cannot run `{cmd}`: {e}")),
    };
    if o.timed_out {
        return Outcome::fail(format!("`{cmd}` timed out after {timeout_s}s"));
    }
    match expect {
        Some(e) => Outcome::bool(
            o.combined().contains(e),
            format!("output contains {e:?}"),
            format!("{e:?} not in output (exit {})", code_text(o.code)),
        ),
        None => Outcome::bool(
            o.code == Some(0),
            "exit 0",
            format!("exit {}", code_text(o.code)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn expectation_exit_code_stderr_and_timeout() {
        let d = Dirs::new();
        d.write(
            "t.py",
            "import sys\nprint('10 passed, 0 failed', file=sys.stderr)\n",
        );
        let c = d.ctx();
        assert_eq!(
            run(&c, "python3 t.py", Some("10 passed, 0 failed"), 30).score,
            1.0
        );
        assert_eq!(run(&c, "python3 t.py", Some("9 passed"), 30).score, 0.0);
        assert_eq!(run(&c, "true", None, 30).score, 1.0);
        assert_eq!(run(&c, "exit 2", None, 30).score, 0.0);
        // The expectation wins over the exit code, as upstream.
        assert_eq!(run(&c, "echo ok; exit 1", Some("ok"), 30).score, 1.0);
        let t = run(&c, "echo ok; sleep 30", Some("ok"), 1);
        assert_eq!(t.score, 0.0);
        assert!(t.detail.contains("timed out"));
    }
}
