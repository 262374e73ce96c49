//! `contains_groups`: ratio of groups with at least one variant present. Full credit at or above
//! `min_ratio`; below it graded partial credit capped at 0.999 and rounded to 3 dp (upstream).

use super::{read_text, Ctx, Outcome};
use crate::formula::round3;

/// The pure rule, separated so it is testable without files.
pub fn grade(hits: usize, total: usize, min_ratio: f64) -> f64 {
    if total == 0 {
        return 1.0;
    }
    let ratio = hits as f64 / total as f64;
    if ratio >= min_ratio {
        1.0
    } else {
        round3(ratio.min(0.999))
    }
}

pub fn run(ctx: &Ctx<'_>, artifact: &str, groups: &[Vec<String>], min_ratio: f64) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let missing: Vec<&Vec<String>> = groups
        .iter()
        .filter(|g| !g.iter().any(|v| text.contains(v.as_str())))
        .collect();
    let hits = groups.len() - missing.len();
    let score = grade(hits, groups.len(), min_ratio);
    let mut detail = format!(
        "{hits}/{} groups present (min_ratio {min_ratio})",
        groups.len()
    );
    if !missing.is_empty() {
        detail.push_str(&format!("; missing {missing:?}"));
    }
    Outcome { score, detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::{s, Dirs};

    #[test]
    fn grading_rule() {
        assert_eq!(grade(8, 8, 1.0), 1.0);
        assert_eq!(grade(7, 8, 1.0), 0.875);
        assert_eq!(grade(2, 3, 1.0), 0.667);
        assert_eq!(grade(3, 4, 0.75), 1.0);
        assert_eq!(grade(0, 4, 1.0), 0.0);
        // 0.999 cap matters when min_ratio is 1 and the ratio rounds up to 1.0.
        assert_eq!(grade(1999, 2000, 1.0), 0.999);
    }

    #[test]
    fn on_files() {
        let d = Dirs::new();
        d.write("r.md", "B06 dipped at 675 C");
        let g = vec![s(&["B06"]), s(&["675", "675.0"]), s(&["nope"])];
        let o = run(&d.ctx(), "r.md", &g, 1.0);
        assert_eq!(o.score, 0.667);
        assert!(o.detail.contains("nope"));
        assert_eq!(run(&d.ctx(), "r.md", &g[..2], 1.0).score, 1.0);
        assert_eq!(run(&d.ctx(), "x.md", &g, 1.0).score, 0.0);
    }
}
