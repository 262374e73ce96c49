//! The `archive` install kind (how goose is installed) against a local HTTP server made here,
//! serving a small tar.gz made here: the archive is downloaded, checked against its pinned
//! sha256 before anything of it is unpacked, its program found in the arms cache and its
//! version checked. An archive whose sha256 differs is refused naming the arm, the archive and
//! the digest expected; an arm file without a digest is refused too; nothing is unpacked then.

mod common;

use common::{lrab, text};

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `tool-<version>.tar.gz` holding `tool/bin/tool`, which prints `tool <version>`.
fn archive(dir: &Path, version: &str) -> PathBuf {
    let src = dir.join(format!("src-{version}"));
    std::fs::create_dir_all(src.join("tool/bin")).unwrap();
    let bin = src.join("tool/bin/tool");
    std::fs::write(&bin, format!("#!/bin/sh\necho 'tool {version}'\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.join(format!("tool-{version}.tar.gz"));
    let o = Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&src)
        .arg("tool")
        .output()
        .unwrap();
    assert!(o.status.success(), "tar: {}", text(&o));
    out
}

/// Serves the files of `dir` by name until the test ends (404 for anything else).
fn serve(dir: PathBuf) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let Ok(req) = lrab_util::read_http_request(&s) else {
                continue;
            };
            let name = req.path.trim_start_matches('/').to_string();
            let body = std::fs::read(dir.join(&name))
                .ok()
                .filter(|_| !name.contains('/'));
            let (status, body) = match body {
                Some(b) => ("200 OK", b),
                None => ("404 Not Found", b"not found".to_vec()),
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(&body);
        }
    });
    base
}

fn arm_file(arms: &Path, name: &str, url: &str, sha256: Option<&str>) {
    let digest = sha256
        .map(|d| format!("sha256 = \"{d}\"\n"))
        .unwrap_or_default();
    std::fs::write(
        arms.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\nprogram = \"tool\"\nargs = [\"{{prompt}}\"]\napi = \"openai\"\n\n[install]\nkind = \"archive\"\npackage = \"{name}\"\nversion = \"2.0.0\"\nurl = \"{url}\"\n{digest}bin = \"tool/bin/tool\"\n"
        ),
    )
    .unwrap();
}

#[test]
fn archive_install_checks_the_digest_before_unpacking() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let (arms, cache, files) = (root.join("arms"), root.join("cache"), root.join("files"));
    for p in [&arms, &files] {
        std::fs::create_dir_all(p).unwrap();
    }
    let good = archive(&files, "2.0.0");
    let digest = lrab_util::sha256_hex(&std::fs::read(&good).unwrap());
    let base = serve(files.clone());
    let url = format!("{base}/tool-2.0.0.tar.gz");
    let run = |args: &[&str]| {
        lrab()
            .args(args)
            .arg("--arms-dir")
            .arg(&arms)
            .env("LRAB_ARMS_CACHE", &cache)
            .output()
            .unwrap()
    };
    arm_file(&arms, "tool", &url, Some(&digest));
    let o = run(&["arms", "install", "tool"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("download ")
            && t.contains("check the archive's sha256")
            && t.contains("installed tool 2.0.0 (tool-2.0.0.tar.gz)"),
        "{t}"
    );
    let o = run(&["arms", "check", "tool"]);
    assert!(
        o.status.success() && text(&o).contains("tool 2.0.0 (pinned 2.0.0)"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains(
        &*cache
            .join("archive/tool@2.0.0/tool/bin/tool")
            .to_string_lossy()
    ));
    let o = run(&["arms", "install", "tool"]);
    assert!(
        o.status.success() && text(&o).contains("already installed"),
        "{}",
        text(&o)
    );

    // another archive behind the same URL: refused before it is unpacked
    let other = archive(&files, "2.0.1");
    let wrong = lrab_util::sha256_hex(&std::fs::read(&other).unwrap());
    std::fs::rename(&other, files.join("tool-2.0.1-swapped.tar.gz")).unwrap();
    arm_file(
        &arms,
        "swapped",
        &format!("{base}/tool-2.0.1-swapped.tar.gz"),
        Some(&digest),
    );
    let o = run(&["arms", "install", "swapped"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("failed   swapped")
            && t.contains("step 'check the archive's sha256'")
            && t.contains(&format!(
                "arm swapped: install.sha256: tool-2.0.1-swapped.tar.gz from {base}/tool-2.0.1-swapped.tar.gz has sha256 {wrong}, expected {digest} — refused"
            )),
        "{t}"
    );
    assert!(!cache.join("archive/swapped@2.0.0").exists(), "unpacked");
    let o = run(&["arms", "check", "swapped"]);
    assert!(
        o.status.code() == Some(1) && text(&o).contains("failed   swapped"),
        "{}",
        text(&o)
    );

    // no digest pinned: never installed unchecked
    arm_file(&arms, "nodigest", &url, None);
    let o = run(&["arms", "install", "nodigest"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("arm nodigest: install.sha256: missing")
            && t.contains("never installed unchecked"),
        "{t}"
    );
    // a URL that answers 404: the download step and curl's error
    arm_file(
        &arms,
        "gone",
        &format!("{base}/nothing.tar.gz"),
        Some(&digest),
    );
    let o = run(&["arms", "install", "gone"]);
    let t = text(&o);
    assert!(
        o.status.code() == Some(1) && t.contains("step 'download ") && t.contains("404"),
        "{t}"
    );
    // a digest that is no sha256: the arm files do not load, file and field named
    arm_file(&arms, "baddigest", &url, Some("abc123"));
    let o = run(&["arms", "check"]);
    let t = text(&o);
    assert!(
        !o.status.success()
            && t.contains("baddigest.toml: install.sha256: 'abc123' is not a sha256"),
        "{t}"
    );
}

/// The shipped goose arm installs from its release archive, pinned by digest; the real
/// download needs GitHub, which this machine cannot reach, so only the table is checked here.
#[test]
fn shipped_goose_is_an_archive_install_pinned_by_digest() {
    let t = std::fs::read_to_string(common::shipped_arms().join("goose.toml")).unwrap();
    let v: toml::Value = toml::from_str(&t).unwrap();
    let i = &v["install"];
    assert_eq!(i["kind"].as_str(), Some("archive"));
    assert_eq!(
        i["url"].as_str(),
        Some("https://github.com/aaif-goose/goose/releases/download/v1.48.0/goose-x86_64-unknown-linux-gnu.tar.gz")
    );
    assert_eq!(i["sha256"].as_str().map(str::len), Some(64));
    let o = lrab()
        .args(["arms", "check", "goose", "--arms-dir"])
        .arg(common::shipped_arms())
        .env_remove("GOOSE_BIN")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(
        o.status.code() == Some(1)
            && text(&o).contains("missing  goose")
            && text(&o).contains("lrab arms install goose"),
        "{}",
        text(&o)
    );
}
