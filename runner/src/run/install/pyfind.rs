//! Finding a Python interpreter that satisfies an arm's constraint (`>=3.10,<3.13`,
//! `==3.12.*`), for its venv. Candidates, in order: `LRAB_ARMS_PYTHON` (then the only one),
//! `python3` on PATH, `python3.N` on PATH (newest first), and pyenv's installed versions.
//! Each is asked for its own version and real path, and must be able to make a venv.

use std::path::PathBuf;
use std::time::Duration;

/// `major.minor.patch` of an interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PyVersion(pub u32, pub u32, pub u32);

impl std::fmt::Display for PyVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Ge,
    Gt,
    Le,
    Lt,
    Eq,
    Ne,
}

/// One clause: operator, version parts, and whether it ended in `.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Clause {
    op: Op,
    parts: Vec<u32>,
    wildcard: bool,
}

/// Why an interpreter constraint does not parse ([`Constraint::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstraintError {
    /// A clause without one of the six operators.
    #[error("'{0}': expected >=, >, <=, <, == or != and a version")]
    Operator(String),
    /// `.*` after an operator other than `==` or `!=`.
    #[error("'{0}': .* only goes with == or !=")]
    Wildcard(String),
    /// The version is not one to three dot-separated numbers.
    #[error("'{clause}': '{version}' is not a version like 3.12")]
    Version {
        /// The clause as written.
        clause: String,
        /// Its version part.
        version: String,
    },
}

impl ConstraintError {
    fn version(clause: &str, version: &str) -> Self {
        ConstraintError::Version {
            clause: clause.to_string(),
            version: version.to_string(),
        }
    }
}

/// No interpreter satisfies a constraint ([`find`]); `tried` lists each candidate with its
/// version or why it could not be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no {want} found (tried: {}); install one (e.g. `pyenv install 3.12`) or point LRAB_ARMS_PYTHON at it", if .tried.is_empty() { "nothing on PATH".to_string() } else { .tried.join("; ") })]
pub struct NoPython {
    /// `Python 3` or `Python <constraint>`.
    pub want: String,
    /// The candidates tried, in order.
    pub tried: Vec<String>,
}

/// A comma-separated interpreter constraint (PEP 440 operators on release numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    clauses: Vec<Clause>,
    text: String,
}

impl Constraint {
    /// Parses `>=3.10,<3.13`-style text; the error names the clause that is wrong.
    pub fn parse(s: &str) -> Result<Constraint, ConstraintError> {
        let mut clauses = Vec::new();
        for raw in s.split(',') {
            let c = raw.trim();
            let (op, rest) = [
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("==", Op::Eq),
                ("!=", Op::Ne),
                (">", Op::Gt),
                ("<", Op::Lt),
            ]
            .iter()
            .find_map(|(p, o)| c.strip_prefix(p).map(|r| (*o, r.trim())))
            .ok_or_else(|| ConstraintError::Operator(c.to_string()))?;
            let (num, wildcard) = match rest.strip_suffix(".*") {
                Some(n) => (n, true),
                None => (rest, false),
            };
            if wildcard && !matches!(op, Op::Eq | Op::Ne) {
                return Err(ConstraintError::Wildcard(c.to_string()));
            }
            let parts = num
                .split('.')
                .map(|p| p.parse::<u32>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| ConstraintError::version(c, num))?;
            if parts.is_empty() || parts.len() > 3 {
                return Err(ConstraintError::version(c, num));
            }
            clauses.push(Clause {
                op,
                parts,
                wildcard,
            });
        }
        Ok(Constraint {
            clauses,
            text: s.trim().to_string(),
        })
    }

    pub fn allows(&self, v: PyVersion) -> bool {
        let have = [v.0, v.1, v.2];
        self.clauses.iter().all(|c| {
            let n = c.parts.len();
            if c.wildcard {
                let eq = have[..n] == c.parts[..];
                return if c.op == Op::Eq { eq } else { !eq };
            }
            let mut want = [0u32; 3];
            want[..n].copy_from_slice(&c.parts);
            let ord = have.cmp(&want);
            match c.op {
                Op::Ge => ord.is_ge(),
                Op::Gt => ord.is_gt(),
                Op::Le => ord.is_le(),
                Op::Lt => ord.is_lt(),
                Op::Eq => ord.is_eq(),
                Op::Ne => !ord.is_eq(),
            }
        })
    }
}

impl std::fmt::Display for Constraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A usable interpreter.
#[derive(Debug, Clone, PartialEq)]
pub struct Python {
    pub path: PathBuf,
    pub version: PyVersion,
}

