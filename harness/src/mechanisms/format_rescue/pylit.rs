//! Python call expressions with literal arguments — `name(k="v", n=1, flag=True, xs=['a'])` —
//! as the pythonic dialects write them (Llama 3.2/4, LFM2, Olmo 3, Gemma's `tool_code`, ToolACE).
//! Values are Python literals decoded the way Python would (escapes, triple quotes, raw
//! strings, `True`/`None`, lists, tuples, dicts); JSON's `true`/`null` are accepted too, and a
//! value between Gemma's `<|"|>` (or `<escape>`) delimiters is taken raw. Only keyword
//! arguments make a call: a positional argument means ordinary code, not a tool call.

use super::MAX_DEPTH;
use serde_json::{Map, Value};

/// A parsed call.
pub(crate) struct PyCall {
    pub name: String,
    pub args: Vec<(String, Value)>,
    pub end: usize,
}

/// Gemma-style raw string delimiters, accepted inside any argument list.
pub(crate) const RAW_DELIMS: [&str; 2] = ["<|\"|>", "<escape>"];

pub(crate) struct Py<'a> {
    s: &'a str,
    pub i: usize,
    depth: usize,
}

type R<T> = Result<T, String>;

impl<'a> Py<'a> {
    pub fn new(s: &'a str, i: usize) -> Self {
        Py { s, i, depth: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }

    fn eat(&mut self, t: &str) -> bool {
        if self.rest().starts_with(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    /// Skip whitespace including newlines (allowed inside brackets).
    pub fn ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// Skip spaces and tabs only.
    pub fn blank(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.i += 1;
        }
    }

    fn ident(&mut self) -> &'a str {
        let start = self.i;
        for (k, c) in self.rest().char_indices() {
            if !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-') {
                self.i = start + k;
                return &self.s[start..self.i];
            }
        }
        self.i = self.s.len();
        &self.s[start..]
    }

    /// `name(k=v, …)`; `print(call(…))` is unwrapped to the inner call.
    pub fn call(&mut self) -> R<PyCall> {
        let name = self.ident();
        if name.is_empty() || name.starts_with(['.', '-']) || name.as_bytes()[0].is_ascii_digit() {
            return Err("expected a function name".into());
        }
        self.blank();
        if !self.eat("(") {
            return Err(format!("expected '(' after {name}"));
        }
        if name == "print" {
            self.ws();
            let inner = self.call()?;
            self.ws();
            if !self.eat(")") {
                return Err("expected ')' closing print(".into());
            }
            return Ok(PyCall {
                end: self.i,
                ..inner
            });
        }
        let name = name.to_string();
        let mut args = Vec::new();
        loop {
            self.ws();
            if self.eat(")") {
                break;
            }
            let key_at = self.i;
            let key = self.ident();
            self.blank();
            let keyword = !key.is_empty()
                && !self.rest().starts_with("==")
                && (self.eat("=") || self.eat(":"));
            if !keyword {
                self.i = key_at;
                return Err(format!("a positional argument in {name}(…)"));
            }
            let key = key.to_string();
            self.ws();
            let v = self.value()?;
            if args.len() > super::MAX_ARGS {
                return Err(format!("more than {} arguments", super::MAX_ARGS));
            }
            args.push((key, v));
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat(")") {
                break;
            }
            return Err(format!("expected ',' or ')' in {name}(…)"));
        }
        Ok(PyCall {
            name,
            args,
            end: self.i,
        })
    }

