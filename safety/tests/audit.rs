//! The start-up hard-link audit and the refusal-message round trip.

use lrab_safety::audit_hard_links;
use lrab_safety::HardLinkError;
use lrab_safety::{Ring, Verdict};
use std::os::unix::fs::MetadataExt;

#[test]
fn refusal_messages_parse_back_to_their_verdicts() {
    let cases = [
        Verdict::Deny {
            ring: Ring::Irreversible,
            reason: "mkfs formats a filesystem".into(),
            alternative: None,
        },
        Verdict::Deny {
            ring: Ring::Boundary,
            reason: "recursive delete outside the workdir".into(),
            alternative: Some("delete single files with rm FILE".into()),
        },
        Verdict::NeedsAttended {
            ring: Ring::SystemMutation,
            reason: "apt-get install changes the system".into(),
        },
    ];
    for v in cases {
        let text = format!(
            "error: {} — next: do something else\nmore lines",
            v.message()
        );
        assert_eq!(Verdict::from_message(&text), Some(v.clone()), "{text}");
    }
    assert_eq!(Verdict::from_message("exit code 0\nhello"), None);
    assert_eq!(Verdict::from_message("[safety ring 9: x] refused: y"), None);
    assert_eq!(Verdict::from_message("[safety ring 2"), None);
}

#[test]
fn hard_link_to_a_home_secret_stops_the_start() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_rsa"), "SECRET").unwrap();
    std::fs::write(work.path().join("notes.txt"), "plain").unwrap();
    assert!(audit_hard_links(work.path(), home.path()).is_ok());
    std::fs::create_dir(work.path().join("sub")).unwrap();
    std::fs::hard_link(
        home.path().join(".ssh/id_rsa"),
        work.path().join("sub/data.txt"),
    )
    .unwrap();
    let e = audit_hard_links(work.path(), home.path()).unwrap_err();
    assert!(
        matches!(&e, HardLinkError::Credentials { names, .. } if names == &["sub/data.txt"]),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(
        e.contains("sub/data.txt") && e.contains("credential"),
        "{e}"
    );
    // nothing was changed: the link is still there, the secret intact
    assert_eq!(
        std::fs::metadata(home.path().join(".ssh/id_rsa"))
            .unwrap()
            .nlink(),
        2
    );
}

#[test]
fn hard_links_to_outside_files_stop_the_start_links_inside_are_kept() {
    let base = tempfile::tempdir().unwrap();
    let home = base.path().join("home");
    let work = base.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    // two names inside the workdir only: not a boundary problem, left alone
    std::fs::write(work.join("a.txt"), "a").unwrap();
    std::fs::hard_link(work.join("a.txt"), work.join("b.txt")).unwrap();
    assert!(audit_hard_links(&work, &home).is_ok());
    // a name of a file outside (not a credential: its bytes are still not the task's)
    let outside = base.path().join("plan.md");
    std::fs::write(&outside, "original plan\n").unwrap();
    std::fs::hard_link(&outside, work.join("p.md")).unwrap();
    let e = audit_hard_links(&work, &home).unwrap_err();
    assert_eq!(
        e,
        HardLinkError::Outside {
            names: vec!["p.md".into()]
        }
    );
    let e = e.to_string();
    assert!(
        e.contains("outside it: p.md") && e.contains("cp --remove-destination"),
        "{e}"
    );
    // nothing was changed
    assert_eq!(std::fs::metadata(work.join("p.md")).unwrap().nlink(), 2);
    assert_eq!(std::fs::metadata(work.join("a.txt")).unwrap().nlink(), 2);
}
