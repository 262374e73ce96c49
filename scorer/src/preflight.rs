//! What the scorer's own machine must have for a task's checks to mean anything: the programs
//! a check runs (`python3` for `python_compiles`, the head of every command of `script_pass`
//! and `spec_pytest`) and the Python modules run with `python -m`. A check whose command is
//! missing would fail for the scorer's reasons and blame the arm, so the runner refuses to
//! start without them ([`missing_for_task`]) and the scorer turns a disappearance during a
//! run into a scorer error ([`crate::score_checked`]) instead of a 0.
//!
//! The needs are derived from the check kinds and their command strings, never listed by
//! hand, so a new task or check brings its own requirements.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lrab_tasks::{Check, CheckSpec, TaskSpec};

/// One thing a check needs on the scorer's machine.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    /// A program found on `PATH` (or an absolute path).
    Program(String),
    /// A module importable by the given interpreter (a check runs `python -m <module>`).
    PythonModule {
        /// The interpreter as the command names it.
        python: String,
        /// The module.
        module: String,
    },
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Need::Program(p) => write!(f, "program `{p}`"),
            Need::PythonModule { python, module } => {
                write!(f, "Python module `{module}` (for `{python} -m {module}`)")
            }
        }
    }
}

impl Need {
    /// How to get it, in one sentence.
    pub fn fix(&self) -> String {
        match self {
            Need::Program(p) if is_python(p) => format!(
                "install Python 3 so that `{p}` is on PATH (e.g. `apt-get install python3 \
                 python-is-python3`)"
            ),
            Need::Program(p) => format!("install `{p}` or put it on PATH"),
            Need::PythonModule { python, module } => {
                format!("install it for that interpreter: `{python} -m pip install {module}`")
            }
        }
    }
}

/// A need that the machine does not meet, and what was found instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// What is needed.
    pub need: Need,
    /// What the lookup found.
    pub why: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is missing ({}); {}",
            self.need,
            self.why,
            self.need.fix()
        )
    }
}

impl Missing {
    /// The one wording every command uses for a missing need (`lrab run`, `tasks check`,
    /// `score`, `doctor`): what is missing, what was found, who needs it, the fix.
    pub fn line(&self, needed_by: &str) -> String {
        format!(
            "{} is missing ({}), needed by {needed_by}; fix: {}",
            self.need,
            self.why,
            self.need.fix()
        )
    }
}

/// Groups `(who, missing)` pairs by need and what was found, first seen first: one entry
/// per need with everyone who needs it, so a report names each missing thing once.
pub fn group_missing(
    items: impl IntoIterator<Item = (String, Missing)>,
) -> Vec<(Missing, Vec<String>)> {
    let mut out: Vec<(Missing, Vec<String>)> = Vec::new();
    for (who, m) in items {
        match out.iter_mut().find(|(x, _)| *x == m) {
            Some((_, whos)) if whos.contains(&who) => {}
            Some((_, whos)) => whos.push(who),
            None => out.push((m, vec![who])),
        }
    }
    out
}

/// Shell words that are builtins or keywords: never looked up on PATH.
const SHELL_WORDS: [&str; 22] = [
    "cd", "echo", "printf", "true", "false", "exit", "test", "[", "export", "set", ":", "if",
    "then", "else", "fi", "for", "do", "done", "while", "read", "wait", "!",
];

