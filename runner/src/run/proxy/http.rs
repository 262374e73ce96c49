//! The arms' side of the proxy: HTTP/1.1 read and written here rather than by a server
//! framework, which cost about a tenth of the proxy's CPU per request (its dispatcher, a
//! router, a body stream per answer). It speaks what the arms' clients send: kept
//! connections, `content-length` and chunked request bodies, `Expect: 100-continue`, HTTP/1.0;
//! answers are written chunked as they are relayed (what arrived together goes in one write,
//! with the end when it is there too), or plainly to an HTTP/1.0 client.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use super::{now_ms, relay, Head, Incoming, Shared};

/// The longest request head read.
const MAX_HEAD: usize = 64 << 10;
/// The longest request body read.
const MAX_BODY: usize = 256 << 20;
/// Headers read per request.
const MAX_HEADERS: usize = 96;

/// Serves the requests of one arm's connection until it closes or asks to.
pub(super) async fn serve(sh: Arc<Shared>, s: TcpStream) {
    let mut c = Conn {
        s,
        buf: Vec::with_capacity(16 << 10),
    };
    loop {
        let req = match c.request().await {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(Refusal(status, msg)) => {
                let _ = c.fixed(status, &msg, false).await;
                return;
            }
        };
        let keep = req.keep_alive;
        if !answer(&sh, &mut c, req).await || !keep {
            return;
        }
    }
}

/// A request refused before it reached the proxy (its status and message).
#[derive(Debug)]
struct Refusal(u16, String);

/// One request as read off the connection.
struct Request {
    incoming: Incoming,
    http10: bool,
    keep_alive: bool,
}

/// What the request's head says of its body.
#[derive(Debug, PartialEq)]
enum Length {
    Fixed(usize),
    Chunked,
}

/// What the proxy reads of a request head.
#[derive(Debug, PartialEq)]
struct ReqHead {
    method: String,
    path: String,
    ctype: String,
    http10: bool,
    keep_alive: bool,
    length: Length,
    expect_continue: bool,
}

/// An arm's connection and what has been read from it but not yet used.
struct Conn {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Reads more; false at the end of the stream.
    async fn fill(&mut self) -> bool {
        if self.buf.capacity() - self.buf.len() < 4096 {
            self.buf.reserve(16 << 10);
        }
        matches!(self.s.read_buf(&mut self.buf).await, Ok(n) if n > 0)
    }

    /// The next request; `None` when the connection ended (or broke) first.
    async fn request(&mut self) -> Result<Option<Request>, Refusal> {
        let (head, used) = loop {
            if let Some(parsed) = parse_head(&self.buf)? {
                break parsed;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(Refusal(431, "proxy: request head too large".into()));
            }
            if !self.fill().await {
                return Ok(None);
            }
        };
        let t0 = Instant::now();
        let time_ms = now_ms();
        self.buf.drain(..used);
        if head.expect_continue && !head.http10 {
            let _ = self.s.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await;
        }
        let body = match head.length {
            Length::Fixed(n) => self.fixed_body(n).await,
            Length::Chunked => self.chunked_body().await,
        };
        let Some(body) = body? else {
            return Ok(None);
        };
        Ok(Some(Request {
            incoming: Incoming {
                method: head.method,
                path: head.path,
                ctype: head.ctype,
                body,
                t0,
                time_ms,
            },
            http10: head.http10,
            keep_alive: head.keep_alive,
        }))
    }

    /// A body of `n` bytes, read straight into its own buffer (`None`: the stream ended).
    async fn fixed_body(&mut self, n: usize) -> Result<Option<Bytes>, Refusal> {
        if n > MAX_BODY {
            return Err(Refusal(413, "proxy: request body too large".into()));
        }
        let have = n.min(self.buf.len());
        // room as the bytes arrive, not as the head claims
        let mut body = Vec::with_capacity(n.min(1 << 20));
        body.extend_from_slice(&self.buf[..have]);
        self.buf.drain(..have);
        let rest = (n - have) as u64;
        if (&mut self.s)
            .take(rest)
            .read_to_end(&mut body)
            .await
            .is_err()
            || body.len() < n
        {
            return Ok(None);
        }
        Ok(Some(Bytes::from(body)))
    }

