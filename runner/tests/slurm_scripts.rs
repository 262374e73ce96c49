//! The distributed-run files checked without a cluster (the default suite): `--shard` bad input
//! through the CLI; the Slurm scripts parse; `lrab-shard.sh` run by hand for every index of a
//! tiny matrix gives exactly `lrab plan`'s slices, resumes its folder, and, stopped mid-cell,
//! discards the attempt in flight and redoes it; `lrab-merge.sh` merges the shards;
//! `submit.sh` chains the merge after the array (a recording stand-in for `sbatch`); the
//! Kubernetes manifests are an Indexed Job that runs the same script from the image the
//! Containerfile builds. The real cluster is `tests/slurm.rs` (opt-in); the schema check of the
//! manifests is the opt-in `deploy/check.sh`, run by the ignored test at the end
//! (`LRAB_K8S=1 cargo test -p lrab-runner --test slurm_scripts -- --ignored`).

mod common;

use common::{lrab, text};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn script(name: &str) -> PathBuf {
    repo().join("scripts/slurm").join(name)
}

/// A script run with a clean environment: no Slurm or Kubernetes variables of the machine the
/// tests run on leak in (a test inside a Slurm job must not requeue that job).
fn bash(path: &Path) -> Command {
    let mut c = Command::new("bash");
    c.arg(path)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("LRAB_BIN", env!("CARGO_BIN_EXE_lrab"));
    c
}

/// `lrab-shard.sh SHARDS RUN OUT FLAGS…` for the shard with 0-based index `idx`
/// (`LRAB_SHARD_INDEX`).
fn shard(n: &str, run: &str, out: &Path, flags: &[String], idx: &str) -> Command {
    let mut c = bash(&script("lrab-shard.sh"));
    c.args([n, run])
        .arg(out)
        .args(flags)
        .env("LRAB_SHARD_INDEX", idx);
    c
}

/// A folder with arm `good` (writes WF-01's answer at once) and arm `slow`, whose first
/// launch hangs (recording the pid of its `sleep`) and whose later launches are quick.
fn arms(dir: &Path) -> PathBuf {
    let arms = dir.join("arms");
    std::fs::create_dir_all(&arms).unwrap();
    std::fs::write(arms.join("good.sh"), "printf 'S001\\n' > shortlist.md\n").unwrap();
    let mark = dir.join("slow.pid");
    std::fs::write(
        arms.join("slow.sh"),
        format!(
            "if [ ! -e '{m}' ]; then sleep 60 & echo $! > '{m}'; wait; fi\nprintf 'S001\\n' > shortlist.md\n",
            m = mark.display()
        ),
    )
    .unwrap();
    for a in ["good", "slow"] {
        std::fs::write(
            arms.join(format!("{a}.toml")),
            format!(
                "name = \"{a}\"\nprogram = \"/bin/sh\"\nargs = [\"{}\", \"{{prompt_file}}\"]\napi = \"ollama\"\n",
                arms.join(format!("{a}.sh")).display()
            ),
        )
        .unwrap();
    }
    arms
}

