//! The proxy's client to its backend: HTTP/1.1 over the proxy's own tokio sockets, keeping
//! idle connections for reuse. It runs inside the proxy's runtime, so a request never leaves
//! for a blocking thread and back (a hop per request that 16 arms at once queued behind on
//! two cores), and a stopped proxy drops its requests in flight with their sockets: the
//! backend sees the connection close and stops generating for an arm that is gone, and nothing
//! waits for it. An `https://` backend is the same over TLS ([`super::conn`]).

use std::io::{Error, ErrorKind, Result};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::conn::{Conn, Tls};

/// Idle connections kept for reuse: as many as requests in flight at once.
const MAX_IDLE: usize = 32;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait for any one read from the backend (a model may think for long).
const READ_TIMEOUT: Duration = Duration::from_secs(3600);
/// The largest response head accepted.
const MAX_HEAD: usize = 64 << 10;

/// A backend at `http[s]://host[:port][/base]`.
#[derive(Debug)]
pub struct Client {
    /// `host:port` to connect to.
    addr: String,
    /// The `Host` header.
    host: String,
    /// The URL's path, prefixed to every request target (no trailing `/`).
    base: String,
    /// How to open TLS, for an `https://` backend.
    tls: Option<Tls>,
    idle: Arc<Mutex<Vec<Conn>>>,
}

/// An answer's status line and headers; its body is read from [`Body`].
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: Body,
}

impl Client {
    /// A client for `url`: `http://` or `https://`, without credentials.
    pub fn new(url: &str) -> std::result::Result<Client, String> {
        let (rest, https) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(r), _) => (r, false),
            (None, Some(r)) => (r, true),
            _ => return Err(format!("only http:// and https:// backends, not {url}")),
        };
        let (hostport, base) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if hostport.is_empty() || hostport.contains('@') {
            return Err(format!("{url}: expected http[s]://host[:port][/path]"));
        }
        let has_port = match hostport.rfind(':') {
            Some(i) => !hostport.ends_with(']') && hostport[i + 1..].parse::<u16>().is_ok(),
            None => false,
        };
        let addr = match (has_port, https) {
            (true, _) => hostport.to_string(),
            (false, false) => format!("{hostport}:80"),
            (false, true) => format!("{hostport}:443"),
        };
        let tls = match https {
            true => {
                let name = match has_port {
                    true => &hostport[..hostport.rfind(':').unwrap_or(hostport.len())],
                    false => hostport,
                };
                Some(Tls::new(name, format!("https://{hostport}"))?)
            }
            false => None,
        };
        Ok(Client {
            addr,
            host: hostport.to_string(),
            base: base.to_string(),
            tls,
            idle: Arc::default(),
        })
    }

    /// The full URL of `target` (for messages).
    pub fn url(&self, target: &str) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{}{target}", self.host, self.base)
    }

    /// Sends one request and reads the answer's head. A kept connection the backend closed
    /// meanwhile is replaced by a fresh one (the request had not been read then).
    pub async fn send(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response> {
        let mut req = Vec::with_capacity(256 + body.len());
        req.extend_from_slice(method.as_bytes());
        req.push(b' ');
        req.extend_from_slice(self.base.as_bytes());
        req.extend_from_slice(target.as_bytes());
        req.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        req.extend_from_slice(self.host.as_bytes());
        req.extend_from_slice(b"\r\nuser-agent: lrab-proxy\r\naccept: */*\r\n");
        for (k, v) in headers {
            req.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        if !body.is_empty() || !matches!(method, "GET" | "HEAD") {
            req.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        }
        req.extend_from_slice(b"\r\n");
        req.extend_from_slice(body);
        loop {
            let kept = self.idle.lock().map(|mut v| v.pop()).unwrap_or(None);
            let reused = kept.is_some();
            let conn = match kept {
                Some(c) => c,
                None => self.connect().await?,
            };
            match self.exchange(conn, &req, method == "HEAD").await {
                Err(e) if reused && stale(&e) => continue,
                r => return r,
            }
        }
    }

    async fn connect(&self) -> Result<Conn> {
        let c = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.addr))
            .await
            .map_err(|_| Error::new(ErrorKind::TimedOut, "connect: timed out"))??;
        c.set_nodelay(true)?;
        match &self.tls {
            None => Ok(Conn::Plain(c)),
            Some(tls) => tokio::time::timeout(CONNECT_TIMEOUT, tls.connect(c))
                .await
                .map_err(|_| Error::new(ErrorKind::TimedOut, "TLS handshake: timed out"))?,
        }
    }

    async fn exchange(&self, mut conn: Conn, req: &[u8], head_only: bool) -> Result<Response> {
        conn.write_all(req).await?;
        // TLS may hold the last record until flushed; a plain socket's flush does nothing
        conn.flush().await?;
        let mut raw = Vec::with_capacity(8192);
        loop {
            let end = loop {
                if let Some(i) = find(&raw, b"\r\n\r\n") {
                    break i + 4;
                }
                if raw.len() > MAX_HEAD {
                    return Err(Error::new(ErrorKind::InvalidData, "response head too long"));
                }
                if read_more(&mut conn, &mut raw).await? == 0 {
                    return Err(Error::new(
                        ErrorKind::UnexpectedEof,
                        "the backend closed the connection before answering",
                    ));
                }
            };
            let head = Head::parse(&raw[..end])?;
            raw.drain(..end);
            // interim answers (100 Continue) are skipped
            if (100..200).contains(&head.status) && head.status != 101 {
                continue;
            }
            let framing = match head.status {
                _ if head_only => Framing::Length(0),
                204 | 304 => Framing::Length(0),
                _ if head.chunked => Framing::ChunkSize,
                _ => head.length.map_or(Framing::Close, Framing::Length),
            };
            let body = Body {
                conn: Some(conn),
                raw,
                rpos: 0,
                framing,
                keep: head.keep_alive && !matches!(framing, Framing::Close),
                idle: Arc::clone(&self.idle),
                out: Vec::new(),
                pos: 0,
            };
            return Ok(Response {
                status: head.status,
                content_type: head.content_type,
                body,
            });
        }
    }
}

