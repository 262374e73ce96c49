//! `contains_ordered`: 1 if every string is present and their first occurrences come in the
//! listed order (non-decreasing positions, as a sorted-list comparison would accept).

use super::{read_text, Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, artifact: &str, ordered: &[String]) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let mut positions = Vec::with_capacity(ordered.len());
    for s in ordered {
        match text.find(s.as_str()) {
            Some(p) => positions.push(p),
            None => return Outcome::fail(format!("{s:?} not present")),
        }
    }
    let in_order = positions.windows(2).all(|w| w[0] <= w[1]);
    Outcome::bool(
        in_order,
        "all present in order",
        format!("out of order (first positions {positions:?})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::{s, Dirs};

    #[test]
    fn order_and_presence() {
        let d = Dirs::new();
        d.write("o.md", "alpha then beta then gamma, alpha again");
        assert_eq!(
            run(&d.ctx(), "o.md", &s(&["alpha", "beta", "gamma"])).score,
            1.0
        );
        assert_eq!(run(&d.ctx(), "o.md", &s(&["beta", "alpha"])).score, 0.0);
        assert_eq!(run(&d.ctx(), "o.md", &s(&["alpha", "delta"])).score, 0.0);
        assert_eq!(run(&d.ctx(), "none.md", &s(&["alpha"])).score, 0.0);
    }
}
