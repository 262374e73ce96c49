//! Set-up shared by `slurm_scripts.rs` and `shard_scripts.rs`: where the job scripts are, how
//! a script is run (a clean environment), and the tiny matrix both run through them.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn script(name: &str) -> PathBuf {
    repo().join("scripts/slurm").join(name)
}

/// A script run with a clean environment: no Slurm or Kubernetes variables of the machine the
/// tests run on leak in (a test inside a Slurm job must not requeue that job).
pub fn bash(path: &Path) -> Command {
    let mut c = Command::new("bash");
    c.arg(path)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("LRAB_BIN", env!("CARGO_BIN_EXE_lrab"));
    c
}

/// A folder with arm `good` (writes WF-01's answer at once) and arm `slow`, whose first
/// launch hangs (recording the pid of its `sleep`) and whose later launches are quick.
pub fn arms(dir: &Path) -> PathBuf {
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
pub fn matrix(arms: &Path, arm: &str) -> Vec<String> {
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
pub fn run_flags(arms: &Path, arm: &str) -> Vec<String> {
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
