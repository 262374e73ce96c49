//! The optional web tools through the real agent loop, against a fake SearxNG-style endpoint
//! and HTML page served by a std TcpListener on 127.0.0.1:0.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::mechanisms::prefill;
use lrab_harness::{Agent, Reply};
use serde_json::json;
use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASK: &str = "Research the history of the teapot using web sources and write notes.md.";

/// A tiny server: `/search?q=…` → SearxNG JSON, `/page` → HTML, `/hop` → redirect to another
/// loopback port. Stops when the guard drops (and after 60 s at most).
struct Server {
    base: String,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve() -> Server {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    l.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let b2 = base.clone();
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !s2.load(Ordering::SeqCst) && Instant::now() < deadline {
            let Ok((mut sock, _)) = l.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            sock.set_nonblocking(false).unwrap();
            let Ok(req) = lrab_util::read_http_request(&sock) else {
                continue;
            };
            let path = req.path;
            let (status, ctype, body, extra) = if path
                .starts_with("/search?q=teapot+history&format=json")
            {
                let j = json!({"results": [
                    {"title": "Teapot history", "url": format!("{b2}/page"), "content": "Teapots came from China."},
                    {"title": "Second", "url": "https://example.org/t", "content": "More."}
                ]});
                ("200 OK", "application/json", j.to_string(), String::new())
            } else if path == "/page" {
                ("200 OK", "text/html", "<html><head><title>Teapots</title><style>b{x:y}</style><script>alert('no')</script></head><body><h1>The teapot</h1><p>First brewed   in the   Yuan dynasty &amp; later.</p></body></html>".to_string(), String::new())
            } else if path == "/hop" {
                (
                    "302 Found",
                    "text/plain",
                    String::new(),
                    "Location: http://127.0.0.1:9/\r\n".to_string(),
                )
            } else {
                (
                    "404 Not Found",
                    "text/plain",
                    "nope".to_string(),
                    String::new(),
                )
            };
            let _ = write!(
                sock,
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Server { base, stop }
}

fn web_agent(
    dir: &std::path::Path,
    web: Option<&str>,
    replies: Vec<Reply>,
) -> Agent<ScriptedModel> {
    let mut c = config(dir, TASK);
    c.web_search = web.map(str::to_string);
    let mut a = Agent::new(c, ScriptedModel::replies(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

/// The text of the tool result answering call `i` (seen by the model on call `i + 1`).
fn result_of(a: &Agent<ScriptedModel>, i: usize) -> String {
    seen_text(a, i + 1)
}

#[test]
fn search_and_fetch_work_and_unsafe_targets_are_refused() {
    let srv = serve();
    let d = tempfile::tempdir().unwrap();
    let endpoint = format!("{}/search", srv.base);
    let mut a = web_agent(
        d.path(),
        Some(&endpoint),
        vec![
            Reply::call(
                "web_search",
                json!({"query": "teapot history", "max_results": 1}),
            ),
            Reply::call("web_fetch", json!({"url": format!("{}/page", srv.base)})),
            Reply::call("web_fetch", json!({"url": "http://127.0.0.1:9/admin"})),
            Reply::call("web_fetch", json!({"url": "file:///etc/passwd"})),
            Reply::call("web_fetch", json!({"url": format!("{}/hop", srv.base)})),
            Reply::call(
                "web_search",
                json!({"query": "teapot history", "max_results": 1}),
            ),
            Reply::call(
                "web_search",
                json!({"query": "teapot history", "max_results": 1}),
            ),
            Reply::text("stop"),
        ],
    );
    a.run();
    // offered: the task asks for research, so the routed set includes the web tools
    let offered = &a.model.seen[0].tool_names;
    assert!(
        offered.contains(&"web_search".to_string()) && offered.contains(&"web_fetch".to_string())
    );
    let r = result_of(&a, 0);
    assert!(
        r.contains("Teapot history")
            && r.contains("/page")
            && r.contains("Teapots came from China."),
        "{r}"
    );
    assert!(!r.contains("example.org"), "max_results=1 is honoured: {r}");
    let r = result_of(&a, 1);
    assert!(
        r.contains("The teapot\nFirst brewed in the Yuan dynasty & later."),
        "{r}"
    );
    assert!(
        !r.contains("alert") && !r.contains("x:y") && !r.contains("<p>"),
        "{r}"
    );
    assert!(r.contains("characters of text"), "{r}");
    let r = result_of(&a, 2);
    assert!(
        r.contains("refused")
            && r.contains("private or loopback")
            && r.contains("web_search results"),
        "{r}"
    );
    let r = result_of(&a, 3);
    assert!(r.contains("not allowed") && r.contains("read_file"), "{r}");
    // a redirect from the trusted endpoint to another local port is checked again and refused
    let r = result_of(&a, 4);
    assert!(r.contains("refused"), "{r}");
    // the repeated identical search is caught by the anti-loop mechanism
    assert!(result_of(&a, 5).contains("Teapot history"));
    let r = result_of(&a, 6);
    assert!(r.contains("not executed"), "{r}");
    let ev = events(d.path());
    let names: Vec<&str> = ev
        .iter()
        .filter(|e| e["kind"] == "tool_call")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        &names[..5],
        &[
            "web_search",
            "web_fetch",
            "web_fetch",
            "web_fetch",
            "web_fetch"
        ]
    );
    assert_eq!(mech_count(d.path(), "anti_loop", "intercept"), 1);
}

#[test]
fn without_the_flag_the_tools_do_not_exist_and_prefill_is_unchanged() {
    let before = prefill::static_prefill();
    let d = tempfile::tempdir().unwrap();
    let mut a = web_agent(
        d.path(),
        None,
        vec![Reply::call("web_search", json!({"query": "teapot"}))],
    );
    a.run();
    for s in &a.model.seen {
        assert!(
            !s.tool_names.iter().any(|n| n.starts_with("web_")),
            "{:?}",
            s.tool_names
        );
    }
    let r = result_of(&a, 0);
    assert!(r.contains("unknown tool 'web_search'"), "{r}");
    assert_eq!(prefill::static_prefill(), before);
    // on, but a task that does not call for the web: not routed
    let srv = serve();
    let d = tempfile::tempdir().unwrap();
    let mut c = config(d.path(), "Fix the bugs in inventory.py so the tests pass");
    c.web_search = Some(format!("{}/search", srv.base));
    let mut a = Agent::new(c, ScriptedModel::replies(vec![Reply::text("hm")])).unwrap();
    a.sleeper = Box::new(|_| {});
    a.run();
    assert!(!a.model.seen[0]
        .tool_names
        .iter()
        .any(|n| n.starts_with("web_")));
    assert_eq!(prefill::static_prefill(), before);
}