pub(crate) fn is_python(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    base == "python"
        || base
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Words of one simple command, with single and double quotes removed (enough for the check
/// commands of task packs; a word we cannot read is simply not a command head).
fn words(segment: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in segment.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The programs (and `python -m` modules) a shell command line runs: the head of every
/// simple command between `;`, `&&`, `||`, `|`, `&`, newlines and parentheses. Variable
/// assignments before a command are skipped; relative paths (`./run.sh`) are the workdir's
/// own files and need nothing from the machine.
pub fn needs_of_shell(cmd: &str) -> Vec<Need> {
    let mut out = Vec::new();
    // `2>&1` and `>&2` are redirections, not command separators.
    let cmd = cmd.replace(">&", ">").replace("<&", "<");
    for seg in cmd.split(['\n', ';', '&', '|', '(', ')']) {
        let w = words(seg);
        let mut it = w
            .iter()
            .skip_while(|x| x.contains('=') && !x.starts_with('='))
            .skip_while(|x| *x == "env" || *x == "exec" || *x == "command");
        let Some(head) = it.next() else { continue };
        if SHELL_WORDS.contains(&head.as_str()) || head.starts_with(['<', '>', '$', '#']) {
            continue;
        }
        if head.contains('/') && !head.starts_with('/') {
            continue;
        }
        out.push(Need::Program(head.clone()));
        if is_python(head) {
            let rest: Vec<&String> = it.collect();
            if let Some(i) = rest.iter().position(|x| x.as_str() == "-m") {
                if let Some(m) = rest.get(i + 1) {
                    out.push(Need::PythonModule {
                        python: head.clone(),
                        module: m.split('.').next().unwrap_or(m).to_string(),
                    });
                }
            }
        }
    }
    out
}

/// What one check needs on the scorer's machine.
pub fn needs_of(check: &Check) -> Vec<Need> {
    match check {
        Check::PythonCompiles {} => vec![Need::Program(crate::checks::python_compiles::python())],
        Check::ScriptPass { command, .. } | Check::SpecPytest { command, .. } => {
            needs_of_shell(command)
        }
        Check::Exists {}
        | Check::ContainsAny { .. }
        | Check::NotContains { .. }
        | Check::ContainsGroups { .. }
        | Check::ContainsOrdered { .. }
        | Check::MinWords { .. }
        | Check::Structure { .. }
        | Check::FileMinBytes { .. }
        | Check::MinUrls { .. }
        | Check::ImageValid { .. }
        | Check::SeedUnchanged { .. } => Vec::new(),
    }
}

/// What a group of checks needs, sorted and without repeats.
pub fn needs_of_checks<'a>(checks: impl IntoIterator<Item = &'a CheckSpec>) -> Vec<Need> {
    let mut v: Vec<Need> = checks
        .into_iter()
        .flat_map(|c| needs_of(&c.check))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// What a task's checks need.
pub fn needs_of_task(spec: &TaskSpec) -> Vec<Need> {
    needs_of_checks(spec.milestones.iter().chain(&spec.finals))
}

/// `name` resolved the way a check's `sh` resolves a command: an absolute path as is, else the
/// first executable file of that name in the `PATH` checks run with (the python shim included).
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let exe = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return exe(&p).then_some(p);
    }
    let path = lrab_tasks::process::command_path()?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| exe(p))
}

/// Why the machine does not meet a [`Need`]; displays as what the lookup found instead.
#[derive(Debug, thiserror::Error)]
pub enum Unmet {
    /// The program is not on the checks' `PATH`.
    #[error("not found on PATH")]
    NotOnPath,
    /// The interpreter a module needs is not on the `PATH`.
    #[error("`{python}` is not on PATH")]
    NoInterpreter {
        /// The interpreter's name.
        python: String,
    },
    /// The interpreter did not answer the lookup in time.
    #[error("`{python}` did not answer in 60 s")]
    TimedOut {
        /// The interpreter's name.
        python: String,
    },
    /// The interpreter runs but cannot import the module.
    #[error("`{python}` cannot import it")]
    NoModule {
        /// The interpreter's name.
        python: String,
    },
    /// The lookup failed some other way; `output` is the tail of what it printed, on one line.
    #[error("`{python}` failed: {output}")]
    LookupFailed {
        /// The interpreter's name.
        python: String,
        /// The last 200 bytes it printed, newlines as spaces.
        output: String,
    },
    /// The interpreter could not be started.
    #[error("cannot run `{python}`: {err}")]
    CannotRun {
        /// The interpreter's name.
        python: String,
        /// Why it could not start (not a `source`: the message carries it).
        err: std::io::Error,
    },
    /// No temporary folder to look from.
    #[error("no temp dir: {0}")]
    NoTempDir(std::io::Error),
}

