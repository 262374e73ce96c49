//! Gemma 4 — `<|tool_call>call:NAME{key:value,…}<tool_call|>` — and FunctionGemma —
//! `<start_function_call>call:NAME{…}<end_function_call>`. Keys are bare words; strings sit
//! between `<|"|>` (FunctionGemma: `<escape>`) delimiters and are raw (no escape processing);
//! numbers, booleans and null are bare; lists and nested objects use `[ ]` and `{ }`. When the
//! model closed the call with its end token, the usual slips are repaired: a single-quoted
//! value, a missing closing delimiter on the last string, a missing closing brace. Without the
//! end token the call must be complete as written (it may have been cut off). The same call
//! with the tokens stripped (`call:NAME{…}`), and a whole reply in the placeholder form
//! `NAME{k:<|"|>v<|"|>}` or `NAME(k:<|"|>v<|"|>)`, are read too, and inside the call token
//! the Python keyword form `call:NAME(k="v")`.

use super::pylit::Py;
use super::scan::{is_name, mark, name_end, skip_ws, Arg, Args, Found, Next, Scan};
use serde_json::{Map, Value};

const FAMILIES: [(&str, &str, &str, &str); 2] = [
    ("gemma4", "<|tool_call>", "<tool_call|>", "<|\"|>"),
    (
        "functiongemma",
        "<start_function_call>",
        "<end_function_call>",
        "<escape>",
    ),
];

pub(crate) fn scan(s: &mut Scan) {
    let mut taken: Vec<(usize, usize)> = Vec::new();
    if s.has(mark::GEMMA) {
        for (dialect, open, close, delim) in FAMILIES {
            let mut next_close = Next::new(close);
            let opens = s.occurrences(open);
            for (n, &at) in opens.iter().enumerate() {
                let body = at + open.len();
                let next_open = opens.get(n + 1).copied().unwrap_or(s.text.len());
                let c = next_close
                    .at_or_after(s.text, body)
                    .filter(|&c| c < next_open);
                let body_end = c.unwrap_or(next_open);
                let end = c.map(|c| c + close.len()).unwrap_or(body_end);
                if let Some(f) = call(s.text, at, body, body_end, end, delim, c.is_some(), dialect)
                {
                    s.push(f);
                } else {
                    s.problem(format!("a {dialect} call could not be read"));
                }
                taken.push((at, end));
            }
        }
    }
    if s.has(mark::CALL_COLON) {
        for at in s.occurrences("call:") {
            if taken.iter().any(|&(a, e)| at >= a && at < e) {
                continue;
            }
            let before = s.text[..at].chars().next_back();
            if before.is_some_and(|c| !(c.is_whitespace() || c == '>')) {
                continue;
            }
            if let Some(f) = call(
                s.text,
                at,
                at,
                s.text.len(),
                0,
                "<|\"|>",
                false,
                "gemma4-bare",
            ) {
                s.push(f);
            }
        }
    }
    if s.has(mark::PLACEHOLDER) {
        placeholder_reply(s);
    }
}

/// `call:NAME{…}` in `t[body..body_end]`; `end` is where the block ends (0: where the
/// arguments end).
#[allow(clippy::too_many_arguments)]
fn call(
    t: &str,
    at: usize,
    body: usize,
    body_end: usize,
    end: usize,
    delim: &str,
    repair: bool,
    dialect: &'static str,
) -> Option<Found> {
    let t = &t[..body_end];
    let i = skip_ws(t, body);
    let i = i + "call:".len() * usize::from(t[i..].starts_with("call:"));
    let ne = name_end(t, i);
    let name = &t[i..ne];
    if is_name(name) && t.as_bytes().get(ne) == Some(&b'(') && dialect != "gemma4-bare" {
        // the Python keyword form some Gemma 4 builds fall back to inside the call token:
        // `<|tool_call>call:NAME(k="v")`, complete as written
        let mut p = Py::new(t, i);
        let c = p.call().ok()?;
        if !t[p.i..].trim().is_empty() {
            return None;
        }
        let end = if end == 0 { p.i } else { end };
        let pairs = c.args.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
        return Some(Found::new(at, end, &c.name, Args::Pairs(pairs), dialect));
    }
    if !is_name(name) || t.as_bytes().get(ne) != Some(&b'{') {
        return None;
    }
    let mut g = G {
        t,
        i: ne,
        delim,
        repair,
        depth: 0,
    };
    let args = g.object().ok()?;
    if !repair && !t[g.i..].trim().is_empty() && end != 0 {
        return None; // text after the arguments inside the call block
    }
    let end = if end == 0 { g.i } else { end };
    let pairs = args.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
    Some(Found::new(at, end, name, Args::Pairs(pairs), dialect))
}

/// The whole reply is one placeholder-form call.
fn placeholder_reply(s: &mut Scan) {
    let t = s.text.trim();
    let start = s.text.len() - s.text.trim_start().len();
    let ne = name_end(t, 0);
    if !is_name(&t[..ne]) {
        return;
    }
    let found = match t.as_bytes().get(ne) {
        Some(b'{') => {
            let mut g = G {
                t,
                i: ne,
                delim: "<|\"|>",
                repair: false,
                depth: 0,
            };
            match g.object() {
                Ok(args) if g.i == t.len() => {
                    let pairs = args.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
                    Some((Args::Pairs(pairs), t[..ne].to_string()))
                }
                _ => None,
            }
        }
        Some(b'(') => {
            let mut p = Py::new(t, 0);
            match p.call() {
                Ok(c) if p.i == t.len() => {
                    let pairs = c.args.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
                    Some((Args::Pairs(pairs), c.name))
                }
                _ => None,
            }
        }
        _ => None,
    };
    if let Some((args, name)) = found {
        s.push(Found::new(
            start,
            start + t.len(),
            &name,
            args,
            "placeholder",
        ));
    }
}

