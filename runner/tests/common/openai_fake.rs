//! A fake OpenAI-only server (no `/api/*`): `/v1/models` and `/v1/chat/completions` (JSON or
//! SSE, with tool calls split over events, usage with cached tokens), the way vLLM or
//! llama.cpp's server answers. It plays a model that calls write_file (else the first tool) until
//! a tool result comes back, then answers in text. Every chat body it receives is kept.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// How the fake misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fault {
    None,
    /// Chat answers stop in the middle of the stream (no finish, no `[DONE]`).
    CutStream,
    /// Chat answers are HTTP 200 with a body that is not JSON.
    BadJson,
    /// `/v1/models` is HTTP 200 with a body that is not JSON.
    BadModels,
    /// Every request is HTTP 403 (a key without access).
    Forbidden,
}

pub struct FakeOpenai {
    pub url: String,
    /// Chat bodies received.
    pub seen: Arc<Mutex<Vec<Value>>>,
}

struct Conf {
    key: Option<String>,
    models: Vec<String>,
    fault: Fault,
    /// Pause between the SSE events of an answer.
    gap: Duration,
    /// `owned_by` of every model (how the server says what it is).
    owner: String,
}

/// Starts the fake; `key`: the only key it accepts (it quotes a wrong one back, as hosted APIs
/// do).
pub fn start(key: Option<&str>, models: &[&str], fault: Fault, gap: Duration) -> FakeOpenai {
    start_owned(key, models, fault, gap, "llamacpp")
}

/// [`start`] of a server whose models say `owned_by: owner`.
pub fn start_owned(
    key: Option<&str>,
    models: &[&str],
    fault: Fault,
    gap: Duration,
    owner: &str,
) -> FakeOpenai {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let conf = Arc::new(Conf {
        key: key.map(str::to_string),
        models: models.iter().map(|m| m.to_string()).collect(),
        fault,
        gap,
        owner: owner.to_string(),
    });
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let (conf, seen) = (conf.clone(), s2.clone());
            std::thread::spawn(move || serve(c, &conf, &seen));
        }
    });
    FakeOpenai { url, seen }
}

fn read_request(c: &TcpStream) -> Option<(String, String, Option<String>, Vec<u8>)> {
    let mut r = BufReader::new(c.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let (mut len, mut auth) = (0usize, None);
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 || h.trim().is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        match k.trim().to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().ok()?,
            "authorization" => auth = Some(v.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some((method, path, auth, body))
}

fn answer(c: &mut TcpStream, status: u16, ctype: &str, body: &[u8]) {
    let _ = c.write_all(
        format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    let _ = c.write_all(body);
}

fn serve(mut c: TcpStream, conf: &Conf, seen: &Mutex<Vec<Value>>) {
    let Some((method, path, auth, body)) = read_request(&c) else {
        return;
    };
    if let Some(k) = &conf.key {
        let given = auth.as_deref().unwrap_or("").trim_start_matches("Bearer ");
        if given != k {
            let msg = format!("Incorrect API key provided: {given}");
            let b = json!({"error": {"message": msg, "type": "invalid_request_error"}});
            return answer(&mut c, 401, "application/json", b.to_string().as_bytes());
        }
    }
    if conf.fault == Fault::Forbidden {
        let b = json!({"error": {"message": "Project does not have access to this API", "type": "invalid_request_error", "code": "insufficient_permissions"}});
        return answer(&mut c, 403, "application/json", b.to_string().as_bytes());
    }
    match (method.as_str(), path.as_str()) {
        ("GET", "/v1/models") if conf.fault == Fault::BadModels => {
            answer(&mut c, 200, "application/json", b"<html>gateway</html>")
        }
        ("GET", "/v1/models") => {
            let data: Vec<Value> = conf
                .models
                .iter()
                .map(|m| json!({"id": m, "object": "model", "created": 0, "owned_by": conf.owner}))
                .collect();
            let b = json!({"object": "list", "data": data});
            answer(&mut c, 200, "application/json", b.to_string().as_bytes())
        }
        ("POST", "/v1/chat/completions") => {
            let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            seen.lock().unwrap().push(req.clone());
            chat(&mut c, conf, &req)
        }
        _ => answer(&mut c, 404, "text/plain", b"404 page not found"),
    }
}

/// The reply the fake model gives to `req`: a call of the first tool until a tool result is
/// the last message, then text.
fn reply(req: &Value) -> (String, Option<(String, String)>) {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let last_is_tool = msgs.last().is_some_and(|m| m["role"] == "tool");
    let names: Vec<&str> = req["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let tool = names
        .iter()
        .find(|n| **n == "write_file")
        .or(names.first())
        .copied();
    match tool {
        Some(t) if !last_is_tool => {
            let args = if t == "write_file" {
                r#"{"path": "notes.md", "content": "hello from the fake model"}"#
            } else {
                "{}"
            };
            (String::new(), Some((t.to_string(), args.to_string())))
        }
        _ => ("All done.".to_string(), None),
    }
}

fn chat(c: &mut TcpStream, conf: &Conf, req: &Value) {
    if conf.fault == Fault::BadJson {
        return answer(c, 200, "application/json", b"{\"choices\": [oops");
    }
    let (text, call) = reply(req);
    let n = req["messages"].as_array().map_or(0, |m| m.len()) as u64;
    let usage = json!({"prompt_tokens": 100 + 10 * n, "completion_tokens": 7, "total_tokens": 107 + 10 * n,
        "prompt_tokens_details": {"cached_tokens": 10 * n}});
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    if req["stream"] != json!(true) {
        let mut message = json!({"role": "assistant", "content": text});
        if let Some((name, args)) = &call {
            message["tool_calls"] = json!([{"id": "call_fake1", "type": "function", "function": {"name": name, "arguments": args}}]);
        }
        let b = json!({"id": "x", "object": "chat.completion", "model": req["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
        return answer(c, 200, "application/json", b.to_string().as_bytes());
    }
    let _ = c.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
    );
    let ev = |c: &mut TcpStream, v: Value| {
        let _ = c.write_all(format!("data: {v}\n\n").as_bytes());
        let _ = c.flush();
        std::thread::sleep(conf.gap);
    };
    let chunk = |delta: Value, f: Value| json!({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": f}]});
    ev(
        c,
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
    );
    if !text.is_empty() {
        ev(c, chunk(json!({"content": &text[..4]}), Value::Null));
        if conf.fault == Fault::CutStream {
            return;
        }
        ev(c, chunk(json!({"content": &text[4..]}), Value::Null));
    }
    if let Some((name, args)) = &call {
        let (a, b) = args.split_at(args.len() / 2);
        ev(
            c,
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_fake1", "type": "function", "function": {"name": name, "arguments": a}}]}),
                Value::Null,
            ),
        );
        if conf.fault == Fault::CutStream {
            return;
        }
        ev(
            c,
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
                Value::Null,
            ),
        );
    }
    ev(c, chunk(json!({}), json!(finish)));
    if req["stream_options"]["include_usage"] == json!(true) {
        ev(
            c,
            json!({"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": usage}),
        );
    }
    let _ = c.write_all(b"data: [DONE]\n\n");
}
