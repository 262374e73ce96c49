//! The text shapes in which a call reaches the client as plain content because the family's
//! server parser does not recognise them, and a reader for all of them (so the model knows
//! its own earlier text-form calls when it reads the conversation back).

use serde_json::{Map, Value};

use super::Family;
use crate::convo::Call;

/// One documented way a call leaks into content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeakShape {
    /// gemma4's call syntax without its special opening token: `call:NAME{k:<|"|>v<|"|>}`.
    CallNoToken,
    /// gemma4's quote placeholder in a parenthesised call: `NAME(k:<|"|>v<|"|>)` (one key).
    PlaceholderParens,
    /// Hermes tags `<tool_call>{…}</tool_call>` sent to a parser that does not know them.
    HermesTags,
    /// Qwen3-Coder XML without the `<tool_call>` wrapper: `<function=NAME><parameter=K>…`.
    FunctionNoWrapper,
    /// `<function=NAME>{json}</function>` (a Hermes 2 Pro variant).
    FunctionJson,
    /// A JSON object in a ```json fence.
    FencedJson,
    /// A JSON object after a line of prose.
    JsonAfterProse,
    /// A JSON object whose string values keep raw newlines (not valid JSON).
    RawNewlineJson,
    /// The call described inside a `<think>` block as JSON (thinking off: it stays content).
    ThinkWrapped,
    /// A pythonic call list after prose: `Sure. [NAME(k='v')]`.
    PythonicAfterProse,
}

/// The leak shapes each family is documented to produce.
pub fn leak_shapes(f: Family) -> &'static [LeakShape] {
    use LeakShape::*;
    match f {
        Family::Gemma4 => &[
            CallNoToken,
            PlaceholderParens,
            HermesTags,
            FencedJson,
            RawNewlineJson,
        ],
        Family::Qwen35 => &[
            FunctionNoWrapper,
            ThinkWrapped,
            FencedJson,
            JsonAfterProse,
            RawNewlineJson,
        ],
        Family::Qwen3 => &[FunctionJson, FencedJson, JsonAfterProse, ThinkWrapped],
        Family::Mistral => &[FencedJson, JsonAfterProse],
        Family::Llama => &[PythonicAfterProse, FencedJson],
    }
}

fn json_of(c: &Call) -> String {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(c.name.clone()));
    m.insert("arguments".into(), c.args.clone());
    Value::Object(m).to_string()
}

fn str_of(v: &Value) -> String {
    v.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string())
}

fn pairs(c: &Call) -> Vec<(String, Value)> {
    c.args
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// Writes `c` in `shape`, after the model's `prose` (a short sentence, may be empty).
pub fn render_leak(shape: LeakShape, c: &Call, prose: &str) -> String {
    use LeakShape::*;
    let lead = if prose.is_empty() {
        String::new()
    } else {
        format!("{prose}\n")
    };
    match shape {
        CallNoToken => {
            let body = pairs(c)
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}:<|\"|>{s}<|\"|>"),
                    other => format!("{k}:{other}"),
                })
                .collect::<Vec<_>>()
                .join(",");
            format!("{lead}call:{}{{{body}}}", c.name)
        }
        PlaceholderParens => {
            let (k, v) = pairs(c).into_iter().next().unwrap_or_default();
            format!("{}({k}:<|\"|>{}<|\"|>)", c.name, str_of(&v))
        }
        HermesTags => format!("{lead}<tool_call>\n{}\n</tool_call>", json_of(c)),
        FunctionNoWrapper => {
            let mut s = format!("{lead}<function={}>\n", c.name);
            for (k, v) in pairs(c) {
                s.push_str(&format!("<parameter={k}>\n{}\n</parameter>\n", str_of(&v)));
            }
            s.push_str("</function>");
            s
        }
        FunctionJson => format!("{lead}<function={}>{}</function>", c.name, c.args),
        FencedJson => format!("{lead}```json\n{}\n```", json_of(c)),
        JsonAfterProse => format!(
            "{}\n{}",
            if prose.is_empty() {
                "Here is the call:"
            } else {
                prose
            },
            json_of(c)
        ),
        RawNewlineJson => {
            let body = pairs(c)
                .iter()
                .map(|(k, v)| match v {
                    // quotes escaped, newlines left raw: the slip models make
                    Value::String(s) => {
                        format!(
                            "\"{k}\": \"{}\"",
                            s.replace('\\', "\\\\").replace('"', "\\\"")
                        )
                    }
                    other => format!("\"{k}\": {other}"),
                })
                .collect::<Vec<_>>()
                .join(", ");
            format!("{{\"name\": \"{}\", \"arguments\": {{{body}}}}}", c.name)
        }
        ThinkWrapped => format!("<think>\nThe next call is {}\n</think>", json_of(c)),
        PythonicAfterProse => {
            let args = pairs(c)
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}={}", Value::String(s.clone())),
                    other => format!("{k}={other}"),
                })
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "{}[{}({args})]",
                if prose.is_empty() {
                    "Sure. ".to_string()
                } else {
                    format!("{prose} ")
                },
                c.name
            )
        }
    }
}

/// JSON that may hold raw control characters inside strings (escaped before parsing).
fn lenient_json(s: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(s) {
        return Some(v);
    }
    let mut out = String::with_capacity(s.len());
    let mut in_str = false;
    let mut esc = false;
    for ch in s.chars() {
        if in_str {
            match ch {
                _ if esc => {
                    esc = false;
                    out.push(ch);
                }
                '\\' => {
                    esc = true;
                    out.push(ch);
                }
                '"' => {
                    in_str = false;
                    out.push(ch);
                }
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c => out.push(c),
            }
        } else {
            if ch == '"' {
                in_str = true;
            }
            out.push(ch);
        }
    }
    serde_json::from_str(&out).ok()
}