    /// A chunked body, decoded (`None`: the stream ended).
    async fn chunked_body(&mut self) -> Result<Option<Bytes>, Refusal> {
        let mut body = Vec::new();
        loop {
            let Some(line) = self.line().await? else {
                return Ok(None);
            };
            let size = chunk_size(&line)?;
            if size == 0 {
                // trailers, up to the empty line
                loop {
                    match self.line().await? {
                        None => return Ok(None),
                        Some(l) if l.is_empty() => return Ok(Some(Bytes::from(body))),
                        Some(_) => {}
                    }
                }
            }
            if size > MAX_BODY - body.len() {
                return Err(Refusal(413, "proxy: request body too large".into()));
            }
            while self.buf.len() < size + 2 {
                if !self.fill().await {
                    return Ok(None);
                }
            }
            if &self.buf[size..size + 2] != b"\r\n" {
                return Err(Refusal(400, "proxy: bad chunked body".into()));
            }
            body.extend_from_slice(&self.buf[..size]);
            self.buf.drain(..size + 2);
        }
    }

    /// The next line without its CRLF (`None`: the stream ended first).
    async fn line(&mut self) -> Result<Option<Vec<u8>>, Refusal> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..at].to_vec();
                self.buf.drain(..at + 2);
                return Ok(Some(line));
            }
            if self.buf.len() > MAX_HEAD {
                return Err(Refusal(400, "proxy: bad chunked body".into()));
            }
            if !self.fill().await {
                return Ok(None);
            }
        }
    }

    /// A whole answer of the proxy's own (an error), as JSON.
    async fn fixed(&mut self, status: u16, msg: &str, keep: bool) -> std::io::Result<()> {
        let body = serde_json::json!({ "error": msg }).to_string();
        let mut out = status_line(status);
        out.extend_from_slice(b"content-type: application/json\r\n");
        out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        if !keep {
            out.extend_from_slice(b"connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body.as_bytes());
        self.s.write_all(&out).await
    }
}

/// Parses a request head at the start of `buf`: the head and its length, or `None` when it
/// has not all arrived.
fn parse_head(buf: &[u8]) -> Result<Option<(ReqHead, usize)>, Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut r = httparse::Request::new(&mut headers);
    let used = match r.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Refusal(431, "proxy: too many request headers".into()))
        }
        Err(e) => return Err(Refusal(400, format!("proxy: bad request: {e}"))),
    };
    let http10 = r.version == Some(0);
    let (mut ctype, mut length) = ("application/json".to_string(), None);
    let (mut close, mut expect_continue, mut chunked) = (false, false, false);
    for h in r.headers.iter() {
        let v = std::str::from_utf8(h.value).unwrap_or("").trim();
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            let n: usize = v
                .parse()
                .map_err(|_| Refusal(400, format!("proxy: bad content-length '{v}'")))?;
            if length.is_some_and(|l| l != n) {
                return Err(Refusal(400, "proxy: conflicting content-length".into()));
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            let last = v.rsplit(',').next().unwrap_or("").trim();
            if !last.eq_ignore_ascii_case("chunked") {
                return Err(Refusal(400, format!("proxy: transfer-encoding '{v}'")));
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case("connection") {
            close |= v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"));
        } else if name.eq_ignore_ascii_case("expect") {
            expect_continue = v.eq_ignore_ascii_case("100-continue");
        } else if name.eq_ignore_ascii_case("content-type") && !v.is_empty() {
            ctype = v.to_string();
        }
    }
    let head = ReqHead {
        method: r.method.unwrap_or("GET").to_string(),
        path: origin_form(r.path.unwrap_or("/")),
        ctype,
        http10,
        // an HTTP/1.0 answer is delimited by the connection's end
        keep_alive: !close && !http10,
        // a transfer-encoding overrides a content-length
        length: match (chunked, length) {
            (true, _) => Length::Chunked,
            (false, n) => Length::Fixed(n.unwrap_or(0)),
        },
        expect_continue,
    };
    Ok(Some((head, used)))
}

/// The path and query of a request target (`http://host/api/chat` → `/api/chat`).
fn origin_form(target: &str) -> String {
    let rest = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"));
    match rest {
        Some(r) => match r.find('/') {
            Some(at) => r[at..].to_string(),
            None => "/".into(),
        },
        None => target.to_string(),
    }
}

/// A chunk-size line's size ([`super::upstream::chunk_size`]).
fn chunk_size(line: &[u8]) -> Result<usize, Refusal> {
    std::str::from_utf8(line)
        .ok()
        .and_then(super::upstream::chunk_size)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Refusal(400, "proxy: bad chunked body".into()))
}

