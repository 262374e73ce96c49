//! Same seed -> same bytes; pinned default outputs; different seeds differ; the task packs'
//! `generated.sha256` manifests match the default seeds.

use lrab_generators::{default_seed, generate, manifest, names, GenError};

/// sha256 of each default-seed output, pinned: a change here changes every published number.
const PINNED: &[(&str, &str)] = &[
    (
        "lh01",
        "03b7e938c6734b83eca5630ba1739a869e9e6033efb87f43ecc029572dadc7e5  alloy_multibatch.csv\n",
    ),
    (
        "lh02",
        "108d9c08b12f6cb06a5d4a99264ecdb459583c1b9d89dbe7c8998b5171e845aa  process_corpus.txt\n",
    ),
    ("lh03", "91882e394a4d4362e06c719230ded61ea790c0b5a734eec67fbe6b23721962c7  m01.py\nfa1060c7945783df2dc0d8a682f9e520a126fed120aeb8e239303e60744acc32  m02.py\n2a748cb7c5f8a328b689ac8758cf328593955e063b8d4ef98c4c4bf40c705710  m03.py\n542838c60b7c77f88aa35a3b7f5736c547d4b25bb9e39948b2d26bcf22f9ee4a  m04.py\nff7f9b6c654886100b682cd3245e6b6bd98ee643715913c9c08998a6e3e43b0c  m05.py\nf795e13a250c612abf670f191e1cdf4302940fc0759c30da5bf793587d55f43c  m06.py\ncc2bd9ab40d211cb844cabd47bee04b2c65767701c5693fba28755e44ba84706  m07.py\n982f46ad8aa067574c7b38ce6a4e693660a11268a8531d5df999c60d42c1d5f8  m08.py\n9f2584075dcbdaad459ff2850dbd1aa2b22e19957dfe634132a6f24d8e138744  m09.py\ncb90d7374d3f78bf225700b49e871570bd56b9daedc74a6ff878cdbb56ba82bb  m10.py\nec1201bf93c88ff54524e4748c99e16991c1f676cc67813150454f0565bca2e2  test_suite.py\n"),
];

#[test]
fn same_seed_same_bytes_and_truths() {
    for name in names() {
        for seed in [0, 7, default_seed(name).unwrap()] {
            let a = generate(name, seed).unwrap();
            let b = generate(name, seed).unwrap();
            assert_eq!(a, b, "{name} seed {seed}");
        }
    }
}

#[test]
fn default_outputs_are_pinned() {
    for (name, pinned) in PINNED {
        let g = generate(name, default_seed(name).unwrap()).unwrap();
        assert_eq!(&manifest(&g), pinned, "{name}");
    }
}

#[test]
fn different_seeds_differ() {
    for name in names() {
        let a = generate(name, 11).unwrap();
        let b = generate(name, 12).unwrap();
        assert_ne!(a.files, b.files, "{name}");
    }
}

#[test]
fn unknown_generator_is_a_clear_error() {
    let err = generate("lh99", 1).unwrap_err();
    assert!(matches!(err, GenError::Unknown(_)));
    let msg = err.to_string();
    assert!(
        msg.contains("lh99") && msg.contains("lh01, lh02, lh03"),
        "{msg}"
    );
}

/// The committed `tasks/lrab/<ID>/generated.sha256` must equal the fresh manifest.
/// `LRAB_UPDATE_MANIFESTS=1 cargo test -p lrab-generators --test determinism` rewrites them.
#[test]
fn task_pack_manifests_are_current() {
    let pack = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/lrab");
    for (task, name) in [("LH-01", "lh01"), ("LH-02", "lh02"), ("LH-03", "lh03")] {
        let fresh = manifest(&generate(name, default_seed(name).unwrap()).unwrap());
        let path = pack.join(task).join("generated.sha256");
        if std::env::var_os("LRAB_UPDATE_MANIFESTS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            on_disk,
            fresh,
            "{} is out of date; expected content:\n{fresh}(rerun with LRAB_UPDATE_MANIFESTS=1)",
            path.display()
        );
    }
}
