//! The binaries' rule for a closed stdout: `lrab tasks list | head -3` ends normally, without a
//! panic, the way `cat` or ripgrep do.

/// Installs a panic hook that turns the standard library's "failed printing to stdout: Broken
/// pipe" panic into a quiet exit with status 0 (the reader has everything it asked for); every
/// other panic goes to the previous hook. Call it first thing in `main`.
pub fn treat_closed_stdout_as_end() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_closed_stdout(msg) {
            std::process::exit(0);
        }
        previous(info);
    }));
}

/// The message of the panic `print!`/`println!` raise when stdout's reader has gone.
fn is_closed_stdout(msg: &str) -> bool {
    msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe")
}

#[cfg(test)]
mod tests {
    #[test]
    fn recognises_only_the_broken_pipe_panic() {
        assert!(super::is_closed_stdout(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!super::is_closed_stdout(
            "failed printing to stdout: No space left on device"
        ));
        assert!(!super::is_closed_stdout("index out of bounds"));
    }
}
