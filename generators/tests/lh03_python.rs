//! LH-03 against a real Python: untouched suite fails all ten cases, the reference modules in
//! the task pack pass all ten, and fixing one module fixes exactly its own case (one planted
//! bug per module), for many seeds.

use std::path::{Path, PathBuf};
use std::process::Command;

use lrab_generators::generate;

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/lrab/LH-03/reference/files")
}

/// The real interpreter path (version-manager shims such as pyenv's cost a shell start per
/// call, which would dominate these tests).
fn python() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
}

/// Writes seed's files into a fresh dir under `root`, overlaying `fixed` modules from the
/// reference; returns the dir.
fn prepare(root: &Path, seed: u64, fixed: &[usize]) -> PathBuf {
    let g = generate("lh03", seed).unwrap();
    let tag: Vec<String> = fixed.iter().map(|m| m.to_string()).collect();
    let dir = root.join(format!("s{seed}_f{}", tag.join("-")));
    std::fs::create_dir_all(&dir).unwrap();
    for (path, bytes) in &g.files {
        std::fs::write(dir.join(path), bytes).unwrap();
    }
    for m in fixed {
        let name = format!("m{m:02}.py");
        std::fs::copy(reference_dir().join(&name), dir.join(&name)).unwrap();
    }
    dir
}

/// Runs `python test_suite.py` in `dir` as its own process (exactly what the check does).
fn run_suite(dir: &Path) -> String {
    let out = Command::new(python())
        .arg("-B")
        .arg("test_suite.py")
        .current_dir(dir)
        .output()
        .expect("python runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the suites of many dirs in one interpreter (startup dominates on this machine):
/// each suite runs via `runpy` with a fresh module cache, output captured per dir.
fn run_suites(dirs: &[PathBuf]) -> Vec<String> {
    const DRIVER: &str = r#"
import contextlib, io, runpy, sys
for d in sys.argv[1:]:
    for m in [k for k in sys.modules if k[:1] == "m" and k[1:].isdigit()]:
        del sys.modules[m]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            runpy.run_path(d + "/test_suite.py", run_name="__main__")
        except SystemExit:
            pass
    sys.path.remove(d)
    print(buf.getvalue() + "\x1e", end="")
"#;
    let out = Command::new(python())
        .arg("-B")
        .arg("-c")
        .arg(DRIVER)
        .args(dirs)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let parts: Vec<String> = text.split('\x1e').map(str::to_string).collect();
    assert_eq!(parts.len(), dirs.len() + 1, "{text}");
    parts[..dirs.len()].to_vec()
}

#[test]
fn suite_runs_as_a_process_like_the_check() {
    let root = tempfile::tempdir().unwrap();
    let all: Vec<usize> = (1..=10).collect();
    let untouched = run_suite(&prepare(root.path(), 4303, &[]));
    assert!(
        untouched.trim_end().ends_with("0 passed, 10 failed"),
        "{untouched}"
    );
    let fixed = run_suite(&prepare(root.path(), 4303, &all));
    assert!(fixed.contains("10 passed, 0 failed"), "{fixed}");
}

#[test]
fn untouched_fails_all_and_reference_passes_all_for_50_seeds() {
    let root = tempfile::tempdir().unwrap();
    let all: Vec<usize> = (1..=10).collect();
    let seeds: Vec<u64> = (1..51).chain([4303]).collect();
    let mut dirs = Vec::new();
    for &seed in &seeds {
        dirs.push(prepare(root.path(), seed, &[]));
        dirs.push(prepare(root.path(), seed, &all));
    }
    let outs = run_suites(&dirs);
    for (k, &seed) in seeds.iter().enumerate() {
        let (untouched, fixed) = (&outs[2 * k], &outs[2 * k + 1]);
        assert!(
            untouched.trim_end().ends_with("0 passed, 10 failed"),
            "seed {seed}:\n{untouched}"
        );
        assert!(
            fixed.trim_end().ends_with("10 passed, 0 failed"),
            "seed {seed}:\n{fixed}"
        );
    }
}

#[test]
fn each_module_has_exactly_one_bug() {
    let funcs = [
        "calc_mean",
        "calc_median",
        "calc_variance",
        "calc_slope",
        "calc_interp",
        "calc_smooth",
        "calc_normalize",
        "calc_integrate",
        "calc_roots",
        "calc_fit",
    ];
    let root = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for seed in [4303, 5, 6] {
        for m in 1..=10usize {
            cases.push((seed, m, prepare(root.path(), seed, &[m])));
        }
    }
    let dirs: Vec<PathBuf> = cases.iter().map(|c| c.2.clone()).collect();
    for ((seed, m, _), out) in cases.iter().zip(run_suites(&dirs)) {
        assert!(
            out.contains(&format!("PASS m{m:02}.{}", funcs[m - 1])),
            "seed {seed} m{m:02}:\n{out}"
        );
        assert!(
            out.contains("1 passed, 9 failed"),
            "seed {seed} m{m:02}:\n{out}"
        );
    }
}

#[test]
fn all_generated_python_compiles() {
    let g = generate("lh03", 4303).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in &g.files {
        std::fs::write(dir.path().join(path), bytes).unwrap();
        let st = Command::new(python())
            .args(["-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())"])
            .arg(dir.path().join(path))
            .status()
            .unwrap();
        assert!(st.success(), "{path} does not parse");
    }
}
