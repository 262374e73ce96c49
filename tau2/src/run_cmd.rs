//! `lrab tau2 run`: every task × trial once, then the retry passes over the error cells, the
//! error-cell policy ([`crate::protocol`]), and the outputs — results.json (upstream's
//! format), tau2.csv, and the per-task manifest in the published shape.

use crate::domains::{resolve_data_dir, Domain};
use crate::evaluate::{
    evaluate, is_error_cell, Evaluation, Judge, AGENT_ERROR, INFRASTRUCTURE_ERROR,
};
use crate::external::{Conversation, ExternalAgent};
use crate::llm::{Api, LlmJudge};
use crate::message::Message;
use crate::options::{
    iso_time, judge_for, summarize, AgentKind, RunArgs, UserKind, SCRIPTED_OPENING,
};
use crate::orchestrator::{self, Agent, Limits, Outcome, User};
use crate::participants::{agent_for, user_for, user_maker};
use crate::protocol::{ErrorPolicy, Retry};
use crate::results::{self, RunInfo, SimRecord};
use crate::scripted::gold_pair;
use crate::task::Task;
use anyhow::{bail, Result};
use rand::{RngCore, SeedableRng};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One run's fixed parts, and the conversations run so far (for the fixed clock).
struct Runner<'a, 'e> {
    r: &'a RunArgs,
    dir: PathBuf,
    domain: Domain,
    user_api: Api,
    user_url: String,
    judge: Option<LlmJudge>,
    ext: Option<&'e mut dyn ExternalAgent>,
    runs: usize,
}

