//! `lrab plan`, `--shard k/n`, `lrab merge`, and the proxy started automatically for an arm
//! whose file asks for it (a python arm speaking OpenAI /v1 to the simulated backend).

mod common;

use common::{fast, lrab, quick, text};

use std::path::Path;

fn fake_arm(dir: &Path) {
    std::fs::write(dir.join("good.sh"), "printf 'S001\\n' > shortlist.md\n").unwrap();
    std::fs::write(
        dir.join("good.toml"),
        format!(
            "name = \"good\"\nprogram = \"/bin/sh\"\nargs = [\"{}\", \"{{prompt_file}}\"]\napi = \"ollama\"\n",
            dir.join("good.sh").display()
        ),
    )
    .unwrap();
}

fn data_rows(run: &Path) -> Vec<String> {
    std::fs::read_to_string(run.join("cells.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

#[test]
fn plan_shards_and_merge_cover_the_matrix_once() {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    fake_arm(&arms);
    let matrix = [
        "--arms",
        "good",
        "--models",
        "sim-2b",
        "--tasks",
        "WF-01,WF-02,WF-03",
        "--repeats",
        "2",
    ];
    let o = lrab()
        .arg("plan")
        .arg("--arms-dir")
        .arg(&arms)
        .args(matrix)
        .args(["--backend", "sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let plan: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(plan.len(), 6);
    assert_eq!(plan[5]["index"], 5);
    // the lines are the typed plan records, the same as plan.jsonl's
    assert_eq!(plan[5]["schema_version"], lrab_records::SCHEMA_VERSION);
    let typed = d.path().join("stdout-plan.jsonl");
    std::fs::write(&typed, &o.stdout).unwrap();
    let cells = lrab_records::read_plan(&typed).unwrap();
    assert_eq!((cells[5].index, cells[5].repeat), (5, 1));
    let out = d.path().join("results");
    let mut shards = Vec::new();
    for k in 1..=2 {
        let o = quick("run", &arms, &out, (100, 1000, 100))
            .args(matrix)
            .args(["--shard", &format!("{k}/2"), "--run-id", &format!("s{k}")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(data_rows(&out.join(format!("s{k}"))).len(), 3);
        shards.push(out.join(format!("s{k}")));
    }
    let merged = out.join("all");
    let o = lrab()
        .arg("merge")
        .arg("--out")
        .arg(&merged)
        .args(&shards)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 missing"), "{}", text(&o));
    let rows = data_rows(&merged);
    assert_eq!(rows.len(), 6);
    let mut keys: Vec<String> = rows
        .iter()
        .map(|r| r.split(',').skip(1).take(6).collect::<Vec<_>>().join(","))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6);
    assert!(rows.iter().all(|r| r.starts_with("all,")));
    let at = (lrab_records::HEADER.iter())
        .position(|c| *c == lrab_records::column::ATTEMPT_DIR)
        .unwrap();
    for r in &rows {
        let dir = r.split(',').nth(at).unwrap();
        assert!(merged.join(dir).join("score.json").is_file(), "{r}");
    }
    // the merged plan is the whole matrix, in plan order, as `lrab plan` printed it
    assert_eq!(
        lrab_records::read_plan(&merged.join("plan.jsonl")).unwrap(),
        cells
    );
    // The same shard twice is a duplicate, and nothing is written.
    let bad = out.join("bad");
    let o = lrab()
        .arg("merge")
        .arg("--out")
        .arg(&bad)
        .args([&shards[0], &shards[0]])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("is in both"), "{}", text(&o));
    assert!(!bad.exists());
    // A partial merge reports what is missing.
    let o = lrab()
        .arg("merge")
        .arg("--out")
        .arg(out.join("half"))
        .arg(&shards[0])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("3 missing"));
}

#[test]
fn proxy_arm_gets_the_proxy_and_its_tokens_are_recorded() {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    let script = arms.join("v1arm.py");
    std::fs::write(
        &script,
        r#"import json, sys, urllib.request
url, model, prompt_file = sys.argv[1], sys.argv[2], sys.argv[3]
body = {"model": model, "stream": False, "temperature": 1.0,
        "messages": [{"role": "user", "content": open(prompt_file).read()}]}
req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                             headers={"content-type": "application/json"})
resp = json.load(urllib.request.urlopen(req, timeout=60))
print(resp["choices"][0]["finish_reason"])
open("shortlist.md", "w").write("S001\n")
"#,
    )
    .unwrap();
    std::fs::write(
        arms.join("v1arm.toml"),
        format!(
            "name = \"v1arm\"\nprogram = \"python3\"\nargs = [\"{}\", \"{{backend_url}}\", \"{{model}}\", \"{{prompt_file}}\"]\napi = \"openai\"\nproxy = true\n",
            script.display()
        ),
    )
    .unwrap();
    let out = d.path().join("results");
    let o = quick("run", &arms, &out, (100, 1000, 100))
        .args([
            "--arms", "v1arm", "--models", "sim-4b", "--tasks", "WF-01", "--run-id", "p",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let run = out.join("p");
    let rows = data_rows(&run);
    assert_eq!(rows.len(), 1);
    let f: Vec<&str> = rows[0].split(',').collect();
    assert_eq!(f[12], "completed", "{rows:?}");
    assert_eq!(f[17], "1", "one model call seen by the proxy: {rows:?}");
    assert!(
        f[15].parse::<u64>().unwrap() > 0,
        "prompt tokens from the proxy log: {rows:?}"
    );
    let log = std::fs::read_to_string(run.join(f[19]).join("proxy.jsonl")).unwrap();
    assert!(log.contains("\"rewritten_to_native\":true"), "{log}");
}

#[test]
fn matrix_file_and_arm_groups() {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    fake_arm(&arms);
    // A group member whose program does not exist is left out, not an error.
    std::fs::write(
        arms.join("ghost.toml"),
        "name = \"ghost\"\nprogram = \"/nonexistent/ghost\"\nargs = [\"{prompt}\"]\napi = \"ollama\"\n",
    )
    .unwrap();
    let cfg = d.path().join("matrix.toml");
    std::fs::write(
        &cfg,
        "arms = [\"all\"]\nmodels = [\"sim-2b\"]\ntasks = [\"WF-01\", \"WF-02\"]\nrepeats = 1\n",
    )
    .unwrap();
    let out = d.path().join("results");
    let o = quick("run", &arms, &out, (100, 1000, 100))
        .arg("--config")
        .arg(&cfg)
        .args(["--run-id", "c"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("left out: ghost"), "{}", text(&o));
    assert_eq!(data_rows(&out.join("c")).len(), 2);
    // Naming the missing arm explicitly is an error before any cell.
    let o = quick("run", &arms, &out, (100, 1000, 100))
        .arg("--config")
        .arg(&cfg)
        .args(["--arms", "ghost,good"])
        .args(["--run-id", "c2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("arm 'ghost' is not installed"),
        "{}",
        text(&o)
    );
    assert!(!out.join("c2").exists());
    // A typo in the matrix file names the file.
    std::fs::write(&cfg, "arms = [\"good\"]\nrepeat = 2\n").unwrap();
    let o = lrab()
        .arg("plan")
        .arg("--config")
        .arg(&cfg)
        .arg("--arms-dir")
        .arg(&arms)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("matrix.toml") && text(&o).contains("repeat"),
        "{}",
        text(&o)
    );
}

#[test]
fn relative_out_folder_gives_arms_absolute_paths() {
    let d = tempfile::tempdir().unwrap();
    let arms = d.path().join("arms");
    std::fs::create_dir(&arms).unwrap();
    std::fs::write(
        arms.join("strict.toml"),
        "name = \"strict\"\nprogram = \"/bin/sh\"\nargs = [\"-c\", \"test -f \\\"$0\\\" && test -d \\\"$1\\\" || exit 7; printf 'S001\\\\n' > shortlist.md\", \"{prompt_file}\", \"{workdir}\"]\napi = \"ollama\"\n",
    )
    .unwrap();
    let o = lrab()
        .current_dir(d.path())
        .args([
            "run",
            "--arms-dir",
            "arms",
            "--out",
            "results",
            "--arms",
            "strict",
        ])
        .args(["--models", "sim-2b", "--tasks", "WF-01", "--run-id", "rel"])
        .args(fast(100, 1000, 100))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let rows = data_rows(&d.path().join("results/rel"));
    assert!(rows[0].contains(",0,completed,"), "{rows:?}");
}
