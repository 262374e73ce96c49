//! `lrab arms install` and `lrab arms check` without the network: a tiny npm package served
//! by a local registry on 127.0.0.1 and a tiny wheel in a local folder (pip `--no-index`),
//! both built here. Installing is idempotent, the cache is found without PATH edits, and
//! `arms check` says which arm is missing, failed to install, or prints another version.

mod common;

use common::{lrab, text};

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shipped_arms() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../arms")
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Builds `fake-tool-<version>.tgz` with `npm pack`; its `fake-tool` program prints `printed`.
fn npm_tarball(dir: &Path, version: &str, printed: &str) -> (PathBuf, String) {
    let src = dir.join(format!("src-{version}"));
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::write(
        src.join("package.json"),
        format!(
            r#"{{"name": "fake-tool", "version": "{version}", "bin": {{"fake-tool": "bin/fake.js"}}}}"#
        ),
    )
    .unwrap();
    std::fs::write(
        src.join("bin/fake.js"),
        format!("#!/usr/bin/env node\nconsole.log('fake-tool {printed}');\n"),
    )
    .unwrap();
    let o = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(dir)
        .current_dir(&src)
        .env("npm_config_cache", dir.join("npm-cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "npm pack: {}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let integrity = j[0]["integrity"].as_str().unwrap().to_string();
    (dir.join(j[0]["filename"].as_str().unwrap()), integrity)
}

/// A registry that knows one package and its tarballs; answers until the test ends.
fn serve_registry(versions: Vec<(String, PathBuf, String)>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let b = base.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let Ok(req) = lrab_util::read_http_request(&s) else {
                continue;
            };
            let path = req.path;
            let (status, ctype, body): (&str, &str, Vec<u8>) = if path == "/fake-tool" {
                let mut vs = serde_json::Map::new();
                for (v, tgz, integrity) in &versions {
                    let name = tgz.file_name().unwrap().to_string_lossy();
                    vs.insert(
                        v.clone(),
                        serde_json::json!({
                            "name": "fake-tool", "version": v,
                            "bin": {"fake-tool": "bin/fake.js"},
                            "dist": {"tarball": format!("{b}/fake-tool/-/{name}"), "integrity": integrity}
                        }),
                    );
                }
                let doc = serde_json::json!({
                    "name": "fake-tool",
                    "dist-tags": {"latest": versions[0].0},
                    "versions": vs,
                });
                ("200 OK", "application/json", doc.to_string().into_bytes())
            } else if let Some((_, tgz, _)) = versions
                .iter()
                .find(|(_, t, _)| path.ends_with(&*t.file_name().unwrap().to_string_lossy()))
            {
                let mut buf = Vec::new();
                std::fs::File::open(tgz)
                    .unwrap()
                    .read_to_end(&mut buf)
                    .unwrap();
                ("200 OK", "application/octet-stream", buf)
            } else {
                ("404 Not Found", "application/json", b"{}".to_vec())
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(&body);
        }
    });
    base
}

/// Writes `fake_tool-<version>-py3-none-any.whl` into `dir`; its `fake-tool` prints `printed`.
fn wheel(dir: &Path, version: &str, printed: &str) {
    let script = r#"
import base64, hashlib, sys, zipfile
d, ver, printed = sys.argv[1:4]
files = {
    "fake_tool/__init__.py": "def main():\n    print('fake-tool %s')\n" % printed,
    "fake_tool-%s.dist-info/METADATA" % ver: "Metadata-Version: 2.1\nName: fake-tool\nVersion: %s\n" % ver,
    "fake_tool-%s.dist-info/WHEEL" % ver: "Wheel-Version: 1.0\nGenerator: lrab-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "fake_tool-%s.dist-info/entry_points.txt" % ver: "[console_scripts]\nfake-tool = fake_tool:main\n",
}
record = "fake_tool-%s.dist-info/RECORD" % ver
lines = []
with zipfile.ZipFile("%s/fake_tool-%s-py3-none-any.whl" % (d, ver), "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append("%s,sha256=%s,%d" % (name, h, len(data)))
    lines.append(record + ",,")
    z.writestr(record, "\n".join(lines) + "\n")
"#;
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir)
        .arg(version)
        .arg(printed)
        .output()
        .unwrap();
    assert!(o.status.success(), "wheel: {}", text(&o));
}

fn arm_file(dir: &Path, name: &str, install: &str) {
    std::fs::write(
        dir.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\nprogram = \"fake-tool\"\nargs = [\"{{prompt_file}}\"]\napi = \"ollama\"\n\n[install]\n{install}"
        ),
    )
    .unwrap();
}

struct Env {
    arms: tempfile::TempDir,
    cache: tempfile::TempDir,
    scratch: tempfile::TempDir,
    /// npm registry to use; None = a closed port, so nothing can be fetched.
    registry: Option<String>,
}

