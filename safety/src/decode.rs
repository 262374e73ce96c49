//! Decoding the encodings commands and payloads hide text in: bash's `$'…'` escapes and
//! base64. Pure text functions, shared by the shell parser, the static evaluator and the payload
//! inspector.

/// Decode the escapes of bash's `$'…'` quoting.
pub fn ansi_c(raw: &str) -> String {
    let c: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let hex = |s: &[char]| -> (u32, usize) {
        let mut v = 0u32;
        let mut n = 0;
        for ch in s {
            match ch.to_digit(16) {
                Some(d) => {
                    v = v * 16 + d;
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    while i < c.len() {
        if c[i] != '\\' || i + 1 >= c.len() {
            out.push(c[i]);
            i += 1;
            continue;
        }
        i += 1;
        let e = c[i];
        i += 1;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'x' => {
                let end = (i + 2).min(c.len());
                let (v, n) = hex(&c[i..end]);
                i += n;
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            'u' | 'U' => {
                let end = (i + if e == 'u' { 4 } else { 8 }).min(c.len());
                let (v, n) = hex(&c[i..end]);
                i += n;
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let mut n = 0;
                while n < 2 && i < c.len() && c[i].is_digit(8) {
                    v = v * 8 + c[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Standard and URL-safe base64, whitespace ignored.
pub fn b64(s: &str) -> Option<Vec<u8>> {
    let mut buf = 0u32;
    let mut bits = 0;
    let mut out = Vec::new();
    for ch in s.chars() {
        let v = match ch {
            'A'..='Z' => ch as u32 - 'A' as u32,
            'a'..='z' => ch as u32 - 'a' as u32 + 26,
            '0'..='9' => ch as u32 - '0' as u32 + 52,
            '+' | '-' => 62,
            '/' | '_' => 63,
            '=' => break,
            c if c.is_whitespace() => continue,
            _ => return None,
        };
        buf = (buf << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}
