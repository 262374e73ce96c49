//! Format rescue: tool calls that reach us as text become real calls.
//!
//! Small models write their calls as text whenever the server's parser misses them (an
//! unexpected variant, a stray tag, special tokens stripped, an OpenAI-compatible server run
//! without a tool parser, a prompted model without tool tokens). A reply is read in four steps:
//!
//! 1. **Reasoning and echoes go** ([`reasoning`]): think blocks, an orphan `</think>`,
//!    harmony's analysis channel, echoed tool results. Reasoning is not action.
//! 2. **Family markers** are looked for anywhere in what is left — after prose, between
//!    sentences, several per reply, inside code fences — one module per dialect (Hermes/Qwen
//!    `<tool_call>`, Qwen3-Coder XML, GLM, Mistral, pythonic lists, DeepSeek, invoke-style XML,
//!    harmony, Kimi, Gemma, Functionary, the marker-plus-JSON families, …).
//! 3. Only when no marker gave a call, **unmarked shapes** are tried: a JSON call object in
//!    prose or a fence, a pythonic call list on its own line, a reply that is nothing but call
//!    expressions, ReAct `Action:` text, a `name\n{json}` recipient line. This weak evidence
//!    counts only when its arguments fit the declared schema exactly.
//! 4. Each call is checked against the **declared tools** ([`Catalog`]): the name is mapped when
//!    exactly one declared tool fits (`names`), argument names likewise, and values are
//!    coerced to the schema's types (`coerce`).
//!
//! Never a call: text that only mentions a tool, a call-shaped string inside reasoning, an
//! echoed tool result, a call to a tool that is not declared, a reply cut off inside a call
//! (nothing is auto-closed). Work is bounded: linear scans, a budget for speculative ones, and
//! limits on reply size, calls, arguments and nesting; a reply over a limit gives no call and
//! a short [`Rescue::problem`] the caller can show the model.

mod coerce;
mod deepseek;
mod fences;
mod functionary;
mod gemma;
mod generic_json;
mod glm;
mod harmony;
mod hermes;
mod invoke;
mod json_calls;
mod kimi;
mod llama;
mod marked_json;
mod mistral;
mod names;
mod pylit;
mod pythonic;
mod qwen_xml;
mod react;
pub mod reasoning;
mod repair;
mod scan;

pub use reasoning::strip_reasoning;

use crate::messages::{ToolCall, ToolSpec};
use scan::{clip, parse_json, Arg, Args, Found, Scan};
use serde_json::{Map, Value};

/// Replies longer than this are not read for text calls (the output cap is far below it).
pub const MAX_REPLY_BYTES: usize = 2 << 20;
/// At most this many calls are taken from one reply.
pub const MAX_CALLS: usize = 32;
/// A call with more arguments than this is refused.
pub const MAX_ARGS: usize = 256;
/// Arguments nested deeper than this are refused.
pub const MAX_DEPTH: usize = 64;

/// One declared tool, with what the name and argument rules need precomputed.
pub(crate) struct Tool {
    pub name: String,
    pub fold: String,
    pub concepts: Vec<String>,
    pub params: Vec<String>,
    pub required: Vec<String>,
    pub schema: Option<Value>,
}

impl Tool {
    fn param_schema(&self, p: &str) -> Option<&Value> {
        self.schema.as_ref()?.get("properties")?.get(p)
    }
    /// The parameter a single plain-text argument fills: the only required one, else the only one.
    fn plain_param(&self) -> Option<&str> {
        match (self.required.as_slice(), self.params.as_slice()) {
            ([one], _) | ([], [one]) => Some(one),
            _ => None,
        }
    }
}

/// The declared tools a reply is read against.
pub struct Catalog {
    pub(crate) tools: Vec<Tool>,
}

/// What reading a reply gave.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rescue {
    /// The calls, in the order written.
    pub calls: Vec<ToolCall>,
    /// The dialect each call was read from (parallel to `calls`).
    pub dialects: Vec<&'static str>,
    /// Why call-shaped text gave no call (or fewer), short enough to show the model.
    pub problem: Option<String>,
}

type Scanner = fn(&mut Scan);

/// Scanners keyed by a family marker.
const MARKED: &[Scanner] = &[
    hermes::scan,
    qwen_xml::scan,
    mistral::scan,
    pythonic::scan_marked,
    deepseek::scan,
    invoke::scan,
    harmony::scan,
    kimi::scan,
    marked_json::scan,
    llama::scan,
    gemma::scan,
    functionary::scan_marked,
    react::scan_marked,
];

