//! The stdio subset of the Model Context Protocol a tool server needs: JSON-RPC 2.0 messages,
//! one per line on stdin/stdout; `initialize` (protocol version negotiation, the server's
//! `instructions`), `ping`, `tools/list` and `tools/call`. Typed here and nowhere else.
//!
//! Our own rather than the `rmcp` crate: rmcp is asynchronous (tokio, codecs, schema macros)
//! while this server is one synchronous line loop over three methods, and the τ² conversation
//! it fronts is synchronous too.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

/// Protocol versions this server speaks, newest first (the MCP specification's revisions;
/// the methods used here are the same in all of them).
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC error codes used here.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// One incoming JSON-RPC message (request when it has an id, else a notification).
#[derive(Debug, Deserialize)]
pub struct Incoming {
    pub jsonrpc: Option<String>,
    #[serde(default)]
    pub id: Option<Value>,
    pub method: Option<String>,
    #[serde(default)]
    pub params: Option<Value>,
}

/// A JSON-RPC error object.
#[derive(Debug, Serialize, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

/// One outgoing response: exactly one of `result` and `error`.
#[derive(Debug, Serialize)]
pub struct Response {
    pub jsonrpc: &'static str,
    pub id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
}

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// What a tool call returned: its text and whether it is the tool's error (`isError`).
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    pub text: String,
    pub is_error: bool,
}

/// What the server serves: the tools, the instructions, and the calls.
pub trait Host {
    fn name(&self) -> &str;
    fn instructions(&self) -> &str;
    fn tools(&self) -> &[Tool];
    /// Runs one call. Arguments that do not fit the tool are the tool's error, not a
    /// protocol error.
    fn call(&mut self, name: &str, arguments: Map<String, Value>) -> CallResult;
}

/// Serves `host` until stdin ends (the client closed it or exited).
pub fn serve(
    host: &mut dyn Host,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> std::io::Result<()> {
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if line.trim().is_empty() {
            continue;
        }
        if let Some(resp) = handle_line(host, &line) {
            let mut text = serde_json::to_string(&resp).map_err(std::io::Error::other)?;
            text.push('\n');
            output.write_all(text.as_bytes())?;
            output.flush()?;
        }
    }
}

/// One line in, at most one response out (notifications and responses get none).
pub fn handle_line(host: &mut dyn Host, line: &str) -> Option<Response> {
    let msg: Incoming = match serde_json::from_str::<Value>(line) {
        Err(e) => {
            return Some(error(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: {e}"),
            ))
        }
        Ok(v) if !v.is_object() => {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "a message must be one JSON object (no batches)",
            ))
        }
        Ok(v) => match serde_json::from_value(v) {
            Ok(m) => m,
            Err(e) => {
                return Some(error(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!("invalid request: {e}"),
                ))
            }
        },
    };
    let id = msg.id.clone()?;
    let Some(method) = msg.method.as_deref() else {
        // a response from the client (we send no requests): nothing to answer
        return None;
    };
    if msg.jsonrpc.as_deref() != Some("2.0") {
        return Some(error(id, INVALID_REQUEST, "jsonrpc must be \"2.0\""));
    }
    let params = msg.params.unwrap_or(Value::Null);
    Some(match dispatch(host, method, &params) {
        Ok(result) => Response {
            jsonrpc: "2.0",
            id,
            result: Some(result),
            error: None,
        },
        Err(e) => Response {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(e),
        },
    })
}

fn error(id: Value, code: i64, message: &str) -> Response {
    Response {
        jsonrpc: "2.0",
        id,
        result: None,
        error: Some(RpcError {
            code,
            message: message.into(),
        }),
    }
}

fn dispatch(host: &mut dyn Host, method: &str, params: &Value) -> Result<Value, RpcError> {
    match method {
        "initialize" => Ok(initialize(host, params)),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": host.tools()})),
        "tools/call" => call(host, params),
        other => Err(RpcError {
            code: METHOD_NOT_FOUND,
            message: format!("method not found: {other}"),
        }),
    }
}

/// The client's version when we speak it, else our newest (the specification's rule).
pub fn negotiate(requested: Option<&str>) -> &'static str {
    PROTOCOL_VERSIONS
        .iter()
        .find(|v| Some(**v) == requested)
        .copied()
        .unwrap_or(PROTOCOL_VERSIONS[0])
}

fn initialize(host: &dyn Host, params: &Value) -> Value {
    json!({
        "protocolVersion": negotiate(params["protocolVersion"].as_str()),
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": host.name(), "version": env!("CARGO_PKG_VERSION")},
        "instructions": host.instructions(),
    })
}

fn call(host: &mut dyn Host, params: &Value) -> Result<Value, RpcError> {
    let invalid = |m: &str| RpcError {
        code: INVALID_PARAMS,
        message: m.into(),
    };
    let name = params["name"]
        .as_str()
        .ok_or_else(|| invalid("tools/call needs a string `name`"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(invalid("tools/call `arguments` must be an object")),
    };
    let r = host.call(name, arguments);
    Ok(json!({"content": [{"type": "text", "text": r.text}], "isError": r.is_error}))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo(Vec<Tool>);
    impl Host for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn instructions(&self) -> &str {
            "say things"
        }
        fn tools(&self) -> &[Tool] {
            &self.0
        }
        fn call(&mut self, name: &str, arguments: Map<String, Value>) -> CallResult {
            CallResult {
                text: format!("{name} {}", Value::Object(arguments)),
                is_error: name != "echo",
            }
        }
    }

    fn host() -> Echo {
        Echo(vec![Tool {
            name: "echo".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        }])
    }

    fn answer(line: &str) -> Value {
        serde_json::to_value(handle_line(&mut host(), line).unwrap()).unwrap()
    }

    #[test]
    fn initialize_negotiates_and_carries_instructions() {
        let r = answer(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        );
        assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(r["result"]["instructions"], "say things");
        assert_eq!(r["result"]["capabilities"]["tools"]["listChanged"], false);
        let r = answer(
            r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
        );
        assert_eq!(r["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        assert_eq!(r["id"], "a");
    }

    #[test]
    fn tools_list_and_call() {
        let r = answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        assert_eq!(r["result"]["tools"][0]["inputSchema"]["type"], "object");
        let r = answer(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}"#,
        );
        assert_eq!(
            r["result"],
            json!({"content": [{"type": "text", "text": "echo {\"x\":1}"}], "isError": false})
        );
        let r =
            answer(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"other"}}"#);
        assert_eq!(r["result"]["isError"], true);
    }

    #[test]
    fn bad_messages_get_json_rpc_errors_and_notifications_none() {
        assert_eq!(answer("{not json")["error"]["code"], PARSE_ERROR);
        assert_eq!(answer("[1]")["error"]["code"], INVALID_REQUEST);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":5,"method":"nope"}"#)["error"]["code"],
            METHOD_NOT_FOUND
        );
        let r =
            answer(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}"#);
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let r = answer(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
        );
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        assert!(handle_line(
            &mut host(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        )
        .is_none());
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#)["result"],
            json!({})
        );
    }
}
