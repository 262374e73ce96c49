//! https backends (every hosted OpenAI-compatible API): a TLS server made here, with a private
//! CA and a certificate generated at test time (rcgen), in front of the fake OpenAI-only
//! server. Trusted through `$LRAB_CA_FILE`, `lrab run --backend https://…` detects it, runs a
//! real cell of our harness through the proxy's TLS client and records it; `lrab proxy
//! --upstream https://…` relays whole and streamed answers. Untrusted, the run stops before the
//! first cell and the proxy answers 502, each naming the backend and the variable, never the
//! key.

mod common;
#[path = "common/openai_fake.rs"]
mod openai_fake;

use common::{lrab, text};
use openai_fake::Fault;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const KEY: &str = "sk-lrab-https-5e6f7a8b9c0d1e2f";

/// A TLS front for `upstream` (`http://addr`): its `https://127.0.0.1:PORT` URL, the PEM file
/// of the CA that signed its certificate, and how many TLS sessions it has accepted.
struct Front {
    url: String,
    ca: PathBuf,
    sessions: Arc<AtomicUsize>,
    _dir: tempfile::TempDir,
}

fn tls_front(upstream: &str) -> Front {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "lrab test CA");
    let ca = ca.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(leaf.der().to_vec())], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let url = format!("https://{}", l.local_addr().unwrap());
    let target = upstream.trim_start_matches("http://").to_string();
    let sessions = Arc::new(AtomicUsize::new(0));
    let counted = sessions.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(l).unwrap();
            while let Ok((s, _)) = l.accept().await {
                let (acceptor, target, counted) =
                    (acceptor.clone(), target.clone(), counted.clone());
                tokio::spawn(async move {
                    // a client that does not trust us hangs up in the handshake
                    let Ok(mut tls) = acceptor.accept(s).await else {
                        return;
                    };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let mut up = tokio::net::TcpStream::connect(&target).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                });
            }
        });
    });
    Front {
        url,
        ca: ca_file,
        sessions,
        _dir: dir,
    }
}

/// Files under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            std::fs::read(e.path())
                .map(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
                .unwrap_or(false)
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

/// `lrab run` of our harness on WF-01 against `url`, with `ca` (or no CA file) trusted.
fn run(url: &str, ca: Option<&Path>, out: &Path) -> std::process::Output {
    let mut cmd = common::harness_cell(url, "tls", out, KEY);
    cmd.args(["--backend-api", "openai", "--backend-wait-secs", "1"])
        .env_remove("SSL_CERT_FILE");
    match ca {
        Some(ca) => cmd.env("LRAB_CA_FILE", ca),
        None => cmd.env_remove("LRAB_CA_FILE"),
    };
    cmd.output().unwrap()
}

#[test]
fn a_cell_runs_on_an_https_backend_trusted_through_the_ca_file() {
    let fake = openai_fake::start(Some(KEY), &["fake-coder"], Fault::None, Duration::ZERO);
    let front = tls_front(&fake.url);
    let d = tempfile::tempdir().unwrap();
    let o = run(&front.url, Some(&front.ca), d.path());
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let run = d.path().join("tls");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["backends"][0]["kind"], "openai", "{m}");
    assert_eq!(m["backends"][0]["url"], front.url.as_str());
    let cells = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let rows = common::csv_lines(&cells);
    assert_eq!(rows.len(), 2, "{cells}");
    assert_eq!(rows[1][common::col("backend")], front.url);
    // the model's turns went through TLS and were recorded from the wire
    let dir = run.join(&rows[1][common::col("attempt_dir")]);
    let t = lrab_records::read_trajectory(&dir.join("proxy.jsonl")).unwrap();
    assert!(t.len() >= 2, "{t:?}");
    let first = t[0].reply.as_ref().expect("a reply");
    assert_eq!(first.tool_calls[0].name, "write_file", "{t:?}");
    assert!(fake.seen.lock().unwrap().len() >= 2);
    // detection (GET /v1/models) and every chat request each came over a TLS session
    assert!(front.sessions.load(Ordering::SeqCst) >= 3);
    assert!(
        files_containing(&run, KEY).is_empty(),
        "{:?}",
        files_containing(&run, KEY)
    );
    assert!(!out.contains(KEY), "{out}");
}