/// A kept connection that turned out closed: nothing of the answer was read.
fn stale(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::UnexpectedEof
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
    )
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn read_more(conn: &mut Conn, raw: &mut Vec<u8>) -> Result<usize> {
    if raw.capacity() - raw.len() < 4096 {
        raw.reserve(16384);
    }
    tokio::time::timeout(READ_TIMEOUT, conn.read_buf(raw))
        .await
        .map_err(|_| Error::new(ErrorKind::TimedOut, "read: timed out"))?
}

/// What the proxy needs of a response head.
struct Head {
    status: u16,
    content_type: String,
    length: Option<u64>,
    chunked: bool,
    keep_alive: bool,
}

impl Head {
    fn parse(raw: &[u8]) -> Result<Head> {
        let bad = |what: &str| Error::new(ErrorKind::InvalidData, format!("bad response: {what}"));
        let text = std::str::from_utf8(raw).map_err(|_| bad("head is not UTF-8"))?;
        let mut lines = text.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let mut words = status_line.split(' ');
        let version = words.next().unwrap_or("");
        if !version.starts_with("HTTP/1.") {
            return Err(bad(status_line));
        }
        let status = words
            .next()
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| bad(status_line))?;
        let mut h = Head {
            status,
            content_type: String::new(),
            length: None,
            chunked: false,
            keep_alive: version == "HTTP/1.1",
        };
        for line in lines {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k.trim().to_ascii_lowercase().as_str() {
                "content-type" => h.content_type = v.to_string(),
                "content-length" => {
                    h.length = Some(v.parse().map_err(|_| bad("content-length"))?);
                }
                "transfer-encoding" => h.chunked = v.to_ascii_lowercase().ends_with("chunked"),
                "connection" => {
                    let v = v.to_ascii_lowercase();
                    if v.contains("close") {
                        h.keep_alive = false;
                    } else if v.contains("keep-alive") {
                        h.keep_alive = true;
                    }
                }
                _ => {}
            }
        }
        Ok(h)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Bytes left of a `content-length` body.
    Length(u64),
    /// Until the backend closes.
    Close,
    /// Before a chunk's size line.
    ChunkSize,
    /// Bytes left of a chunk.
    ChunkData(u64),
    /// The CRLF after a chunk.
    ChunkEnd,
    /// Trailer lines after the last chunk, up to the empty line.
    Trailer,
    /// The body ended.
    Done,
}

/// An answer's body, decoded from its framing; the connection goes back to the idle pool
/// when the body has been read to its end (never when it was dropped before).
#[derive(Debug)]
pub struct Body {
    conn: Option<Conn>,
    /// Bytes read from the socket, not yet decoded, from `rpos`.
    raw: Vec<u8>,
    rpos: usize,
    framing: Framing,
    keep: bool,
    idle: Arc<Mutex<Vec<Conn>>>,
    /// Decoded bytes not yet handed out, from `pos`.
    out: Vec<u8>,
    pos: usize,
}

