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

pub use args::{Out, ToolError, ToolResult};
pub use canon::sha256_hex;
pub use cli::{run as run_cli, run_with as run_cli_with, GradeArgs, Tau2Args, Tau2Cmd};
pub use domains::telecom::{LoadError as TelecomLoadError, TelecomDb, TelecomState, UserDb};
pub use domains::{as_bool, deep_merge, resolve_data_dir, Domain, DomainKind, Env, ToolKind};
pub use error::{Result as Tau2Result, Tau2Error};
pub use evaluate::{
    action_matches, communicated, evaluate, is_error_cell, pass_hat_k, Evaluation, Judge, NlResult,
    AGENT_ERROR, AGENT_STOP, INFRASTRUCTURE_ERROR, MAX_STEPS, TOO_MANY_ERRORS, USER_ERROR,
    USER_STOP,
};
pub use external::{Conversation, ExternalAgent, MakeUser};
pub use gold::{replay_gold, GoldOutcome};
pub use harness_agent::{HarnessAgent, EMPTY_NUDGE, LOOP_NUDGE, MAX_REASKS, REPEAT_NUDGE};
pub use llm::{
    agent_system_prompt, agent_view, chat, parse_judge, user_system_prompt, user_view, Api,
    Backend, LlmJudge, LlmUser, PlainAgent, Reply,
};
pub use mcp::{McpArgs, Relayed, AGENT_STOP_TEXT, CUSTOMER_TOOL, PROTOCOL_VERSIONS};
pub use message::{Message, ToolCall};
pub use options::{iso_time, AgentKind, RunArgs, UserKind};
pub use orchestrator::{
    is_user_stop, run as run_conversation, Agent, Limits, Outcome, User, DEFAULT_MAX_ERRORS,
    DEFAULT_MAX_STEPS, GREETING, STOP_TOKENS,
};
pub use protocol::{pass_hat_ks, ErrorCells};
pub use pyjson::{dumps, dumps_sorted, float_repr, PyNum};
pub use results::{csv_row, results_json, write_csv, RunInfo, SimRecord, CSV_HEADER};
pub use scripted::{gold_pair, GoldAgent, ScriptedUser};
pub use task::{
    parse_tasks, Action, EnvAssertion, EnvFunctionCall, EvaluationCriteria, InitialState,
    InitializationData, Instructions, Task, UserScenario,
};

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
        let Err(e) = crate::llm::check_url("https://example.org") else {
            panic!("an https URL was accepted");
        };
        assert!(matches!(e, crate::Tau2Error::Backend(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "backend URL \"https://example.org\" must start with http:// (https is not supported)"
        );
        let e = crate::parse_judge("I think so", &["a".into()]).unwrap_err();
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
