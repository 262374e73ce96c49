//! Python-compatible JSON text.
//!
//! Upstream hashes `json.dumps(db.model_dump(), sort_keys=True)` and returns tool results as
//! `json.dumps(...)` with default options, so byte-identical hashes and tool outputs need
//! Python's spelling: `", "`/`": "` separators, `ensure_ascii` escapes and `repr(float)`.

use serde_json::Value;

/// Write `v` the way Python's `json.dumps(v, sort_keys=sort)` would.
pub fn write_value(out: &mut Vec<u8>, v: &Value, sort: bool) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.extend_from_slice(i.to_string().as_bytes());
            } else if let Some(u) = n.as_u64() {
                out.extend_from_slice(u.to_string().as_bytes());
            } else {
                out.extend_from_slice(float_repr(n.as_f64().unwrap_or(f64::NAN)).as_bytes());
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_value(out, x, sort);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            out.push(b'{');
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            if sort {
                entries.sort_by(|a, b| cmp_py_str(a.0, b.0));
            }
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_str(out, k);
                out.extend_from_slice(b": ");
                write_value(out, x, sort);
            }
            out.push(b'}');
        }
    }
}

/// Python orders `str` by code point; UTF-8 byte order is the same order.
pub fn cmp_py_str(a: &str, b: &str) -> std::cmp::Ordering {
    a.as_bytes().cmp(b.as_bytes())
}

/// `json.dumps(v)` as a String (declaration order kept, as tool results are).
pub fn dumps(v: &Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, v, false);
    String::from_utf8(out).expect("ascii output")
}

/// `json.dumps(v, sort_keys=True)`.
pub fn dumps_sorted(v: &Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, v, true);
    String::from_utf8(out).expect("ascii output")
}

/// A JSON string literal with `ensure_ascii=True` escaping.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for ch in s.chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            ' '..='~' => out.push(ch as u8),
            _ => {
                let mut buf = [0u16; 2];
                for unit in ch.encode_utf16(&mut buf) {
                    out.extend_from_slice(format!("\\u{:04x}", unit).as_bytes());
                }
            }
        }
    }
    out.push(b'"');
}

/// Python `repr(float)`: shortest round-trip digits; scientific notation outside
/// 1e-4 <= |x| < 1e16 with a signed, two-digit exponent.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    // Rust's Debug gives the shortest round-trip digits with the same switch points as
    // Python; only the exponent spelling differs.
    let s = format!("{:?}", x);
    match s.find('e') {
        None => s,
        Some(pos) => {
            let (mant, exp) = s.split_at(pos);
            let exp = &exp[1..];
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            let mant = mant.strip_suffix(".0").unwrap_or(mant);
            format!("{mant}e{sign}{digits:0>2}")
        }
    }
}

/// Python `round(x, 2)` for floats: the correctly rounded decimal value (ties to even on
/// the exact binary value), read back as a double.
pub fn round2(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let s = format!("{:.2}", x);
    let r: f64 = s.parse().unwrap_or(x);
    if r == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        r
    }
}

/// Python `str(x)` of a float or int JSON number (used where upstream returns `str(...)`).
pub fn py_str_number(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => float_repr(n.as_f64().unwrap_or(0.0)),
        Value::Number(n) => n.to_string(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        other => dumps(other),
    }
}

/// A Python number as a tool received it: upstream does no argument validation, so an int
/// stays an int (`str(2)` is `2`, `str(2.0)` is `2.0`) until arithmetic promotes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNum {
    Int(i64),
    Float(f64),
}

impl PyNum {
    /// The number of a JSON value; booleans count as 0/1, as in Python arithmetic.
    pub fn from_value(v: &Value) -> Option<PyNum> {
        match v {
            Value::Bool(b) => Some(PyNum::Int(*b as i64)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Some(PyNum::Int(i)),
                None => n.as_f64().map(PyNum::Float),
            },
            _ => None,
        }
    }

    pub fn f64(self) -> f64 {
        match self {
            PyNum::Int(i) => i as f64,
            PyNum::Float(x) => x,
        }
    }
}

impl std::fmt::Display for PyNum {
    /// Python `str()` of the number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PyNum::Int(i) => write!(f, "{i}"),
            PyNum::Float(x) => f.write_str(&float_repr(*x)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (250.0, "250.0"),
            (-46.0, "-46.0"),
            (71.96000000000001, "71.96000000000001"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e15 + 0.5, "1000000000000000.5"),
            (1e16, "1e+16"),
            (2.5e22, "2.5e+22"),
            (-0.0, "-0.0"),
            (123456789.0, "123456789.0"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want, "{x}");
        }
    }

    #[test]
    fn strings_escape_like_python() {
        let cases = [
            ("\u{e9}", "\"\\u00e9\""),
            ("\u{1F600}", "\"\\ud83d\\ude00\""),
            ("\u{7f}", "\"\\u007f\""),
            ("a/b", "\"a/b\""),
            ("\u{1}", "\"\\u0001\""),
            ("tab\tq\"b\\", "\"tab\\tq\\\"b\\\\\""),
        ];
        for (s, want) in cases {
            let mut out = Vec::new();
            write_str(&mut out, s);
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn sorted_object() {
        let v: Value =
            serde_json::from_str(r#"{"b": 1, "a": [1, 2.0, null, true], "B": {"z": "x", "_": 0}}"#)
                .unwrap();
        assert_eq!(
            dumps_sorted(&v),
            r#"{"B": {"_": 0, "z": "x"}, "a": [1, 2.0, null, true], "b": 1}"#
        );
        assert_eq!(
            dumps(&v),
            r#"{"b": 1, "a": [1, 2.0, null, true], "B": {"z": "x", "_": 0}}"#
        );
    }

    #[test]
    fn round2_is_python_round() {
        assert_eq!(round2(2.675), 2.67);
        assert_eq!(round2(0.125), 0.12);
        assert_eq!(round2(1.005), 1.0);
        assert_eq!(round2(10.0 / 3.0), 3.33);
    }
}
