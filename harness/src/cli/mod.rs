//! The command line (the arm protocol). `run` is what the runner's arm file calls; relaunching
//! the identical command (same workdir and `--state-dir`) resumes from the checkpoint.
//!
//! Exit codes (documented in docs/harness.md):
//! 0 finished (or a chat question answered), or stopped because the model made no progress
//! (stalled: the report says so) · 2 usage error · 3 prompt file missing/unreadable/
//! empty · 4 workdir missing or unwritable, or the state folder unusable · 5 backend unreachable · 6 model not found ·
//! 7 model cannot chat (or lacks tools with `--tool-protocol native`) · 8 backend failed
//! during the run · 9 stopped unfinished at a limit (max turns, time budget) · 128+n
//! terminated by signal n (a relaunch of the identical command resumes).
//!
//! One module per concern: `args` turns the command line (and the environment) into a
//! [`Command`]; `launch` connects the backend and runs the agent loop.

use crate::mechanisms::{prefill, Mechanism};

mod args;
mod launch;
#[cfg(test)]
mod tests;

pub use args::{parse, web_endpoint, Api, Command, ProtocolArg, RunArgs, DEFAULT_NUM_CTX};
pub use launch::{openai_context, run};

pub const EXIT_OK: i32 = 0;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_PROMPT: i32 = 3;
pub use crate::startup::EXIT_WORKDIR;
pub const EXIT_UNREACHABLE: i32 = 5;
pub const EXIT_MODEL_NOT_FOUND: i32 = 6;
pub const EXIT_NO_TOOLS: i32 = 7;
pub const EXIT_BACKEND: i32 = 8;
pub const EXIT_UNFINISHED: i32 = 9;

pub fn print_prefill() {
    for (part, n) in prefill::breakdown() {
        println!("{part:<24} {n:>4}");
    }
    println!("{:<24} {:>4}", "static prefill", prefill::static_prefill());
    println!(
        "{:<24} {:>4}",
        "text-protocol prefill",
        crate::mechanisms::text_protocol::static_prefill()
    );
    println!("(the published benchmark's estimator: CJK chars + other chars/4 + 1 per string; Mingbird 774 in v1.5.0, 797 in v1.6)");
}

pub fn print_mechanisms() {
    for m in Mechanism::ALL {
        println!("{:<16} ablated: {}", m.name(), m.ablation_effect());
    }
    println!(
        "{:<16} not ablatable (canonical-path confinement, protected paths, the parsing shell classifier)",
        "security"
    );
}

/// Entry point used by the binary; returns the exit code.
pub fn main_with(args: &[String]) -> i32 {
    let env_ab = std::env::var("LRAB_ABLATION").ok();
    let env_host = std::env::var("OLLAMA_HOST").ok();
    match parse(args, env_ab.as_deref(), env_host.as_deref()) {
        Ok(Command::Run(a)) => run(&a),
        Ok(Command::Prefill) => {
            print_prefill();
            EXIT_OK
        }
        Ok(Command::Mechanisms) => {
            print_mechanisms();
            EXIT_OK
        }
        Ok(Command::Help(text)) => {
            println!("{text}");
            EXIT_OK
        }
        Ok(Command::Version) => {
            println!("lrab-harness {}", env!("CARGO_PKG_VERSION"));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("lrab-harness: {e}\n{}", args::usage());
            EXIT_USAGE
        }
    }
}
