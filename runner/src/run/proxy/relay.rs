//! One request: sent to the backend by the proxy's own client ([`super::upstream`]) and its
//! answer relayed to the arm as it arrives, read on the way for the trajectory. It all runs on
//! the proxy's runtime; a proxy stopped mid-request drops it, and the request is recorded as
//! cut ([`Record`]).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use lrab_ollama::responses::ResponsesTranslator;
use lrab_records::TrajectoryEntry;

use super::fast;
use super::openai_upstream::{Fetched, Local, OpenaiUpstream, ToNative};
use super::plan::{plan, Mode, Plan};
use super::tap::{Tap, Wire};
use super::translate::{native_to_openai, SseTranslator};
use super::upstream::Body;
use super::{now, read, Head, Incoming, Shared};

/// The error of a request the proxy stopped before the backend answered.
pub const CUT_UNANSWERED: &str = "proxy: stopped before the backend answered (request cut)";
/// The error of a request the proxy stopped while its answer was being relayed.
pub const CUT_MID_ANSWER: &str = "proxy: stopped before the answer ended (answer cut)";

/// The trajectory entry of one request while it is in flight. Written once: when the answer
/// has been relayed ([`Record::done`]), or, when the proxy stops first and drops the request,
/// as cut (the reply so far, if any, and an error saying where it was cut).
struct Record<'a> {
    sh: &'a Shared,
    r: &'a Incoming,
    p: &'a Plan,
    /// The request as a native body (taken from the plan), for the trajectory.
    recorded: Value,
    /// What the plan read of it for the trajectory already.
    read: Option<Read>,
    entry: TrajectoryEntry,
    /// Reads the answer once its head has arrived.
    tap: Option<Tap>,
    open: bool,
}

impl Record<'_> {
    /// Queues the entry; `cut`: the error saying where the proxy stopped it.
    fn done(&mut self, cut: Option<&str>) {
        self.open = false;
        if self.p.mode == Mode::Raw {
            return;
        }
        let mut entry = std::mem::take(&mut self.entry);
        if let Some(tap) = self.tap.take() {
            tap.finish(&mut entry);
        }
        if let (Some(c), None) = (cut, &entry.error) {
            entry.error = Some(c.to_string());
        }
        let recorded = std::mem::take(&mut self.recorded);
        let read = self.read.take();
        finish(self.sh, entry, self.r, self.p.deferred, recorded, read);
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        if self.open {
            let cut = match self.tap {
                None => CUT_UNANSWERED,
                Some(_) => CUT_MID_ANSWER,
            };
            self.done(Some(cut));
        }
    }
}