/// Reader for Gemma's argument objects.
struct G<'a> {
    t: &'a str,
    i: usize,
    delim: &'a str,
    repair: bool,
    depth: usize,
}

type R<T> = Result<T, ()>;

impl G<'_> {
    fn rest(&self) -> &str {
        &self.t[self.i..]
    }
    fn ws(&mut self) {
        self.i = skip_ws(self.t, self.i);
    }
    fn eat(&mut self, s: &str) -> bool {
        let ok = self.rest().starts_with(s);
        if ok {
            self.i += s.len();
        }
        ok
    }

    fn object(&mut self) -> R<Map<String, Value>> {
        if !self.eat("{") || self.depth > super::MAX_DEPTH {
            return Err(());
        }
        self.depth += 1;
        let top = self.depth == 1;
        let mut m = Map::new();
        loop {
            self.ws();
            if self.eat("}") {
                break;
            }
            if self.rest().is_empty() && self.repair && top {
                break; // a missing closing brace
            }
            let key = if self.eat(self.delim) {
                let e = self.rest().find(self.delim).ok_or(())?;
                let k = self.rest()[..e].to_string();
                self.i += e + self.delim.len();
                k
            } else if self.rest().starts_with('"') {
                match self.value()? {
                    Value::String(k) => k,
                    _ => return Err(()),
                }
            } else {
                let e = name_end(self.t, self.i);
                if e == self.i {
                    return Err(());
                }
                let k = self.t[self.i..e].to_string();
                self.i = e;
                k
            };
            self.ws();
            if !self.eat(":") {
                return Err(());
            }
            self.ws();
            let v = self.value()?;
            if m.len() > super::MAX_ARGS {
                return Err(());
            }
            m.insert(key, v);
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                break;
            }
            if !(self.rest().is_empty() && self.repair && top) {
                return Err(());
            }
        }
        self.depth -= 1;
        Ok(m)
    }

    fn value(&mut self) -> R<Value> {
        if self.eat(self.delim) {
            return match self.rest().find(self.delim) {
                Some(e) => {
                    let v = self.rest()[..e].to_string();
                    self.i += e + self.delim.len();
                    Ok(Value::String(v))
                }
                None if self.repair && self.depth == 1 => {
                    // the closing delimiter of the last string is missing
                    let rest = self.rest().trim_end();
                    let v = rest
                        .strip_suffix('}')
                        .unwrap_or(rest)
                        .trim_end()
                        .to_string();
                    self.i = self.t.len();
                    Ok(Value::String(v))
                }
                None => Err(()),
            };
        }
        match self.rest().as_bytes().first() {
            Some(b'{') => self.object().map(Value::Object),
            Some(b'[') => {
                if self.depth > super::MAX_DEPTH {
                    return Err(());
                }
                self.i += 1;
                self.depth += 1;
                let mut a = Vec::new();
                loop {
                    self.ws();
                    if self.eat("]") {
                        self.depth -= 1;
                        return Ok(Value::Array(a));
                    }
                    a.push(self.value()?);
                    self.ws();
                    if !self.eat(",") && !self.rest().starts_with(']') {
                        return Err(());
                    }
                }
            }
            Some(b'\'') => {
                let e = self.rest()[1..].find('\'').ok_or(())?;
                let v = self.rest()[1..1 + e].to_string();
                self.i += e + 2;
                Ok(Value::String(v))
            }
            Some(b'"') => {
                let mut p = Py::new(self.t, self.i);
                let v = p.value().map_err(|_| ())?;
                self.i = p.i;
                Ok(v)
            }
            Some(_) => {
                let e = self
                    .rest()
                    .find([',', '}', ']'])
                    .unwrap_or(self.rest().len());
                let w = self.rest()[..e].trim();
                let v = match w {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    _ => match (w.parse::<i64>(), w.parse::<f64>()) {
                        (Ok(n), _) => Value::from(n),
                        (_, Ok(f)) if f.is_finite() => Value::from(f),
                        _ => return Err(()),
                    },
                };
                self.i += e;
                Ok(v)
            }
            None => Err(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn gemma4_and_functiongemma() {
        expect(
            "<|tool_call>call:todo{action:<|\"|>create<|\"|>,items:[<|\"|>a<|\"|>,<|\"|>b<|\"|>]}<tool_call|>",
            "gemma4",
            json!([{"name": "todo", "arguments": {"action": "create", "items": ["a", "b"]}}]),
        );
        expect(
            "<start_function_call>call:read_file{path:<escape>C:\\notes.txt<escape>,end_line:5}<end_function_call>",
            "functiongemma",
            json!([{"name": "read_file", "arguments": {"path": "C:\\notes.txt", "end_line": 5}}]),
        );
        // repairs only when the model closed the call
        expect(
            "<|tool_call>call:run_shell{command:'ls -la'}<tool_call|>",
            "gemma4",
            json!([{"name": "run_shell", "arguments": {"command": "ls -la"}}]),
        );
        expect(
            "<|tool_call>call:run_shell{command:<|\"|>ls<tool_call|>",
            "gemma4",
            json!([{"name": "run_shell", "arguments": {"command": "ls"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("<|tool_call>call:run_shell{command:<|\"|>ls");
        none("<|channel>thought\n<|tool_call>call:list_dir{}<tool_call|><channel|>Nothing to do.");
        none("Please call: read_file{path:<|\"|>a<|\"|>} if you want");
    }
}
