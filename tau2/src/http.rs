//! A small blocking HTTP/1.1 client (plain http only: local Ollama / OpenAI-compatible
//! servers), enough for JSON POSTs with Content-Length or chunked responses.

use crate::error::{err, fail, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Url {
    pub host: String,
    pub port: u16,
    pub prefix: String,
}

pub fn parse_url(url: &str) -> Result<Url> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        err!(
            Backend,
            "backend URL {url:?} must start with http:// (https is not supported)"
        )
    })?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (
            h.to_string(),
            p.parse()
                .map_err(|_| err!(Backend, "bad port in {url:?}"))?,
        ),
        None => (hostport.to_string(), 80),
    };
    if host.is_empty() {
        fail!(Backend, "no host in backend URL {url:?}");
    }
    Ok(Url {
        host,
        port,
        prefix: path.to_string(),
    })
}

/// POST a JSON body and return (status, body).
pub fn post_json(
    base: &str,
    path: &str,
    body: &[u8],
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<(u16, String)> {
    let u = parse_url(base)?;
    let addr = format!("{}:{}", u.host, u.port);
    let mut s =
        TcpStream::connect(&addr).map_err(|e| err!(Backend, "cannot connect to {addr}: {e}"))?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let mut req = format!(
        "POST {}{} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        u.prefix,
        path,
        u.host,
        u.port,
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    s.write_all(body)?;
    let mut r = BufReader::new(s);
    let mut status_line = String::new();
    r.read_line(&mut status_line)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .ok_or_else(|| err!(Backend, "bad HTTP status line from {addr}: {status_line:?}"))?;
    let mut len: Option<usize> = None;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim().to_ascii_lowercase();
            if k == "content-length" {
                len = v.trim().parse().ok();
            } else if k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked") {
                chunked = true;
            }
        }
    }
    let mut out = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(|_| err!(Backend, "bad chunk size from {addr}"))?;
            if n == 0 {
                break;
            }
            let mut buf = vec![0; n];
            r.read_exact(&mut buf)?;
            out.extend_from_slice(&buf);
            let mut crlf = String::new();
            r.read_line(&mut crlf)?;
        }
    } else if let Some(n) = len {
        out.resize(n, 0);
        r.read_exact(&mut out)?;
    } else {
        r.read_to_end(&mut out)?;
    }
    Ok((status, String::from_utf8_lossy(&out).into_owned()))
}