pub(crate) fn run_cmd(
    data: Option<&Path>,
    r: &RunArgs,
    out: &mut dyn Write,
    ext: Option<&mut dyn ExternalAgent>,
) -> Result<()> {
    if let (AgentKind::Arm(n), None) = (&r.agent, &ext) {
        bail!("--agent {n}: command-line arms run only through the `lrab` binary");
    }
    let dir = resolve_data_dir(data)?;
    let domain = Domain::load(&dir, r.domain)?;
    if r.trials == 0 {
        bail!("--trials must be at least 1");
    }
    if let Some(n) = r
        .arm_name
        .as_deref()
        .filter(|n| n.trim().is_empty() || n.contains(','))
    {
        bail!("--arm-name '{n}': must be non-empty and without commas (it is a CSV field and a JSON key)");
    }
    if r.agent != AgentKind::Gold && r.model.is_empty() {
        bail!("--model is required for --agent {}", r.agent.name());
    }
    if r.user == UserKind::Llm && r.user_model.is_empty() {
        bail!("--user-model is required for --user llm");
    }
    let tasks: Vec<Task> = if r.tasks.is_empty() {
        domain.tasks.to_vec()
    } else {
        r.tasks
            .iter()
            .map(|id| domain.task(id).cloned())
            .collect::<std::result::Result<_, _>>()?
    };
    let user_url = r.user_backend.clone().unwrap_or_else(|| r.backend.clone());
    let simulated = simulated(r, &user_url);
    if simulated {
        writeln!(
            out,
            "*** SIMULATED BACKEND (lrab-sim): these rewards are NOT results of real models ***"
        )?;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(r.seed);
    let trial_seeds: Vec<u64> = (0..r.trials).map(|_| rng.next_u32() as u64).collect();
    let mut run = Runner {
        r,
        judge: judge_for(
            r.judge_model.as_deref(),
            r.judge_backend.as_deref().unwrap_or(&r.backend),
            r.judge_api.unwrap_or(r.api),
        ),
        dir,
        domain,
        user_api: r.user_api.unwrap_or(r.api),
        user_url,
        ext,
        runs: 0,
    };
    let mut records = Vec::new();
    for (trial, seed) in trial_seeds.iter().enumerate() {
        for task in &tasks {
            records.push(run.one(task, trial, *seed, 0, out)?);
        }
    }
    let mut policy = ErrorPolicy::new(r.error_cells, r.retry_passes);
    run.retry(&tasks, &mut records, &mut policy, out)?;
    let left = policy.settle(&mut records);
    summarize(&records, r.trials, out)?;
    writeln!(out, "{}", policy.summary(&records, &left))?;
    run.write(&tasks, &records, &policy, &left, simulated, out)
}

/// Whether a backend of the run is the simulator (it labels the whole run).
fn simulated(r: &RunArgs, user_url: &str) -> bool {
    let mut used: Vec<&str> = Vec::new();
    if r.agent != AgentKind::Gold {
        used.push(&r.backend);
    }
    if r.user != UserKind::Scripted {
        used.push(user_url);
    }
    if r.judge_model.is_some() {
        used.push(r.judge_backend.as_deref().unwrap_or(&r.backend));
    }
    used.iter().any(|u| lrab_sim::detect(u).is_some())
}

impl Runner<'_, '_> {
    fn clock(&self, n: usize) -> String {
        if self.r.fixed_clock {
            iso_time(UNIX_EPOCH + std::time::Duration::from_secs(n as u64))
        } else {
            iso_time(SystemTime::now())
        }
    }

    /// Re-runs the error cells, pass after pass, replacing each with its re-run.
    fn retry(
        &mut self,
        tasks: &[Task],
        records: &mut [SimRecord],
        policy: &mut ErrorPolicy,
        out: &mut dyn Write,
    ) -> Result<()> {
        for pass in 1..=policy.retry_passes {
            let errors: Vec<usize> = (0..records.len())
                .filter(|i| is_error_cell(&records[*i].outcome.termination))
                .collect();
            for i in errors {
                let (id, trial, seed) = (
                    records[i].task_id.clone(),
                    records[i].trial,
                    records[i].seed,
                );
                let task = tasks
                    .iter()
                    .find(|t| t.id == id)
                    .expect("a task of the run");
                writeln!(
                    out,
                    "task {id} trial {trial}: {} — retry pass {pass}",
                    records[i].outcome.termination
                )?;
                policy.retries.push(Retry {
                    task_id: id,
                    trial,
                    pass,
                    replaced: records[i].outcome.termination.clone(),
                    note: records[i].outcome.note.clone(),
                });
                records[i] = self.one(task, trial, seed, pass, out)?;
            }
        }
        Ok(())
    }

    /// One conversation of `task`, graded. A task that cannot be set up, or a command-line
    /// arm that cannot be run, is an error cell with the reason as its note.
    fn one(
        &mut self,
        task: &Task,
        trial: usize,
        seed: u64,
        pass: usize,
        out: &mut dyn Write,
    ) -> Result<SimRecord> {
        let r = self.r;
        let history: Vec<Message> = task
            .initial_state
            .as_ref()
            .and_then(|s| s.message_history.clone())
            .unwrap_or_default();
        let mut env = self.domain.env();
        let n = self.runs;
        self.runs += 1;
        let start_time = self.clock(n * 2);
        let failed = |termination: &str, note: String| Outcome {
            messages: history.clone(),
            termination: termination.into(),
            steps: 0,
            errors: 0,
            note: Some(note),
        };
        if let Err(e) = env.set_state(task.initial_state.as_ref(), &history) {
            // A task that cannot be set up is reported, never run, and never scored.
            writeln!(out, "task {}: {e:#}", task.id)?;
            return Ok(SimRecord {
                task_id: task.id.clone(),
                trial,
                seed,
                start_time,
                end_time: self.clock(n * 2 + 1),
                duration: 0.0,
                outcome: failed(INFRASTRUCTURE_ERROR, format!("{e:#}")),
                eval: Evaluation::not_run(task, &format!("{e:#}")),
            });
        }
        let limits = Limits {
            max_steps: r.max_steps,
            max_errors: r.max_errors,
        };
        let t0 = Instant::now();
        let outcome = if let Some(ext) = self.ext.as_deref_mut() {
            let user = user_maker(
                r,
                self.user_api,
                &self.user_url,
                seed,
                &self.dir,
                &env,
                task,
            )?;
            let c = Conversation {
                task_id: task.id.clone(),
                trial,
                seed,
                pass,
                env,
                history: history.clone(),
                limits,
                policy: self.domain.policy.clone(),
                user,
            };
            ext.converse(c)
                .unwrap_or_else(|e| failed(AGENT_ERROR, format!("the arm could not be run: {e:#}")))
        } else {
            let (mut agent, mut user): (Box<dyn Agent>, Box<dyn User>) =
                if r.agent == AgentKind::Gold && r.user == UserKind::Scripted {
                    let (a, u) = gold_pair(task, SCRIPTED_OPENING);
                    (Box::new(a), Box::new(u))
                } else {
                    (
                        agent_for(r, r.api, seed, &self.domain, &env, task)?,
                        user_for(
                            r,
                            self.user_api,
                            &self.user_url,
                            seed,
                            &self.dir,
                            &env,
                            task,
                        )?,
                    )
                };
            orchestrator::run(&mut env, agent.as_mut(), user.as_mut(), &history, &limits)
        };
        let duration = if r.fixed_clock {
            0.0
        } else {
            t0.elapsed().as_secs_f64()
        };
        if let (true, Some(note)) = (is_error_cell(&outcome.termination), &outcome.note) {
            writeln!(
                out,
                "task {} trial {trial}: {}: {note}",
                task.id, outcome.termination
            )?;
        }
        let eval = evaluate(
            &self.domain,
            task,
            &outcome.messages,
            &outcome.termination,
            self.judge.as_mut().map(|j| j as &mut dyn Judge),
        )?;
        Ok(SimRecord {
            task_id: task.id.clone(),
            trial,
            seed,
            start_time,
            end_time: self.clock(n * 2 + 1),
            duration,
            outcome,
            eval,
        })
    }

    /// results.json, tau2.csv and `<domain>_manifest.json` (this arm's cells merged in).
    fn write(
        &self,
        tasks: &[Task],
        records: &[SimRecord],
        policy: &ErrorPolicy,
        left: &[usize],
        simulated: bool,
        out: &mut dyn Write,
    ) -> Result<()> {
        let r = self.r;
        let info = RunInfo {
            domain: self.domain.kind.name().into(),
            policy: self.domain.policy.clone(),
            arm: r.agent.name().into(),
            agent_model: if r.agent == AgentKind::Gold {
                "gold-actions".into()
            } else {
                r.model.clone()
            },
            user: if r.user == UserKind::Scripted {
                "lrab_scripted_user".into()
            } else {
                "user_simulator".into()
            },
            user_model: r.user_model.clone(),
            num_trials: r.trials,
            max_steps: r.max_steps,
            max_errors: r.max_errors,
            seed: r.seed,
            temperature: r.temperature,
            think: r.think,
            timestamp: self.clock(0),
            simulated,
        };
        let task_refs: Vec<&Task> = tasks.iter().collect();
        let mut rj = results::results_json(&info, &task_refs, records);
        rj["info"]["protocol"] = policy.record(records, left, r.trials);
        let rpath = r.out.join("results.json");
        results::write_output(&rpath, serde_json::to_string_pretty(&rj)?.as_bytes())?;
        let label = r.arm_name.as_deref().unwrap_or(r.agent.name());
        let cpath = r.out.join("tau2.csv");
        results::write_csv(&cpath, &info.domain, label, records, simulated)?;
        let mpath = results::write_manifest(&r.out, &info.domain, label, records)?;
        writeln!(
            out,
            "wrote {}, {} and {}",
            rpath.display(),
            cpath.display(),
            mpath.display()
        )?;
        Ok(())
    }
}
