//! Confinement inside a chroot whose root is not a mount point (how build containers such as
//! buildah's chroot isolation run): either confined commands work there, or the start-up
//! report says why and detection returns `None` — never a backend detected that then fails
//! every command. This test binary runs itself inside such a chroot, made in a private mount
//! namespace (`unshare -m`), so nothing changes on the host. Needs root and util-linux's
//! `unshare`; elsewhere it says so and passes.

use lrab_safety::{sandboxed_command, KernelSupport, Sandbox, SandboxPolicy as Policy};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const CANARY: &str = "CANARY-OUTSIDE-CHROOT-WORKDIR-5e1";

/// Inside the chroot: report the kernel support and run one confined command.
#[test]
fn chroot_entry() {
    let Ok(dir) = std::env::var("LRAB_CHROOT_ENTRY_DIR") else {
        return;
    };
    let k = KernelSupport::get();
    println!("SUMMARY {}", k.summary());
    let b = Sandbox::detect();
    println!("DETECTED {}", b.key());
    if b == Sandbox::None {
        return;
    }
    let dir = PathBuf::from(dir);
    let (work, tmp) = (dir.join("work"), dir.join("tmp"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(dir.join("outside.txt"), CANARY).unwrap();
    let policy = Policy {
        force: Some(b),
        ..Policy::default()
    };
    let cmd = "echo inside > f.txt && cat f.txt; cat ../outside.txt";
    let (mut c, _) = sandboxed_command(cmd, &work, &tmp, &policy).unwrap();
    match c.stderr(Stdio::null()).output() {
        Ok(o) => println!("COMMAND {}", String::from_utf8_lossy(&o.stdout).trim()),
        Err(e) => println!("COMMAND FAILED {e}"),
    }
}

fn bind_script(exe_dir: &Path, root: &Path) -> String {
    let mut s = format!(
        "set -e\nmount -t tmpfs tmpfs {base}\nR={base}/sub\nmkdir -p $R/proc $R/dev $R/tmp $R/etc $R/usr\n",
        base = root.display()
    );
    for d in [
        "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ] {
        let p = Path::new(d);
        match p.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                let t = std::fs::read_link(p).unwrap();
                s += &format!("ln -s {} $R{d}\n", t.display());
            }
            Ok(m) if m.is_dir() => s += &format!("mkdir -p $R{d}\nmount --rbind {d} $R{d}\n"),
            _ => {}
        }
    }
    s += &format!(
        "mkdir -p $R{e}\nmount --bind {e} $R{e}\nmount -t proc proc $R/proc\nmount --rbind /dev $R/dev\nchmod 1777 $R/tmp\nmkdir -p $R/tmp/entry\n",
        e = exe_dir.display()
    );
    s += "exec chroot $R \"$@\"\n";
    s
}

#[test]
fn a_chroot_either_confines_or_says_why() {
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } != 0 {
        println!("skipped: needs root to make a chroot");
        return;
    }
    let host_ok = Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !host_ok {
        println!("skipped: unshare -m does not work here");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = bind_script(exe.parent().unwrap(), base.path());
    let out = Command::new("unshare")
        .args([
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "chroot",
        ])
        .arg(&exe)
        .args(["--exact", "chroot_entry", "--nocapture", "--test-threads=1"])
        .env("LRAB_CHROOT_ENTRY_DIR", "/tmp/entry")
        .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("{text}");
    let line = |tag: &str| {
        text.lines()
            .find_map(|l| l.find(tag).map(|i| l[i + tag.len()..].to_string()))
            .unwrap_or_else(|| panic!("no {tag} line from inside the chroot:\n{text}"))
    };
    let detected = line("DETECTED ");
    let summary = line("SUMMARY ");
    if detected == "none" {
        assert!(
            summary.contains("FATAL"),
            "refused without a reason: {summary}"
        );
    } else {
        let c = line("COMMAND ");
        assert!(
            c.starts_with("inside"),
            "{detected} detected, but the command failed: {c}"
        );
        assert!(
            !c.contains(CANARY),
            "{detected}: read outside the workdir: {c}"
        );
    }
    // where Landlock confines on the host, the chroot keeps it (and says what it lacks)
    if let Sandbox::Landlock { .. } = Sandbox::detect() {
        assert_eq!(detected, "landlock", "{summary}");
    }
    // the namespace backend cannot pivot out of a chroot: the report names the step
    if summary.contains("trial namespaces: FAILED") {
        assert!(
            summary.contains("private mount") || summary.contains("pivot_root"),
            "{summary}"
        );
    }
}
