//! `lrab bench prefill` end to end over real HTTP: against the simulator (the curve, its
//! labels, the published column layout, byte-identical reruns), and against a small Ollama-API
//! server written here that refuses large prompts (a context error per point) or dies after a
//! number of answers (the points measured before are kept, the exit is non-zero).

mod common;
#[path = "common/openai_fake.rs"]
mod openai_fake;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;

use common::{lrab, text};

const PUBLISHED_HEADER: &str = "model,tool_count,n_runs,median_s,iqr_s,min_s,median_prompt_ms,median_prompt_tokens,wall_s_med,anchor,source_file,note";

fn bench(url: &str, model: &str, points: &str, runs: &str, out: &Path) -> std::process::Output {
    lrab()
        .args([
            "bench",
            "prefill",
            "--backend",
            url,
            "--model",
            model,
            "--points",
            points,
        ])
        .args(["--runs", runs, "--backend-wait-secs", "5", "--out"])
        .arg(out)
        .output()
        .unwrap()
}

fn rows(out: &Path) -> (String, Vec<Vec<String>>) {
    let csv = std::fs::read_to_string(out.join("prefill.csv")).unwrap();
    let header = csv.lines().next().unwrap().to_string();
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

#[test]
fn header_is_the_published_one_plus_cache_and_timing() {
    let published = lrab_data::file("mingbird/cost_curve_data_2609.csv").unwrap();
    let published = std::fs::read_to_string(published).unwrap();
    assert_eq!(published.lines().next().unwrap(), PUBLISHED_HEADER);
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = bench(&sim.url(), "sim-2b", "0", "1", dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let (header, _) = rows(dir.path());
    assert_eq!(
        header,
        format!("{PUBLISHED_HEADER},cache,timing_source,median_cached_tokens")
    );
}

#[test]
fn simulator_curve_end_to_end_labelled_and_deterministic() {
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let o = bench(&sim.url(), "sim-2b", "0,4,16,64", "2", &a);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let (_, r) = rows(&a);
    assert_eq!(r.len(), 8, "{r:?}");
    let ms = |row: &Vec<String>| row[6].parse::<f64>().unwrap();
    let tokens = |row: &Vec<String>| row[7].parse::<u64>().unwrap();
    for (i, n) in ["0", "4", "16", "64"].iter().enumerate() {
        let (cold, warm) = (&r[2 * i], &r[2 * i + 1]);
        assert_eq!((cold[1].as_str(), cold[12].as_str()), (*n, "cold"));
        assert_eq!((warm[1].as_str(), warm[12].as_str()), (*n, "warm"));
        assert_eq!(cold[2], "2");
        assert_eq!(cold[13], "server_prompt_eval_duration");
        assert!(cold[11].contains("SIMULATED"), "{cold:?}");
        // warm: all but the last prompt token is cached (the server evaluates the last one
        // again, as llama.cpp does) and it prefills faster than cold
        assert_eq!(
            tokens(warm) - 1,
            warm[14].parse::<u64>().unwrap(),
            "{warm:?}"
        );
        assert!(ms(warm) < ms(cold), "{warm:?} vs {cold:?}");
    }
    // more tools, more tokens, more time
    for i in 1..4 {
        assert!(tokens(&r[2 * i]) > tokens(&r[2 * i - 2]));
        assert!(ms(&r[2 * i]) > ms(&r[2 * i - 2]));
    }
    let summary = std::fs::read_to_string(a.join("summary.md")).unwrap();
    assert!(summary.contains("SIMULATED"), "{summary}");
    assert!(summary.contains("this run (sim-2b): slope **"), "{summary}");
    assert!(
        summary.contains("Against the published gemma4:e2b curve"),
        "{summary}"
    );
    let svg = std::fs::read_to_string(a.join("prefill.svg")).unwrap();
    assert!(svg.contains("published gemma4:e2b") && svg.contains("sim-2b cold"));
    // `--backend sim` (a fresh in-process simulator each time): same inputs, same bytes (the
    // nonces differ, their length does not; the wall column is the modelled time)
    let read = |d: &Path| std::fs::read_to_string(d.join("prefill.csv")).unwrap();
    let runs: Vec<String> = ["b", "c"]
        .iter()
        .map(|n| {
            let d = dir.path().join(n);
            let o = bench("sim", "sim-2b", "0,16", "1", &d);
            assert!(o.status.success(), "{}", text(&o));
            read(&d)
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    assert!(runs[0].contains("lrab bench prefill (sim)"), "{}", runs[0]);
}

/// A minimal Ollama-API server: answers `chats` chat requests (prompt tokens = body bytes / 4,
/// 0.5 ms each), refusing with HTTP 400 any body longer than `max_body`, then stops listening.
fn fake_ollama(chats: usize, max_body: usize) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut served = 0;
        for c in l.incoming().flatten() {
            if let Some(chat) = serve(c, max_body) {
                served += chat as usize;
                if served >= chats {
                    return; // the listener is dropped: the backend is gone
                }
            }
        }
    });
    url
}

fn serve(mut c: TcpStream, max_body: usize) -> Option<bool> {
    let req = lrab_util::read_http_request(&c).ok()?;
    let (path, len) = (req.path, req.body.len());
    let (status, answer, chat) = match path.as_str() {
        "/api/tags" => (
            200,
            r#"{"models":[{"name":"tiny:1b","model":"tiny:1b"}]}"#.to_string(),
            false,
        ),
        "/api/version" => (200, r#"{"version":"0.9.0"}"#.to_string(), false),
        "/api/chat" if len > max_body => (
            400,
            r#"{"error":"the input length exceeds the context length"}"#.to_string(),
            true,
        ),
        "/api/chat" => {
            let n = len / 4;
            let a = serde_json::json!({"model":"tiny:1b","created_at":"2026-01-01T00:00:00Z",
                "message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"length",
                "prompt_eval_count": n, "prompt_eval_duration": n * 500_000});
            (200, format!("{a}\n"), true)
        }
        _ => (404, r#"{"error":"not found"}"#.to_string(), false),
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        answer.len()
    );
    c.write_all(head.as_bytes()).ok()?;
    c.write_all(answer.as_bytes()).ok()?;
    Some(chat)
}

#[test]
fn a_point_the_context_refuses_is_recorded_not_measured() {
    let url = fake_ollama(usize::MAX, 6000);
    let dir = tempfile::tempdir().unwrap();
    let o = bench(&url, "tiny:1b", "0,4,64", "1", dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let (_, r) = rows(dir.path());
    assert_eq!(r.len(), 6, "{r:?}");
    assert_eq!(r[0][2], "1");
    assert_eq!(r[0][13], "server_prompt_eval_duration");
    assert!(
        r[0][11].is_empty(),
        "a real backend is not labelled simulated: {:?}",
        r[0]
    );
    for row in &r[4..] {
        assert_eq!(
            (row[1].as_str(), row[2].as_str(), row[6].as_str()),
            ("64", "0", "")
        );
        assert!(
            row[11].contains("not measured") && row[11].contains("exceeds the context"),
            "{row:?}"
        );
    }
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("this run (tiny:1b): slope **0.5000 ms/token**"),
        "{summary}"
    );
}

#[test]
fn a_backend_that_dies_mid_way_keeps_its_points_and_fails() {
    // 5 chats: 0 tools cold+warm, 4 tools cold+warm, 8 tools cold; then the server is gone
    let url = fake_ollama(5, usize::MAX);
    let dir = tempfile::tempdir().unwrap();
    let o = bench(&url, "tiny:1b", "0,4,8,16", "1", dir.path());
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("backend failed at 8 tools"), "{out}");
    assert!(
        out.contains("rows measured before the failure are in"),
        "{out}"
    );
    let (_, r) = rows(dir.path());
    let kept: Vec<(&str, &str, &str)> = r
        .iter()
        .map(|x| (x[1].as_str(), x[12].as_str(), x[2].as_str()))
        .collect();
    assert_eq!(
        kept,
        [
            ("0", "cold", "1"),
            ("0", "warm", "1"),
            ("4", "cold", "1"),
            ("4", "warm", "1"),
            ("8", "cold", "1")
        ]
    );
    assert!(r[4][11].contains("backend failed"), "{:?}", r[4]);
    assert!(dir.path().join("summary.md").is_file());
}

#[test]
fn an_openai_backend_is_timed_by_wall_time_to_first_byte() {
    let fake = openai_fake::start(
        None,
        &["tiny-oa"],
        openai_fake::Fault::None,
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let o = bench(&fake.url, "tiny-oa", "0,4", "1", dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let (_, r) = rows(dir.path());
    assert_eq!(r.len(), 4, "{r:?}");
    for row in &r {
        // usage.prompt_tokens and prompt_tokens_details.cached_tokens of the fake (2 messages)
        assert_eq!(
            (row[7].as_str(), row[14].as_str()),
            ("120", "20"),
            "{row:?}"
        );
        assert_eq!(row[13], "wall_time_to_first_byte");
        assert!(row[6].parse::<f64>().unwrap() > 0.0);
    }
    // the 4 tools reached the server through the translating proxy
    let seen = fake.seen.lock().unwrap();
    assert!(seen
        .iter()
        .any(|b| b["tools"].as_array().is_some_and(|t| t.len() == 4)));
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("Timing: wall_time_to_first_byte"),
        "{summary}"
    );
}
