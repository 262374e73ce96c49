//! Reading one HTTP/1.1 request off a raw connection: what the fake servers of tests and
//! benchmarks need when they must control the connection itself (stream a reply in pieces,
//! stall, close early), which a real server framework would not let them do.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;

/// One request as a raw fake server reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRequest {
    /// The method (`GET`, `POST`, …), as sent.
    pub method: String,
    /// The request target (`/api/chat`), empty when the request line has none.
    pub path: String,
    /// The body: `Content-Length` bytes (none without the header).
    pub body: Vec<u8>,
}

/// Reads one request from `stream`: the request line, the headers up to the empty line (or the
/// end of the stream), and a body of `Content-Length` bytes (header name in any case). A
/// connection closed before any request line is `UnexpectedEof`, an unreadable
/// `Content-Length` is `InvalidData`, a body shorter than announced is the read's error. The
/// reader may buffer past the request; fake servers answer with `connection: close`.
pub fn read_http_request(stream: &TcpStream) -> std::io::Result<RawRequest> {
    let mut r = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the connection closed before a request line",
        ));
    }
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().map_err(|_| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("bad Content-Length '{}'", v.trim()),
                    )
                })?;
            }
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(RawRequest { method, path, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// What the server side reads when a client sends `raw` and closes its writing half.
    fn served(raw: &'static [u8]) -> std::io::Result<RawRequest> {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let client = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            c.write_all(raw).unwrap();
            c.shutdown(std::net::Shutdown::Write).unwrap();
        });
        let (s, _) = l.accept().unwrap();
        let r = read_http_request(&s);
        client.join().unwrap();
        r
    }

    #[test]
    fn reads_line_headers_and_the_announced_body() {
        let r =
            served(b"POST /api/chat HTTP/1.1\r\nHost: x\r\ncOnTeNt-LeNgTh: 5\r\n\r\nhelloEXTRA")
                .unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/api/chat");
        assert_eq!(r.body, b"hello");
        let r = served(b"GET /api/tags HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/api/tags"));
        assert!(r.body.is_empty());
        // headers that end with the stream still give the request
        let r = served(b"GET /v HTTP/1.1\r\nHost: x\r\n").unwrap();
        assert_eq!(r.path, "/v");
    }

    #[test]
    fn broken_requests_are_errors() {
        let kind = |raw| served(raw).unwrap_err().kind();
        assert_eq!(kind(b""), std::io::ErrorKind::UnexpectedEof);
        assert_eq!(
            kind(b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            std::io::ErrorKind::InvalidData
        );
        assert_eq!(
            kind(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nshort"),
            std::io::ErrorKind::UnexpectedEof
        );
    }
}
