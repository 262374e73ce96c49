//! τ²-bench in Rust: the airline, retail, telecom and mock domains with upstream's exact
//! tool semantics and canonical DB hashing, gold replay, the evaluator, the half-duplex
//! orchestrator (with dual control: the simulated user operates their own tools), agents
//! and user simulators, tau2-format results and the `lrab tau2` command line.
//! How it fits together and what "upstream" means here: docs/tau2.md.

mod args;
mod calc;
mod canon;
mod cli;
mod domains;
mod error;
mod evaluate;
mod external;
mod gold;
mod harness_agent;
mod llm;
mod mcp;
mod message;
mod options;
mod orchestrator;
mod participants;
mod protocol;
mod pyjson;
mod results;
mod run_cmd;
mod scripted;
mod task;

// What the `lrab` binary (runner) and the tests use; everything else stays inside.
pub use canon::sha256_hex;
pub use cli::{run as run_cli, run_with as run_cli_with, Tau2Args, Tau2Cmd};
pub use domains::{as_bool, resolve_data_dir, Domain, DomainKind, Env};
pub use error::{Result as Tau2Result, Tau2Error};
pub use evaluate::{
    evaluate, Evaluation, Judge, INFRASTRUCTURE_ERROR, MAX_STEPS, TOO_MANY_ERRORS, USER_STOP,
};
pub use external::{Conversation, ExternalAgent};
pub use gold::replay_gold;
pub use harness_agent::{HarnessAgent, LOOP_NUDGE, REPEAT_NUDGE};
pub use llm::{Api, Backend, LlmJudge, LlmUser, PlainAgent};
pub use mcp::{Relayed, CUSTOMER_TOOL};
pub use message::{Message, ToolCall};
pub use options::{AgentKind, UserKind};
pub use orchestrator::{run as run_conversation, Agent, Limits, Outcome, User, GREETING};
pub use scripted::{GoldAgent, ScriptedUser};
pub use task::Task;

#[cfg(test)]
mod tests {
    /// The error kinds and words of failures from several modules (here, above them all).
    #[test]
    fn library_failures_have_their_kind_and_old_words() {
        let e = crate::DomainKind::parse("bank").unwrap_err();
        assert!(matches!(e, crate::Tau2Error::Data(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "unknown domain \"bank\" (expected airline, retail, telecom or mock)"
        );
        let Err(e) = crate::llm::check_url("ftp://example.org") else {
            panic!("an ftp URL was accepted");
        };
        assert!(matches!(e, crate::Tau2Error::Backend(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "backend URL \"ftp://example.org\" must start with http:// or https://"
        );
        let e = crate::llm::parse_judge("I think so", &["a".into()]).unwrap_err();
        assert!(matches!(e, crate::Tau2Error::Judge(_)), "{e:?}");
        assert_eq!(e.to_string(), "judge reply has no JSON object");
        let e =
            crate::resolve_data_dir(Some(std::path::Path::new("/nonexistent/tau2"))).unwrap_err();
        assert!(matches!(e, crate::Tau2Error::Data(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "tau2 data directory /nonexistent/tau2 does not exist"
        );
    }
}
