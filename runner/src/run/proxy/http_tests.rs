//! The request heads and bodies the arms' clients send, read as the proxy needs them.

use super::*;

fn head(raw: &str) -> Result<Option<(ReqHead, usize)>, Refusal> {
    parse_head(raw.as_bytes())
}

#[test]
fn heads_say_what_the_proxy_needs() {
    let raw = "POST /api/chat?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\n{\"model\":1}";
    let (h, used) = head(raw).unwrap().unwrap();
    assert_eq!(used, raw.len() - 11);
    assert_eq!(
        h,
        ReqHead {
            method: "POST".into(),
            path: "/api/chat?x=1".into(),
            ctype: "text/plain".into(),
            http10: false,
            keep_alive: true,
            length: Length::Fixed(12),
            expect_continue: false,
        }
    );
    let (h, _) = head("GET http://127.0.0.1:11434/api/tags HTTP/1.0\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            h.path.as_str(),
            h.ctype.as_str(),
            h.http10,
            h.keep_alive,
            h.length
        ),
        (
            "/api/tags",
            "application/json",
            true,
            false,
            Length::Fixed(0)
        )
    );
    let (h, _) = head("POST / HTTP/1.1\r\nconnection: Keep-Alive, Close\r\ntransfer-encoding: gzip, chunked\r\ncontent-length: 5\r\nexpect: 100-continue\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(
        (h.keep_alive, h.length, h.expect_continue),
        (false, Length::Chunked, true)
    );
    assert!(head("POST /api/chat HTTP/1.1\r\nHost: a\r\n")
        .unwrap()
        .is_none());
}

#[test]
fn bad_heads_are_refused_with_their_status() {
    let status = |raw: &str| head(raw).unwrap_err().0;
    assert_eq!(status("POST / HTTP/1.1\r\ncontent-length: x\r\n\r\n"), 400);
    assert_eq!(
        status("POST / HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n"),
        400
    );
    assert_eq!(
        status("POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n"),
        400
    );
    assert_eq!(status("NOT HTTP\r\n\r\n"), 400);
    let many: String = (0..200).map(|i| format!("x-{i}: y\r\n")).collect();
    assert_eq!(status(&format!("GET / HTTP/1.1\r\n{many}\r\n")), 431);
}

#[test]
fn chunk_sizes_read_hex_and_ignore_extensions() {
    assert_eq!(chunk_size(b"1a").unwrap(), 26);
    assert_eq!(chunk_size(b"A;name=v").unwrap(), 10);
    assert_eq!(chunk_size(b"0").unwrap(), 0);
    assert_eq!(chunk_size(b"zz").unwrap_err().0, 400);
}

#[test]
fn answers_are_chunked_unless_plain_or_for_head() {
    let mut out = Vec::new();
    push(&mut out, b"hello", true, false);
    push(&mut out, b"", true, false);
    push(&mut out, &[b'x'; 26], false, false);
    push(&mut out, b"never", true, true);
    let mut want = b"5\r\nhello\r\n".to_vec();
    want.extend_from_slice(&[b'x'; 26]);
    assert_eq!(out, want);
    assert_eq!(status_line(404), b"HTTP/1.1 404 Not Found\r\n");
    assert_eq!(origin_form("https://h"), "/");
}

