//! Shortening text for logs and for the model.

/// `s` cut to its first `n` characters, with `…` appended when anything was cut.
pub fn clip_chars(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// The longest head of `s` of at most `max` bytes that ends on a character boundary (all of
/// `s` when it is no longer): where a byte budget meets UTF-8 text.
pub fn prefix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` cut to at most `max` bytes on a character boundary ([`prefix_bytes`]), followed by
/// `suffix(bytes left out)` when anything was cut; `s` itself when it fits. Callers choose the
/// suffix: a bare `…` in a one-line message, a count of the bytes left out in a transcript.
pub fn clip_bytes(s: &str, max: usize, suffix: impl FnOnce(usize) -> String) -> String {
    let head = prefix_bytes(s, max);
    if head.len() == s.len() {
        return s.to_string();
    }
    format!("{head}{}", suffix(s.len() - head.len()))
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
    fn byte_clips_end_on_character_boundaries() {
        // 'é' is two bytes: a budget inside it falls back to the boundary before it
        assert_eq!(prefix_bytes("aé", 2), "a");
        assert_eq!(prefix_bytes("aé", 3), "aé");
        assert_eq!(prefix_bytes("aé", 0), "");
        assert_eq!(prefix_bytes("", 5), "");
        let cut = |n: usize| format!(" [{n} more]");
        assert_eq!(clip_bytes("abc", 3, cut), "abc");
        assert_eq!(clip_bytes("ééé", 3, cut), "é [4 more]");
        assert_eq!(clip_bytes("abcdef", 4, |_| "…".into()), "abcd…");
        // the suffix is not called when nothing is cut
        assert_eq!(clip_bytes("ab", 2, |_| unreachable!()), "ab");
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
