//! `--backend ollama --ollama-serve --fresh-backend`: the runner starts its own `ollama serve`
//! (here a small python stand-in speaking `/api/tags`), restarts it before every cell, and
//! stops it at the end.

use std::process::Command;

#[test]
fn runner_managed_ollama_is_restarted_per_cell_and_stopped() {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("ollama");
    std::fs::write(
        &bin,
        r#"#!/usr/bin/env python3
import http.server, json, os, sys
assert sys.argv[1] == "serve"
host, port = os.environ["OLLAMA_HOST"].rsplit(":", 1)
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(f"{os.getpid()}\n")
class H(http.server.BaseHTTPRequestHandler):
    def reply(self):
        b = json.dumps({"models": [{"name": "fake:latest", "digest": "d1"}], "version": "0.0.0-fake"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    do_GET = reply
    do_POST = reply
    def log_message(self, *a):
        pass
http.server.HTTPServer((host, int(port)), H).serve_forever()
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    std::fs::write(
        arms.join("good.toml"),
        "name = \"good\"\nprogram = \"/bin/sh\"\nargs = [\"-c\", \"printf 'S001\\\\n' > shortlist.md\", \"{prompt_file}\"]\napi = \"ollama\"\n",
    )
    .unwrap();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = l.local_addr().unwrap().to_string();
    drop(l);
    let log = d.path().join("starts.log");
    let out = d.path().join("results");
    let o = Command::new(env!("CARGO_BIN_EXE_lrab"))
        .env_remove("LRAB_PACK")
        .env("OLLAMA_BIN", &bin)
        .env("OLLAMA_HOST", &host)
        .env("FAKE_LOG", &log)
        .args([
            "run",
            "--backend",
            "ollama",
            "--ollama-serve",
            "--fresh-backend",
            "--arms",
            "good",
        ])
        .args([
            "--models",
            "fake",
            "--tasks",
            "WF-01,WF-02",
            "--no-progress",
            "--run-id",
            "r",
        ])
        .args([
            "--quiet-poll-ms",
            "20",
            "--quiet-stable-ms",
            "100",
            "--backend-wait-secs",
            "20",
        ])
        .arg("--arms-dir")
        .arg(&arms)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let t = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("SIMULATED"), "{t}");
    let pids: Vec<i32> = std::fs::read_to_string(&log)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(
        pids.len(),
        3,
        "started once, restarted before each of 2 cells"
    );
    for p in pids {
        let alive = std::fs::read_to_string(format!("/proc/{p}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false);
        assert!(!alive, "ollama stand-in {p} left running");
    }
    let csv = std::fs::read_to_string(out.join("r/cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
    assert!(
        csv.lines().skip(1).all(|l| l.contains(",ollama,false,")),
        "{csv}"
    );
    let m = std::fs::read_to_string(out.join("r/manifest.json")).unwrap();
    assert!(m.contains("\"digest\": \"d1\""), "{m}");
}
