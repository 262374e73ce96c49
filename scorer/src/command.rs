//! Command runner for checks: `sh -c` in the workdir, own process group, timeout, group kill,
//! lossy UTF-8 output. The mechanism lives in `lrab_tasks::process` (solutions need it too and
//! the dependency points tasks <- scorer); this module is the scorer's single entry point to it.

pub(crate) use lrab_tasks::process::{run_argv, run_shell};

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A check command that spawns a long-lived child is killed as a whole group on timeout.
    #[test]
    fn timeout_kills_the_group_of_a_check_command() {
        let d = tempfile::tempdir().unwrap();
        let o = run_shell(
            "python3 -c 'import os,time; open(\"pid\",\"w\").write(str(os.getpid())); time.sleep(60)' & wait",
            d.path(),
            Duration::from_secs(3),
        )
        .unwrap();
        assert!(o.timed_out);
        let pid: i32 = std::fs::read_to_string(d.path().join("pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let mut gone = false;
        for _ in 0..100 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.is_empty()
                || stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            {
                gone = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone, "python child {pid} survived");
    }
}
