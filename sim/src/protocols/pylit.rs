//! Python literals as a model writes them in code, and reading them back exactly.

use serde_json::Value;

/// A Python string literal holding exactly `s`: triple-quoted when that needs no escape,
/// else a double-quoted literal with JSON's escapes (which Python reads the same).
pub fn string(s: &str) -> String {
    let plain = !s.contains("'''") && !s.contains('\\') && !s.contains('\r') && !s.ends_with('\'');
    if plain {
        format!("'''{s}'''")
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "''".into())
    }
}

/// A Python literal for a JSON value (strings as [`string`], booleans and null in Python's
/// spelling).
pub fn value(v: &Value) -> String {
    match v {
        Value::String(s) => string(s),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// Reads one literal written by [`value`] at the start of `s`: the value and the bytes read.
pub fn read(s: &str) -> Option<(Value, usize)> {
    if let Some(rest) = s.strip_prefix("'''") {
        let end = rest.find("'''")?;
        return Some((Value::from(&rest[..end]), end + 6));
    }
    if s.starts_with('"') {
        let mut it = serde_json::Deserializer::from_str(s).into_iter::<Value>();
        let v = it.next()?.ok()?;
        return Some((v, it.byte_offset()));
    }
    for (word, v) in [
        ("True", Value::Bool(true)),
        ("False", Value::Bool(false)),
        ("None", Value::Null),
    ] {
        if s.starts_with(word) {
            return Some((v, word.len()));
        }
    }
    let n = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(s.len());
    let v: Value = serde_json::from_str(&s[..n]).ok()?;
    Some((v, n))
}

/// Keyword arguments `k=LIT, …` up to the closing parenthesis: the arguments and the bytes
/// read (the parenthesis included).
pub fn kwargs(s: &str) -> Option<(serde_json::Map<String, Value>, usize)> {
    let mut m = serde_json::Map::new();
    let mut i = 0;
    loop {
        i += s[i..].len() - s[i..].trim_start_matches([' ', ',', '\n']).len();
        if s[i..].starts_with(')') {
            return Some((m, i + 1));
        }
        let eq = s[i..].find('=')?;
        let key = s[i..i + eq].trim();
        if key.is_empty() || !key.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let (v, n) = read(&s[i + eq + 1..])?;
        m.insert(key.to_string(), v);
        i += eq + 1 + n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_read_back_exactly() {
        for s in [
            "plain\ntext\n",
            "has ''' inside",
            "back\\slash",
            "ends with '",
            "crlf\r\n",
            "tab\tand \u{1b} and é — “quotes”",
            "",
        ] {
            let lit = string(s);
            let (v, n) = read(&lit).unwrap();
            assert_eq!(v, json!(s), "{lit}");
            assert_eq!(n, lit.len());
        }
        assert_eq!(string("a\nb"), "'''a\nb'''");
    }

    #[test]
    fn keyword_arguments() {
        let (m, n) = kwargs("answer='''done''', n=3, ok=True)rest").unwrap();
        assert_eq!(m.get("answer"), Some(&json!("done")));
        assert_eq!(m.get("n"), Some(&json!(3)));
        assert_eq!(m.get("ok"), Some(&json!(true)));
        assert_eq!(&"answer='''done''', n=3, ok=True)rest"[n..], "rest");
        assert!(kwargs("x").is_none());
    }
}
