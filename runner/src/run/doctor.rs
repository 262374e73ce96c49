//! `lrab doctor`: is this machine ready to run the benchmark? Backend reachable, models
//! present, arms installed (with versions), python and what the task checks run (pytest …)
//! present. Each check is one line
//! with ok / missing and a hint.

use std::path::Path;
use std::time::Duration;

use lrab_records::BackendKind;

use super::arms;
use super::backend;
use super::backend_api::{self, BackendOptions};

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

/// Runs every check. `url` is the backend to probe (reached as `opts` say, the way `lrab run`
/// reaches it); `models` the ones that must be present.
pub fn run(url: &str, opts: &BackendOptions, models: &[String], arms_dir: &Path) -> Vec<Check> {
    let mut out = backend_checks(url, opts, models);
    match arms::load_dir(arms_dir) {
        Err(e) => out.push(Check {
            name: "arm files".into(),
            ok: false,
            detail: lrab_util::error_chain(e.as_ref()),
            required: true,
        }),
        Ok(list) => {
            for a in &list {
                let c = super::arms::check::check(a);
                out.push(Check {
                    name: format!("arm {}", a.name),
                    ok: c.verdict == super::arms::check::Verdict::Ok,
                    detail: match c.verdict {
                        super::arms::check::Verdict::Ok => c.detail,
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

fn check(name: impl Into<String>, ok: bool, detail: String) -> Check {
    Check {
        name: name.into(),
        ok,
        detail,
        required: false,
    }
}

/// The backend as `lrab run` detects it (Ollama, or OpenAI-compatible with the key from
/// `opts`), then each model. A server that answers but refuses (a key, neither API, a model
/// list that is not JSON) is named as such; the key never appears.
fn backend_checks(url: &str, opts: &BackendOptions, models: &[String]) -> Vec<Check> {
    let found = match backend_api::probe(url, opts, Duration::from_secs(5)) {
        Err(e) => {
            let fallback = if opts.api == lrab_records::BackendApi::Openai {
                ""
            } else {
                "; `lrab run` will fall back to --backend sim"
            };
            let why = lrab_util::error_chain(e.as_ref());
            return vec![check(
                "backend",
                false,
                format!("{url} unreachable ({why}){fallback}"),
            )];
        }
        Ok(Err(refusal)) => return vec![check("backend", false, refusal)],
        Ok(Ok(f)) => f,
    };
    let mut out = Vec::new();
    let (shown_url, gateway) = match found {
        (BackendKind::Openai, list) => {
            let n = list["data"].as_array().map_or(0, Vec::len);
            let switch = backend_api::reasoning_of(url, &list).describe();
            out.push(check(
                "backend",
                true,
                format!(
                    "{url} answers the OpenAI API ({n} model(s) in /v1/models; thinking is \
                     switched with {switch}); `lrab run` translates for Ollama-native arms"
                ),
            ));
            match backend_api::gateway(url, &list, opts) {
                Ok(g) => (g.url(), Some(g)),
                Err(e) => {
                    out.push(check(
                        "translation",
                        false,
                        lrab_util::error_chain(e.as_ref()),
                    ));
                    return out;
                }
            }
        }
        _ => {
            out.push(check(
                "backend",
                true,
                format!(
                    "{url} answers the Ollama API (version {})",
                    backend::version(url).unwrap_or_else(|| "unknown".into())
                ),
            ));
            (url.to_string(), None)
        }
    };
    for m in models {
        let r = backend::check_models_at(&shown_url, url, std::slice::from_ref(m));
        out.push(check(
            format!("model {m}"),
            r.is_ok(),
            match (r, &gateway) {
                (Ok(i), _) => format!(
                    "present, digest {}",
                    i[0].digest
                        .clone()
                        .unwrap_or_else(|| "none reported".into())
                ),
                (Err(e), Some(_)) => lrab_util::error_chain(e.as_ref()),
                (Err(_), None) => format!("missing: `ollama pull {m}`"),
            },
        ));
    }
    drop(gateway);
    out
}