    /// `[call, call, …]`; an empty list is not a call list.
    pub fn call_list(&mut self) -> R<Vec<PyCall>> {
        if !self.eat("[") {
            return Err("expected '['".into());
        }
        let mut calls = Vec::new();
        loop {
            self.ws();
            if self.eat("]") {
                break;
            }
            calls.push(self.call()?);
            if calls.len() > super::MAX_CALLS {
                return Err("too many calls".into());
            }
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                break;
            }
            return Err("expected ',' or ']' between calls".into());
        }
        if calls.is_empty() {
            return Err("an empty call list".into());
        }
        Ok(calls)
    }

    pub fn value(&mut self) -> R<Value> {
        for d in RAW_DELIMS {
            if self.eat(d) {
                let end = self.rest().find(d).ok_or("an unclosed raw string")?;
                let v = self.rest()[..end].to_string();
                self.i += end + d.len();
                return Ok(Value::String(v));
            }
        }
        match self.peek() {
            Some(b'[') => self.nested(|p| p.seq(b']').map(Value::Array)),
            Some(b'(') => self.nested(|p| p.seq(b')').map(Value::Array)),
            Some(b'{') => self.nested(Self::dict),
            Some(b'"' | b'\'') => self.string(false).map(Value::String),
            Some(b'r' | b'R')
                if matches!(self.s.as_bytes().get(self.i + 1), Some(b'"' | b'\'')) =>
            {
                self.i += 1;
                self.string(true).map(Value::String)
            }
            Some(c) if c == b'-' || c == b'+' || c.is_ascii_digit() => self.number(),
            Some(_) => {
                let w = self.ident();
                match w {
                    "True" | "true" => Ok(Value::Bool(true)),
                    "False" | "false" => Ok(Value::Bool(false)),
                    "None" | "null" => Ok(Value::Null),
                    "" => Err("expected a value".into()),
                    _ => Err(format!("'{w}' is a name, not a literal")),
                }
            }
            None => Err("unexpected end".into()),
        }
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> R<Value>) -> R<Value> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn seq(&mut self, close: u8) -> R<Vec<Value>> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(out);
            }
            out.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err("expected ',' in a list".into()),
            }
        }
    }

    fn dict(&mut self) -> R<Value> {
        self.i += 1;
        let mut m = Map::new();
        loop {
            self.ws();
            if self.eat("}") {
                return Ok(Value::Object(m));
            }
            let k = match self.value()? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                _ => return Err("a dict key that is not a string".into()),
            };
            self.ws();
            if !self.eat(":") {
                return Err("expected ':' in a dict".into());
            }
            self.ws();
            let v = self.value()?;
            m.insert(k, v);
            self.ws();
            if !self.eat(",") && self.peek() != Some(b'}') {
                return Err("expected ',' in a dict".into());
            }
        }
    }

    fn string(&mut self, raw: bool) -> R<String> {
        let q = self.peek().ok_or("unexpected end")? as char;
        let triple: String = std::iter::repeat_n(q, 3).collect();
        let close = if self.rest().starts_with(&triple) {
            self.i += 3;
            triple
        } else {
            self.i += 1;
            q.to_string()
        };
        let mut out = String::new();
        loop {
            let rest = self.rest();
            if rest.starts_with(&close) {
                self.i += close.len();
                return Ok(out);
            }
            let mut chars = rest.chars();
            let c = chars.next().ok_or("an unclosed string")?;
            // a raw line break inside a one-line string is invalid Python but what models write
            // for file contents (as raw newlines in JSON strings): kept as a newline; a string
            // that never closes still fails below
            if c != '\\' {
                out.push(c);
                self.i += c.len_utf8();
                continue;
            }
            let e = chars.next().ok_or("an unclosed string")?;
            self.i += 1 + e.len_utf8();
            if raw {
                out.push('\\');
                out.push(e);
                continue;
            }
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                '\\' | '\'' | '"' => out.push(e),
                '\n' => {} // line continuation
                'x' => out.push(self.hex(2)?),
                'u' => out.push(self.hex(4)?),
                'U' => out.push(self.hex(8)?),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn hex(&mut self, n: usize) -> R<char> {
        let h = self.s.get(self.i..self.i + n).ok_or("a short escape")?;
        let v = u32::from_str_radix(h, 16).map_err(|_| "a bad escape")?;
        self.i += n;
        Ok(char::from_u32(v).unwrap_or('\u{fffd}'))
    }

    fn number(&mut self) -> R<Value> {
        let start = self.i;
        self.i += 1;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'_' | b'+' | b'-'))
        {
            self.i += 1;
        }
        let t: String = self.s[start..self.i]
            .chars()
            .filter(|&c| c != '_')
            .collect();
        let t = t.strip_prefix('+').unwrap_or(&t);
        if let Ok(n) = t.parse::<i64>() {
            return Ok(Value::from(n));
        }
        match t.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::from(f)),
            _ => Err(format!("a bad number '{t}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(s: &str) -> (String, Value) {
        let c = Py::new(s, 0).call().unwrap();
        let m: Map<String, Value> = c.args.into_iter().collect();
        (c.name, Value::Object(m))
    }

    #[test]
    fn literals_decode_as_python_would() {
        let (n, a) = one(
            r#"write_file(path='a\'b', content="x\n\t\"y\"", ok=True, none=None, xs=['p', "q"], d={'k': 1}, t=(1, 2), f=-1.5)"#,
        );
        assert_eq!(n, "write_file");
        assert_eq!(
            a,
            json!({"path": "a'b", "content": "x\n\t\"y\"", "ok": true, "none": null, "xs": ["p", "q"], "d": {"k": 1}, "t": [1, 2], "f": -1.5})
        );
        let (_, a) = one("f(s=\"\"\"one\ntwo\n\"\"\", r=r'\\d+')");
        assert_eq!(a, json!({"s": "one\ntwo\n", "r": "\\d+"}));
        let (_, a) = one("f(path:<|\"|>a, \"b\"<|\"|>)");
        assert_eq!(a, json!({"path": "a, \"b\""}));
        let (n, a) = one("print(default_api.list_dir(path=\"x\"))");
        assert_eq!(
            (n.as_str(), a),
            ("default_api.list_dir", json!({"path": "x"}))
        );
    }

    #[test]
    fn code_is_not_a_call() {
        for bad in [
            "read_file(\"data.csv\")",
            "f(x=open_file)",
            "f(x='unclosed)",
            "f(x=1",
            "f(x=[1, 2)",
            "subprocess.run([\"ls\"], check=True)",
        ] {
            assert!(Py::new(bad, 0).call().is_err(), "{bad}");
        }
        assert!(Py::new("[]", 0).call_list().is_err());
        let deep = format!("f(x={})", "[".repeat(5000));
        assert!(Py::new(&deep, 0).call().is_err());
    }
}
