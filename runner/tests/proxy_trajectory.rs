//! The trajectory from the wire: `lrab proxy --record-only` between a client and a scripted
//! backend forwards requests byte for byte, relays the stream as it comes, and writes one
//! trajectory line per request (new messages, tools, reply, tokens, cache counts, durations);
//! a proxy killed mid-request leaves a file readable up to its last complete record.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lrab_records::TrajectoryEntry;
use serde_json::json;

/// Raw request bodies as the backend received them.
type Seen = Arc<Mutex<Vec<Vec<u8>>>>;

/// One scripted answer: the NDJSON lines, and whether to wait for the test's go before the
/// last one (`None`: hang after the first line until the connection dies).
struct Script {
    lines: Vec<String>,
    gate: Option<bool>,
}

fn final_line(prompt: u64, cached: u64) -> String {
    json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true,
        "done_reason": "stop", "prompt_eval_count": prompt, "prompt_eval_cached_count": cached,
        "eval_count": 4, "prompt_eval_duration": 1000, "eval_duration": 2000,
        "load_duration": 10, "total_duration": 4000})
    .to_string()
}

fn backend(scripts: Vec<Script>, go: mpsc::Receiver<()>) -> (String, Seen, Arc<Mutex<bool>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let timed_out = Arc::new(Mutex::new(false));
    let (s2, t2) = (seen.clone(), timed_out.clone());
    std::thread::spawn(move || {
        for sc in scripts {
            let Ok((mut c, _)) = l.accept() else { return };
            let body = lrab_util::read_http_request(&c).unwrap().body;
            s2.lock().unwrap().push(body);
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\nconnection: close\r\n\r\n");
            let n = sc.lines.len();
            for (i, l) in sc.lines.iter().enumerate() {
                if i + 1 == n {
                    match sc.gate {
                        Some(true) => {
                            if go.recv_timeout(Duration::from_secs(20)).is_err() {
                                *t2.lock().unwrap() = true;
                            }
                        }
                        Some(false) => {}
                        None => {
                            // hang: the proxy gets killed meanwhile
                            std::thread::sleep(Duration::from_secs(30));
                            return;
                        }
                    }
                }
                let _ = c.write_all(format!("{l}\n").as_bytes());
                let _ = c.flush();
            }
        }
    });
    (url, seen, timed_out)
}

fn start_proxy(upstream: &str, log: &std::path::Path) -> (std::process::Child, String) {
    let mut c = common::proxy_command(upstream, log);
    c.arg("--record-only");
    common::listening(c)
}

/// The backend's three answers: a streamed tool call held back until the test's go, a plain
/// answer, and a stream that hangs after its first line.
fn scripts() -> Vec<Script> {
    let call = json!({"model": "m", "message": {"role": "assistant", "content": "Listing.",
        "tool_calls": [{"function": {"name": "bash", "arguments": {"command": "ls"}}}]}, "done": false});
    let say = |t: &str| {
        json!({"model": "m", "message": {"role": "assistant", "content": t}, "done": false})
            .to_string()
    };
    vec![
        Script {
            lines: vec![call.to_string(), final_line(120, 0)],
            gate: Some(true),
        },
        Script {
            lines: vec![say("Done."), final_line(160, 118)],
            gate: Some(false),
        },
        Script {
            lines: vec![say("half"), final_line(1, 1)],
            gate: None,
        },
    ]
}

fn tools() -> serde_json::Value {
    json!([{"type": "function", "function": {"name": "bash", "parameters": {}}},
        {"type": "function", "function": {"name": "write_file", "parameters": {}}}])
}

/// The three requests share one proxy and one backend script, and the crash must come after the
/// two complete records, so they run in order in one test.
#[test]
fn record_only_proxy_writes_the_conversation_and_survives_a_crash() {
    let (go_tx, go_rx) = mpsc::channel();
    let (up, seen, gate_timed_out) = backend(scripts(), go_rx);
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("proxy.jsonl");
    let (mut child, url) = start_proxy(&up, &log);
    let history = vec![
        json!({"role": "system", "content": "rules"}),
        json!({"role": "user", "content": "list the files"}),
    ];
    a_stream_is_relayed_unbuffered_and_forwarded_untouched(
        &url,
        &history,
        go_tx,
        &seen,
        &gate_timed_out,
    );
    let h2 = a_tool_result_gets_a_plain_answer(&url, &history);
    // The third request hangs mid-stream and the proxy is killed: the two complete records stay.
    common::complete_records(&log, 2, Duration::from_secs(10));
    kill_the_proxy_mid_request(&mut child, &url, &h2, &seen);
    the_two_complete_records_hold_the_conversation(&log);
}

/// The first request, streamed, with an odd but valid body: relayed line by line and
/// forwarded byte for byte.
fn a_stream_is_relayed_unbuffered_and_forwarded_untouched(
    url: &str,
    history: &[serde_json::Value],
    go_tx: mpsc::Sender<()>,
    seen: &Seen,
    gate_timed_out: &Mutex<bool>,
) {
    // An odd but valid body: a proxy that re-serialised it would change these bytes.
    let body1 = format!(
        "{{ \"model\":\"m\",\"options\":{{\"temperature\":0.7}},\"think\":true,\"tools\":{},\"messages\":{} }}",
        tools(),
        json!(history)
    );
    let resp = ureq::post(&format!("{url}/api/chat"))
        .set("content-type", "application/json")
        .send_string(&body1)
        .unwrap();
    let mut r = BufReader::new(resp.into_reader());
    let mut first = String::new();
    r.read_line(&mut first).unwrap();
    assert!(first.contains("Listing."), "{first}");
    // the backend holds its last line until the client has the first: nothing is buffered
    go_tx.send(()).unwrap();
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("\"done\":true"));
    assert!(
        !*gate_timed_out.lock().unwrap(),
        "the first line reached the client only after the backend gave up: buffered"
    );
    assert_eq!(
        seen.lock().unwrap()[0],
        body1.as_bytes(),
        "forwarded untouched"
    );
}

