//! `structure`: 1 if every section name is a case-insensitive substring anywhere in the file.
//! Upstream does not look for headings, so neither do we.

use super::{read_text, Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, artifact: &str, sections: &[String]) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t.to_lowercase(),
        Err(o) => return o,
    };
    let missing: Vec<&String> = sections
        .iter()
        .filter(|s| !text.contains(&s.to_lowercase()))
        .collect();
    Outcome::bool(
        missing.is_empty(),
        "all sections present",
        format!("missing {missing:?}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::{s, Dirs};

    #[test]
    fn substring_not_heading() {
        let d = Dirs::new();
        d.write("r.md", "# Intro\nThe abstract idea; see REFERENCES below.");
        assert_eq!(
            run(&d.ctx(), "r.md", &s(&["Abstract", "References"])).score,
            1.0
        );
        assert_eq!(
            run(&d.ctx(), "r.md", &s(&["Abstract", "Mechanisms"])).score,
            0.0
        );
        assert_eq!(run(&d.ctx(), "x.md", &s(&["a"])).score, 0.0);
    }
}
