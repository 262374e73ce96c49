//! `exists`: 1 if `workdir/<artifact>` exists (file or folder).

use super::{Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, artifact: &str) -> Outcome {
    Outcome::bool(ctx.path(artifact).exists(), "exists", "missing")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn present_missing_and_folder() {
        let d = Dirs::new();
        d.write("a.md", "");
        d.write("sub/x", "1");
        assert_eq!(run(&d.ctx(), "a.md").score, 1.0);
        assert_eq!(run(&d.ctx(), "sub").score, 1.0);
        assert_eq!(run(&d.ctx(), "b.md").score, 0.0);
    }
}
