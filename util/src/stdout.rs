//! The binaries' rule for a closed stdout: `lrab tasks list | head -3` ends normally, without a
//! panic or a message, the way `cat` or ripgrep do. Once the reader has gone, what a command
//! still prints is dropped and the command finishes its work (files it writes, its own exit
//! status): a closed pipe never turns a failing safety run into a pass, nor loses a results
//! file that is written after the summary.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stdout has failed with EPIPE: from then on output is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader has gone (a write to it has failed with a broken pipe).
pub fn stdout_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Standard output (locked) as a [`Write`] for a command's results: a broken pipe is the end of
/// the output, not an error, so the writes after it succeed and write nothing. Other errors
/// (a full disk behind a redirection) are returned as they are.
pub struct Stdout(io::StdoutLock<'static>);

/// The process's standard output under the closed-stdout rule (see [`Stdout`]).
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// `r` with a broken pipe turned into success (and remembered).
fn gone_is_done<T>(r: io::Result<T>, done: T) -> io::Result<T> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(done)
        }
        r => r,
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if stdout_closed() {
            return Ok(buf.len());
        }
        gone_is_done(self.0.write(buf), buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if stdout_closed() {
            return Ok(());
        }
        gone_is_done(self.0.flush(), ())
    }
}

/// What [`out!`](crate::out) and [`outln!`](crate::outln) call: `print!` under the closed-stdout
/// rule. Any other failure panics with `print!`'s own message.
#[doc(hidden)]
pub fn print_fmt(args: fmt::Arguments<'_>) {
    if let Err(e) = stdout().write_fmt(args) {
        panic!("failed printing to stdout: {e}");
    }
}

/// `print!` for a command's results: once stdout's reader has gone the text is dropped and the
/// command carries on (see the crate's closed-stdout rule).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::print_fmt(::std::format_args!($($arg)*))
    };
}

/// `println!` for a command's results: once stdout's reader has gone the line is dropped and
/// the command carries on (see the crate's closed-stdout rule).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::print_fmt(::std::format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::print_fmt(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// Installs a panic hook that turns the standard library's "failed printing to stdout: Broken
/// pipe" panic (a `print!` that is not [`outln!`](crate::outln), clap's help) into a quiet exit
/// with status 0 (the reader has everything it asked for); every other panic goes to the
/// previous hook. Call it first thing in `main`.
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
    use std::io;

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

    #[test]
    fn only_a_broken_pipe_counts_as_the_end() {
        let full = io::Error::new(io::ErrorKind::StorageFull, "full");
        assert!(super::gone_is_done(Err::<usize, _>(full), 3).is_err());
        assert!(!super::stdout_closed());
        let gone = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(super::gone_is_done(Err(gone), 3).unwrap(), 3);
        assert!(super::stdout_closed());
    }
}
