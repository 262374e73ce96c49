//! Number formatting shared by the generators (fixed point -> the strings checks accept).

/// `1234567` -> `"1,234,567"` (the thousands-separator variant of an integer truth).
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A value held in tenths, printed with one decimal: `12631` -> `"1263.1"`.
pub(crate) fn tenths(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    format!("{sign}{}.{}", a / 10, a % 10)
}

/// A value held in tenths rounded to an integer, half away from zero (callers avoid exact
/// halves, where Python's `round` would go to even).
pub(crate) fn tenths_rounded(v: i64) -> i64 {
    if v >= 0 {
        (v + 5) / 10
    } else {
        -((-v + 5) / 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(71867), "71,867");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(tenths(12631), "1263.1");
        assert_eq!(tenths(11240), "1124.0");
        assert_eq!(tenths(-5), "-0.5");
        assert_eq!(tenths_rounded(12634), 1263);
        assert_eq!(tenths_rounded(12636), 1264);
    }
}
