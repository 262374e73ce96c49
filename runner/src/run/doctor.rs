//! `lrab doctor`: is this machine ready to run the benchmark? Backend reachable, models
//! present, arms installed (with versions), python and what the task checks run (pytest …)
//! present. Each check is one line
//! with ok / missing and a hint.

use std::path::Path;
use std::time::Duration;

use super::arms;
use super::backend;

/// One line of the doctor's report.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    /// Failing it blocks a run (vs. a warning).
    pub required: bool,
}

fn cmd_version(program: &str, args: &[&str]) -> Option<String> {
    let o = lrab_tasks::process::run_argv(
        program,
        args,
        &std::env::temp_dir(),
        Duration::from_secs(20),
    )
    .ok()?;
    o.success()
        .then(|| o.combined().lines().next().unwrap_or("").trim().to_string())
}

/// Runs every check. `url` is the backend to probe; `models` the ones that must be present.
pub fn run(url: &str, models: &[String], arms_dir: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    let reach = backend::health(url, Duration::from_secs(5));
    out.push(Check {
        name: "backend".into(),
        ok: reach.is_ok(),
        detail: match &reach {
            Ok(_) => format!(
                "{url} answers (version {})",
                backend::version(url).unwrap_or_else(|| "unknown".into())
            ),
            Err(e) => format!(
                "{url} unreachable ({}); `lrab run` will fall back to --backend sim",
                lrab_util::error_chain(e.as_ref())
            ),
        },
        required: false,
    });
    if reach.is_ok() {
        for m in models {
            let r = backend::check_models(url, std::slice::from_ref(m));
            out.push(Check {
                name: format!("model {m}"),
                ok: r.is_ok(),
                detail: match r {
                    Ok(i) => format!(
                        "present, digest {}",
                        i[0].digest.clone().unwrap_or_default()
                    ),
                    Err(_) => format!("missing: `ollama pull {m}`"),
                },
                required: false,
            });
        }
    }
    match arms::load_dir(arms_dir) {
        Err(e) => out.push(Check {
            name: "arm files".into(),
            ok: false,
            detail: lrab_util::error_chain(e.as_ref()),
            required: true,
        }),
        Ok(list) => {
            for a in &list {
                let c = super::install::check::check(a);
                out.push(Check {
                    name: format!("arm {}", a.name),
                    ok: c.verdict == super::install::check::Verdict::Ok,
                    detail: match c.verdict {
                        super::install::check::Verdict::Ok => c.detail,
                        v => format!("{}: {}", v.tag(), c.detail),
                    },
                    required: a.name == "harness",
                });
            }
        }
    }
    let py = cmd_version("python3", &["--version"]);
    out.push(Check {
        name: "python3".into(),
        ok: py.is_some(),
        detail: py.unwrap_or_else(|| {
            let m = lrab_scorer::Missing {
                need: lrab_scorer::Need::Program("python3".into()),
                why: "`python3 --version` did not run".into(),
            };
            m.line("the checks that run code")
        }),
        required: true,
    });
    out.extend(scorer_needs());
    out
}

/// What the task pack's checks need on this machine, derived by the scorer from the check
/// kinds (the same lookup `lrab run` refuses to start on): one line per need, naming the tasks.
fn scorer_needs() -> Vec<Check> {
    let dir = std::env::var_os("LRAB_PACK")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(lrab_tasks::Pack::builtin_dir);
    let (pack, _) = lrab_tasks::Pack::load_lenient(&dir);
    let mut by: std::collections::BTreeMap<lrab_scorer::Need, Vec<&str>> = Default::default();
    for t in &pack.tasks {
        for n in lrab_scorer::needs_of_task(&t.spec) {
            by.entry(n).or_default().push(&t.spec.id);
        }
    }
    by.into_iter()
        .map(|(need, tasks)| {
            let found = lrab_scorer::check_need(&need);
            Check {
                name: format!("scorer needs {need}"),
                ok: found.is_ok(),
                detail: match found {
                    Ok(()) => format!("present (for {})", tasks.join(", ")),
                    Err(why) => {
                        let m = lrab_scorer::Missing {
                            need,
                            why: why.to_string(),
                        };
                        let line = m.line(&format!("the checks of {}", tasks.join(", ")));
                        format!("{line}; `lrab run` refuses those tasks until then")
                    }
                },
                required: true,
            }
        })
        .collect()
}