/// `HTTP/1.1 STATUS REASON\r\n`.
fn status_line(status: u16) -> Vec<u8> {
    let reason = axum::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut out = Vec::with_capacity(8 << 10);
    out.extend_from_slice(format!("HTTP/1.1 {status} {reason}\r\n").as_bytes());
    out
}

/// Forwards one request and writes its answer as it is relayed; false when the connection
/// cannot go on (the arm is gone, or the answer ends with the connection).
async fn answer(sh: &Arc<Shared>, c: &mut Conn, req: Request) -> bool {
    let (tx_head, rx_head) = oneshot::channel::<Head>();
    let (tx, mut rx) = mpsc::channel::<Bytes>(64);
    let method_head = req.incoming.method == "HEAD";
    let (http10, keep) = (req.http10, req.keep_alive);
    // a task of its own: it goes on (and is recorded) if the arm hangs up meanwhile
    tokio::spawn(relay::forward(Arc::clone(sh), req.incoming, tx_head, tx));
    let Ok(head) = rx_head.await else {
        return c
            .fixed(502, "proxy: upstream call failed", keep)
            .await
            .is_ok()
            && keep;
    };
    let status = match head.status {
        100..=999 => head.status,
        _ => 502,
    };
    // answers that never have a body, whatever the backend sent
    let head_only = method_head || status < 200 || status == 204 || status == 304;
    let mut out = status_line(status);
    // a header value with a line break would split the head
    if head
        .content_type
        .bytes()
        .all(|b| b == b'\t' || (b' '..0x7f).contains(&b) || b >= 0x80)
    {
        out.extend_from_slice(b"content-type: ");
        out.extend_from_slice(head.content_type.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !keep {
        out.extend_from_slice(b"connection: close\r\n");
    }
    let chunked = !http10 && !head_only;
    if chunked {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    out.extend_from_slice(b"\r\n");
    let mut end = false;
    while !end {
        match rx.recv().await {
            Some(b) => push(&mut out, &b, chunked, head_only),
            None => end = true,
        }
        // what else is ready goes in the same write, and the end when it is there
        loop {
            match rx.try_recv() {
                Ok(b) => push(&mut out, &b, chunked, head_only),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    end = true;
                    break;
                }
            }
        }
        if end && chunked {
            out.extend_from_slice(b"0\r\n\r\n");
        }
        if !out.is_empty() && c.s.write_all(&out).await.is_err() {
            return false;
        }
        out.clear();
    }
    keep
}

/// Appends a piece of the answer: as a chunk, as it is, or not at all (an answer to HEAD).
fn push(out: &mut Vec<u8>, b: &[u8], chunked: bool, head_only: bool) {
    if head_only || b.is_empty() {
        return;
    }
    if chunked {
        out.extend_from_slice(format!("{:x}\r\n", b.len()).as_bytes());
        out.extend_from_slice(b);
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(b);
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
