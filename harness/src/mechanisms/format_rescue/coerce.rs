//! Values typed by the declared JSON schema. Text dialects write every value as text (the
//! XML-style ones) or guess the type (`"timeout": "30"`, `"replace": "true"`); the schema says
//! what the tool takes, so a value that reads unambiguously as that type becomes it. A value
//! that does not read as the declared type is left as written, for the tool to reject.

use super::scan::parse_json;
use serde_json::{Map, Value};

/// The first non-null type a schema declares (`"type": "integer"` or `["integer", "null"]`).
pub(crate) fn declared_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) => Some(t.as_str()),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

/// Type raw text (a value from an XML-style dialect) by its schema. Strings stay exactly as
/// written; without a schema the text stays a string.
pub(crate) fn raw(text: String, schema: Option<&Value>) -> Value {
    let Some(schema) = schema else {
        return Value::String(text);
    };
    match declared_type(schema) {
        Some("string") | None => value(Value::String(text), schema, 0),
        Some(_) => {
            let t = text.trim();
            if t == "null" || t == "None" {
                return Value::Null;
            }
            value(Value::String(text), schema, 0)
        }
    }
}

/// Coerce a decoded value to its schema, recursively through arrays and objects.
pub(crate) fn value(v: Value, schema: &Value, depth: usize) -> Value {
    if depth > super::MAX_DEPTH {
        return v;
    }
    let v = match (declared_type(schema), v) {
        (Some("integer"), Value::String(s)) => int_of(&s).unwrap_or(Value::String(s)),
        (Some("integer"), Value::Number(n)) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        (Some("number"), Value::String(s)) => num_of(&s).unwrap_or(Value::String(s)),
        (Some("boolean"), Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(s),
        },
        (Some("string"), Value::Number(n)) => Value::String(n.to_string()),
        (Some("string"), Value::Bool(b)) => Value::String(b.to_string()),
        (Some("array"), Value::String(s)) => match parse_json(s.trim()) {
            Ok(a @ Value::Array(_)) => a,
            _ if s.trim().starts_with('[') => Value::String(s),
            // one item where a list of strings was asked for
            _ if item_type(schema) == Some("string") => Value::Array(vec![Value::String(s)]),
            _ => Value::String(s),
        },
        (Some("object"), Value::String(s)) => match parse_json(s.trim()) {
            Ok(o @ Value::Object(_)) => o,
            _ => Value::String(s),
        },
        (_, other) => other,
    };
    let v = match v {
        Value::Array(items) => match schema.get("items") {
            Some(is) => Value::Array(items.into_iter().map(|x| value(x, is, depth + 1)).collect()),
            None => Value::Array(items),
        },
        Value::Object(m) => Value::Object(object(m, schema, depth + 1)),
        other => other,
    };
    enum_case(v, schema)
}

/// Coerce each property of an object by the object schema's `properties`.
pub(crate) fn object(m: Map<String, Value>, schema: &Value, depth: usize) -> Map<String, Value> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return m;
    };
    m.into_iter()
        .map(|(k, v)| {
            let v = match props.get(&k) {
                Some(s) => value(v, s, depth),
                None => v,
            };
            (k, v)
        })
        .collect()
}

fn item_type(schema: &Value) -> Option<&str> {
    schema.get("items").and_then(declared_type)
}

/// An enum value written in another case becomes the declared spelling.
fn enum_case(v: Value, schema: &Value) -> Value {
    let (Value::String(s), Some(Value::Array(allowed))) = (&v, schema.get("enum")) else {
        return v;
    };
    if allowed.iter().any(|a| a.as_str() == Some(s)) {
        return v;
    }
    let hits: Vec<&str> = allowed
        .iter()
        .filter_map(Value::as_str)
        .filter(|a| a.eq_ignore_ascii_case(s.trim()))
        .collect();
    match hits.as_slice() {
        [one] => Value::String(one.to_string()),
        _ => v,
    }
}

fn int_of(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(Value::from(n));
    }
    match t.parse::<f64>() {
        Ok(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(Value::from(f as i64)),
        _ => None,
    }
}

fn num_of(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(Value::from(n));
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(Value::from(f)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_becomes_the_declared_type() {
        let int = json!({"type": "integer"});
        assert_eq!(raw("\n120\n".into(), Some(&int)), json!(120));
        assert_eq!(raw("twelve".into(), Some(&int)), json!("twelve"));
        assert_eq!(value(json!(30.0), &int, 0), json!(30));
        let b = json!({"type": "boolean"});
        assert_eq!(raw("True".into(), Some(&b)), json!(true));
        let arr = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(raw("[\"a\", 'b']".into(), Some(&arr)), json!(["a", "b"]));
        assert_eq!(value(json!("only one"), &arr, 0), json!(["only one"]));
        let s = json!({"type": "string"});
        assert_eq!(
            raw("{\"ok\": true}\n".into(), Some(&s)),
            json!("{\"ok\": true}\n")
        );
        assert_eq!(value(json!(43), &s, 0), json!("43"));
        let e = json!({"type": "string", "enum": ["create", "done"]});
        assert_eq!(value(json!("Create"), &e, 0), json!("create"));
        assert_eq!(raw("x".into(), None), json!("x"));
        let nullable = json!({"type": ["integer", "null"]});
        assert_eq!(raw("7".into(), Some(&nullable)), json!(7));
    }
}
