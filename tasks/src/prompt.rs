//! Prompt rendering. Every arm receives byte-identical text, so the header and footer are fixed
//! here and name no tool of any particular harness.

use crate::spec::TaskSpec;

/// Shared autonomous-agent header (tool-name neutral).
pub const HEADER: &str = "\
You are working autonomously on a task in the current working directory. Nobody will answer \
questions while you work, so make reasonable decisions yourself and keep going.
Before you start, create a numbered plan of the steps you will take: use your planning or todo \
tool if you have one, otherwise write the plan to plan.md.
All input files you need are in the working directory. Write every output file into the working \
directory under exactly the file name the task asks for.";

/// Extra header lines for tier-4 (long-horizon) tasks.
pub const LONG_TASK: &str = "\
This is a long task: work through ALL steps persistently, one after the other, and do not stop \
before the last one is done.
Every number you report must be computed from the input files (run code to compute it); never \
estimate or invent a value.";

/// Shared footer.
pub const FOOTER: &str = "\
When every step is done and every file exists, finish with a short summary of what you produced \
(use your finish or done mechanism if you have one, or just report completion).";

/// Renders the full prompt for a task with the given `prompt.md` body.
pub fn render(spec: &TaskSpec, body: &str) -> String {
    let mut s = String::new();
    s.push_str(HEADER);
    s.push('\n');
    if spec.long_horizon() {
        s.push_str(LONG_TASK);
        s.push('\n');
    }
    s.push('\n');
    s.push_str(body.trim_end());
    s.push_str("\n\n");
    s.push_str(&format!(
        "Required steps (plan at least {}):\n",
        spec.plan_steps.len()
    ));
    for (i, step) in spec.plan_steps.iter().enumerate() {
        s.push_str(&format!("{}. {}\n", i + 1, step.trim()));
    }
    s.push('\n');
    s.push_str(FOOTER);
    s.push('\n');
    s
}