/// A backend on kept connections that answers each request with its method and the length of
/// its body (a HEAD with the head alone, a DELETE of `/api/delete` with a 204).
fn counting_backend() -> String {
    use std::io::Write;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut c = c;
                while let Ok(r) = lrab_util::read_http_request(&c) {
                    let body = format!(
                        "{{\"model\":\"m\",\"message\":{{\"role\":\"assistant\",\"content\":\"got {} {}\"}},\"done\":true}}\n",
                        r.method,
                        r.body.len()
                    );
                    let head = format!("HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ncontent-length: {}\r\n\r\n", body.len());
                    let answer = match (r.method.as_str(), r.path.as_str()) {
                        ("HEAD", _) => head,
                        (_, "/api/delete") => "HTTP/1.1 204 No Content\r\n\r\n".into(),
                        _ => format!("{head}{body}"),
                    };
                    if c.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// Reads one answer: its head, and its body (chunked decoded, else to the end of the stream).
fn read_answer(r: &mut std::io::BufReader<std::net::TcpStream>) -> (String, Vec<u8>) {
    use std::io::{BufRead, Read};
    let mut head = String::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap() == 0 || l == "\r\n" {
            break;
        }
        head.push_str(&l);
    }
    let mut body = Vec::new();
    if head.contains("transfer-encoding: chunked") {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0u8; n + 2];
            r.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
    {
        body.resize(len.trim().parse().unwrap(), 0);
        r.read_exact(&mut body).unwrap();
    } else {
        r.read_to_end(&mut body).unwrap();
    }
    (head, body)
}

#[test]
fn arms_clients_are_served_on_the_wire() {
    use std::io::{BufRead, Read, Write};
    let proxy = super::super::start(super::super::ProxyConfig {
        upstream: counting_backend(),
        num_ctx: 4096,
        log: None,
        normalize: false,
        v1_to_native: false,
        think: lrab_records::ThinkSetting::Off,
        openai: None,
    })
    .unwrap();
    let addr = proxy.url().trim_start_matches("http://").to_string();
    let connect = || {
        let c = std::net::TcpStream::connect(&addr).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        (c.try_clone().unwrap(), std::io::BufReader::new(c))
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    // three requests on one kept connection: Expect: 100-continue, a chunked body, a close
    let (mut w, mut r) = connect();
    write!(
        w,
        "POST /api/chat HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 4\r\n\r\n"
    )
    .unwrap();
    let mut cont = String::new();
    r.read_line(&mut cont).unwrap();
    assert_eq!(cont, "HTTP/1.1 100 Continue\r\n");
    r.read_line(&mut cont).unwrap();
    w.write_all(b"abcd").unwrap();
    let (head, body) = read_answer(&mut r);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(text(&body).contains("got POST 4"), "{}", text(&body));
    write!(w, "POST /api/chat HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nx-trailer: t\r\n\r\n").unwrap();
    let (_, body) = read_answer(&mut r);
    assert!(text(&body).contains("got POST 13"), "{}", text(&body));
    write!(
        w,
        "GET /api/tags HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let (head, body) = read_answer(&mut r);
    assert!(head.contains("connection: close"), "{head}");
    assert!(text(&body).contains("got GET 0"), "{}", text(&body));
    let mut rest = Vec::new();
    assert_eq!(
        r.read_to_end(&mut rest).unwrap(),
        0,
        "closed after the answer"
    );
    // HTTP/1.0: the answer as it is, ended by the connection's end
    let (mut w, mut r) = connect();
    write!(w, "GET /api/version HTTP/1.0\r\n\r\n").unwrap();
    let (head, body) = read_answer(&mut r);
    assert!(
        head.contains("connection: close") && !head.contains("chunked"),
        "{head}"
    );
    assert!(text(&body).ends_with("\"done\":true}\n"), "{}", text(&body));
    // HEAD and a 204: the head alone, and the connection goes on (two requests sent at once)
    let (mut w, mut r) = connect();
    let bodiless = [
        ("HEAD /api/tags", "HTTP/1.1 200"),
        ("DELETE /api/delete", "HTTP/1.1 204"),
    ];
    for (request, status) in bodiless {
        write!(
            w,
            "{request} HTTP/1.1\r\nhost: x\r\n\r\nGET /api/tags HTTP/1.1\r\nhost: x\r\n\r\n"
        )
        .unwrap();
        let mut head = String::new();
        loop {
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            if l == "\r\n" {
                break;
            }
            head.push_str(&l);
        }
        assert!(
            head.starts_with(status) && !head.contains("chunked"),
            "{head}"
        );
        let (_, body) = read_answer(&mut r);
        assert!(text(&body).contains("got GET 0"), "{}", text(&body));
    }
    // a chunk larger than any body the proxy takes: a 413
    let (mut w, mut r) = connect();
    write!(w, "POST /api/chat HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\nffffffffffffffff\r\n").unwrap();
    let (head, _) = read_answer(&mut r);
    assert!(head.starts_with("HTTP/1.1 413 "), "{head}");
    // not HTTP: a 400 in JSON, and the connection closed
    let (mut w, mut r) = connect();
    w.write_all(b"\x01\x02 nonsense\r\n\r\n").unwrap();
    let (head, body) = read_answer(&mut r);
    assert!(head.starts_with("HTTP/1.1 400 Bad Request"), "{head}");
    assert!(
        text(&body).contains("proxy: bad request"),
        "{}",
        text(&body)
    );
}