/// Forwards `r` and relays the answer: its head on `tx_head`, its body on `tx`.
pub(super) async fn forward(
    sh: Arc<Shared>,
    r: Incoming,
    tx_head: oneshot::Sender<Head>,
    tx: mpsc::Sender<Bytes>,
) {
    let sh = &*sh;
    let cfg = &sh.cfg;
    if let Some(up) = &cfg.openai {
        if let Some((status, ct, body)) = local(sh, up, &r).await {
            let _ = tx_head.send(Head {
                status,
                content_type: ct.into(),
            });
            let _ = tx.send(Bytes::from(body)).await;
            return;
        }
    }
    let mut p = plan(cfg, &r);
    let recorded = std::mem::take(&mut p.recorded);
    let read = p.read.take();
    let mut rec = Record {
        sh,
        r: &r,
        p: &p,
        recorded,
        read,
        entry: TrajectoryEntry {
            schema_version: TrajectoryEntry::SCHEMA_VERSION,
            time_ms: Some(r.time_ms),
            path: r.path.split('?').next().unwrap_or("").to_string(),
            model: p.model.clone(),
            stream: p.stream,
            rewritten_to_native: matches!(p.mode, Mode::V1 | Mode::Responses),
            ..Default::default()
        },
        tap: None,
        open: true,
    };
    let bearer = cfg
        .openai
        .as_ref()
        .and_then(|u| u.key.as_ref())
        .map(|k| k.bearer());
    let mut headers = vec![("content-type", r.ctype.as_str())];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    let body: &[u8] = match r.method.as_str() {
        "GET" | "HEAD" => &[],
        _ => &p.body,
    };
    let resp = match sh.client.send(&r.method, &p.target, &headers, body).await {
        Ok(x) => x,
        Err(e) => {
            let msg = format!("proxy: upstream {}: {e}", sh.client.url(&p.target));
            let _ = tx_head.send(Head {
                status: 502,
                content_type: "application/json".into(),
            });
            let _ = tx
                .send(Bytes::from(json!({ "error": msg }).to_string()))
                .await;
            drop(tx);
            rec.entry.status = 502;
            rec.entry.error = Some(msg);
            rec.done(None);
            return;
        }
    };
    let (status, up_ctype, mut reader) = (resp.status, resp.content_type, resp.body);
    rec.entry.status = status;
    let ok = status < 400;
    let wire = match p.mode {
        Mode::Pass(w) => w,
        _ => Wire::Native,
    };
    let tap = rec.tap.insert(Tap::new(wire, ok));
    let translated = matches!(p.mode, Mode::V1 | Mode::Responses);
    if ok && (p.mode == Mode::Native || translated) {
        let key = cfg.openai.as_ref().and_then(|u| u.key.clone());
        let conv = p
            .up_openai
            .then(|| ToNative::new(&p.model, r.t0).without(key));
        let ct = relayed_type(&p, &up_ctype);
        let _ = tx_head.send(Head {
            status,
            content_type: ct.to_string(),
        });
        relay_lines(&p, &mut reader, tap, &tx, conv).await;
    } else if let (false, Some(up)) = (ok, &cfg.openai) {
        relay_openai_error(&p, up, status, &mut reader, tap, tx_head, &tx).await;
    } else {
        relay_bytes(&p, &up_ctype, status, &mut reader, tap, tx_head, &tx).await;
    }
    // The arm has its whole answer before the record is built and queued; both happen in one
    // poll, so a proxy stopping meanwhile still records it whole.
    drop(tx);
    rec.done(None);
}

/// The answer to an Ollama request an OpenAI backend has no counterpart for, fetching the
/// backend's `/v1/models` only when the answer needs it.
async fn local(sh: &Shared, up: &OpenaiUpstream, r: &Incoming) -> Option<Local> {
    let plain = r.path.split('?').next().unwrap_or("");
    let mut needs_models = false;
    let first = up.local(&r.method, plain, &r.body, || {
        needs_models = true;
        Err(String::new())
    });
    if !needs_models {
        return first;
    }
    let fetched = fetch_models(sh, up).await;
    up.local(&r.method, plain, &r.body, || fetched)
}

/// `/v1/models` of an OpenAI backend, with the key.
async fn fetch_models(sh: &Shared, up: &OpenaiUpstream) -> Fetched {
    let bearer = up.key.as_ref().map(|k| k.bearer());
    let headers: Vec<(&str, &str)> = bearer
        .iter()
        .map(|b| ("authorization", b.as_str()))
        .collect();
    let url = sh.client.url("/v1/models");
    let call = async {
        let mut resp = sh.client.send("GET", "/v1/models", &headers, &[]).await?;
        let body = resp.body.read_to_end(16 << 20).await?;
        Ok::<_, std::io::Error>((resp.status, body))
    };
    match tokio::time::timeout(std::time::Duration::from_secs(30), call).await {
        Ok(Ok(x)) => Ok(x),
        Ok(Err(e)) => Err(format!("proxy: upstream {url}: {e}")),
        Err(_) => Err(format!("proxy: upstream {url}: timed out")),
    }
}

/// What the trajectory reads of a request: tool names and messages.
type Read = (Vec<String>, Vec<lrab_records::TrajectoryMessage>);

/// Queues the entry; its request's messages are read on the writer thread (`deferred`: from
/// the body as the arm sent it), unless the plan read them (`read`).
fn finish(
    sh: &Shared,
    mut entry: TrajectoryEntry,
    r: &Incoming,
    deferred: bool,
    recorded: Value,
    read: Option<Read>,
) {
    entry.elapsed_ms = Some((r.t0.elapsed().as_secs_f64() * 1e6).round() / 1e3);
    let body = r.body.clone();
    sh.recorder.write(Box::new(move || {
        let (tools, messages) = match (read, deferred) {
            (Some(read), _) => read,
            (None, true) => {
                let r = read::native_body(&body);
                entry.model = r.model;
                entry.stream = r.stream;
                (r.tools, r.messages)
            }
            (None, false) => read::tree(recorded),
        };
        entry.tools = tools;
        (entry, messages)
    }));
}

