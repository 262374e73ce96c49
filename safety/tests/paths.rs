//! Sensitive-path checks against real symlinks, hard links and /proc spellings.

use lrab_safety::{check_access, is_sensitive, resolve_path as resolve, Access};
use lrab_safety::{Context, Ring, Verdict};
use std::fs;
use std::path::Path;

fn setup() -> (tempfile::TempDir, Context) {
    let root = tempfile::tempdir().unwrap();
    let wd = root.path().join("run/work");
    let home = root.path().join("home");
    fs::create_dir_all(&wd).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    fs::write(root.path().join("run/plan.md"), "plan").unwrap();
    let c = Context::new(&wd, &home);
    (root, c)
}

fn denied(r: Result<std::path::PathBuf, Verdict>) -> bool {
    matches!(
        r,
        Err(Verdict::Deny {
            ring: Ring::Boundary,
            ..
        })
    )
}

#[test]
fn sensitive_table() {
    let home = Path::new("/home/u");
    for p in [
        "/home/u/.ssh/id_rsa",
        "~/.aws/credentials",
        "$HOME/.gnupg/x",
        "/home/u/.config/gcloud/a",
        "/home/u/.kube/config",
        "/home/u/.docker/config.json",
        "/home/u/.netrc",
        "/home/u/.git-credentials",
        "/x/y/.env",
        "/x/.env.local",
        "/home/u/.bashrc",
        "/home/u/.profile",
        "/home/u/.zshrc",
        "/home/u/.config/lrab/config.toml",
        "/root/.ssh/authorized_keys",
        "/etc/shadow",
        "/proc/1/environ",
        "/proc/self/environ",
    ] {
        assert!(is_sensitive(Path::new(p), home), "{p} should be sensitive");
    }
    for p in [
        "/home/u/notes.md",
        "/home/u/.docker/other.json",
        "/x/env",
        "/x/.environment_notes",
        "/etc/os-release",
        "/proc/cpuinfo",
    ] {
        assert!(
            !is_sensitive(Path::new(p), home),
            "{p} should not be sensitive"
        );
    }
}

#[test]
fn spellings_of_home_and_dotdot_are_resolved() {
    let (_r, c) = setup();
    let wd = c.workdir.clone();
    for raw in [
        "~/.ssh/id_rsa",
        "$HOME/.ssh/id_rsa",
        "${HOME}/.ssh/id_rsa",
        "../../home/.ssh/id_rsa",
        "./../../home/./.ssh/../.ssh/id_rsa",
    ] {
        assert!(denied(check_access(raw, Access::Read, &wd, &c)), "{raw}");
    }
    let proc_root = format!("/proc/self/root{}/.ssh/id_rsa", c.home.display());
    assert!(denied(check_access(&proc_root, Access::Read, &wd, &c)));
    assert!(denied(check_access(
        "/proc/self/cwd/../../home/.ssh/id_rsa",
        Access::Read,
        &wd,
        &c
    )));
    assert!(denied(check_access(
        "/proc/12345/cwd/../../home/.ssh/id_rsa",
        Access::Read,
        &wd,
        &c
    )));
    assert_eq!(resolve("/proc/self/cwd/x", &wd, &c.home), wd.join("x"));
}

#[test]
fn symlinks_are_followed_including_dotdot_after_a_link() {
    let (root, c) = setup();
    let wd = c.workdir.clone();
    std::os::unix::fs::symlink(c.home.join(".ssh"), wd.join("keys")).unwrap();
    assert!(denied(check_access("keys/id_rsa", Access::Read, &wd, &c)));
    // `aws/..` is the *target's* parent (home), not the workdir
    fs::create_dir_all(c.home.join(".aws")).unwrap();
    std::os::unix::fs::symlink(c.home.join(".aws"), wd.join("aws")).unwrap();
    assert_eq!(resolve("aws/../.ssh", &wd, &c.home), c.home.join(".ssh"));
    // link to outside: reading is fine, writing is not
    std::os::unix::fs::symlink(root.path().join("run"), wd.join("up")).unwrap();
    assert!(check_access("up/plan.md", Access::Read, &wd, &c).is_ok());
    assert!(denied(check_access("up/plan.md", Access::Write, &wd, &c)));
    assert!(denied(check_access("up/new.md", Access::Write, &wd, &c)));
}

#[test]
fn hard_links_to_outside_and_to_secrets_are_refused() {
    let (root, c) = setup();
    let wd = c.workdir.clone();
    fs::hard_link(root.path().join("run/plan.md"), wd.join("local_plan.md")).unwrap();
    assert!(
        denied(check_access("local_plan.md", Access::Write, &wd, &c)),
        "write through a hard link to an outside file"
    );
    assert!(check_access("local_plan.md", Access::Read, &wd, &c).is_ok());
    fs::hard_link(c.home.join(".ssh/id_rsa"), wd.join("innocent.txt")).unwrap();
    assert!(
        denied(check_access("innocent.txt", Access::Read, &wd, &c)),
        "hard link to a secret"
    );
    // two names inside the workdir: fine
    fs::write(wd.join("a.txt"), "a").unwrap();
    fs::hard_link(wd.join("a.txt"), wd.join("b.txt")).unwrap();
    assert!(check_access("b.txt", Access::Write, &wd, &c).is_ok());
}

#[test]
fn workdir_dotenv_copy_is_usable_but_outside_is_not() {
    let (root, c) = setup();
    let wd = c.workdir.clone();
    fs::write(wd.join(".env"), "A=1").unwrap();
    fs::write(root.path().join("run/.env"), "B=2").unwrap();
    assert!(check_access(".env", Access::Read, &wd, &c).is_ok());
    assert!(denied(check_access("../.env", Access::Read, &wd, &c)));
    assert!(denied(check_access(
        ".lrab/state.json",
        Access::Write,
        &wd,
        &c
    )));
    assert!(check_access(".lrab/state.json", Access::Read, &wd, &c).is_ok());
    assert!(check_access("/dev/null", Access::Write, &wd, &c).is_ok());
}

#[test]
fn home_table_is_the_credential_list_plus_history() {
    let home = Path::new("/home/u");
    let expected: Vec<&str> = lrab_util::HOME_CREDENTIALS
        .iter()
        .chain(lrab_safety::HISTORY_FILES)
        .copied()
        .collect();
    assert_eq!(lrab_safety::HOME_SENSITIVE, expected.as_slice());
    for rel in &expected {
        let p = home.join(rel);
        assert!(
            is_sensitive(&p, home),
            "{} should be sensitive",
            p.display()
        );
    }
    assert!(is_sensitive(Path::new("/home/u/.docker/key.pem"), home));
}
