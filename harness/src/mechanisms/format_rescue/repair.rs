//! Almost-JSON, read the way small models write it: raw newlines and tabs inside strings,
//! single-quoted strings, a `\'` escape, unknown escapes kept literally (`"C:\data"`),
//! trailing commas, Python's `True`/`False`/`None`, unquoted keys, `//` and `/* */` comments,
//! and a missing comma between two objects in a list. Nothing is invented: an unclosed string, bracket or object is an
//! error, so a reply cut off inside a call never becomes one. Nesting is bounded.

use super::MAX_DEPTH;
use serde_json::{Map, Value};

/// Decode `s`, which must be exactly one value (surrounding whitespace aside).
pub(crate) fn parse(s: &str) -> Result<Value, String> {
    let mut r = Reader {
        s: s.as_bytes(),
        src: s,
        i: 0,
        depth: 0,
    };
    r.ws();
    let v = r.value()?;
    r.ws();
    if r.i != r.s.len() {
        return Err(r.err("text after the value"));
    }
    Ok(v)
}

struct Reader<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    depth: usize,
}

impl Reader<'_> {
    fn err(&self, what: &str) -> String {
        let mut k = self.i.min(self.src.len());
        while !self.src.is_char_boundary(k) {
            k -= 1;
        }
        let upto = &self.src[..k];
        let line = upto.matches('\n').count() + 1;
        let col = upto.len() - upto.rfind('\n').map(|k| k + 1).unwrap_or(0) + 1;
        format!("{what} at line {line} column {col}")
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Whitespace, and the `//` and `/* */` comments small models leave between fields.
    fn ws(&mut self) {
        loop {
            while matches!(self.peek(), Some(c) if c.is_ascii_whitespace()) {
                self.i += 1;
            }
            match (self.peek(), self.s.get(self.i + 1)) {
                (Some(b'/'), Some(b'/')) => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => match self.src[self.i + 2..].find("*/") {
                    Some(k) => self.i += 2 + k + 2,
                    None => return,
                },
                _ => return,
            }
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Value::String),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() => {
                let w = self.word().to_string();
                match w.as_str() {
                    "true" | "True" => Ok(Value::Bool(true)),
                    "false" | "False" => Ok(Value::Bool(false)),
                    "null" | "None" => Ok(Value::Null),
                    _ => Err(self.err(&format!("unquoted word '{}'", clip_word(&w)))),
                }
            }
            Some(_) => Err(self.err("expected a value")),
            None => Err(self.err("unexpected end")),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Value, String>) -> Result<Value, String> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(&format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn word(&mut self) -> &str {
        let start = self.i;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'-')
        {
            self.i += 1;
        }
        &self.src[start..self.i]
    }

    fn object(&mut self) -> Result<Value, String> {
        self.i += 1; // {
        let mut m = Map::new();
        loop {
            self.ws();
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(m));
                }
                None => return Err(self.err("unclosed object")),
                _ => {}
            }
            let key = match self.peek() {
                Some(q @ (b'"' | b'\'')) => self.string(q)?,
                Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                    self.word().to_string()
                }
                _ => return Err(self.err("expected a key")),
            };
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.i += 1;
            self.ws();
            let v = self.value()?;
            m.insert(key, v);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                None => return Err(self.err("unclosed object")),
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        self.i += 1; // [
        let mut a = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(a));
                }
                None => return Err(self.err("unclosed list")),
                _ => {}
            }
            a.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                // a forgotten comma between two objects or lists in a list
                Some(b'{' | b'[') => {}
                None => return Err(self.err("unclosed list")),
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    fn string(&mut self, q: u8) -> Result<String, String> {
        let start = self.i;
        self.i += 1;
        let mut out = String::new();
        let mut run = self.i; // start of the pending unescaped run
        loop {
            let Some(c) = self.peek() else {
                self.i = start;
                return Err(self.err("unclosed string"));
            };
            if c == q {
                out.push_str(&self.src[run..self.i]);
                self.i += 1;
                return Ok(out);
            }
            if c != b'\\' {
                self.i += 1;
                continue;
            }
            out.push_str(&self.src[run..self.i]);
            let Some(e) = self.s.get(self.i + 1).copied() else {
                self.i = start;
                return Err(self.err("unclosed string"));
            };
            self.i += 2;
            match e {
                b'n' => out.push('\n'),
                b't' => out.push('\t'),
                b'r' => out.push('\r'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'"' | b'\'' | b'\\' | b'/' => out.push(e as char),
                b'u' => out.push(self.unicode_escape()),
                _ => {
                    // not an escape: the backslash was meant literally
                    out.push('\\');
                    self.i -= 1;
                }
            }
            run = self.i;
        }
    }

    /// After `\u`: four hex digits, combining a surrogate pair when one follows.
    fn unicode_escape(&mut self) -> char {
        let Some(hi) = self.hex4() else {
            return '\u{fffd}';
        };
        if (0xD800..0xDC00).contains(&hi) && self.s.get(self.i..self.i + 2) == Some(b"\\u") {
            self.i += 2;
            if let Some(lo) = self.hex4() {
                if (0xDC00..0xE000).contains(&lo) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(c).unwrap_or('\u{fffd}');
                }
            }
            return '\u{fffd}';
        }
        char::from_u32(hi).unwrap_or('\u{fffd}')
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.src.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(h, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            self.i += 1;
        }
        let t = &self.src[start..self.i];
        if let Ok(n) = t.parse::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = t.parse::<u64>() {
            return Ok(Value::from(n));
        }
        match t.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::from(f)),
            _ => {
                self.i = start;
                Err(self.err("bad number"))
            }
        }
    }
}

fn clip_word(w: &str) -> &str {
    lrab_util::prefix_bytes(w, 24)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repairs_what_small_models_write() {
        assert_eq!(
            parse("{\"content\": \"a\n\tb\"}").unwrap(),
            json!({"content": "a\n\tb"})
        );
        assert_eq!(
            parse("{'name': 'x', 'ok': True, 'n': None,}").unwrap(),
            json!({"name": "x", "ok": true, "n": null})
        );
        assert_eq!(
            parse(r#"{"c": "echo \'done\'"}"#).unwrap(),
            json!({"c": "echo 'done'"})
        );
        assert_eq!(
            parse(r#"{"p": "C:\data"}"#).unwrap(),
            json!({"p": "C:\\data"})
        );
        assert_eq!(
            parse("{name: \"r\", arguments: {path: \"a\", n: 3,},}").unwrap(),
            json!({"name": "r", "arguments": {"path": "a", "n": 3}})
        );
        assert_eq!(
            parse(r#"[{"a": 1}{"b": 2}]"#).unwrap(),
            json!([{"a": 1}, {"b": 2}])
        );
        assert_eq!(parse(r#""\ud83d\udc4b""#).unwrap(), json!("👋"));
        assert_eq!(
            parse("{\n  // the suite\n  \"command\": \"make\", /* why */ \"timeout\": 60 // s\n}")
                .unwrap(),
            json!({"command": "make", "timeout": 60})
        );
        assert_eq!(
            parse(r#"{"url": "http://x/y"}"#).unwrap(),
            json!({"url": "http://x/y"})
        );
    }

    #[test]
    fn never_invents_an_ending() {
        for bad in [
            r#"{"a": "b"#,
            r#"{"a": [1, 2"#,
            r#"{"a": 1"#,
            r#"{"command": ls -la}"#,
            r#"{"name": <function-name>}"#,
            "",
            "[!!!]",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.contains("nested deeper"), "{e}");
    }
}