/// The content type a relayed line-by-line answer goes to the arm with.
fn relayed_type<'a>(p: &Plan, up_ctype: &'a str) -> &'a str {
    match (p.mode, p.stream) {
        (Mode::V1 | Mode::Responses, true) => "text/event-stream",
        (Mode::V1 | Mode::Responses, false) => "application/json",
        _ if !p.up_openai => up_ctype,
        (_, true) => "application/x-ndjson",
        (_, false) => "application/json; charset=utf-8",
    }
}

/// Relays a successful native answer line by line, translated when the arm spoke OpenAI. Each
/// line is parsed once (a relayed text line only read), for tap and translation. Lines that
/// arrived together leave together (one write to the arm); nothing is held back while the
/// backend is still producing the next line. An OpenAI backend's answer is turned into native
/// lines first (`conv`), event by event.
async fn relay_lines(
    p: &Plan,
    reader: &mut Body,
    tap: &mut Tap,
    tx: &mpsc::Sender<Bytes>,
    mut conv: Option<ToNative>,
) {
    let mut em = Emit {
        sse: SseTranslator::new(&p.model, now(), p.include_usage),
        rsse: ResponsesTranslator::new(&p.model, p.base, now()),
        out: Vec::new(),
    };
    let mut line = Vec::new();
    let mut whole = Vec::new();
    loop {
        line.clear();
        let end = matches!(reader.read_line(&mut line).await, Ok(0) | Err(_));
        match (&mut conv, end) {
            (None, false) if p.mode == Mode::Native && tap.native_text_line(&line) => {
                em.out.extend_from_slice(&line)
            }
            (None, false) if p.mode == Mode::V1 && p.stream && em.sse_text(tap, &line) => {}
            (None, false) => {
                let v = serde_json::from_slice::<Value>(&line).ok();
                em.object(p, tap, v, Some(&line));
            }
            (None, true) => {}
            (Some(c), false) if p.stream => {
                if !text_event(c, tap, &line, &mut em.out) {
                    for v in c.event_line(&line) {
                        em.object(p, tap, Some(v), None);
                    }
                }
            }
            (Some(_), false) => whole.extend_from_slice(&line),
            (Some(c), true) => {
                let last = if p.stream {
                    c.eof()
                } else {
                    Some(c.whole(&whole))
                };
                em.object(p, tap, last, None);
            }
        }
        // send what is ready before the next read could wait on the backend
        if (end || !reader.line_ready())
            && !em.out.is_empty()
            && tx.send(Bytes::from(em.take())).await.is_err()
        {
            break;
        }
        if end {
            break;
        }
    }
}

/// What a relayed answer has ready for the arm, and the translators it goes through.
struct Emit {
    sse: SseTranslator,
    rsse: ResponsesTranslator,
    out: Vec<u8>,
}

/// The native line for an OpenAI event that carries only text, appended to `out` and read
/// into `tap` (false, nothing appended: the event takes the general way).
fn text_event(c: &mut ToNative, tap: &mut Tap, line: &[u8], out: &mut Vec<u8>) -> bool {
    let Some(text) = fast::openai_text_event(line) else {
        return false;
    };
    let start = out.len();
    if !c.text_line_into(&text, out) {
        return false;
    }
    if !tap.native_text(&text) {
        match serde_json::from_slice(&out[start..]) {
            Ok(v) => tap.object(&v),
            Err(_) => {
                out.truncate(start);
                return false;
            }
        }
    }
    true
}

impl Emit {
    /// What is ready, leaving room for as much again (an answer's batches are alike in size).
    fn take(&mut self) -> Vec<u8> {
        let room = Vec::with_capacity(self.out.len());
        std::mem::replace(&mut self.out, room)
    }