impl Body {
    /// Appends the next line (through its `\n`, or what is left at the end) to `line`; 0 at
    /// the end of the body.
    pub async fn read_line(&mut self, line: &mut Vec<u8>) -> Result<usize> {
        let start = line.len();
        loop {
            let ready = &self.out[self.pos..];
            if let Some(i) = ready.iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&ready[..=i]);
                self.pos += i + 1;
                return Ok(line.len() - start);
            }
            line.extend_from_slice(ready);
            self.pos = self.out.len();
            if !self.fill().await? {
                return Ok(line.len() - start);
            }
        }
    }

    /// Whether a whole line has arrived and is waiting (the next [`Body::read_line`] returns
    /// without waiting on the backend).
    pub fn line_ready(&self) -> bool {
        self.out[self.pos..].contains(&b'\n')
    }

    /// The next piece of the body as it arrived; empty at the end.
    pub async fn chunk(&mut self) -> Result<Vec<u8>> {
        if self.pos == self.out.len() && !self.fill().await? {
            return Ok(Vec::new());
        }
        let v = self.out[self.pos..].to_vec();
        self.pos = self.out.len();
        Ok(v)
    }

    /// The rest of the body, at most `cap` bytes.
    pub async fn read_to_end(&mut self, cap: usize) -> Result<Vec<u8>> {
        let mut all = Vec::new();
        loop {
            let c = self.chunk().await?;
            if c.is_empty() || all.len() >= cap {
                all.truncate(cap);
                return Ok(all);
            }
            all.extend_from_slice(&c);
        }
    }

    /// Decodes more of the body into `out` (dropping what was handed out), reading from the
    /// backend only when nothing already read decodes; false at its end.
    async fn fill(&mut self) -> Result<bool> {
        self.out.drain(..self.pos);
        self.pos = 0;
        loop {
            self.decode()?;
            if !self.out.is_empty() {
                return Ok(true);
            }
            if self.framing == Framing::Done {
                return Ok(false);
            }
            let Some(c) = &mut self.conn else {
                return Err(eof());
            };
            self.raw.drain(..self.rpos);
            self.rpos = 0;
            if read_more(c, &mut self.raw).await? == 0 {
                if self.framing == Framing::Close {
                    self.framing = Framing::Done;
                    self.conn = None;
                    return Ok(false);
                }
                return Err(eof());
            }
        }
    }

    /// Decodes as much of what was read as its framing allows, without waiting.
    fn decode(&mut self) -> Result<()> {
        loop {
            match self.framing {
                Framing::Done => return Ok(()),
                Framing::Length(0) => self.end(),
                Framing::Length(n) => match self.take(n) {
                    0 => return Ok(()),
                    k => self.framing = Framing::Length(n - k),
                },
                Framing::Close => {
                    if self.take(u64::MAX) == 0 {
                        return Ok(());
                    }
                }
                Framing::ChunkSize => {
                    let Some(line) = self.raw_line()? else {
                        return Ok(());
                    };
                    let n = chunk_size(&line).ok_or_else(|| {
                        Error::new(ErrorKind::InvalidData, "bad chunk size in the answer")
                    })?;
                    self.framing = match n {
                        0 => Framing::Trailer,
                        n => Framing::ChunkData(n),
                    };
                }
                Framing::ChunkData(n) => match self.take(n) {
                    0 => return Ok(()),
                    k if k == n => self.framing = Framing::ChunkEnd,
                    k => self.framing = Framing::ChunkData(n - k),
                },
                Framing::ChunkEnd => match self.raw_line()? {
                    Some(_) => self.framing = Framing::ChunkSize,
                    None => return Ok(()),
                },
                Framing::Trailer => match self.raw_line()? {
                    Some(l) if l.is_empty() => self.end(),
                    Some(_) => {}
                    None => return Ok(()),
                },
            }
        }
    }

    /// Moves up to `n` raw bytes to `out`; how many.
    fn take(&mut self, n: u64) -> u64 {
        let avail = &self.raw[self.rpos..];
        let k = (avail.len() as u64).min(n) as usize;
        self.out.extend_from_slice(&avail[..k]);
        self.rpos += k;
        k as u64
    }

    /// One raw line without its CRLF (chunk framing); `None` until it has arrived whole.
    fn raw_line(&mut self) -> Result<Option<String>> {
        let avail = &self.raw[self.rpos..];
        match find(avail, b"\r\n") {
            Some(i) => {
                let line = String::from_utf8_lossy(&avail[..i]).into_owned();
                self.rpos += i + 2;
                Ok(Some(line))
            }
            None if avail.len() > MAX_HEAD => {
                Err(Error::new(ErrorKind::InvalidData, "chunk line too long"))
            }
            None => Ok(None),
        }
    }

    /// The body is complete: its connection is kept for the next request when it can be.
    fn end(&mut self) {
        self.framing = Framing::Done;
        let conn = self.conn.take();
        if let (true, true, Some(c)) = (self.keep, self.rpos == self.raw.len(), conn) {
            if let Ok(mut idle) = self.idle.lock() {
                if idle.len() < MAX_IDLE {
                    idle.push(c);
                }
            }
        }
    }
}

/// The size a chunk-size line announces (extensions after `;` ignored); for the answers read
/// here and the arms' chunked requests ([`super::http`]).
pub(super) fn chunk_size(line: &str) -> Option<u64> {
    let hex = line.split(';').next().unwrap_or("").trim();
    u64::from_str_radix(hex, 16).ok()
}

fn eof() -> Error {
    Error::new(
        ErrorKind::UnexpectedEof,
        "the backend closed the connection mid-answer",
    )
}

#[cfg(test)]
#[path = "upstream_tests.rs"]
mod tests;
