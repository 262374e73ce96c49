//! Tool calls written as text: the three malformed shapes small models produce, and a reader
//! so the model can recognise its own earlier text-form calls in the history.

use serde_json::{Map, Value};

use crate::convo::Call;

/// Shape 1: the whole reply is JSON `{"name": …, "arguments": {…}}`.
pub fn json_shape(c: &Call) -> String {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(c.name.clone()));
    m.insert("arguments".into(), c.args.clone());
    Value::Object(m).to_string()
}

/// Shape 2: `name(key:<|"|>value<|"|>)` with a single key (the first argument).
pub fn placeholder_shape(c: &Call) -> String {
    let (k, v) = first_arg(c);
    format!("{}({k}:<|\"|>{v}<|\"|>)", c.name)
}

/// Shape 3: bare call expression `name(k="v", k2="v2")` with JSON-quoted strings.
pub fn bare_shape(c: &Call) -> String {
    let args = c
        .args
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| match v {
                    Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
                        format!("{k}={v}")
                    }
                    other => format!("{k}={}", Value::String(other.to_string())),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    format!("{}({args})", c.name)
}

fn first_arg(c: &Call) -> (String, String) {
    c.args
        .as_object()
        .and_then(|m| m.iter().next())
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string()),
            )
        })
        .unwrap_or_default()
}

/// Reads back a text-form call (any of the three shapes); None for ordinary text.
pub fn parse(text: &str) -> Option<Call> {
    let t = text.trim();
    if t.starts_with('{') {
        let v: Value = serde_json::from_str(t).ok()?;
        let name = v.get("name")?.as_str()?.to_string();
        let args = v
            .get("arguments")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        return Some(Call { name, args });
    }
    let open = t.find('(')?;
    if !t.ends_with(')') {
        return None;
    }
    let name = &t[..open];
    if name.is_empty()
        || !name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' || ch == '-')
    {
        return None;
    }
    let inner = &t[open + 1..t.len() - 1];
    let mut args = Map::new();
    if let Some((k, rest)) = inner.split_once(":<|\"|>") {
        let v = rest.strip_suffix("<|\"|>").unwrap_or(rest);
        args.insert(k.to_string(), Value::String(v.to_string()));
    } else {
        let mut rest = inner.trim_start();
        while let Some((k, after)) = rest.split_once('=') {
            let mut it = serde_json::Deserializer::from_str(after).into_iter::<Value>();
            let v = it.next()?.ok()?;
            let used = it.byte_offset();
            args.insert(k.trim().to_string(), v);
            rest = after[used..]
                .trim_start()
                .trim_start_matches(',')
                .trim_start();
            if rest.is_empty() {
                break;
            }
        }
    }
    Some(Call {
        name: name.to_string(),
        args: Value::Object(args),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_roundtrip() {
        let c = Call {
            name: "write_file".into(),
            args: json!({"path": "a.md", "content": "x = \"1\"\n"}),
        };
        assert_eq!(parse(&json_shape(&c)).unwrap(), c);
        assert_eq!(parse(&bare_shape(&c)).unwrap(), c);
        let p = parse(&placeholder_shape(&c)).unwrap();
        assert_eq!(p.args, json!({"path": "a.md"}));
        assert_eq!(placeholder_shape(&c), "write_file(path:<|\"|>a.md<|\"|>)");
        assert!(parse("I will now write the file (carefully)").is_none());
        assert!(parse("Step 1/3: writing a.md.").is_none());
    }
}
