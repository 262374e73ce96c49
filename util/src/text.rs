//! Shortening text for logs and for the model.

/// `s` cut to its first `n` characters, with `…` appended when anything was cut.
pub fn clip_chars(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// `text` cut to `budget` characters when longer: `head_n` characters from the head, the rest
/// from the tail (where verdicts and errors are), joined by the line `marker(characters left
/// out)`. `head_n` must not exceed `budget`.
pub fn head_tail(
    text: &str,
    budget: usize,
    head_n: usize,
    marker: impl FnOnce(usize) -> String,
) -> String {
    let n = text.chars().count();
    if n <= budget {
        return text.to_string();
    }
    let head: String = text.chars().take(head_n).collect();
    let tail: String = text.chars().skip(n - (budget - head_n)).collect();
    format!("{head}\n{}\n{tail}", marker(n - budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip_chars("héllo", 5), "héllo");
        assert_eq!(clip_chars("héllo", 2), "hé…");
        assert_eq!(clip_chars("", 0), "");
    }

    #[test]
    fn head_tail_keeps_both_ends() {
        let t: String = ('a'..='z').collect();
        assert_eq!(head_tail(&t, 30, 10, |_| "x".into()), t);
        assert_eq!(
            head_tail(&t, 10, 3, |cut| format!("[{cut}]")),
            "abc\n[16]\ntuvwxyz"
        );
    }
}