#[test]
fn an_untrusted_certificate_stops_the_run_naming_the_backend() {
    let fake = openai_fake::start(Some(KEY), &["fake-coder"], Fault::None, Duration::ZERO);
    let front = tls_front(&fake.url);
    let d = tempfile::tempdir().unwrap();
    let o = run(&front.url, None, d.path());
    let e = text(&o);
    assert!(!o.status.success(), "{e}");
    assert!(!d.path().join("tls/cells.csv").exists(), "{e}");
    assert!(
        e.contains(&format!("TLS with {}", front.url))
            && e.contains("certificate")
            && e.contains("$LRAB_CA_FILE"),
        "{e}"
    );
    assert!(
        !e.contains(KEY) && !e.contains("sk-lrab") && !e.contains("Bearer"),
        "{e}"
    );
    assert!(fake.seen.lock().unwrap().is_empty());
    // `lrab doctor` looks the same way: refused untrusted, detected trusted
    for (ca, want) in [
        (None, "TLS with"),
        (Some(front.ca.as_path()), "answers the OpenAI API"),
    ] {
        let mut cmd = lrab();
        cmd.args([
            "doctor",
            "--backend-url",
            &front.url,
            "--models",
            "fake-coder",
        ])
        .arg("--arms-dir")
        .arg(d.path())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("SSL_CERT_FILE");
        match ca {
            Some(ca) => cmd.env("LRAB_CA_FILE", ca),
            None => cmd.env_remove("LRAB_CA_FILE"),
        };
        let out = text(&cmd.output().unwrap());
        let line = out.lines().find(|l| l.contains("backend")).unwrap_or("");
        assert!(line.contains(want) && !out.contains(KEY), "{out}");
    }
    // a CA file that holds no certificate is named, with its variable
    let bad = d.path().join("bad.pem");
    std::fs::write(&bad, "no certificate here\n").unwrap();
    let e = text(&run(&front.url, Some(&bad), &d.path().join("b")));
    assert!(e.contains("$LRAB_CA_FILE") && e.contains("bad.pem"), "{e}");
}

/// `lrab proxy --upstream <https url> --upstream-api openai`, trusting `ca` (or nothing).
fn proxy(upstream: &str, ca: Option<&Path>, log: &Path) -> (std::process::Child, String) {
    let mut c = common::proxy_command(upstream, log);
    c.args(["--upstream-api", "openai"])
        .env("OPENAI_API_KEY", KEY)
        .env_remove("SSL_CERT_FILE");
    match ca {
        Some(ca) => c.env("LRAB_CA_FILE", ca),
        None => c.env_remove("LRAB_CA_FILE"),
    };
    common::listening(c)
}

/// POSTs a native chat request to the proxy: the status and the answer's body lines.
fn native_chat(url: &str, stream: bool) -> (u16, Vec<String>) {
    let body = serde_json::json!({"model": "fake-coder", "stream": stream,
        "messages": [{"role": "user", "content": "say something"}]})
    .to_string();
    let mut c = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    write!(c, "POST /api/chat HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut r = BufReader::new(c);
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut chunked = false;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap() == 0 || h.trim().is_empty() {
            break;
        }
        chunked |= h.to_ascii_lowercase().contains("chunked");
    }
    let mut lines = Vec::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            break;
        }
        let l = l.trim();
        if l.is_empty() || (chunked && u64::from_str_radix(l, 16).is_ok()) {
            continue;
        }
        lines.push(l.to_string());
    }
    (code, lines)
}

#[test]
fn the_proxy_relays_whole_and_streamed_answers_over_tls() {
    let fake = openai_fake::start(Some(KEY), &["fake-coder"], Fault::None, Duration::ZERO);
    let front = tls_front(&fake.url);
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("proxy.jsonl");
    let (mut p, url) = proxy(&front.url, Some(&front.ca), &log);
    for stream in [true, false] {
        let (code, lines) = native_chat(&url, stream);
        assert_eq!(code, 200, "{lines:?}");
        let objs: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let words: String = objs
            .iter()
            .filter_map(|o| o["message"]["content"].as_str())
            .collect();
        assert_eq!(words, "All done.", "{lines:?}");
        assert_eq!(objs.last().unwrap()["done"], true);
        assert_eq!(objs.len() > 1, stream, "{lines:?}");
    }
    // the recorder writes after the answer has gone: wait for both entries
    let t = std::time::Instant::now();
    while std::fs::read_to_string(&log).map_or(0, |l| l.lines().count()) < 2
        && t.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = p.kill();
    let _ = p.wait();
    let seen = fake.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0]["stream"].as_bool(), seen[1]["stream"].as_bool()),
        (Some(true), Some(false))
    );
    let t = lrab_records::read_trajectory(&log).unwrap();
    assert_eq!(t.len(), 2, "{t:?}");
    assert!(files_containing(d.path(), KEY).is_empty());
    // untrusted: the proxy refuses to start (it asks the backend what it is), naming it and
    // how to trust it, never the key
    let mut c = common::proxy_command(&front.url, &d.path().join("untrusted.jsonl"));
    c.args(["--upstream-api", "openai", "--listen", "127.0.0.1:0"])
        .env("OPENAI_API_KEY", KEY)
        .env_remove("SSL_CERT_FILE")
        .env_remove("LRAB_CA_FILE")
        .stderr(std::process::Stdio::piped());
    let mut p = c.spawn().unwrap();
    let t = std::time::Instant::now();
    while p.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = p.kill();
    let o = p.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains(&format!("TLS with {}/v1/models failed", front.url))
            && e.contains("UnknownIssuer")
            && e.contains("$LRAB_CA_FILE"),
        "{e}"
    );
    assert!(!e.contains(KEY) && !e.contains("Bearer"), "{e}");
    assert_eq!(fake.seen.lock().unwrap().len(), 2);
}