impl Env {
    fn new() -> Env {
        Env {
            arms: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            scratch: tempfile::tempdir().unwrap(),
            registry: None,
        }
    }

    fn lrab(&self, args: &[&str]) -> std::process::Output {
        let wheels = self.scratch.path().join("wheels");
        lrab()
            .args(args)
            .arg("--arms-dir")
            .arg(self.arms.path())
            .env("LRAB_ARMS_CACHE", self.cache.path())
            .env("npm_config_cache", self.scratch.path().join("npm-cache"))
            .env("npm_config_fetch_retries", "0")
            .env(
                "npm_config_registry",
                self.registry.as_deref().unwrap_or("http://127.0.0.1:9/"),
            )
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", &wheels)
            .env("PIP_CACHE_DIR", self.scratch.path().join("pip-cache"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .current_dir(self.scratch.path())
            .output()
            .unwrap()
    }
}

#[test]
fn shipped_arm_files_validate_with_their_install_tables() {
    let o = lrab()
        .args(["arms", "list", "--arms-dir"])
        .arg(shipped_arms())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // The cache is empty (see common::lrab): every registry arm is missing, and says how to
    // get it; the harness is found next to lrab or not, but never "failed".
    let o = lrab()
        .args(["arms", "check", "--arms-dir"])
        .arg(shipped_arms())
        .env("PATH", "/usr/bin:/bin")
        .env_remove("OPENCODE_BIN")
        .env_remove("AGENT_MINI_BIN")
        .output()
        .unwrap();
    let t = text(&o);
    for arm in [
        "codex",
        "aider",
        "qwen-code",
        "mini-swe-agent",
        "smolagents",
        "opencode",
        "agent-mini",
        "gptme",
        "cline",
    ] {
        let line = t
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(arm))
            .unwrap_or_else(|| panic!("{arm} not checked:\n{t}"));
        assert!(
            line.starts_with("missing") && line.contains(&format!("lrab arms install {arm}")),
            "{line}"
        );
    }
}

#[test]
fn npm_install_is_idempotent_found_without_path_and_checked() {
    if !have("npm") {
        eprintln!("skipped: npm is not installed");
        return;
    }
    let mut e = Env::new();
    let (t1, i1) = npm_tarball(e.scratch.path(), "1.0.0", "1.0.0");
    let (t2, i2) = npm_tarball(e.scratch.path(), "2.0.0", "1.9.9");
    let reg = Some(serve_registry(vec![
        ("1.0.0".into(), t1, i1),
        ("2.0.0".into(), t2, i2),
    ]));
    let install = |version: &str| {
        format!(
            "kind = \"npm\"\npackage = \"fake-tool\"\nversion = \"{version}\"\nbin = \"node_modules/.bin/fake-tool\"\n"
        )
    };
    arm_file(e.arms.path(), "fake", &install("1.0.0"));
    // Its program is nowhere yet: missing, with the command that fixes it.
    let o = e.lrab(&["arms", "check", "fake"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("missing  fake") && text(&o).contains("lrab arms install fake"),
        "{}",
        text(&o)
    );
    e.registry = reg.clone();
    let o = e.lrab(&["arms", "install", "fake"]);
    e.registry = None;
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("installed fake-tool@1.0.0"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("npm install fake-tool@1.0.0"),
        "progress: {}",
        text(&o)
    );
    // Second run: nothing to do, and no registry is needed for it.
    let o = e.lrab(&["arms", "install", "fake"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("already installed") && text(&o).contains("nothing to do"),
        "{}",
        text(&o)
    );
    // Found in the cache (PATH has no fake-tool) at the pinned version.
    let o = e.lrab(&["arms", "check", "fake"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("fake-tool 1.0.0 (pinned 1.0.0)"),
        "{}",
        text(&o)
    );
    // A package whose program prints another version than its pin fails at verification,
    // and `arms check` says so with the step and the log.
    arm_file(e.arms.path(), "fake", &install("2.0.0"));
    e.registry = reg;
    let o = e.lrab(&["arms", "install", "fake"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = e.lrab(&["arms", "check", "fake"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("failed   fake")
            && t.contains("verify the program and its version")
            && t.contains("printed 'fake-tool 1.9.9', not the pinned 2.0.0")
            && t.contains("log: "),
        "{t}"
    );
}

/// The phases build on one another (the venv installed first is reused, made stale and checked
/// again), so they share one cache in one test.
#[test]
fn pip_install_into_a_venv_is_idempotent_and_failures_name_the_step() {
    if !have("python3") {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let e = Env::new();
    let wheels = e.scratch.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    wheel(&wheels, "1.0.0", "1.0.0");
    std::fs::write(
        e.arms.path().join("launch.py"),
        "#!/usr/bin/env python3\nimport sys\nprint('launcher', sys.prefix)\n",
    )
    .unwrap();
    arm_file(
        e.arms.path(),
        "fakepy",
        "kind = \"pip\"\npackage = \"fake-tool\"\nversion = \"1.0.0\"\npython = \">=3.8\"\nbin = \"bin/fake-tool\"\nscripts = [\"launch.py\"]\n",
    );
    pip_installs_into_a_venv_once(&e);
    an_edited_launcher_is_stale_until_installed_again(&e);
    a_bin_env_program_of_another_version_is_named(&e);
    a_package_the_index_lacks_names_the_pip_step(&e);
    no_fitting_python_names_the_step_and_what_was_tried(&e);
}

/// `install all` makes the venv, the launcher beside the arm file runs with the venv's
/// interpreter, and installing again has nothing to do.
fn pip_installs_into_a_venv_once(e: &Env) {
    let o = e.lrab(&["arms", "install", "all"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("create venv with Python 3.")
            && text(&o).contains("installed fake-tool==1.0.0"),
        "{}",
        text(&o)
    );
    let venv = e.cache.path().join("venv/fake-tool@1.0.0");
    // The launcher beside the arm file runs with the venv's interpreter.
    let o = Command::new(venv.join("bin/launch.py")).output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&*venv.to_string_lossy()),
        "{}",
        text(&o)
    );
    let o = e.lrab(&["arms", "install", "fakepy"]);
    assert!(
        o.status.success() && text(&o).contains("already installed"),
        "{}",
        text(&o)
    );
    let o = e.lrab(&["arms", "check", "fakepy"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("fake-tool 1.0.0 (pinned 1.0.0)"),
        "{}",
        text(&o)
    );
}

/// Editing the launcher makes the install stale until it is installed again.
fn an_edited_launcher_is_stale_until_installed_again(e: &Env) {
    std::fs::write(
        e.arms.path().join("launch.py"),
        "#!/usr/bin/env python3\nprint('v2')\n",
    )
    .unwrap();
    let o = e.lrab(&["arms", "check", "fakepy"]);
    assert!(
        o.status.code() == Some(1) && text(&o).contains("stale    fakepy"),
        "{}",
        text(&o)
    );
    let o = e.lrab(&["arms", "install", "fakepy"]);
    assert!(
        o.status.success() && text(&o).contains("reuse venv"),
        "{}",
        text(&o)
    );
}

/// A program given through bin_env that prints another version: "version" and why.
fn a_bin_env_program_of_another_version_is_named(e: &Env) {
    let other = e.scratch.path().join("other-fake");
    std::fs::write(&other, "#!/bin/sh\necho 'fake-tool 0.9.0'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let f = e.arms.path().join("fakepy.toml");
    let t = std::fs::read_to_string(&f).unwrap();
    std::fs::write(
        &f,
        t.replace(
            "api = \"ollama\"",
            "api = \"ollama\"\nbin_env = \"FAKEPY_BIN\"",
        ),
    )
    .unwrap();
    let o = lrab()
        .args(["arms", "check", "fakepy", "--arms-dir"])
        .arg(e.arms.path())
        .env("LRAB_ARMS_CACHE", e.cache.path())
        .env("FAKEPY_BIN", &other)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(
        o.status.code() == Some(1)
            && t.contains("version  fakepy")
            && t.contains("prints 'fake-tool 0.9.0', but the arm file pins 1.0.0"),
        "{t}"
    );
}

/// A package the index does not have: the failing step, the arm and the pip error.
fn a_package_the_index_lacks_names_the_pip_step(e: &Env) {
    arm_file(
        e.arms.path(),
        "nopkg",
        "kind = \"pip\"\npackage = \"fake-tool\"\nversion = \"3.0.0\"\nbin = \"bin/fake-tool\"\n",
    );
    let o = e.lrab(&["arms", "install", "nopkg"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("failed   nopkg")
            && t.contains("step 'pip install fake-tool==3.0.0'")
            && t.contains("exit 1"),
        "{t}"
    );
}

/// No interpreter fits the constraint: the step, and what was tried.
fn no_fitting_python_names_the_step_and_what_was_tried(e: &Env) {
    arm_file(
        e.arms.path(),
        "oldpy",
        "kind = \"pip\"\npackage = \"fake-tool\"\nversion = \"1.0.0\"\npython = \"<3.0\"\nbin = \"bin/fake-tool\"\n",
    );
    let o = e.lrab(&["arms", "install", "oldpy"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = e.lrab(&["arms", "check", "oldpy"]);
    let t = text(&o);
    assert!(
        t.contains("failed   oldpy")
            && t.contains("step 'find python'")
            && t.contains("no Python <3.0 found"),
        "{t}"
    );
}

#[test]
fn bad_install_tables_name_file_and_field() {
    let d = tempfile::tempdir().unwrap();
    arm_file(
        d.path(),
        "bad",
        "kind = \"npm\"\npackage = \"x\"\nversion = \"latest\"\nbin = \"/usr/bin/x\"\npython = \">=3.10\"\n",
    );
    arm_file(
        d.path(),
        "worse",
        "kind = \"cargo\"\npackage = \"x\"\nversion = \"1.0.0\"\nbin = \"x\"\n",
    );
    let o = lrab()
        .args(["arms", "list", "--arms-dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("bad.toml: install.version: 'latest' is not an exact version"),
        "{t}"
    );
    assert!(t.contains("bad.toml: install.bin"), "{t}");
    assert!(
        t.contains("bad.toml: install.python: only for kind = \"pip\""),
        "{t}"
    );
    assert!(t.contains("worse.toml") && t.contains("cargo"), "{t}");
}

/// One line of `arms check` per bad arm file, each naming the arm and why; the arm files and
/// the cache are left as they were.
#[test]
fn arms_check_names_each_unusable_arm_and_why() {
    use std::os::unix::fs::PermissionsExt;
    let e = Env::new();
    let script = |name: &str, body: &str| {
        let p = e.scratch.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let good = script("good-tool", "echo 'good-tool 2.1.0'");
    let crash = script("crash-tool", "echo 'Segmentation fault' >&2; exit 139");
    let old = script("old-tool", "echo 'old-tool 1.0.0'");
    let plain = |name: &str, program: &Path, extra: &str| {
        std::fs::write(
            e.arms.path().join(format!("{name}.toml")),
            format!(
                "name = \"{name}\"\nprogram = \"{}\"\nargs = [\"{{prompt_file}}\"]\napi = \"ollama\"\n{extra}",
                program.display()
            ),
        )
        .unwrap();
    };
    plain("good", &good, "upstream_version = \"2.1.0\"\n");
    plain("gone", &e.scratch.path().join("no/such/tool"), "");
    plain("crashy", &crash, "");
    plain("stale-pin", &old, "upstream_version = \"1.2.0\"\n");
    // A registry arm whose program is given through bin_env, pointing at nothing.
    plain(
        "envgone",
        Path::new("env-tool"),
        "bin_env = \"LRAB_TEST_ENV_TOOL\"\n",
    );
    // A registry arm whose install fails: the registry does not answer.
    arm_file(
        e.arms.path(),
        "noreg",
        "kind = \"npm\"\npackage = \"fake-tool\"\nversion = \"1.0.0\"\nbin = \"node_modules/.bin/fake-tool\"\n",
    );
    if have("npm") {
        let o = e.lrab(&["arms", "install", "noreg"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(t.contains("noreg") && t.contains("npm install"), "{t}");
    }
    let files_before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(e.arms.path())
        .unwrap()
        .map(|d| {
            let p = d.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();

    let o = lrab()
        .args(["arms", "check", "--arms-dir"])
        .arg(e.arms.path())
        .env("LRAB_ARMS_CACHE", e.cache.path())
        .env("LRAB_TEST_ENV_TOOL", e.scratch.path().join("nothing-here"))
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "a checked arm is unusable: {t}");
    let line = |arm: &str| {
        t.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(arm))
            .unwrap_or_else(|| panic!("no line for {arm}: {t}"))
            .to_string()
    };
    assert!(line("good").starts_with("ok "), "{t}");
    assert!(line("good").contains("(pinned 2.1.0)"), "{t}");
    let l = line("gone");
    assert!(
        l.starts_with("missing ") && l.contains("no/such/tool does not exist"),
        "{l}"
    );
    let l = line("envgone");
    assert!(
        l.starts_with("missing ")
            && l.contains("$LRAB_TEST_ENV_TOOL is set to")
            && l.contains("nothing-here, which does not exist"),
        "{l}"
    );
    let l = line("crashy");
    assert!(
        l.starts_with("broken ") && l.contains("crash-tool") && l.contains("version command"),
        "{l}"
    );
    let l = line("stale-pin");
    assert!(
        l.starts_with("version ")
            && l.contains("prints 'old-tool 1.0.0', but the arm file pins 1.2.0"),
        "{l}"
    );
    if have("npm") {
        let l = line("noreg");
        assert!(
            l.starts_with("failed ")
                && l.contains("install of fake-tool@1.0.0 failed at step 'npm install")
                && l.contains("log: "),
            "{l}"
        );
    }
    // Checking one arm checks only that one; a usable one exits 0.
    let o = lrab()
        .args(["arms", "check", "good", "--arms-dir"])
        .arg(e.arms.path())
        .env("LRAB_ARMS_CACHE", e.cache.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(text(&o).lines().filter(|l| l.contains("good")).count(), 1);
    // Nothing was changed by checking.
    for (p, b) in files_before {
        assert_eq!(std::fs::read(&p).unwrap(), b, "{} changed", p.display());
    }
}