/// Whether the machine meets one need, looked up from `dir` (where the check would run: a
/// module lookup sees the same `sys.path` the check's `python -m` will); `Err` says what was
/// found instead. The lookup writes nothing into `dir`.
pub fn check_in(need: &Need, dir: &Path) -> Result<(), Unmet> {
    match need {
        Need::Program(p) => which(p).map(|_| ()).ok_or(Unmet::NotOnPath),
        Need::PythonModule { python, module } => {
            if which(python).is_none() {
                return Err(Unmet::NoInterpreter {
                    python: python.clone(),
                });
            }
            let probe = "import importlib.util, sys\nsys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)";
            let python = python.clone();
            match crate::command::run_argv(
                &python,
                &["-B", "-c", probe, module],
                dir,
                Duration::from_secs(60),
            ) {
                Ok(o) if o.success() => Ok(()),
                Ok(o) if o.timed_out => Err(Unmet::TimedOut { python }),
                Ok(o) if o.code == Some(3) => Err(Unmet::NoModule { python }),
                Ok(o) => Err(Unmet::LookupFailed {
                    python,
                    output: o.tail(200).trim().replace('\n', " "),
                }),
                Err(err) => Err(Unmet::CannotRun { python, err }),
            }
        }
    }
}

/// Whether the machine meets one need, looked up from a fresh temporary folder.
pub fn check(need: &Need) -> Result<(), Unmet> {
    let tmp = tempfile::tempdir().map_err(Unmet::NoTempDir)?;
    check_in(need, tmp.path())
}

/// The needs the machine does not meet when looked up from `dir`, in order.
pub fn missing_in(needs: &[Need], dir: &Path) -> Vec<Missing> {
    needs
        .iter()
        .filter_map(|n| {
            check_in(n, dir).err().map(|why| Missing {
                need: n.clone(),
                why: why.to_string(),
            })
        })
        .collect()
}

/// The needs the machine does not meet, in order.
pub fn missing(needs: &[Need]) -> Vec<Missing> {
    match tempfile::tempdir() {
        Ok(t) => missing_in(needs, t.path()),
        Err(e) => needs
            .iter()
            .map(|n| Missing {
                need: n.clone(),
                why: format!("no temp dir to look from: {e}"),
            })
            .collect(),
    }
}

/// What a task's checks need and the machine lacks.
pub fn missing_for_task(spec: &TaskSpec) -> Vec<Missing> {
    missing(&needs_of_task(spec))
}

