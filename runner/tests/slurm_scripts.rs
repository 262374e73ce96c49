//! The distributed-run files checked without a cluster (the default suite): `--shard` bad input
//! through the CLI; the Slurm scripts parse; `submit.sh` chains the merge after the array (a
//! recording stand-in for `sbatch`); the Kubernetes manifests are an Indexed Job that runs the
//! same script from the image the Containerfile builds. `lrab-shard.sh` and `lrab-merge.sh` run
//! by hand on a tiny matrix are `tests/shard_scripts.rs`. The real cluster is `tests/slurm.rs`
//! (opt-in); the schema check of the manifests is the opt-in `deploy/check.sh`, run by the
//! ignored test at the end (`LRAB_K8S=1 cargo test -p lrab-runner --test slurm_scripts --
//! --ignored`).

mod common;
#[path = "common/slurm_setup.rs"]
mod slurm_setup;

use common::{lrab, text};
use slurm_setup::{arms, bash, matrix, repo, run_flags, script};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

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
