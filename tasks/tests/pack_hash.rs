//! The task pack's content hash (recorded in run manifests so `lrab merge` can refuse shards
//! scored against different tasks): equal for equal content wherever the pack lives, blind to
//! check caches, different for any changed byte or name.

use lrab_tasks::Pack;

#[test]
fn pack_hash_follows_content_not_location() {
    let builtin = Pack::builtin_dir();
    let h0 = lrab_tasks::content_hash(&builtin).unwrap();
    assert!(h0.starts_with("sha256:") && h0.len() == 7 + 64, "{h0}");
    let d = tempfile::tempdir().unwrap();
    let copy = d.path().join("pack");
    lrab_tasks::copy_tree(&builtin, &copy).unwrap();
    let pack = Pack::load(&copy).unwrap();
    assert_eq!(pack.content_hash().unwrap(), h0, "same files elsewhere");
    // caches left by running checks are not content
    std::fs::create_dir_all(copy.join("WF-01/__pycache__")).unwrap();
    std::fs::write(copy.join("WF-01/__pycache__/check.cpython-311.pyc"), b"x").unwrap();
    std::fs::create_dir_all(copy.join(".pytest_cache")).unwrap();
    std::fs::write(copy.join(".pytest_cache/v"), b"x").unwrap();
    assert_eq!(pack.content_hash().unwrap(), h0);
    // one byte more in one file
    let toml = copy.join("WF-01/task.toml");
    let mut t = std::fs::read(&toml).unwrap();
    t.push(b'\n');
    std::fs::write(&toml, &t).unwrap();
    let h1 = pack.content_hash().unwrap();
    assert_ne!(h1, h0);
    // restored, it hashes as before; one file more (even empty) does not
    t.pop();
    std::fs::write(&toml, &t).unwrap();
    assert_eq!(pack.content_hash().unwrap(), h0);
    std::fs::write(copy.join("WF-01/extra.txt"), b"").unwrap();
    assert_ne!(pack.content_hash().unwrap(), h0);
    // an unreadable root is an error naming it
    let e = lrab_tasks::content_hash(&d.path().join("nope"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope"), "{e}");
}