/// What the checks of several tasks need and the machine lacks, each need looked up once:
/// one entry per missing need with the ids of the tasks whose checks need it.
pub fn missing_for_tasks<'a>(
    specs: impl IntoIterator<Item = &'a TaskSpec>,
) -> Vec<(Missing, Vec<String>)> {
    let per: Vec<(String, Vec<Need>)> = specs
        .into_iter()
        .map(|s| (s.id.clone(), needs_of_task(s)))
        .collect();
    let mut all: Vec<Need> = per.iter().flat_map(|(_, n)| n.iter().cloned()).collect();
    all.sort();
    all.dedup();
    let lacking = missing(&all);
    group_missing(per.iter().flat_map(|(id, needs)| {
        lacking
            .iter()
            .filter(|m| needs.contains(&m.need))
            .map(|m| (id.clone(), m.clone()))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(p: &str) -> Need {
        Need::Program(p.into())
    }

    #[test]
    fn shell_commands_yield_their_programs_and_modules() {
        assert_eq!(
            needs_of_shell("python -m pytest test_inventory.py -q"),
            vec![
                prog("python"),
                Need::PythonModule {
                    python: "python".into(),
                    module: "pytest".into()
                }
            ]
        );
        assert_eq!(
            needs_of_shell("LC_ALL=C python3 t.py > out.txt 2>&1 && grep -q ok out.txt | wc -l"),
            vec![prog("python3"), prog("grep"), prog("wc")]
        );
        assert_eq!(needs_of_shell("./run.sh; echo done; exit 0"), vec![]);
        assert_eq!(
            needs_of_shell("/usr/bin/env x; (cd d && \"node\" 'a b.js')"),
            vec![prog("/usr/bin/env"), prog("node")]
        );
        assert_eq!(
            needs_of_shell("python3.11 -m unittest.main"),
            vec![
                prog("python3.11"),
                Need::PythonModule {
                    python: "python3.11".into(),
                    module: "unittest".into()
                }
            ]
        );
    }

    #[test]
    fn check_kinds_derive_their_needs() {
        let sp = Check::SpecPytest {
            seed_rel: "s".into(),
            command: "python -m pytest t.py".into(),
            expect_stdout: "2 passed".into(),
            timeout_s: 10,
        };
        assert_eq!(needs_of(&sp).len(), 2);
        assert_eq!(needs_of(&Check::Exists {}), vec![]);
        assert!(matches!(
            &needs_of(&Check::PythonCompiles {})[..],
            [Need::Program(_)]
        ));
    }

    #[test]
    fn lookups_find_present_things_and_name_absent_ones() {
        assert!(check(&prog("sh")).is_ok());
        let e = check(&prog("lrab-no-such-program-x")).unwrap_err();
        assert!(matches!(e, Unmet::NotOnPath), "{e:?}");
        assert_eq!(e.to_string(), "not found on PATH");
        let py = Need::PythonModule {
            python: "python3".into(),
            module: "json".into(),
        };
        assert!(check(&py).is_ok());
        let gone = Need::PythonModule {
            python: "python3".into(),
            module: "lrab_no_such_module_x".into(),
        };
        let m = missing(&[py, gone.clone()]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].need, gone);
        assert_eq!(m[0].why, "`python3` cannot import it");
        let text = m[0].to_string();
        assert!(
            text.contains("cannot import") && text.contains("pip install lrab_no_such_module_x"),
            "{text}"
        );
    }

    #[test]
    fn missing_needs_have_one_wording_and_are_grouped() {
        let pytest = Missing {
            need: Need::PythonModule {
                python: "python".into(),
                module: "pytest".into(),
            },
            why: "`python` cannot import it".into(),
        };
        assert_eq!(
            pytest.line("the checks of WF-04"),
            "Python module `pytest` (for `python -m pytest`) is missing (`python` cannot import \
             it), needed by the checks of WF-04; fix: install it for that interpreter: \
             `python -m pip install pytest`"
        );
        let node = Missing {
            need: prog("node"),
            why: "not found on PATH".into(),
        };
        let g = group_missing([
            ("WF-04".to_string(), pytest.clone()),
            ("LH-03".to_string(), node.clone()),
            ("WF-13".to_string(), pytest.clone()),
            ("WF-04".to_string(), pytest.clone()),
        ]);
        assert_eq!(
            g,
            vec![
                (pytest, vec!["WF-04".to_string(), "WF-13".to_string()]),
                (node, vec!["LH-03".to_string()])
            ]
        );
    }

    /// The built-in pack's checks need exactly the interpreters and pytest: the derivation
    /// neither misses a command nor invents one from an argument or a redirection.
    #[test]
    fn the_builtin_pack_needs_python_and_pytest() {
        let pack = lrab_tasks::Pack::load(lrab_tasks::Pack::builtin_dir()).unwrap();
        let mut all: Vec<Need> = pack
            .tasks
            .iter()
            .flat_map(|t| needs_of_task(&t.spec))
            .collect();
        all.sort();
        all.dedup();
        let py3 = crate::checks::python_compiles::python();
        let mut want = vec![
            prog("python"),
            prog(&py3),
            Need::PythonModule {
                python: "python".into(),
                module: "pytest".into(),
            },
        ];
        want.sort();
        want.dedup();
        assert_eq!(all, want);
        let wf04 = pack.get("WF-04").unwrap();
        assert!(needs_of_task(&wf04.spec).contains(&Need::PythonModule {
            python: "python".into(),
            module: "pytest".into()
        }));
    }
}
