//! Helpers shared by the runner's integration tests that run the real `lrab` binary.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The `lrab` binary of this build, blind to the caller's `LRAB_PACK`, `LRAB_ARMS`,
/// `LRAB_HARNESS_BIN` and `LRAB_SANDBOX`, so tests see the built-in pack, arms, harness and
/// confinement unless they name others.
pub fn lrab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lrab"));
    for v in ["LRAB_PACK", "LRAB_ARMS", "LRAB_HARNESS_BIN", "LRAB_SANDBOX"] {
        c.env_remove(v);
    }
    c
}

/// Stdout then stderr, for assertions and failure messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
