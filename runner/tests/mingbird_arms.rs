//! The shipped Mingbird arm files, end to end without Mingbird's code (which never enters this
//! repository and cannot be fetched here): copies of `arms/mingbird*.toml` whose `[install]`
//! points at a local repository made by the test (its commit and digests substituted, its pip
//! pin dropped: no network) install a stand-in `ollama_agent.py` that records how it was
//! launched. `lrab ablate --arm mingbird-v2 --variants mingbird-v2-no-executable-gates` runs
//! both, interleaved: each launched as upstream's runner launched Mingbird, the variant alone
//! with `AGENT_ABLATION=finish_gate_text_only`. And `--arms paper` is exactly the published arms.

mod common;

use common::{fast, git, lrab, shipped_arms, text};

use std::path::{Path, PathBuf};

const STAND_IN: &str = r#"import json, os, sys
keys = ["AGENT_STREAM", "AGENT_ABLATION", "AGENT_CTX", "HUMMINGBIRD_HOME", "OLLAMA_HOST"]
seen = {k: os.environ.get(k) for k in keys}
seen["argv"] = sys.argv[1:]
seen["cwd"] = os.getcwd()
seen["python"] = os.path.realpath(__import__("shutil").which("python"))
json.dump(seen, open("seen.json", "w"))
open("shortlist.md", "w").write("S001 Ti aging\n")
"#;
const CONF: &str = "# stand-in appconfig\n";

/// Copies of the shipped Mingbird arm files installing the stand-in from `repo` at `commit`.
fn stand_in_arms(arms: &Path, repo: &Path, commit: &str) {
    let agent = lrab_util::sha256_hex(STAND_IN.as_bytes());
    let conf = lrab_util::sha256_hex(CONF.as_bytes());
    for name in [
        "mingbird",
        "mingbird-v2",
        "mingbird-text-only-gate",
        "mingbird-v2-no-executable-gates",
    ] {
        let f = format!("{name}.toml");
        let t = std::fs::read_to_string(shipped_arms().join(&f)).unwrap();
        let v: toml::Value = toml::from_str(&t).unwrap();
        let mut t = t
            .replace(
                "https://github.com/Mingbird/Mingbird-agent",
                &repo.display().to_string(),
            )
            .replace("with = [\"pytest==9.2.0\"]\n", "");
        if let Some(i) = v.get("install") {
            t = t.replace(i["commit"].as_str().unwrap(), commit);
            for f in i["files"].as_array().unwrap() {
                let new = match f["path"].as_str().unwrap() {
                    "ollama_agent.py" => &agent,
                    _ => &conf,
                };
                t = t.replace(f["sha256"].as_str().unwrap(), new);
                if let Some(c) = f.get("commit").and_then(|c| c.as_str()) {
                    t = t.replace(c, commit);
                }
            }
        }
        std::fs::write(arms.join(f), t).unwrap();
    }
}

fn seen(cell: &Path) -> serde_json::Value {
    let p = cell.join("a0/workdir/seen.json");
    serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

#[test]
fn shipped_mingbird_arms_launch_as_upstream_and_ablate_pairs_the_text_only_gate() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let (repo, arms, cache, out) = (
        root.join("repo"),
        root.join("arms"),
        root.join("cache"),
        root.join("results"),
    );
    for p in [&repo, &arms] {
        std::fs::create_dir_all(p).unwrap();
    }
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("ollama_agent.py"), STAND_IN).unwrap();
    std::fs::write(repo.join("appconfig.py"), CONF).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "stand-in"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    stand_in_arms(&arms, &repo, &commit);
    let cmd = |args: &[&str]| {
        let mut c = lrab();
        c.args(args)
            .arg("--arms-dir")
            .arg(&arms)
            .env("LRAB_ARMS_CACHE", &cache)
            .env("AGENT_STREAM", "1");
        c
    };
    let o = cmd(&[
        "arms",
        "install",
        "mingbird-v2",
        "mingbird-text-only-gate",
        "mingbird-v2-no-executable-gates",
    ])
    .output()
    .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("ok       mingbird-text-only-gate      same install as mingbird-v2"),
        "{t}"
    );
    let o = cmd(&["ablate"])
        .args(fast(200, 1000, 200))
        .args([
            "--arm",
            "mingbird-v2",
            "--variants",
            "mingbird-v2-no-executable-gates",
        ])
        .args(["--models", "sim-2b", "--tasks", "WF-01", "--repeats", "2"])
        .args(["--run-id", "abl", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let install = cache.join("git/mingbird@2.0.1");
    for (arm, ablation) in [
        ("mingbird-v2", serde_json::Value::Null),
        (
            "mingbird-v2-no-executable-gates",
            "finish_gate_text_only".into(),
        ),
    ] {
        for r in ["r0", "r1"] {
            let cell: PathBuf = out.join(format!("abl/cells/{arm}/sim-2b/WF-01/{r}"));
            let s = seen(&cell);
            let workdir = cell.join("a0/workdir");
            assert_eq!(s["AGENT_ABLATION"], ablation, "{arm} {r}: {s}");
            assert_eq!(s["AGENT_STREAM"], serde_json::Value::Null, "{s}");
            assert_eq!(s["AGENT_CTX"], "32768", "{s}");
            assert_eq!(
                s["HUMMINGBIRD_HOME"],
                cell.join("a0/home/hummingbird").display().to_string(),
                "{s}"
            );
            assert!(
                s["OLLAMA_HOST"]
                    .as_str()
                    .unwrap()
                    .starts_with("http://127.0.0.1:"),
                "{s}"
            );
            assert_eq!(
                s["argv"],
                serde_json::json!([
                    "sim-2b",
                    workdir.join("task_input.txt").display().to_string(),
                    workdir.display().to_string()
                ]),
                "{s}"
            );
            assert_eq!(s["cwd"], workdir.display().to_string(), "{s}");
            // `python` on PATH is the install's venv (where pytest goes), not the system one
            let venv_python = std::fs::canonicalize(install.join("venv/bin/python")).unwrap();
            assert_eq!(s["python"], venv_python.display().to_string(), "{s}");
        }
    }
    // the command line recorded for the cell is upstream's: <python> <repo>/ollama_agent.py …
    let rec =
        std::fs::read_to_string(out.join("abl/cells/mingbird-v2/sim-2b/WF-01/r0/a0/attempt.json"))
            .or_else(|_| std::fs::read_to_string(out.join("abl/attempts.jsonl")))
            .unwrap();
    assert!(
        rec.contains(&*install.join("src/ollama_agent.py").to_string_lossy()),
        "{rec}"
    );
}

/// `--arms paper` (and `upstream`) is exactly the four published arms, ours never a stand-in;
/// `paper+harness` puts ours beside them.
#[test]
fn paper_group_is_exactly_the_published_arms() {
    let arms_of = |group: &str| {
        let o = lrab()
            .args([
                "plan",
                "--arms",
                group,
                "--models",
                "m",
                "--tasks",
                "WF-01",
                "--arms-dir",
            ])
            .arg(shipped_arms())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["arm"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect::<Vec<_>>()
    };
    let paper = ["mingbird", "goose", "opencode", "agent-mini"];
    assert_eq!(arms_of("paper"), paper);
    assert_eq!(arms_of("upstream"), paper);
    let mut with = vec!["harness"];
    with.extend(paper);
    assert_eq!(arms_of("paper+harness"), with);
}
