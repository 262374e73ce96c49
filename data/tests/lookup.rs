//! The lookup order and the tests' gate, with LRAB_DATA and the cache pointed at folders made
//! here (one test: it sets the process's environment).

use lrab_data::{file, folder, test_file, test_folder, DataError, FILES};

#[test]
fn lookup_order_refusal_and_the_test_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let (env_dir, cache) = (tmp.path().join("data"), tmp.path().join("cache"));
    std::fs::create_dir_all(&env_dir).unwrap();
    std::env::set_var("LRAB_DATA", &env_dir);
    std::env::set_var("LRAB_DATA_CACHE", &cache);
    std::env::remove_var("LRAB_REQUIRE_DATA");

    // every carried file is in the repository with its catalogue digest
    for f in FILES.iter().filter(|f| !f.is_fetched()) {
        let p = file(f.path).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.starts_with(lrab_data::carried_dir()), "{}", p.display());
    }
    // LRAB_DATA stands in for ../shared/data: the published text is then missing, and the
    // message names every place and the command that gets it
    let e = folder("tau2").unwrap_err().to_string();
    assert!(e.starts_with("tau2/"), "{e}");
    assert!(
        e.contains(&format!("LRAB_DATA={}", env_dir.display())),
        "{e}"
    );
    assert!(
        e.contains("data/") && e.contains(&cache.display().to_string()),
        "{e}"
    );
    assert!(e.contains("`lrab data fetch`"), "{e}");
    assert!(!e.contains("../shared"), "{e}");

    // a copy in LRAB_DATA comes first, and a wrong one is refused, not read
    let name = "mingbird/lrab_scores.csv";
    std::fs::create_dir_all(env_dir.join("mingbird")).unwrap();
    std::fs::write(env_dir.join(name), "harness,task,model,score\n").unwrap();
    match file(name) {
        Err(DataError::Digest {
            file,
            expected,
            actual,
        }) => {
            assert_eq!(file, env_dir.join(name));
            assert_eq!(expected, lrab_data::entry(name).unwrap().sha256);
            assert_eq!(actual, lrab_util::sha256_hex(b"harness,task,model,score\n"));
        }
        other => panic!("{other:?}"),
    }
    let carried = lrab_data::carried_dir().join(name);
    std::fs::copy(&carried, env_dir.join(name)).unwrap();
    assert_eq!(file(name).unwrap(), env_dir.join(name));
    assert!(file("mingbird/nope.csv")
        .unwrap_err()
        .to_string()
        .contains("not a data file"));

    // the gate: None (after a `skipped:` line) when missing, a failure when data is required
    assert!(test_folder("tau2").is_none());
    assert!(test_file(name).is_some());
    std::env::set_var("LRAB_REQUIRE_DATA", "1");
    let r = std::panic::catch_unwind(|| test_folder("mingbird"));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("LRAB_REQUIRE_DATA") && msg.contains("mingbird/prompts_"),
        "{msg}"
    );
    // data the shared data set predates skips with its reason even when data is required
    assert!(test_file("mingbird-safety/verification_gemma4_e2b.csv").is_none());
    std::env::set_var("LRAB_REQUIRE_DATA", "0");
    assert!(test_folder("mingbird").is_none());
}
