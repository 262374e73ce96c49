//! LRAB tasks as the simulated model knows them: each task's rendered prompt (to recognise it
//! in a conversation) and its reference solution turned into a plan of steps.

use std::path::Path;

use crate::convo::Conv;

/// One step of a plan.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write a file (relative path) with these bytes.
    Write { path: String, bytes: Vec<u8> },
    /// Run a shell command in the workdir.
    Run { command: String },
}

impl Step {
    /// The path a write step targets.
    pub fn path(&self) -> Option<&str> {
        match self {
            Step::Write { path, .. } => Some(path),
            Step::Run { .. } => None,
        }
    }
}

/// A task the model can recognise and carry out.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPlan {
    pub id: String,
    /// LRAB tier (1–4): content errors grow with it.
    pub tier: u8,
    /// Input files the task starts from, by workdir path (only Python sources: a partial fix
    /// reverts one changed region of such a file).
    pub originals: std::collections::BTreeMap<String, Vec<u8>>,
    /// Lines of the prompt that no other task shares (whitespace-collapsed).
    pub key_lines: Vec<String>,
    pub steps: Vec<Step>,
}

/// All known tasks.
#[derive(Debug, Clone, Default)]
pub struct TaskIndex {
    pub plans: Vec<TaskPlan>,
}

/// Collapses runs of whitespace to one space and trims.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for ch in s.chars() {
        if ch.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(ch);
        }
    }
    out
}

impl TaskIndex {
    /// Builds the index from (id, rendered prompt, steps) triples. A prompt line counts as
    /// distinctive when it has at least 20 characters and appears in no other prompt.
    pub fn new(tasks: Vec<(String, String, Vec<Step>)>) -> TaskIndex {
        Self::with_details(
            tasks
                .into_iter()
                .map(|(id, p, s)| (id, p, s, 1, Default::default()))
                .collect(),
        )
    }

    /// [`TaskIndex::new`] with each task's tier and original inputs.
    #[allow(clippy::type_complexity)]
    pub fn with_details(
        tasks: Vec<(
            String,
            String,
            Vec<Step>,
            u8,
            std::collections::BTreeMap<String, Vec<u8>>,
        )>,
    ) -> TaskIndex {
        let lines: Vec<Vec<String>> = tasks
            .iter()
            .map(|(_, p, _, _, _)| {
                p.lines()
                    .map(collapse_ws)
                    .filter(|l| l.chars().count() >= 20)
                    .collect()
            })
            .collect();
        let mut plans = Vec::new();
        for (i, (id, prompt, steps, tier, originals)) in tasks.into_iter().enumerate() {
            let mut key: Vec<String> = lines[i]
                .iter()
                .filter(|l| {
                    lines
                        .iter()
                        .enumerate()
                        .all(|(j, other)| j == i || !other.contains(l))
                })
                .cloned()
                .collect();
            if key.is_empty() {
                key = vec![collapse_ws(&prompt)];
            }
            key.sort();
            key.dedup();
            plans.push(TaskPlan {
                id,
                tier,
                originals,
                key_lines: key,
                steps,
            });
        }
        TaskIndex { plans }
    }

    /// Loads every valid task of a pack with its reference solution. Problems (invalid tasks,
    /// missing solutions) are returned as text, never a panic.
    pub fn from_pack(root: &Path) -> (TaskIndex, Vec<String>) {
        let (pack, problems) = lrab_tasks::Pack::load_lenient(root);
        let mut notes: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        let mut tasks = Vec::new();
        for t in &pack.tasks {
            match t.solution(lrab_tasks::SolutionKind::Reference) {
                Ok(sol) => {
                    let originals = python_inputs(&pack, t, &sol);
                    tasks.push((
                        t.spec.id.clone(),
                        t.render_prompt(),
                        plan_from(&sol),
                        t.spec.tier,
                        originals,
                    ))
                }
                Err(e) => notes.push(format!("{}: {e}", t.spec.id)),
            }
        }
        (TaskIndex::with_details(tasks), notes)
    }

