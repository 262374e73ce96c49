//! `contains_any`: 1 if any string is a case-sensitive substring of the file.

use super::{read_text, Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, artifact: &str, any_of: &[String]) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t,
        Err(o) => return o,
    };
    match any_of.iter().find(|s| text.contains(s.as_str())) {
        Some(s) => Outcome::pass(format!("found {s:?}")),
        None => Outcome::fail(format!("none of {any_of:?} present")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::{s, Dirs};

    #[test]
    fn case_sensitive_substring() {
        let d = Dirs::new();
        d.write("a.md", "peak 1263.1 MPa");
        assert_eq!(run(&d.ctx(), "a.md", &s(&["x", "1263"])).score, 1.0);
        assert_eq!(run(&d.ctx(), "a.md", &s(&["MPA"])).score, 0.0);
        assert_eq!(run(&d.ctx(), "missing.md", &s(&["x"])).score, 0.0);
    }
}