/// The second request (not streamed) carries the echoed call and its tool result. The history
/// it sent.
fn a_tool_result_gets_a_plain_answer(
    url: &str,
    history: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let mut h2 = history.to_vec();
    h2.push(json!({"role": "assistant", "content": "Listing.",
        "tool_calls": [{"function": {"name": "bash", "arguments": {"command": "ls"}}}]}));
    h2.push(json!({"role": "tool", "tool_name": "bash", "content": "a.txt\nb.txt"}));
    let reply: String = ureq::post(&format!("{url}/api/chat"))
        .send_json(json!({"model": "m", "stream": false, "tools": tools(), "messages": h2}))
        .unwrap()
        .into_string()
        .unwrap();
    assert!(reply.contains("Done."));
    h2
}

/// Sends a third request, waits until the backend has it (it hangs after its first line) and
/// kills the proxy with SIGKILL.
fn kill_the_proxy_mid_request(
    child: &mut std::process::Child,
    url: &str,
    h2: &[serde_json::Value],
    seen: &Seen,
) {
    let url3 = url.to_string();
    let h3 = {
        let mut h = h2.to_vec();
        h.push(json!({"role": "assistant", "content": "Done."}));
        h.push(json!({"role": "user", "content": "and now?"}));
        h
    };
    let pending = std::thread::spawn(move || {
        if let Ok(r) = ureq::post(&format!("{url3}/api/chat"))
            .timeout(Duration::from_secs(20))
            .send_json(json!({"model": "m", "messages": h3}))
        {
            let _ = r.into_string();
        }
    });
    let t = Instant::now();
    while seen.lock().unwrap().len() < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "third request never arrived"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signalling the proxy process this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let _ = child.wait();
    let _ = pending.join();
}

/// The trajectory file: two records, the first with the whole conversation so far, the
/// second with only what is new.
fn the_two_complete_records_hold_the_conversation(log: &std::path::Path) {
    let t = TrajectoryEntry::load(log).unwrap();
    assert_eq!(t.len(), 2, "{t:#?}");
    let (a, b) = (&t[0], &t[1]);
    assert_eq!(a.schema_version, TrajectoryEntry::SCHEMA_VERSION);
    assert_eq!(
        (a.path.as_str(), a.model.as_str(), a.status),
        ("/api/chat", "m", 200)
    );
    assert!(a.stream && !b.stream && !a.rewritten_to_native);
    assert_eq!(a.tools, vec!["bash", "write_file"]);
    assert_eq!(a.prefix_messages, 0);
    assert_eq!(a.messages.len(), 2);
    assert_eq!(a.messages[1].content, "list the files");
    let ra = a.reply.as_ref().unwrap();
    assert_eq!(ra.content, "Listing.");
    assert_eq!(ra.tool_calls[0].name, "bash");
    assert_eq!(ra.tool_calls[0].arguments, json!({"command": "ls"}));
    assert_eq!((a.prompt_tokens, a.completion_tokens), (Some(120), Some(4)));
    assert_eq!(
        (a.cached_prompt_tokens, a.uncached_prompt_tokens),
        (Some(0), Some(120))
    );
    assert_eq!(a.prompt_eval_duration_ns, Some(1000));
    assert_eq!(a.total_duration_ns, Some(4000));
    assert!(a.time_ms.is_some() && a.elapsed_ms.is_some());
    // the second line holds only what is new: the echoed call and the tool result
    assert_eq!(b.prefix_messages, 2);
    assert_eq!(b.messages.len(), 2);
    assert_eq!(b.messages[1].role, "tool");
    assert_eq!(b.messages[1].tool_name.as_deref(), Some("bash"));
    assert_eq!(b.messages[1].content, "a.txt\nb.txt");
    assert_eq!(
        (b.cached_prompt_tokens, b.uncached_prompt_tokens),
        (Some(118), Some(42))
    );
    assert_eq!(TrajectoryEntry::requests(&t)[1].len(), 4);
}

#[test]
fn failed_and_unreachable_requests_are_recorded_with_their_error() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("proxy.jsonl");
    // nothing listens there
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let (mut child, url) = start_proxy(&dead, &log);
    let e = ureq::post(&format!("{url}/v1/chat/completions"))
        .send_json(json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}));
    let Err(ureq::Error::Status(502, r)) = e else {
        panic!("{e:?}")
    };
    assert!(r.into_string().unwrap().contains("upstream"));
    // the record follows the answer
    common::complete_records(&log, 1, Duration::from_secs(10));
    let _ = child.kill();
    let _ = child.wait();
    let t = TrajectoryEntry::load(&log).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].status, 502);
    assert!(
        t[0].error.as_deref().unwrap_or("").contains("upstream"),
        "{t:?}"
    );
    assert!(t[0].reply.is_none() && !t[0].is_turn());
    assert_eq!(t[0].messages[0].content, "hi");
}
