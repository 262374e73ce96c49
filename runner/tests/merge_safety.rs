//! Merge safety across hosts: every shard's manifest records host, suite commit, task-pack hash
//! and arm versions; `lrab merge` refuses shards that disagree on the code, the tasks, the arms
//! or the knobs (naming the field, both values and both files, writing nothing) and accepts
//! identical shards from different hosts. Manifests written before these fields existed still
//! load, for `--resume` and for `merge`.

mod common;

use common::{lrab, quick, text};

use std::path::{Path, PathBuf};

/// An arm whose `arms check` version is `version`.
fn arm(dir: &Path, version: &str) -> PathBuf {
    let a = dir.join(format!("arms-{version}"));
    std::fs::create_dir_all(&a).unwrap();
    common::script_arm(
        &a,
        "good",
        "/bin/sh",
        "sh",
        "printf 'S001\\n' > shortlist.md\n",
        &format!("echo good {version}"),
        "upstream_version = \"1.0\"\n",
    );
    a
}

/// Shard `k` of 2 of a 4-cell matrix into `out/<id>`.
fn shard(
    out: &Path,
    arms: &Path,
    pack: Option<&Path>,
    id: &str,
    k: u32,
    extra: &[&str],
) -> PathBuf {
    let mut c = quick("run", arms, out, (100, 1000, 200));
    c.args([
        "--arms",
        "good",
        "--models",
        "sim-2b",
        "--tasks",
        "WF-01,WF-02",
    ])
    .args([
        "--repeats",
        "2",
        "--run-id",
        id,
        "--shard",
        &format!("{k}/2"),
    ])
    .args(extra);
    if let Some(p) = pack {
        c.arg("--pack").arg(p);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    out.join(id)
}

fn manifest(run: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap()
}

fn edit(run: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut m = manifest(run);
    f(&mut m);
    std::fs::write(
        run.join("manifest.json"),
        serde_json::to_vec_pretty(&m).unwrap(),
    )
    .unwrap();
}

fn merge(out: &Path, inputs: &[&Path]) -> std::process::Output {
    lrab()
        .arg("merge")
        .arg("--out")
        .arg(out)
        .args(inputs)
        .output()
        .unwrap()
}

/// The merge failed with a usage error naming `field`, both values and both manifests, and
/// wrote nothing.
fn refused(
    o: &std::process::Output,
    out: &Path,
    field: &str,
    values: [&str; 2],
    a: &Path,
    b: &Path,
) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains(field), "names {field}: {t}");
    for v in values {
        assert!(t.contains(v), "names {v}: {t}");
    }
    for f in [a, b] {
        assert!(
            t.contains(&f.join("manifest.json").display().to_string()),
            "{t}"
        );
    }
    assert!(!out.exists(), "nothing written");
}

#[test]
fn shards_record_where_and_with_what_they_ran() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("results");
    let s1 = shard(&out, &arm(d.path(), "1.0"), None, "s1", 1, &[]);
    let m = manifest(&s1);
    let host = m["host"].as_str().unwrap();
    assert!(!host.is_empty() && host != "unknown", "{m}");
    let commit = m["suite_commit"].as_str().unwrap();
    assert!(!commit.is_empty(), "{m}");
    let want = lrab_tasks::content_hash(&lrab_tasks::Pack::builtin_dir()).unwrap();
    assert_eq!(m["pack_hash"], want.as_str());
    let a = &m["arms"][0];
    assert_eq!(a["name"], "good");
    assert_eq!(a["version"], "good 1.0", "detected by `arms check`: {a}");
    assert_eq!(a["pinned_version"], "1.0", "pinned in the arm file: {a}");
    assert_eq!(m["matrix"]["order"], "matrix");
    assert_eq!(m["backends"][0]["simulated"], true);
}