fn candidates() -> Vec<PathBuf> {
    if let Some(p) = std::env::var_os("LRAB_ARMS_PYTHON").filter(|p| !p.is_empty()) {
        return vec![PathBuf::from(p)];
    }
    let mut out = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let on_path = |name: &str| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
    out.extend(on_path("python3"));
    for minor in (8..=20).rev() {
        out.extend(on_path(&format!("python3.{minor}")));
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
    if let Some(root) = pyenv {
        if let Ok(rd) = std::fs::read_dir(root.join("versions")) {
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path().join("bin/python3")))
                .filter(|p| p.is_file())
                .collect();
            v.sort();
            v.reverse();
            out.extend(v);
        }
    }
    out
}

/// Asks an interpreter for its version and real path; None when it cannot make a venv.
fn probe(p: &std::path::Path) -> Result<Python, String> {
    let code = "import sys, venv, ensurepip; v = sys.version_info; \
                print(v[0], v[1], v[2], sys.executable)";
    let o = lrab_tasks::process::run_argv(
        p.to_str().ok_or("path is not UTF-8")?,
        &["-c", code],
        &std::env::temp_dir(),
        Duration::from_secs(20),
    )
    .map_err(|e| e.to_string())?;
    if !o.success() {
        let why = o.combined();
        let line = why.lines().last().unwrap_or("").trim();
        return Err(if line.contains("ensurepip") || line.contains("venv") {
            "cannot make a venv (on Debian: apt-get install python3-venv)".into()
        } else {
            format!("does not run ({line})")
        });
    }
    let out = o.stdout.trim().to_string();
    let mut it = out.splitn(4, ' ');
    let mut num = || it.next().and_then(|x| x.parse::<u32>().ok());
    let (Some(a), Some(b), Some(c)) = (num(), num(), num()) else {
        return Err(format!("printed '{out}'"));
    };
    let exe = out.splitn(4, ' ').nth(3).unwrap_or("").to_string();
    Ok(Python {
        path: if exe.is_empty() {
            p.to_path_buf()
        } else {
            PathBuf::from(exe)
        },
        version: PyVersion(a, b, c),
    })
}

/// The first candidate that satisfies `constraint` (any Python 3 when None), or an error
/// listing what was tried.
pub fn find(constraint: Option<&Constraint>) -> Result<Python, NoPython> {
    let mut tried = Vec::new();
    let mut seen = Vec::new();
    for c in candidates() {
        match probe(&c) {
            Ok(py) => {
                if seen.contains(&py.path) {
                    continue;
                }
                seen.push(py.path.clone());
                if py.version.0 == 3 && constraint.is_none_or(|k| k.allows(py.version)) {
                    return Ok(py);
                }
                tried.push(format!("{} {}", c.display(), py.version));
            }
            Err(e) => tried.push(format!("{} {e}", c.display())),
        }
    }
    let want = constraint
        .map(|c| format!("Python {c}"))
        .unwrap_or_else(|| "Python 3".into());
    Err(NoPython { want, tried })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints() {
        let c = Constraint::parse(">=3.10,<3.13").unwrap();
        assert!(c.allows(PyVersion(3, 10, 0)));
        assert!(c.allows(PyVersion(3, 12, 9)));
        assert!(!c.allows(PyVersion(3, 13, 0)));
        assert!(!c.allows(PyVersion(3, 9, 18)));
        let e = Constraint::parse("==3.12.*").unwrap();
        assert!(e.allows(PyVersion(3, 12, 1)));
        assert!(!e.allows(PyVersion(3, 11, 7)));
        assert!(Constraint::parse("!=3.12.0")
            .unwrap()
            .allows(PyVersion(3, 12, 1)));
        assert_eq!(
            Constraint::parse("3.12").unwrap_err().to_string(),
            "'3.12': expected >=, >, <=, <, == or != and a version"
        );
        assert_eq!(
            Constraint::parse(">=3.10, >=3.x").unwrap_err(),
            ConstraintError::version(">=3.x", "3.x")
        );
        assert_eq!(
            Constraint::parse(">=3.*").unwrap_err(),
            ConstraintError::Wildcard(">=3.*".into())
        );
    }

    #[test]
    fn finds_this_machines_python_or_says_what_it_tried() {
        match find(Some(&Constraint::parse(">=3").unwrap())) {
            Ok(p) => assert!(p.path.is_absolute(), "{p:?}"),
            Err(e) => assert!(e.to_string().contains("tried"), "{e}"),
        }
        let e = find(Some(&Constraint::parse("<2").unwrap())).unwrap_err();
        assert_eq!(e.want, "Python <2");
        let none = NoPython {
            want: "Python 3".into(),
            tried: vec![],
        };
        assert_eq!(none.to_string(), "no Python 3 found (tried: nothing on PATH); install one (e.g. `pyenv install 3.12`) or point LRAB_ARMS_PYTHON at it");
        let e = e.to_string();
        assert!(
            e.contains("no Python <2 found") && e.contains("LRAB_ARMS_PYTHON"),
            "{e}"
        );
    }
}
