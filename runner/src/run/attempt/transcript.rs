//! The attempt's transcript: the conversation rendered from the trajectory, turn by turn
//! (`proxy::transcript`), then each phase's stdout and stderr, phases joined by the protocol's
//! relaunch separator, written to `transcript.txt` (the per-phase files are removed). The
//! failure-mode rules read the arm's own output for the stall signal.

use std::path::Path;

use anyhow::Result;

/// Writes `dir/transcript.txt`: the rendered `trajectory` (when there is one), then the output
/// files of `phases` launches in `dir`, whose joined text is returned. `kill_pct` is named in
/// the separator before a relaunch.
pub(super) fn collect(
    dir: &Path,
    phases: usize,
    kill_pct: Option<u8>,
    trajectory: &[lrab_records::TrajectoryEntry],
) -> Result<String> {
    let mut transcript = String::new();
    for n in 1..=phases {
        if n == 2 {
            transcript.push_str(&format!(
                "\n--- KILLED AT {}%, RELAUNCHED ---\n",
                kill_pct.unwrap_or(0)
            ));
        }
        for (ext, head) in [("stdout", ""), ("stderr", "\n--- STDERR ---\n")] {
            let p = dir.join(format!("phase{n}.{ext}"));
            let bytes = std::fs::read(&p).unwrap_or_default();
            transcript.push_str(head);
            transcript.push_str(&String::from_utf8_lossy(&bytes));
            let _ = std::fs::remove_file(&p);
        }
    }
    let conversation = super::super::proxy::transcript::render(trajectory);
    if conversation.is_empty() {
        std::fs::write(dir.join("transcript.txt"), &transcript)?;
    } else {
        std::fs::write(
            dir.join("transcript.txt"),
            // the size names where the arm's output starts whatever the conversation holds
            // (lrab_analysis::markers::arm_output)
            format!(
                "{conversation}=== ARM OUTPUT === ({} bytes)\n{transcript}",
                transcript.len()
            ),
        )?;
    }
    Ok(transcript)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_joined_in_order_and_their_files_removed() {
        let d = tempfile::tempdir().unwrap();
        for (f, t) in [
            ("phase1.stdout", "out1"),
            ("phase1.stderr", "err1"),
            ("phase2.stdout", "out2"),
        ] {
            std::fs::write(d.path().join(f), t).unwrap();
        }
        let t = collect(d.path(), 2, Some(50), &[]).unwrap();
        assert_eq!(
            t,
            "out1\n--- STDERR ---\nerr1\n--- KILLED AT 50%, RELAUNCHED ---\nout2\n--- STDERR ---\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("transcript.txt")).unwrap(),
            t
        );
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "phase files are removed");
        assert_eq!(
            collect(d.path(), 1, None, &[]).unwrap(),
            "\n--- STDERR ---\n"
        );
    }
}
