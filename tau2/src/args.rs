//! Keyword arguments of a tool call, checked the way a Python method call would be.
//!
//! Upstream passes the model's JSON arguments straight to Python methods as keyword
//! arguments: unknown or missing names raise `TypeError`, and the orchestrator turns any
//! exception into an `"Error: ..."` tool result. Wrong value types here become the same
//! kind of error result instead of a crash.

use serde_json::{Map, Value};

/// What a tool returns: a bare string (sent as-is) or a JSON value (sent as `json.dumps`).
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    Str(String),
    Json(Value),
}

impl Out {
    /// The ToolMessage content upstream would produce.
    pub fn content(&self) -> String {
        match self {
            Out::Str(s) => s.clone(),
            Out::Json(v) => crate::pyjson::dumps(v),
        }
    }
}

/// A tool call that failed: the text after `Error: ` in upstream's tool message, worded like
/// the Python exception it mirrors (`User not found`, `... got an unexpected keyword
/// argument 'x'`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl From<String> for ToolError {
    fn from(s: String) -> Self {
        ToolError(s)
    }
}

impl From<&str> for ToolError {
    fn from(s: &str) -> Self {
        ToolError(s.to_string())
    }
}

/// `ToolError(format!(...))`.
macro_rules! terr {
    ($($t:tt)*) => { $crate::args::ToolError(format!($($t)*)) };
}
pub(crate) use terr;

pub type ToolResult = Result<Out, ToolError>;

pub struct Args<'a> {
    pub map: &'a Map<String, Value>,
    pub func: String,
}

fn py_list(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        2 => format!("{} and {}", q[0], q[1]),
        _ => format!("{}, and {}", q[..q.len() - 1].join(", "), q[q.len() - 1]),
    }
}

pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

impl<'a> Args<'a> {
    /// Check names like a Python call of `class.tool(required..., optional=...)`.
    pub fn new(
        class: &str,
        tool: &str,
        map: &'a Map<String, Value>,
        required: &[&str],
        optional: &[&str],
    ) -> Result<Self, ToolError> {
        let func = format!("{class}.{tool}()");
        for k in map.keys() {
            if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
                return Err(terr!("{func} got an unexpected keyword argument '{k}'"));
            }
        }
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|r| !map.contains_key(*r))
            .collect();
        if !missing.is_empty() {
            let plural = if missing.len() == 1 {
                "argument"
            } else {
                "arguments"
            };
            return Err(terr!(
                "{func} missing {} required positional {plural}: {}",
                missing.len(),
                py_list(&missing)
            ));
        }
        Ok(Args { map, func })
    }

    pub fn raw(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name)
    }

    pub fn str(&self, name: &str) -> Result<String, ToolError> {
        match self.map.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(terr!(
                "{}: argument '{name}' must be str, not {}",
                self.func,
                type_name(v)
            )),
            None => Err(terr!("{}: missing argument '{name}'", self.func)),
        }
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<String>, ToolError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.str(name).map(Some),
        }
    }

    /// An `int` parameter. Integral floats are accepted (Python arithmetic would accept them).
    pub fn int(&self, name: &str) -> Result<i64, ToolError> {
        match self.map.get(name) {
            Some(v) => value_int(v).ok_or_else(|| {
                terr!(
                    "{}: argument '{name}' must be int, not {}",
                    self.func,
                    type_name(v)
                )
            }),
            None => Err(terr!("{}: missing argument '{name}'", self.func)),
        }
    }

    pub fn str_list(&self, name: &str) -> Result<Vec<String>, ToolError> {
        match self.map.get(name) {
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| match x {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(terr!(
                        "{}: items of '{name}' must be str, not {}",
                        self.func,
                        type_name(other)
                    )),
                })
                .collect(),
            Some(v) => Err(terr!(
                "{}: argument '{name}' must be list, not {}",
                self.func,
                type_name(v)
            )),
            None => Err(terr!("{}: missing argument '{name}'", self.func)),
        }
    }

    pub fn obj_list(&self, name: &str) -> Result<Vec<&'a Map<String, Value>>, ToolError> {
        match self.map.get(name) {
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| match x {
                    Value::Object(m) => Ok(m),
                    other => Err(terr!(
                        "{}: items of '{name}' must be objects, not {}",
                        self.func,
                        type_name(other)
                    )),
                })
                .collect(),
            Some(v) => Err(terr!(
                "{}: argument '{name}' must be list, not {}",
                self.func,
                type_name(v)
            )),
            None => Err(terr!("{}: missing argument '{name}'", self.func)),
        }
    }
}

/// An integer from JSON the way pydantic's lax `int` accepts it (ints, integral floats,
/// digit strings).
pub fn value_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
}

/// A float the way pydantic's lax `float` accepts it.
pub fn value_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// A pydantic-style validation error for a field of a model built inside a tool.
pub fn field_error(model: &str, field: &str, what: &str) -> ToolError {
    terr!("1 validation error for {model}\n{field}\n  {what}")
}

/// Read a string field of a nested object argument (a pydantic model built from a dict).
pub fn obj_str(m: &Map<String, Value>, model: &str, field: &str) -> Result<String, ToolError> {
    match m.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(field_error(model, field, "Input should be a valid string")),
        None => Err(field_error(model, field, "Field required")),
    }
}
