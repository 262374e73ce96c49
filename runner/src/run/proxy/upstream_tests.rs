//! The proxy's backend client against raw fake servers: every body framing, kept connections
//! reused, a kept connection the server closed replaced, and the URL's path kept.

use super::*;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fake backend: answers every request on a connection with `answer` (raw bytes, written in
/// pieces of `piece` bytes); returns its URL, the connections accepted and the targets seen.
fn fake(
    answer: &'static [u8],
    piece: usize,
    keep: bool,
) -> (String, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let conns = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (c2, s2) = (conns.clone(), seen.clone());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            c2.fetch_add(1, Ordering::SeqCst);
            let s3 = s2.clone();
            std::thread::spawn(move || loop {
                let Ok(req) = lrab_util::read_http_request(&c) else {
                    return;
                };
                s3.lock().unwrap().push(req.path);
                for p in answer.chunks(piece) {
                    let _ = c.write_all(p);
                    let _ = c.flush();
                    std::thread::sleep(Duration::from_millis(1));
                }
                if !keep {
                    return;
                }
            });
        }
    });
    (url, conns, seen)
}

async fn lines(c: &Client, target: &str) -> (u16, String, Vec<String>) {
    let mut r = c
        .send(
            "POST",
            target,
            &[("content-type", "application/json")],
            b"{}",
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.body.read_line(&mut line).await.unwrap() == 0 {
            break;
        }
        out.push(String::from_utf8(line.clone()).unwrap());
    }
    (r.status, r.content_type, out)
}

#[tokio::test]
async fn every_framing_reads_the_same_lines() {
    const LEN: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ncontent-length: 12\r\n\r\n{\"a\":1}\n{\"b\"";
    let want = vec!["{\"a\":1}\n".to_string(), "{\"b\"".to_string()];
    // content-length cut at 12 bytes: the rest is not the body
    let (url, _, _) = fake(LEN, 5, false);
    let (s, ct, got) = lines(&Client::new(&url).unwrap(), "/api/chat").await;
    assert_eq!((s, ct.as_str()), (200, "application/x-ndjson"));
    assert_eq!(got, vec!["{\"a\":1}\n".to_string(), "{\"b\"".to_string()]);
    const CHUNKED: &[u8] = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\n{\"a\r\n5\r\n\":1}\n\r\n4\r\n{\"b\"\r\n0\r\nTrailer: t\r\n\r\n";
    for piece in [1, 3, 1000] {
        let (url, _, _) = fake(CHUNKED, piece, false);
        let (s, _, got) = lines(&Client::new(&url).unwrap(), "/api/chat").await;
        assert_eq!((s, &got), (201, &want), "pieces of {piece}");
    }
    const CLOSE: &[u8] =
        b"HTTP/1.0 404 Not Found\r\ncontent-type: text/plain\r\n\r\n{\"a\":1}\n{\"b\"";
    let (url, _, _) = fake(CLOSE, 4, false);
    let (s, _, got) = lines(&Client::new(&url).unwrap(), "/api/chat").await;
    assert_eq!((s, got), (404, want));
}

#[tokio::test]
async fn kept_connections_are_reused_and_a_closed_one_replaced() {
    const KEEP: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\n";
    let (url, conns, seen) = fake(KEEP, 100, true);
    let c = Client::new(&format!("{url}/base/")).unwrap();
    for _ in 0..5 {
        let (s, _, got) = lines(&c, "/api/chat").await;
        assert_eq!((s, got), (200, vec!["ok\n".to_string()]));
    }
    assert_eq!(conns.load(Ordering::SeqCst), 1);
    assert_eq!(seen.lock().unwrap()[0], "/base/api/chat");
    // a server that closes after each answer (without saying so): the kept connection is found
    // closed and the request goes out again on a fresh one
    let (url, conns, _) = fake(KEEP, 100, false);
    let c = Client::new(&url).unwrap();
    for _ in 0..3 {
        let (s, _, got) = lines(&c, "/x").await;
        assert_eq!((s, got), (200, vec!["ok\n".to_string()]));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(conns.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_cut_answer_and_a_dead_backend_are_errors() {
    const CUT: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nshort";
    let (url, _, _) = fake(CUT, 100, false);
    let c = Client::new(&url).unwrap();
    let mut r = c.send("GET", "/", &[], &[]).await.unwrap();
    let mut line = Vec::new();
    assert_eq!(
        r.body.read_line(&mut line).await.unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    assert!(Client::new(&dead)
        .unwrap()
        .send("GET", "/", &[], &[])
        .await
        .is_err());
    assert!(Client::new("ftp://example.com").is_err());
    let tls = Client::new("https://example.com/v1/").unwrap();
    assert_eq!(
        (tls.addr.as_str(), tls.url("/x")),
        ("example.com:443", "https://example.com/v1/x".into())
    );
    assert!(Client::new("https://[::1]:8443").unwrap().tls.is_some());
    assert!(Client::new("http://user:pw@example.com").is_err());
    assert_eq!(Client::new("http://h").unwrap().addr, "h:80");
    assert_eq!(Client::new("http://[::1]:8").unwrap().addr, "[::1]:8");
}

#[tokio::test]
async fn a_failed_tls_handshake_names_the_backend_not_the_headers() {
    // a server that answers plain HTTP where TLS was expected
    let (url, conns, _) = fake(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", 64, false);
    let https = url.replacen("http://", "https://", 1);
    let c = Client::new(&https).unwrap();
    let secret = "Bearer sk-never-shown-0123";
    let e = c
        .send("GET", "/v1/models", &[("authorization", secret)], &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("TLS with {https} failed: ")), "{e}");
    assert!(
        e.contains("$LRAB_CA_FILE") && !e.contains("sk-never"),
        "{e}"
    );
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}