fn call_from_json(v: &Value) -> Option<Call> {
    let name = v.get("name")?.as_str()?.to_string();
    let args = v
        .get("arguments")
        .or_else(|| v.get("parameters"))
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    Some(Call { name, args })
}

/// The first `{…}` object of a text (balanced braces, strings respected).
fn first_object(t: &str) -> Option<&str> {
    let start = t.find('{')?;
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    for (i, ch) in t[start..].char_indices() {
        if in_str {
            match ch {
                _ if esc => esc = false,
                '\\' => esc = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&t[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

fn gemma_args(body: &str) -> Map<String, Value> {
    let mut m = Map::new();
    let mut rest = body;
    while let Some((k, after)) = rest.split_once(':') {
        let key = k.trim().trim_start_matches(',').trim().to_string();
        if let Some(v) = after.strip_prefix("<|\"|>") {
            let Some((val, tail)) = v.split_once("<|\"|>") else {
                break;
            };
            m.insert(key, Value::String(val.to_string()));
            rest = tail;
        } else {
            let end = after.find(',').unwrap_or(after.len());
            let raw = after[..end].trim();
            m.insert(
                key,
                serde_json::from_str(raw).unwrap_or(Value::String(raw.to_string())),
            );
            rest = &after[end..];
        }
    }
    m
}

fn ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Reads back a call written in any leak shape (None for ordinary text).
pub fn parse_leak(text: &str) -> Option<Call> {
    let t = text.trim();
    // XML without wrapper
    if let Some(i) = t.find("<function=") {
        let rest = &t[i + "<function=".len()..];
        let (name, body) = rest.split_once('>')?;
        if body.trim_start().starts_with('{') {
            let obj = first_object(body)?;
            return Some(Call {
                name: name.to_string(),
                args: lenient_json(obj)?,
            });
        }
        let mut m = Map::new();
        for part in body.split("<parameter=").skip(1) {
            let (k, v) = part.split_once('>')?;
            let v = v.split("</parameter>").next().unwrap_or("");
            let v = v.strip_prefix('\n').unwrap_or(v);
            let v = v.strip_suffix('\n').unwrap_or(v);
            m.insert(k.to_string(), Value::String(v.to_string()));
        }
        return Some(Call {
            name: name.to_string(),
            args: Value::Object(m),
        });
    }
    // gemma call syntax
    if let Some(i) = t.find("call:") {
        let rest = &t[i + 5..];
        if let Some(open) = rest.find('{') {
            let name = &rest[..open];
            if ident(name) {
                let body = rest[open + 1..].trim_end().trim_end_matches("<tool_call|>");
                let body = body.strip_suffix('}').unwrap_or(body);
                return Some(Call {
                    name: name.to_string(),
                    args: Value::Object(gemma_args(body)),
                });
            }
        }
    }
    // NAME(k:<|"|>v<|"|>)
    if let Some(open) = t.find("(") {
        let name = &t[..open];
        if ident(name) && t.ends_with(")") && t.contains(":<|\"|>") {
            let body = &t[open + 1..t.len() - 1];
            return Some(Call {
                name: name.to_string(),
                args: Value::Object(gemma_args(body)),
            });
        }
    }
    // pythonic list after prose
    if t.ends_with(")]") {
        if let Some(open) = t.rfind('[') {
            let inner = &t[open + 1..t.len() - 1];
            if let Some(p) = inner.find('(') {
                let name = &inner[..p];
                if ident(name) {
                    let mut m = Map::new();
                    let mut rest = inner[p + 1..inner.len() - 1].trim_start();
                    while let Some((k, after)) = rest.split_once('=') {
                        let mut it = serde_json::Deserializer::from_str(after).into_iter::<Value>();
                        let v = it.next()?.ok()?;
                        let used = it.byte_offset();
                        m.insert(k.trim().to_string(), v);
                        rest = after[used..]
                            .trim_start()
                            .trim_start_matches(',')
                            .trim_start();
                        if rest.is_empty() {
                            break;
                        }
                    }
                    return Some(Call {
                        name: name.to_string(),
                        args: Value::Object(m),
                    });
                }
            }
        }
    }
    // any JSON object with name + arguments (fenced, tagged, after prose, in a think block)
    let obj = first_object(t)?;
    call_from_json(&lenient_json(obj)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_shape_reads_back() {
        let c = Call {
            name: "write_file".into(),
            args: json!({"path": "a.md", "content": "line one\nline \"two\"\n"}),
        };
        for f in Family::ALL {
            for s in leak_shapes(f) {
                let text = render_leak(*s, &c, "I will write the file now.");
                let back = parse_leak(&text).unwrap_or_else(|| panic!("{s:?}: {text}"));
                assert_eq!(back.name, c.name, "{s:?}");
                if *s == LeakShape::PlaceholderParens {
                    assert_eq!(back.args, json!({"path": "a.md"}));
                } else {
                    assert_eq!(back.args["path"], "a.md", "{s:?}: {text}");
                }
            }
        }
        assert!(parse_leak("I will now write the file (carefully).").is_none());
        assert!(parse_leak("Step 1/3: writing a.md.").is_none());
        let raw = render_leak(LeakShape::RawNewlineJson, &c, "");
        assert!(
            serde_json::from_str::<Value>(&raw).is_err(),
            "raw newlines make it invalid JSON"
        );
    }
}