    /// A streamed native line carrying only text, as SSE for an OpenAI arm, read into `tap`;
    /// false: the line takes the general way.
    fn sse_text(&mut self, tap: &mut Tap, line: &[u8]) -> bool {
        let Some(text) = fast::native_text(line) else {
            return false;
        };
        if !tap.native_text(&text) {
            return false;
        }
        self.sse.text_into(&text, &mut self.out);
        true
    }

    /// One native object of the answer (`raw`: its line as the backend sent it).
    fn object(&mut self, p: &Plan, tap: &mut Tap, v: Option<Value>, raw: Option<&[u8]>) {
        if let Some(v) = &v {
            tap.object(v);
        }
        let out = &mut self.out;
        match (p.mode, v) {
            (Mode::Native, v) => match (raw, v) {
                (Some(line), _) => out.extend_from_slice(line),
                (None, Some(v)) => {
                    out.extend_from_slice(v.to_string().as_bytes());
                    out.push(b'\n');
                }
                (None, None) => {}
            },
            (_, None) => {}
            (Mode::V1, Some(v)) if p.stream => out.extend_from_slice(self.sse.line(&v).as_bytes()),
            (Mode::V1, Some(v)) => {
                out.extend_from_slice(native_to_openai(&v, now()).to_string().as_bytes())
            }
            (_, Some(v)) if p.stream => out.extend_from_slice(self.rsse.line(&v).as_bytes()),
            (_, Some(v)) => out.extend_from_slice(
                ResponsesTranslator::new(&p.model, p.base, now())
                    .whole(&v)
                    .to_string()
                    .as_bytes(),
            ),
        }
    }
}

/// An OpenAI backend's error, read whole (errors are short; capped) and relayed without the
/// key: as Ollama's `{"error"}` to a native arm, in OpenAI's shape to an OpenAI one.
async fn relay_openai_error(
    p: &Plan,
    up: &OpenaiUpstream,
    status: u16,
    reader: &mut Body,
    tap: &mut Tap,
    tx_head: oneshot::Sender<Head>,
    tx: &mpsc::Sender<Bytes>,
) {
    let body = reader.read_to_end(1 << 20).await.unwrap_or_default();
    let msg = up.error_message(&body);
    let out = match p.mode {
        Mode::Native => json!({ "error": msg }),
        _ => serde_json::to_value(lrab_ollama::openai::ErrorResponse::for_status(status, msg))
            .unwrap_or(Value::Null),
    };
    let bytes = out.to_string();
    tap.bytes(bytes.as_bytes());
    let _ = tx_head.send(Head {
        status,
        content_type: "application/json".into(),
    });
    let _ = tx.send(Bytes::from(bytes)).await;
}

/// Relays any other answer chunk by chunk (an error of a rewritten request in OpenAI's shape).
async fn relay_bytes(
    p: &Plan,
    up_ctype: &str,
    status: u16,
    reader: &mut Body,
    tap: &mut Tap,
    tx_head: oneshot::Sender<Head>,
    tx: &mpsc::Sender<Bytes>,
) {
    let ok = status < 400;
    let translated = matches!(p.mode, Mode::V1 | Mode::Responses);
    let ct = if translated && !ok {
        "application/json".to_string()
    } else {
        up_ctype.to_string()
    };
    let _ = tx_head.send(Head {
        status,
        content_type: ct,
    });
    loop {
        let buf = match reader.chunk().await {
            Ok(b) if !b.is_empty() => b,
            _ => break,
        };
        if p.mode != Mode::Raw {
            tap.bytes(&buf);
        }
        let chunk = if translated && !ok {
            // Ollama error → OpenAI error shape.
            let msg = serde_json::from_slice::<Value>(&buf)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string))
                .unwrap_or_else(|| String::from_utf8_lossy(&buf).into_owned());
            let t = match status {
                404 => "not_found_error",
                400 => "invalid_request_error",
                _ => "api_error",
            };
            Bytes::from(
                json!({"error": {"message": msg, "type": t, "param": null, "code": null}})
                    .to_string(),
            )
        } else {
            Bytes::from(buf)
        };
        if tx.send(chunk).await.is_err() {
            break;
        }
    }
}