/// Scanners for shapes without a marker (weak evidence).
const UNMARKED: &[Scanner] = &[
    pythonic::scan_unmarked,
    functionary::scan_first_line,
    react::scan,
    generic_json::scan,
];

impl Catalog {
    /// The tools with their JSON schemas (`parameters`), so values can be typed.
    pub fn new(specs: &[ToolSpec]) -> Self {
        let tools = specs
            .iter()
            .map(|s| {
                let props = s.parameters.get("properties").and_then(Value::as_object);
                let params = props
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                let required = s
                    .parameters
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default();
                Tool {
                    name: s.name.clone(),
                    fold: names::fold(&s.name),
                    concepts: names::tool_concepts(&s.name),
                    params,
                    required,
                    schema: props.map(|_| s.parameters.clone()),
                }
            })
            .collect();
        Catalog { tools }
    }

    /// Names only: names are mapped, values stay as written.
    pub fn from_names(names: &[&str]) -> Self {
        let specs: Vec<ToolSpec> = names
            .iter()
            .map(|n| ToolSpec {
                name: n.to_string(),
                description: String::new(),
                parameters: Value::Null,
            })
            .collect();
        Catalog::new(&specs)
    }

    /// The declared name a written tool name means, if exactly one tool fits.
    pub fn name(&self, written: &str) -> Option<&str> {
        names::resolve_tool(self, written).map(|i| self.tools[i].name.as_str())
    }

    /// Arguments of a call to `tool` with argument names mapped and values typed by its schema.
    pub fn args(&self, tool: &str, args: Value) -> Value {
        let Some(t) = self.tools.iter().find(|t| t.name == tool) else {
            return args;
        };
        match args {
            Value::Object(m) => {
                let pairs = m.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
                // native calls keep what does not fit: the tool answers for it
                Value::Object(build_args(t, pairs, false).0)
            }
            other => other,
        }
    }

    /// Read a text reply for tool calls.
    pub fn rescue(&self, text: &str) -> Rescue {
        if text.len() > MAX_REPLY_BYTES {
            return Rescue {
                problem: Some(format!(
                    "the reply is {} bytes long; tool calls written as text are read only from replies up to {} bytes",
                    text.len(),
                    MAX_REPLY_BYTES
                )),
                ..Rescue::default()
            };
        }
        let mut split = reasoning::split(text);
        if let Some(keep) = self.values_with_reasoning_tags(text, &split.removed) {
            split = reasoning::split_keeping(text, &keep);
        }
        let visible = reasoning::strip_echoes(&split.visible);
        let mut markers = scan::detect(&visible);
        // a fence inside a call's own arguments (a README with a ```bash block, written by
        // `write_file`) is part of the value: only fences outside the calls read from the
        // unblanked reply are blanked
        let visible = fences::blank_quoting(visible, &mut markers, |t, m| self.call_spans(t, m));
        let mut problems = Vec::new();
        let mut cut = false;
        for phase in [MARKED, UNMARKED] {
            let (mut r, spans) = self.read(&visible, markers, phase, &mut problems, &mut cut);
            if !r.calls.is_empty() {
                if std::ptr::eq(phase, MARKED) && !cut {
                    self.add_unmarked(&visible, markers, &mut r, &spans);
                }
                return r;
            }
            if cut {
                // a marked call cut off by the output cap (`[TOOL_CALLS][{…}, {"name": "x", "argu`):
                // the complete object inside it is part of an unfinished reply, not a call
                break;
            }
        }
        // Kimi-K2-Thinking emits its calls inside its think block (still open, or closed after
        // the section): its section tokens are special tokens no reasoning writes as prose, so
        // they are read there, and nothing else is
        // (only when reasoning was taken out, and the token is there: a plain substring search,
        // not a second marker pass over the reply)
        let stripped = matches!(split.visible, std::borrow::Cow::Owned(_));
        let kimi_in_reasoning = [split.open, stripped.then_some(text)];
        for t in kimi_in_reasoning.into_iter().flatten() {
            if !t.contains(kimi::BEGIN) {
                continue;
            }
            let markers = scan::detect(t);
            let (r, _) = self.read(t, markers, &[kimi::scan], &mut problems, &mut cut);
            if !r.calls.is_empty() {
                return r;
            }
        }
        Rescue {
            problem: problems.into_iter().next(),
            ..Rescue::default()
        }
    }