#[test]
fn merge_accepts_identical_shards_from_other_hosts_and_refuses_disagreeing_ones() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("results");
    let arms1 = arm(d.path(), "1.0");
    let s1 = shard(&out, &arms1, None, "s1", 1, &[]);
    let s2 = shard(&out, &arms1, None, "s2", 2, &[]);
    // the second shard ran on another host, against another backend URL, from another path
    edit(&s2, |m| {
        m["host"] = "gpu-node-7".into();
        m["backend_url"] = "http://10.1.2.3:11434".into();
        m["matrix"]["pack"] = "/scratch/elsewhere/tasks/lrab".into();
    });
    let merged = out.join("merged");
    let o = merge(&merged, &[&s1, &s2]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 missing"), "{}", text(&o));
    let hosts = manifest(&merged)["host"].as_str().unwrap().to_string();
    assert!(
        hosts.contains("gpu-node-7") && hosts.contains(','),
        "{hosts}"
    );

    // another suite commit
    let bad = out.join("bad");
    let c1 = manifest(&s1)["suite_commit"].as_str().unwrap().to_string();
    edit(&s2, |m| m["suite_commit"] = "0123456789abcdef".into());
    let o = merge(&bad, &[&s1, &s2]);
    refused(
        &o,
        &bad,
        "suite_commit",
        [&c1, "0123456789abcdef"],
        &s1,
        &s2,
    );
    edit(&s2, |m| m["suite_commit"] = c1.clone().into());

    // another version of the arm (detected), on a real run of the second shard
    let s2b = shard(&out, &arm(d.path(), "2.0"), None, "s2b", 2, &[]);
    let o = merge(&bad, &[&s1, &s2b]);
    refused(
        &o,
        &bad,
        "arms[good].version",
        ["good 1.0", "good 2.0"],
        &s1,
        &s2b,
    );

    // another task pack: one byte changed in a copy
    let pack = d.path().join("pack");
    lrab_tasks::copy_tree(&lrab_tasks::Pack::builtin_dir(), &pack).unwrap();
    let p = pack.join("WF-02/prompt.md");
    let mut t = std::fs::read(&p).unwrap();
    t.extend_from_slice(b"\n");
    std::fs::write(&p, t).unwrap();
    let s2c = shard(&out, &arms1, Some(&pack), "s2c", 2, &[]);
    let (h1, h2) = (
        manifest(&s1)["pack_hash"].clone(),
        manifest(&s2c)["pack_hash"].clone(),
    );
    assert_ne!(h1, h2);
    let o = merge(&bad, &[&s1, &s2c]);
    refused(
        &o,
        &bad,
        "pack_hash",
        [h1.as_str().unwrap(), h2.as_str().unwrap()],
        &s1,
        &s2c,
    );

    // another matrix (a knob and the task list)
    let s2d = shard(&out, &arms1, None, "s2d", 2, &["--seed", "7"]);
    let o = merge(&bad, &[&s1, &s2d]);
    refused(&o, &bad, "matrix.sim_seed", ["0", "7"], &s1, &s2d);
    edit(&s2d, |m| {
        m["matrix"]["tasks"] = serde_json::json!(["WF-01", "WF-03"])
    });
    let o = merge(&bad, &[&s1, &s2d]);
    refused(&o, &bad, "matrix.tasks", ["WF-02", "WF-03"], &s1, &s2d);
}

#[test]
fn manifests_written_before_the_new_fields_still_load() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("results");
    let arms1 = arm(d.path(), "1.0");
    let s1 = shard(&out, &arms1, None, "s1", 1, &[]);
    let s2 = shard(&out, &arms1, None, "s2", 2, &[]);
    let legacy = |m: &mut serde_json::Value| {
        let o = m.as_object_mut().unwrap();
        for k in ["schema_version", "host", "pack_hash", "backends"] {
            o.remove(k);
        }
        o["suite_commit"] = serde_json::Value::Null;
        o["matrix"].as_object_mut().unwrap().remove("order");
        for a in o["arms"].as_array_mut().unwrap() {
            a.as_object_mut().unwrap().remove("pinned_version");
        }
    };
    edit(&s2, legacy);
    // an old shard merges with a new one: only the recorded fields are compared
    let merged = out.join("merged");
    let o = merge(&merged, &[&s1, &s2]);
    assert!(o.status.success(), "{}", text(&o));
    // and an old run resumes (nothing left to do: the same cells, none rerun)
    let before = std::fs::read_to_string(s2.join("cells.csv")).unwrap();
    let o = lrab()
        .arg("run")
        .arg("--resume")
        .arg(&s2)
        .arg("--no-progress")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 attempts run"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(s2.join("cells.csv")).unwrap(),
        before
    );
}
