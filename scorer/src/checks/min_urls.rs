//! `min_urls`: 1 if the number of `http://` plus `https://` occurrences (not unique URLs)
//! reaches N.

use super::{read_text, Ctx, Outcome};

pub fn count_urls(text: &str) -> usize {
    text.matches("http://").count() + text.matches("https://").count()
}

pub fn run(ctx: &Ctx<'_>, artifact: &str, min: u64) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let n = count_urls(&text);
    Outcome::bool(
        n as u64 >= min,
        format!("{n} URLs >= {min}"),
        format!("{n} URLs < {min}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn counts_occurrences_not_unique() {
        let d = Dirs::new();
        d.write(
            "s.md",
            "https://a.org https://a.org http://b.org\nhttps://a.org https://a.org",
        );
        assert_eq!(count_urls("https://x http://y"), 2);
        assert_eq!(run(&d.ctx(), "s.md", 5).score, 1.0);
        assert_eq!(run(&d.ctx(), "s.md", 6).score, 0.0);
        assert_eq!(run(&d.ctx(), "t.md", 0).score, 0.0);
    }
}