/// The matrix flags (what `lrab plan` takes) of a 6-cell matrix.
fn matrix(arms: &Path, arm: &str) -> Vec<String> {
    let mut v: Vec<String> = [
        "--backend",
        "sim",
        "--arms",
        arm,
        "--models",
        "sim-2b",
        "--tasks",
        "WF-01,WF-02,WF-03",
        "--repeats",
        "2",
        "--arms-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(arms.display().to_string());
    v
}

/// The matrix plus quick quiet-wait and kill timings (`lrab run` flags).
fn run_flags(arms: &Path, arm: &str) -> Vec<String> {
    let mut v = matrix(arms, arm);
    for (f, ms) in [
        ("--quiet-poll-ms", "20"),
        ("--quiet-stable-ms", "100"),
        ("--quiet-max-ms", "1000"),
        ("--grace-ms", "200"),
    ] {
        v.push(f.into());
        v.push(ms.into());
    }
    v
}

/// (arm, model, task, repeat, attempt) of every row, and the attempt folders, of a run folder.
fn rows(run: &Path) -> Vec<Vec<String>> {
    let t = std::fs::read_to_string(run.join("cells.csv")).unwrap_or_default();
    t.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn keys(run: &Path) -> Vec<String> {
    let mut k: Vec<String> = rows(run)
        .iter()
        .map(|r| format!("{},{},{},{}", r[1], r[2], r[3], r[5]))
        .collect();
    k.sort();
    k
}

#[test]
fn bad_shard_values_are_rejected_before_any_cell() {
    let d = tempfile::tempdir().unwrap();
    let arms = arms(d.path());
    let out = d.path().join("results");
    let cases = [
        ("0/4", "k must be at least 1"),
        ("5/4", "k=5 is larger than n=4"),
        ("a/b", "k 'a' is not a whole number"),
        ("1/0", "n must be at least 1"),
        ("-1/4", "k '-1' is not a whole number"),
        ("", "expected k/n"),
        ("2", "expected k/n"),
        ("2/4/8", "n '4/8' is not a whole number"),
    ];
    for (value, why) in cases {
        for cmd in ["run", "plan"] {
            let mut c = lrab();
            let flags = if cmd == "run" {
                run_flags(&arms, "good")
            } else {
                matrix(&arms, "good")
            };
            c.arg(cmd).args(flags).arg("--shard").arg(value);
            if cmd == "run" {
                c.arg("--out").arg(&out).arg("--no-progress");
            }
            let o = c.output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(2),
                "{cmd} --shard {value:?}: {}",
                text(&o)
            );
            let msg = text(&o);
            assert!(
                msg.contains(&format!("--shard '{value}': ")) && msg.contains(why),
                "{cmd} --shard {value:?}: want {why:?} in: {msg}"
            );
            assert!(!msg.contains("SIMULATED"), "a backend was started: {msg}");
        }
    }
    assert!(!out.exists(), "nothing is written for bad input");
    // The good edge: k = n.
    let o = lrab()
        .arg("plan")
        .args(matrix(&arms, "good"))
        .args(["--shard", "4/4"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}

#[test]
fn job_scripts_parse() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("scripts/slurm"))
        .unwrap()
        .chain(std::fs::read_dir(repo().join("deploy")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sh"))
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "up.sh",
        "down.sh",
        "lrab-shard.sh",
        "lrab-merge.sh",
        "submit.sh",
        "check.sh",
        "build-image.sh",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for f in &files {
        let o = Command::new("bash").arg("-n").arg(f).output().unwrap();
        assert!(o.status.success(), "{}: {}", f.display(), text(&o));
        let body = std::fs::read_to_string(f).unwrap();
        if f.file_name().unwrap() != "daemons.sh" {
            assert!(body.starts_with("#!/bin/bash\n"), "{}", f.display());
            let mode = std::fs::metadata(f).unwrap().permissions().mode();
            assert!(mode & 0o111 != 0, "{} is not executable", f.display());
        }
    }
    // The array task carries its own Slurm options: requeue on node failure or preemption,
    // the time-limit signal to the batch shell, and logs kept across restarts.
    let shard = std::fs::read_to_string(script("lrab-shard.sh")).unwrap();
    for opt in [
        "#SBATCH --requeue",
        "#SBATCH --signal=B:USR1@",
        "#SBATCH --open-mode=append",
    ] {
        assert!(shard.contains(opt), "lrab-shard.sh lacks {opt}");
    }
    // sbatch reads #SBATCH lines only before the first command.
    let first_cmd = shard
        .lines()
        .position(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap();
    let lines: Vec<&str> = shard.lines().collect();
    let last_opt = lines
        .iter()
        .rposition(|l| l.starts_with("#SBATCH"))
        .unwrap();
    assert!(
        last_opt < first_cmd,
        "#SBATCH lines after the first command"
    );
}

#[test]
fn shard_script_slices_the_plan_resumes_and_merge_script_merges() {
    let d = tempfile::tempdir().unwrap();
    let arms = arms(d.path());
    let out = d.path().join("results");
    let m = run_flags(&arms, "good");
    // The plan every shard must follow: 6 cells, cell i goes to shard i mod 4 + 1.
    let o = lrab()
        .arg("plan")
        .args(matrix(&arms, "good"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let plan: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(plan.len(), 6);
    // Each index from another source: the shard script is the same on Slurm, Kubernetes, or
    // by hand.
    let sources = [
        ("LRAB_SHARD_INDEX", "0"),
        ("SLURM_ARRAY_TASK_ID", "1"),
        ("JOB_COMPLETION_INDEX", "2"),
        ("SLURM_ARRAY_TASK_ID", "3"),
    ];
    for (var, idx) in sources {
        let o = bash(&script("lrab-shard.sh"))
            .args(["4", "tiny"])
            .arg(&out)
            .args(&m)
            .env(var, idx)
            .output()
            .unwrap();
        assert!(o.status.success(), "{var}={idx}: {}", text(&o));
        let k: usize = idx.parse::<usize>().unwrap() + 1;
        let dir = out.join(format!("tiny-s{k}of4"));
        let mut want: Vec<String> = plan
            .iter()
            .filter(|c| c["index"].as_u64().unwrap() as usize % 4 == k - 1)
            .map(|c| {
                format!(
                    "{},{},{},{}",
                    c["arm"].as_str().unwrap(),
                    c["model"].as_str().unwrap(),
                    c["task"].as_str().unwrap(),
                    c["repeat"]
                )
            })
            .collect();
        want.sort();
        assert_eq!(keys(&dir), want, "shard {k}");
        assert!(std::fs::read_to_string(dir.join("manifest.json"))
            .unwrap()
            .contains(&format!("\"shard\": \"{k}/4\"")));
    }
    // A second run of a finished shard resumes it: nothing is redone or duplicated.
    let before = std::fs::read_to_string(out.join("tiny-s1of4/cells.csv")).unwrap();
    let o = shard("4", "tiny", &out, &m, "0").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resuming"), "{}", text(&o));
    assert!(text(&o).contains("0 attempts run"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("tiny-s1of4/cells.csv")).unwrap(),
        before
    );
    // Bad input to the script: named, exit 2, nothing started.
    // (SHARDS, RUN, LRAB_SHARD_INDEX or none, message)
    let bad = [
        ("4", "tiny", Some("4"), "out of range for 4 shards"),
        ("4", "tiny", None, "no shard index"),
        ("x", "tiny", Some("0"), "SHARDS 'x'"),
        ("4", "a/b", Some("0"), "RUN 'a/b'"),
        ("4", "tiny", Some("-1"), "not a whole number"),
    ];
    for (n, run, idx, msg) in bad {
        let mut c = bash(&script("lrab-shard.sh"));
        c.args([n, run]).arg(&out).args(&m);
        if let Some(i) = idx {
            c.env("LRAB_SHARD_INDEX", i);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{n} {run} {idx:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{msg}: {}", text(&o));
    }
    // A folder that is another slice is not resumed as this one.
    let other = d.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    lrab_tasks::copy_tree(&out.join("tiny-s2of4"), &other.join("tiny-s1of4")).unwrap();
    let o = shard("4", "tiny", &other, &m, "0").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is not shard 1/4"), "{}", text(&o));

    // The merge script: all shards into OUT/tiny, through a staging folder.
    let o = bash(&script("lrab-merge.sh"))
        .args(["4", "tiny"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 missing"), "{}", text(&o));
    let merged = out.join("tiny");
    assert_eq!(keys(&merged).len(), 6);
    let mut dedup = keys(&merged);
    dedup.dedup();
    assert_eq!(dedup.len(), 6, "a cell twice");
    assert!(rows(&merged).iter().all(|r| r[0] == "tiny"));
    assert!(!out.join(".merging-tiny").exists());
    // Run again (a requeued merge job): the complete merge is left alone.
    let o = bash(&script("lrab-merge.sh"))
        .args(["4", "tiny"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("exists already"), "{}", text(&o));
    // A missing shard is named, and nothing is written.
    let o = bash(&script("lrab-merge.sh"))
        .args(["5", "tiny"])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("shard 1/5 has no run folder"),
        "{}",
        text(&o)
    );
    assert!(!other.join("tiny").exists() && !other.join(".merging-tiny").exists());
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
}

/// Runs a function of `scripts/slurm/runfolder.sh` (the check scripts' run-folder checks) on
/// `dir`: whether it succeeded, and what it printed.
fn run_folder(dir: &Path, function: &str) -> (bool, String) {
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(". \"$1\" && {function} \"$2\""))
        .arg("runfolder")
        .arg(script("runfolder.sh"))
        .arg(dir)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn shard_script_stopped_mid_cell_sets_the_attempt_aside_and_resume_redoes_it() {
    let d = tempfile::tempdir().unwrap();
    let arms = arms(d.path());
    let out = d.path().join("results");
    let mut m = run_flags(&arms, "slow");
    // the slow arm leaves its marker (a host pid) outside its workdir: unconfined only
    m.push("--unconfined-arms".into());
    let mark = d.path().join("slow.pid");
    // Shard 1/2 has cells 0, 2, 4; its first launch hangs until it is stopped.
    let child = shard("2", "cut", &out, &m, "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !mark.exists() || std::fs::read_to_string(&mark).unwrap().trim().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the arm never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let arm_pid: i32 = std::fs::read_to_string(&mark)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dir = out.join("cut-s1of2");
    let attempt = dir.join("cells/slow/sim-2b/WF-01/r0/a0");
    assert!(attempt.is_dir());
    // SAFETY: SIGTERM to the script we spawned (what scancel, preemption or a pod deletion send).
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
    assert!(text(&o).contains("stopped by SIGTERM"), "{}", text(&o));
    let t0 = Instant::now();
    while alive(arm_pid) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "arm {arm_pid} outlived the stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(rows(&dir).is_empty(), "the cell in flight was recorded");
    // the check scripts' helper sees exactly the attempt in flight
    assert_eq!(
        run_folder(&dir, "rf_unrecorded").1,
        "cells/slow/sim-2b/WF-01/r0/a0\n"
    );
    std::fs::write(attempt.join("LEFT-BY-THE-STOPPED-RUN"), "").unwrap();
    // Started again (a requeued task): resumes, sets the attempt aside (named), redoes it in a
    // fresh folder.
    let o = shard("2", "cut", &out, &m, "0").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resuming"), "{}", text(&o));
    let aside = "interrupted/slow/sim-2b/WF-01/r0/a0-1";
    assert!(
        text(&o).contains(&format!(
            "resume: set aside cells/slow/sim-2b/WF-01/r0/a0 -> {aside}: no cells.csv row"
        )),
        "{}",
        text(&o)
    );
    assert!(dir.join(aside).join("LEFT-BY-THE-STOPPED-RUN").is_file());
    assert!(!attempt.join("LEFT-BY-THE-STOPPED-RUN").exists());
    assert!(attempt.join("score.json").is_file());
    assert_eq!(run_folder(&dir, "rf_unrecorded"), (true, String::new()));
    let (ok, problems) = run_folder(&dir, "rf_verify");
    assert!(ok, "{problems}");
    let k = keys(&dir);
    assert_eq!(
        k,
        vec![
            "slow,sim-2b,WF-01,0".to_string(),
            "slow,sim-2b,WF-02,0".to_string(),
            "slow,sim-2b,WF-03,0".to_string(),
        ]
    );
    assert!(rows(&dir).iter().all(|r| r[6] == "0"), "attempt numbers");
}

#[test]
fn submit_script_chains_the_merge_after_the_array() {
    let d = tempfile::tempdir().unwrap();
    let arms = arms(d.path());
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A stand-in sbatch that records its arguments (one per line) and answers a job id.
    let log = d.path().join("sbatch.log");
    let fake = bin.join("sbatch");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/bash\nn=$(( $(ls '{l}'.* 2>/dev/null | wc -l) + 1 ))\nprintf '%s\\n' \"$@\" > '{l}'.$n\necho $(( 40 + n ))\n",
            l = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = d.path().join("results");
    let o = bash(&script("submit.sh"))
        .env("PATH", &path)
        .args(["--shards", "4", "--run", "paper", "--out"])
        .arg(&out)
        .args(["--sbatch=--time=1:00:00", "--"])
        .args(run_flags(&arms, "good"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("LRAB_ARRAY_JOB=41") && stdout.contains("LRAB_MERGE_JOB=42"));
    assert!(text(&o).contains("6 cells in 4 shards"), "{}", text(&o));
    let read = |n: u32| -> Vec<String> {
        std::fs::read_to_string(format!("{}.{n}", log.display()))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let (array, merge) = (read(1), read(2));
    let has = |v: &[String], x: &str| v.iter().any(|a| a == x);
    assert!(has(&array, "--array=0-3"), "{array:?}");
    assert!(has(&array, "--time=1:00:00"), "{array:?}");
    let at = array
        .iter()
        .position(|a| a.ends_with("scripts/slurm/lrab-shard.sh"))
        .expect("the array runs lrab-shard.sh");
    assert_eq!(
        array[at + 1..at + 3],
        ["4".to_string(), "paper".to_string()]
    );
    assert!(array[at + 4..].contains(&"--arms".to_string()));
    assert!(has(&merge, "--dependency=afterok:41"), "{merge:?}");
    assert!(has(&merge, "--kill-on-invalid-dep=yes"), "{merge:?}");
    assert!(merge.last().unwrap().ends_with(&out.display().to_string()));
    assert!(merge[merge.len() - 4].ends_with("scripts/slurm/lrab-merge.sh"));
    assert!(out.join("logs").is_dir(), "log folder made before sbatch");
    // Bad input is caught before anything is submitted.
    for (args, msg) in [
        (vec!["--shards", "0", "--run", "p"], "--shards '0'"),
        (vec!["--shards", "4", "--run", "a/b"], "--run 'a/b'"),
        (
            vec!["--shards", "4", "--run", "p", "--", "--shard", "1/4"],
            "set per shard",
        ),
        (
            vec![
                "--shards",
                "4",
                "--run",
                "p",
                "--",
                "--arms",
                "nope",
                "--backend",
                "sim",
            ],
            "unknown arm 'nope'",
        ),
    ] {
        let o = bash(&script("submit.sh"))
            .env("PATH", &path)
            .args(["--out".as_ref(), out.as_os_str()])
            .args(&args)
            .args(["--arms-dir".as_ref(), arms.as_os_str()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{msg}: {}", text(&o));
    }
    assert!(
        !Path::new(&format!("{}.3", log.display())).exists(),
        "sbatch was called"
    );
}

/// YAML documents as JSON, through python3's PyYAML (part of the suite's python set-up).
fn yaml_docs(path: &Path) -> Vec<serde_json::Value> {
    let o = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\nprint(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} does not parse as YAML (python3 with PyYAML needed): {}",
        path.display(),
        text(&o)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn k8s_manifests_are_an_indexed_job_running_the_shard_script_of_the_image() {
    let deploy = repo().join("deploy");
    let docs = yaml_docs(&deploy.join("lrab-job.yaml"));
    let job = docs
        .iter()
        .find(|d| d["kind"] == "Job")
        .expect("a Job in lrab-job.yaml");
    assert_eq!(job["apiVersion"], "batch/v1");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let pod = &spec["template"]["spec"];
    // podFailurePolicy and backoffLimitPerIndex need restartPolicy Never.
    assert_eq!(pod["restartPolicy"], "Never");
    assert!(spec["backoffLimitPerIndex"].as_u64().unwrap() >= 1);
    let lrab = pod["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lrab")
        .expect("an lrab container");
    assert_eq!(lrab["command"][0], "lrab-shard");
    let args: Vec<String> = lrab["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    // One pod per shard: completions = the shard count the script is given.
    assert_eq!(
        args[0].parse::<u64>().unwrap(),
        spec["completions"].as_u64().unwrap()
    );
    for bad in ["--shard", "--run-id", "--out", "--resume"] {
        assert!(
            !args.contains(&bad.to_string()),
            "{bad} is the script's job"
        );
    }
    // The results volume is shared so a replacement pod resumes its shard folder.
    let out = &args[2];
    let mounts = lrab["volumeMounts"].as_array().unwrap();
    let m = mounts
        .iter()
        .find(|m| m["mountPath"] == out.as_str())
        .unwrap();
    let vol = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == m["name"])
        .unwrap();
    let claim = vol["persistentVolumeClaim"]["claimName"].as_str().unwrap();
    assert!(docs
        .iter()
        .any(|d| d["kind"] == "PersistentVolumeClaim" && d["metadata"]["name"] == claim));
    // Ollama is a native sidecar (an init container with restartPolicy Always): a plain second
    // container would keep every pod, and so the Job, from ever completing.
    let side = pod["initContainers"].as_array().unwrap();
    assert!(side
        .iter()
        .any(|c| c["name"] == "ollama" && c["restartPolicy"] == "Always"));
    // Merge: the same image, lrab-merge over the same shards and folder.
    let merge = &yaml_docs(&deploy.join("lrab-merge-job.yaml"))[0];
    let mc = &merge["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(mc["command"][0], "lrab-merge");
    assert_eq!(mc["args"][0].as_str().unwrap(), args[0]);
    assert_eq!(mc["args"][1].as_str().unwrap(), args[1]);
    assert_eq!(mc["image"], lrab["image"]);
    // The image named is the one build-image.sh tags, and the Containerfile installs the two
    // scripts under the names the Jobs call.
    let image = lrab["image"].as_str().unwrap();
    let build = std::fs::read_to_string(deploy.join("build-image.sh")).unwrap();
    assert!(
        build.contains(&format!("TAG={image} ")),
        "build-image.sh tag != {image}"
    );
    let cf = std::fs::read_to_string(deploy.join("Containerfile")).unwrap();
    for (src, name) in [
        ("scripts/slurm/lrab-shard.sh", "lrab-shard"),
        ("scripts/slurm/lrab-merge.sh", "lrab-merge"),
    ] {
        assert!(
            cf.contains(&format!("COPY {src} /usr/local/bin/{name}")),
            "Containerfile does not install {src} as {name}"
        );
        assert!(repo().join(src).is_file());
    }
    for env in ["LRAB_ARMS=", "LRAB_PACK="] {
        assert!(cf.contains(env), "Containerfile sets no {env}");
    }
}

#[test]
#[ignore = "installs kubernetes-validate from PyPI into a venv; set LRAB_K8S=1 and pass --ignored"]
fn k8s_manifests_validate_against_the_published_job_schema() {
    if std::env::var("LRAB_K8S").as_deref() != Ok("1") {
        eprintln!("SKIPPED: set LRAB_K8S=1 to run deploy/check.sh (the Kubernetes schema check)");
        return;
    }
    let o = Command::new("bash")
        .arg(repo().join("deploy/check.sh"))
        .output()
        .expect("run deploy/check.sh");
    let t = text(&o);
    eprintln!("{t}");
    if o.status.code() == Some(77) {
        eprintln!(
            "SKIPPED: {}",
            t.lines()
                .find(|l| l.contains("SKIP"))
                .unwrap_or("no reason")
        );
        return;
    }
    assert!(o.status.success(), "{t}");
    for k in ["1.29.0", "1.33.0", "1.37.0"] {
        assert!(
            t.contains(&format!("valid for Kubernetes {k} (strict)")),
            "{k}: {t}"
        );
    }
    assert!(
        t.contains("canary with a misspelt field rejected (ok)"),
        "{t}"
    );
}