    /// Calls whose values hold reasoning tags (`write_file` of a page documenting `<think>`
    /// output): the spans of calls read from the whole reply that start outside the reasoning
    /// taken out and contain the start of a piece taken out. Read only when something was
    /// taken out after a family marker, so a reply that merely starts with its reasoning
    /// costs no second reading.
    fn values_with_reasoning_tags(
        &self,
        text: &str,
        removed: &[(usize, usize)],
    ) -> Option<Vec<(usize, usize)>> {
        let last = removed.iter().map(|r| r.0).max().filter(|&s| s > 0)?;
        if scan::detect(&text[..last]) & !scan::mark::FENCE == 0 {
            return None;
        }
        let inside = |at: usize| removed.iter().any(|&(a, b)| a <= at && at < b);
        let keep: Vec<(usize, usize)> = self
            .call_spans(text, scan::detect(text))
            .into_iter()
            .filter(|&(ca, cb)| !inside(ca) && removed.iter().any(|&(a, _)| ca < a && a < cb))
            .collect();
        (!keep.is_empty()).then_some(keep)
    }

    /// Calls without a family marker beside marked ones (a `<tool_call>` block, then a
    /// ```` ```json ```` object: small models mix forms in one reply), outside the marked calls'
    /// spans, in reply order. Read only when there is a `{` or `(` outside those spans.
    fn add_unmarked(&self, text: &str, markers: u64, r: &mut Rescue, spans: &[(usize, usize)]) {
        // the spans come in reply order; several calls of one block share theirs
        let hint = |t: &str| t.bytes().any(|c| matches!(c, b'{' | b'('));
        let mut from = 0;
        let mut outside = false;
        for &(a, b) in spans {
            outside = outside || (a > from && hint(&text[from..a]));
            from = from.max(b);
        }
        if !(outside || hint(&text[from..])) {
            return;
        }
        let (u, uspans) = self.read(text, markers, UNMARKED, &mut Vec::new(), &mut false);
        let mut all: Vec<(usize, ToolCall, &'static str)> = spans
            .iter()
            .zip(std::mem::take(&mut r.calls))
            .zip(std::mem::take(&mut r.dialects))
            .map(|((s, c), d)| (s.0, c, d))
            .collect();
        for ((span, call), dialect) in uspans.iter().zip(u.calls).zip(u.dialects) {
            let overlaps = spans.iter().any(|&(a, b)| span.0 < b && a < span.1);
            if !overlaps {
                all.push((span.0, call, dialect));
            }
        }
        all.sort_by_key(|(at, _, _)| *at);
        for (_, call, dialect) in all.into_iter().take(MAX_CALLS) {
            r.calls.push(call);
            r.dialects.push(dialect);
        }
    }

    /// The byte spans of the calls the reply's first phase that yields any would take.
    fn call_spans(&self, text: &str, markers: u64) -> Vec<(usize, usize)> {
        let (mut problems, mut cut) = (Vec::new(), false);
        for phase in [MARKED, UNMARKED] {
            let (r, spans) = self.read(text, markers, phase, &mut problems, &mut cut);
            if !r.calls.is_empty() || cut {
                return spans;
            }
        }
        Vec::new()
    }

    /// Run `scanners` over `text`: the calls taken, and the span of the block each came from.
    fn read(
        &self,
        text: &str,
        markers: u64,
        scanners: &[Scanner],
        problems: &mut Vec<String>,
        cut: &mut bool,
    ) -> (Rescue, Vec<(usize, usize)>) {
        let mut s = Scan::with_markers(text, self, markers);
        for f in scanners {
            f(&mut s);
        }
        let mut found = std::mem::take(&mut s.found);
        found.sort_by_key(|f| (f.at, std::cmp::Reverse(f.end)));
        let mut out = Rescue::default();
        let mut spans = Vec::new();
        // one block may hold several calls (same span); a block starting inside an accepted
        // one is the same text read by another dialect and is dropped. Only a block that gave
        // a call is accepted: a wider reading that names no declared tool (an Olmo
        // `function_calls>` around DeepSeek's DSML, say) must not hide the calls inside it.
        let mut block: Option<(usize, usize)> = None;
        for f in found {
            let span = (f.at, f.end);
            match block {
                Some(b) if b == span => {}
                Some((_, end)) if f.at < end => continue,
                _ => {}
            }
            let dialect = f.dialect;
            if let Some(call) = self.finish(f, &mut s) {
                block = Some(span);
                if out.calls.len() == MAX_CALLS {
                    s.problem(format!(
                        "more than {MAX_CALLS} calls in one reply; only the first {MAX_CALLS} are run"
                    ));
                    break;
                }
                out.calls.push(call);
                out.dialects.push(dialect);
                spans.push(span);
            }
        }
        problems.append(&mut s.problems);
        *cut |= s.cut;
        if out.calls.is_empty() {
            out.problem = problems.first().cloned();
        }
        (out, spans)
    }

    /// Turn a found call into a call of a declared tool, or nothing.
    fn finish(&self, f: Found, s: &mut Scan) -> Option<ToolCall> {
        let Some(ti) = names::resolve_tool(self, &f.name) else {
            if !f.weak && scan::is_name(&f.name) {
                s.problem(format!(
                    "'{}' is not one of the tools offered",
                    clip(&f.name, 60)
                ));
            }
            return None;
        };
        if f.weak && scan::introduced_as_example(s.text, f.at) {
            return None;
        }
        let tool = &self.tools[ti];
        let pairs: Vec<(String, Arg)> = match f.args {
            Args::Pairs(p) => p,
            Args::Json(Value::Object(m)) => m.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect(),
            Args::Json(Value::Null) => Vec::new(),
            Args::Json(Value::String(text)) => match parse_json(text.trim()) {
                Ok(Value::Object(m)) => m.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect(),
                _ => match tool.plain_param() {
                    Some(p) if !text.trim().is_empty() => {
                        vec![(p.to_string(), Arg::Raw(text.trim().to_string()))]
                    }
                    _ => {
                        s.problem(format!(
                            "the arguments of {} are not a JSON object",
                            tool.name
                        ));
                        return None;
                    }
                },
            },
            Args::Json(_) => {
                s.problem(format!("the arguments of {} are not an object", tool.name));
                return None;
            }
        };
        if pairs.len() > MAX_ARGS {
            s.problem(format!(
                "the {} call has {} arguments; at most {MAX_ARGS} are accepted",
                tool.name,
                pairs.len()
            ));
            return None;
        }
        let (mut args, misfit) = build_args(tool, pairs, f.weak);
        if f.weak && !misfit.fits() {
            return None;
        }
        if !misfit.fits() {
            // the call as written cannot be run as the tool: an argument with no counterpart
            // that would change what it does (`replace_all: true`, `run_in_background: true`,
            // `limit: 50`, `directory: "web"`), or a required one missing. Annotations and
            // switched-off options (`description`, `is_background: false`) are dropped.
            let mut meaningful: Vec<String> = Vec::new();
            for k in misfit.unknown {
                match args.get(&k) {
                    // a null was dropped as "not given"; a repeated name was seen already
                    None => {}
                    Some(_) if meaningful.contains(&k) => {}
                    Some(v) if harmless(&k, v) => {
                        args.remove(&k);
                    }
                    Some(_) => meaningful.push(k),
                }
            }
            let missing = misfit.missing;
            if !meaningful.is_empty() || !missing.is_empty() {
                let why = if meaningful.is_empty() {
                    format!("it lacks {}", missing.join(", "))
                } else {
                    format!("{} has no counterpart", meaningful.join(", "))
                };
                s.problem(format!(
                    "'{}' was read as {}, but {why}; {} takes {}",
                    clip(&f.name, 60),
                    tool.name,
                    tool.name,
                    tool.params.join(", ")
                ));
                return None;
            }
        }
        Some(ToolCall::new(&tool.name, Value::Object(args)))
    }
}

/// An argument a call may carry beyond the tool's own without changing what it does: a note
/// for the reader, or an option left off.
fn harmless(key: &str, v: &Value) -> bool {
    const NOTES: [&str; 11] = [
        "description",
        "reason",
        "explanation",
        "explain",
        "thought",
        "thoughts",
        "rationale",
        "comment",
        "note",
        "notes",
        "title",
    ];
    if NOTES.contains(&names::fold(key).as_str()) {
        return true;
    }
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(t) => t.trim().is_empty() || t.trim().eq_ignore_ascii_case("false"),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// What keeps arguments from fitting a tool's schema exactly.
struct Misfit {
    /// Written names that map to no parameter (kept in the arguments, unless null).
    unknown: Vec<String>,
    /// Required parameters not given.
    missing: Vec<String>,
}

impl Misfit {
    /// Every argument declared, every required one present: what weak evidence must meet.
    fn fits(&self) -> bool {
        self.unknown.is_empty() && self.missing.is_empty()
    }
}

/// Map argument names onto the tool's parameters and type the values. Also reports what does
/// not fit the schema exactly.
fn build_args(tool: &Tool, pairs: Vec<(String, Arg)>, weak: bool) -> (Map<String, Value>, Misfit) {
    let given: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| tool.params.contains(k))
        .map(|(k, _)| k.clone())
        .collect();
    let mut out = Map::new();
    let mut leftovers: Vec<(String, Arg)> = Vec::new();
    for (k, a) in pairs {
        let taken = |p: &str| given.iter().any(|g| g == p) || out.contains_key(p);
        let target = match names::resolve_param(&tool.params, &taken, &k) {
            Some(i) => tool.params[i].clone(),
            None if tool.schema.is_some() => {
                leftovers.push((k, a));
                continue;
            }
            None => k,
        };
        if out.contains_key(&target) {
            continue;
        }
        let v = typed(tool, &target, a);
        out.insert(target, v);
    }
    let missing: Vec<&String> = tool
        .required
        .iter()
        .filter(|r| !out.contains_key(*r))
        .collect();
    // one unknown argument and one missing required parameter of its type: the same thing,
    // misnamed (not for weak evidence, which must fit as written)
    if let ([(_, a)], [want]) = (leftovers.as_slice(), missing.as_slice()) {
        if !weak && same_kind(a, tool.param_schema(want)) {
            let want = want.to_string();
            let (_, a) = leftovers.pop().expect("one leftover");
            let v = typed(tool, &want, a);
            out.insert(want, v);
        }
    }
    let misfit = Misfit {
        unknown: leftovers.iter().map(|(k, _)| k.clone()).collect(),
        missing: tool
            .required
            .iter()
            .filter(|r| !out.contains_key(*r))
            .cloned()
            .collect(),
    };
    for (k, a) in leftovers {
        let v = match a {
            Arg::Raw(s) => Value::String(s),
            Arg::Val(v) => v,
        };
        out.entry(k).or_insert(v);
    }
    // an explicit null for an optional parameter means "not given"
    out.retain(|k, v| !v.is_null() || tool.required.contains(k));
    (out, misfit)
}

/// Whether a value is already of the kind a parameter declares (raw text fits any).
fn same_kind(a: &Arg, schema: Option<&Value>) -> bool {
    let Arg::Val(v) = a else {
        return true;
    };
    match schema.and_then(coerce::declared_type) {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    }
}

fn typed(tool: &Tool, param: &str, a: Arg) -> Value {
    let schema = tool.param_schema(param);
    match a {
        Arg::Raw(s) => coerce::raw(s, schema),
        Arg::Val(v) => match schema {
            Some(sc) => coerce::value(v, sc, 0),
            None => v,
        },
    }
}

/// Read a text-only reply for tool calls against the declared tools; None when it holds none.
pub fn rescue(text: &str, tools: &[ToolSpec]) -> Option<Vec<ToolCall>> {
    let r = Catalog::new(tools).rescue(text);
    (!r.calls.is_empty()).then_some(r.calls)
}

/// [`rescue`] with the dialects and the reason when nothing could be read.
pub fn rescue_detailed(text: &str, tools: &[ToolSpec]) -> Rescue {
    Catalog::new(tools).rescue(text)
}

/// The declared tool a (native or text) call's name means; the name unchanged if none fits.
pub fn canonical_name(name: &str, tools: &[ToolSpec]) -> String {
    Catalog::new(tools)
        .name(name)
        .map(str::to_string)
        .unwrap_or_else(|| name.to_string())
}

/// A call's arguments with names mapped to `tool`'s parameters and values typed by its schema.
pub fn canonical_args(tool: &str, args: Value, tools: &[ToolSpec]) -> Value {
    Catalog::new(tools).args(tool, args)
}

#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
