//! Opt-in: the Slurm path on a real single-node cluster. `scripts/slurm/check.sh` installs
//! slurm-wlm and munge (root, apt), brings the cluster up, runs a 16-cell sim matrix (our
//! harness and agent-mini) serially and as a 4-task array, stops three tasks mid-cell in three
//! ways, lets Slurm requeue them, merges, compares the merge with the serial run and tears the
//! cluster down. A few minutes on 2 cores, hence `#[ignore]` and `LRAB_SLURM=1`:
//!
//! `LRAB_SLURM=1 cargo test -p lrab-runner --test slurm -- --ignored --nocapture`
//!
//! (`cargo build -p lrab-harness` first when running this crate alone: the harness arm is the
//! `lrab-harness` next to `lrab`.) Without root or apt, the script exits 77 and the test says
//! why it was skipped.

mod common;

use std::path::Path;

#[test]
#[ignore = "brings up a real Slurm cluster (root, apt-get) and takes minutes; set LRAB_SLURM=1 and pass --ignored"]
fn slurm_array_with_requeued_tasks_merges_to_the_serial_run() {
    if !common::opted_in("LRAB_SLURM", "the Slurm check (scripts/slurm/check.sh)") {
        return;
    }
    let skipped = "no Slurm cluster can be had here: ";
    let Some(text) = common::check_script(
        "scripts/slurm/check.sh",
        skipped,
        &["SKIP", "cannot set up"],
    ) else {
        return;
    };
    common::assert_says(
        &text,
        &[
            "serial run: 16 rows",
            "stopped mid-cell by crash",
            "stopped mid-cell by requeue",
            "stopped mid-cell by usr1",
            "merged run = serial run: 16 cells, same scores, no duplicates, no orphans",
            "slurm down",
            "== OK: Slurm array + requeue + merge reproduce the serial run",
        ],
    );
    // No daemon of the cluster is left.
    for pid_file in [
        "/run/slurm/slurmctld.pid",
        "/run/slurm/slurmd.pid",
        "/run/munge/munged.pid",
    ] {
        assert!(!Path::new(pid_file).exists(), "{pid_file} left behind");
    }
}
