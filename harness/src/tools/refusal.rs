//! What the model is told when the safety classifier refuses a command: the verdict's reason
//! and the next executable action. Below both executors (the plain shell and the confined
//! one), which refuse the same way.

use crate::mechanisms::security::Refusal;
use lrab_safety::Verdict;

/// The refusal of a classifier verdict: its text (with the next action) and the verdict.
pub fn refusal(v: Verdict) -> Refusal {
    Refusal {
        text: refusal_text(&v),
        verdict: Some(v),
    }
}

/// The refusal text for the model: the verdict's reason plus the next executable action (the
/// classifier's own alternative when it has one).
pub fn refusal_text(v: &Verdict) -> String {
    let mut s = v.message();
    if let Verdict::Deny {
        alternative: Some(_),
        ..
    } = v
    {
        return s;
    }
    let reason = match v {
        Verdict::Deny { reason, .. } | Verdict::NeedsAttended { reason, .. } => reason.as_str(),
        Verdict::Allow => "",
    };
    let next = if reason.contains("recursive delete") {
        "list the files you mean to remove inside the working directory (`find DIR -type f`) and delete each one with `rm FILE`; never delete the working directory or anything above it"
    } else if v.ring() == Some(lrab_safety::Ring::SystemMutation) {
        "this run is unattended, so nothing outside the working directory is changed: use what is installed, or a virtual environment inside the working directory (`python3 -m venv .venv`)"
    } else {
        "do the same work inside the working directory with relative paths (or with the file tools read_file/write_file/edit_file)"
    };
    s.push_str(" — next: ");
    s.push_str(next);
    s
}
