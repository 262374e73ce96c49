//! `min_words`: 1 if the whitespace-split word count reaches N, 0.5 if it reaches 85 % of N.

use super::{read_text, Ctx, Outcome};

/// Word count as Python's `str.split()` counts it (Unicode whitespace plus the ASCII separators
/// 0x1c..0x1f, which Python also treats as whitespace).
pub fn count_words(text: &str) -> usize {
    text.split(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
        .filter(|w| !w.is_empty())
        .count()
}

/// The pure grading rule.
pub fn grade(words: usize, min: u64) -> f64 {
    if words as u64 >= min {
        1.0
    } else if words as f64 >= 0.85 * min as f64 {
        0.5
    } else {
        0.0
    }
}

pub fn run(ctx: &Ctx<'_>, artifact: &str, min: u64) -> Outcome {
    let text = match read_text(ctx, artifact) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let n = count_words(&text);
    Outcome {
        score: grade(n, min),
        detail: format!(
            "{n} words (need {min}; half credit from {:.1})",
            0.85 * min as f64
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn thresholds() {
        assert_eq!(grade(400, 400), 1.0);
        assert_eq!(grade(340, 400), 0.5);
        assert_eq!(grade(339, 400), 0.0);
        assert_eq!(grade(17, 20), 0.5);
        assert_eq!(grade(0, 0), 1.0);
    }

    #[test]
    fn counts_like_python_split() {
        assert_eq!(count_words("  a b\tc\nd\u{a0}e \u{1f}f "), 6);
        assert_eq!(count_words(""), 0);
    }

    #[test]
    fn on_files() {
        let d = Dirs::new();
        d.write("w.md", "word ".repeat(18));
        assert_eq!(run(&d.ctx(), "w.md", 20).score, 0.5);
        assert_eq!(run(&d.ctx(), "w.md", 18).score, 1.0);
        assert_eq!(run(&d.ctx(), "w.md", 30).score, 0.0);
        assert_eq!(run(&d.ctx(), "gone.md", 1).score, 0.0);
    }
}