    /// The task whose distinctive prompt lines appear (at least 60 %) in one user message.
    pub fn recognize(&self, conv: &Conv) -> Option<(&TaskPlan, usize)> {
        for (i, m) in conv.messages.iter().enumerate() {
            if m.role != "user" || m.content.len() < 40 {
                continue;
            }
            let text = collapse_ws(&m.content);
            for p in &self.plans {
                if p.stated_in_collapsed(&text) {
                    return Some((p, i));
                }
            }
        }
        None
    }
}

impl TaskPlan {
    /// Whether a user message states this task (at least 60 % of its distinctive lines).
    pub fn stated_in(&self, text: &str) -> bool {
        self.stated_in_collapsed(&collapse_ws(text))
    }

    /// [`TaskPlan::stated_in`] for text whose whitespace runs are already collapsed to single spaces.
    pub fn stated_in_collapsed(&self, text: &str) -> bool {
        let hit = self
            .key_lines
            .iter()
            .filter(|l| text.contains(l.as_str()))
            .count();
        hit > 0 && hit * 10 >= self.key_lines.len() * 6
    }
}

/// The task's own input files that the reference solution rewrites (Python sources only),
/// keyed by workdir path: static inputs are copied flat by basename, generated ones come from
/// the task's generator at its default seed.
fn python_inputs(
    pack: &lrab_tasks::Pack,
    t: &lrab_tasks::Task,
    sol: &lrab_tasks::Solution,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let wanted: Vec<&String> = sol
        .files
        .iter()
        .map(|(p, _)| p)
        .filter(|p| p.ends_with(".py"))
        .collect();
    let mut out = std::collections::BTreeMap::new();
    for input in &t.spec.inputs {
        let base = input.rsplit('/').next().unwrap_or(input).to_string();
        if wanted.iter().any(|w| **w == base) {
            if let Ok(b) = std::fs::read(pack.fixtures_dir().join(input)) {
                out.insert(base, b);
            }
        }
    }
    if wanted.iter().any(|w| !out.contains_key(*w)) && t.spec.generator.is_some() {
        if let Ok(Some((_, g))) = lrab_tasks::materialize::generated(t, None) {
            for (p, b) in g.files {
                if wanted.iter().any(|w| **w == p) {
                    out.insert(p, b);
                }
            }
        }
    }
    out
}

/// Reference solution → steps: every file written, then every command run, in order.
pub fn plan_from(sol: &lrab_tasks::Solution) -> Vec<Step> {
    let mut steps: Vec<Step> = sol
        .files
        .iter()
        .map(|(p, b)| Step::Write {
            path: p.clone(),
            bytes: b.clone(),
        })
        .collect();
    steps.extend(
        sol.commands
            .iter()
            .map(|c| Step::Run { command: c.clone() }),
    );
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convo::Msg;

    fn conv_with(user: &str) -> Conv {
        Conv {
            messages: vec![
                Msg {
                    role: "system".into(),
                    content: "You are a coding agent.".into(),
                    calls: vec![],
                },
                Msg {
                    role: "user".into(),
                    content: user.into(),
                    calls: vec![],
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn recognises_by_distinctive_lines_only() {
        let header = "You are an autonomous agent working in the current directory.\n";
        let idx = TaskIndex::new(vec![
            ("A".into(), format!("{header}Write a review of titanium alloys please.\n1. make shortlist.md with the ids"), vec![]),
            ("B".into(), format!("{header}Fix the inventory module bugs now.\n1. write bug_report.md listing bugs"), vec![]),
        ]);
        assert!(idx
            .plans
            .iter()
            .all(|p| !p.key_lines.iter().any(|l| l.contains("autonomous"))));
        let c = conv_with(
            "Task:\n  Fix the inventory   module bugs now.\n1. write bug_report.md listing bugs\n",
        );
        assert_eq!(idx.recognize(&c).unwrap().0.id, "B");
        assert!(idx.recognize(&conv_with(header)).is_none());
        assert!(idx
            .recognize(&conv_with("hello, how are you doing today, my friend?"))
            .is_none());
    }
}
