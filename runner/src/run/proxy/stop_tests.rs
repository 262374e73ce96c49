//! A proxy stopped while a request is in flight (its arm killed at the budget): the stop does
//! not wait for the backend, the backend's connection is closed (it can stop generating), and
//! the request is in the trajectory as cut.

use super::relay::{CUT_MID_ANSWER, CUT_UNANSWERED};
use super::*;
use std::io::{Read, Write};
use std::sync::mpsc as std_mpsc;

/// A backend that reads one request, sends `partial` (nothing when empty) and never finishes:
/// it reports when it has the request, then how long after that its connection was closed
/// (it waits up to a minute).
fn stalling_backend(
    partial: &'static str,
) -> (String, std_mpsc::Receiver<()>, std_mpsc::Receiver<Duration>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let (got, got_rx) = std_mpsc::channel();
    let (closed, closed_rx) = std_mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut c, _)) = l.accept() else { return };
        let _ = lrab_util::read_http_request(&c);
        let _ = c.write_all(partial.as_bytes());
        let _ = got.send(());
        let t = Instant::now();
        c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut buf = [0u8; 64];
        if matches!(c.read(&mut buf), Ok(0) | Err(_)) && t.elapsed() < Duration::from_secs(59) {
            let _ = closed.send(t.elapsed());
        }
    });
    (url, got_rx, closed_rx)
}

/// Stops a proxy while its one request waits on `partial`; the trajectory and what the arm
/// read of the answer.
fn stopped_mid_request(partial: &'static str) -> (Vec<lrab_records::TrajectoryEntry>, String) {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("proxy.jsonl");
    let (upstream, got, closed) = stalling_backend(partial);
    let proxy = start(ProxyConfig {
        upstream,
        num_ctx: 4096,
        log: Some(log.clone()),
        normalize: false,
        v1_to_native: false,
        think: ThinkSetting::Off,
        openai: None,
    })
    .unwrap();
    let addr = proxy.url().trim_start_matches("http://").to_string();
    let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let arm = std::thread::spawn(move || {
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        write!(
            c,
            "POST /api/chat HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut seen = Vec::new();
        let _ = c.read_to_end(&mut seen);
        String::from_utf8_lossy(&seen).into_owned()
    });
    got.recv_timeout(Duration::from_secs(20)).unwrap();
    // the arm reads what was relayed so far before it is "killed"
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    drop(proxy);
    let took = t.elapsed();
    // generous against the backend's minute: the stop waits for nothing in flight
    assert!(took < Duration::from_secs(10), "the stop took {took:?}");
    let closed_after = closed.recv_timeout(Duration::from_secs(10));
    assert!(closed_after.is_ok(), "the backend's connection stayed open");
    let seen = arm.join().unwrap();
    (lrab_records::TrajectoryEntry::load(&log).unwrap(), seen)
}

#[test]
fn a_stopped_proxy_cuts_an_unanswered_request_at_once() {
    let (t, seen) = stopped_mid_request("");
    assert!(seen.is_empty(), "{seen}");
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0].error.as_deref(), Some(CUT_UNANSWERED));
    assert_eq!((t[0].status, t[0].model.as_str()), (0, "m"));
    assert!(t[0].reply.is_none() && !t[0].is_turn());
    assert_eq!(t[0].messages[0].content, "hi");
}

#[test]
fn a_stopped_proxy_cuts_an_answer_mid_stream_and_keeps_what_came() {
    let (t, seen) = stopped_mid_request(
        "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\n\r\n{\"message\":{\"role\":\"assistant\",\"content\":\"half \"},\"done\":false}\n",
    );
    assert!(seen.contains("half "), "{seen}");
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0].error.as_deref(), Some(CUT_MID_ANSWER));
    assert_eq!(t[0].status, 200);
    assert_eq!(
        t[0].reply.as_ref().map(|r| r.content.as_str()),
        Some("half ")
    );
}
