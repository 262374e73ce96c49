//! `not_contains`: 1 if the file exists and none of the strings is present.

use super::{read_text, Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, artifact: &str, none_of: &[String]) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let found: Vec<&String> = none_of
        .iter()
        .filter(|s| text.contains(s.as_str()))
        .collect();
    Outcome::bool(found.is_empty(), "none present", format!("found {found:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::{s, Dirs};

    #[test]
    fn requires_file_and_absence() {
        let d = Dirs::new();
        d.write("p.md", "this shows the trend [4]");
        assert_eq!(run(&d.ctx(), "p.md", &s(&["proves", "[5]"])).score, 1.0);
        assert_eq!(run(&d.ctx(), "p.md", &s(&["[4]"])).score, 0.0);
        assert_eq!(run(&d.ctx(), "none.md", &s(&["proves"])).score, 0.0);
    }
}
