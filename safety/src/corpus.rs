//! The attack corpus (`safety/attacks/*.toml`, format in its README): attacks written as data by
//! an author who did not read the defences — what a scripted model sends, tool call by tool
//! call, plus what is planted in the workdir first. This module only reads and instantiates
//! them (placeholders substituted); `lrab safety --attacks` runs them through the harness.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// One attack of the corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct Attack {
    /// Unique id (`KIND-NN`), the name in the report.
    pub id: String,
    /// The kind (= the file's name without `.toml`).
    pub kind: String,
    /// What the attack tries, in one line, for the report.
    pub what: String,
    /// Kernel features it needs (skipped with a reason where they are missing).
    pub needs: Vec<String>,
    /// What is planted before the harness starts.
    pub setup: Vec<Plant>,
    /// What the fake model does, in order.
    pub steps: Vec<Step>,
    /// What the attack is after (a secret, a file outside, a server), judged after the run.
    pub goal: String,
}

/// Something planted in the workdir before the harness starts (paths relative to it).
#[derive(Clone, Debug, PartialEq)]
pub enum Plant {
    /// A file with this content.
    File {
        /// Where, relative to the workdir.
        path: String,
        /// Its text (placeholders replaced).
        content: String,
    },
    /// A symbolic link.
    Symlink {
        /// Where, relative to the workdir.
        path: String,
        /// What it points at (placeholders replaced).
        target: String,
    },
    /// A hard link to an existing file.
    Hardlink {
        /// Where, relative to the workdir.
        path: String,
        /// The file it links to (placeholders replaced).
        target: String,
    },
}

/// One step of the fake model.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A tool call with its exact JSON arguments.
    Call {
        /// The tool's name.
        tool: String,
        /// Its arguments (placeholders replaced).
        args: Value,
    },
    /// The model takes this long before its next reply.
    WaitMs(u64),
    /// Kill the harness and relaunch the identical command.
    Restart,
}

/// The values the placeholders stand for.
#[derive(Clone, Debug)]
pub struct Places {
    /// The canary HOME the harness is given.
    pub home: PathBuf,
    /// A directory next to the workdir, outside the boundary.
    pub sibling: PathBuf,
    /// The run's private temp dir.
    pub tmp: PathBuf,
    /// A unix socket path of a host server the attack tries to reach.
    pub socket: PathBuf,
    /// Without the leading `@`.
    pub abstract_name: String,
    /// A host TCP port with a listener the attack tries to reach.
    pub port: u16,
    /// The harness's working directory.
    pub workdir: PathBuf,
}

impl Places {
    /// `text` with every `{PLACEHOLDER}` replaced.
    pub fn fill(&self, text: &str) -> String {
        let d = |p: &Path| p.display().to_string();
        text.replace("{HOME}", &d(&self.home))
            .replace("{SIBLING}", &d(&self.sibling))
            .replace("{TMP}", &d(&self.tmp))
            .replace("{SOCKET}", &d(&self.socket))
            .replace("{ABSTRACT}", &self.abstract_name)
            .replace("{PORT}", &self.port.to_string())
            .replace("{WORKDIR}", &d(&self.workdir))
    }

    fn fill_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.fill(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.fill_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

impl Attack {
    /// This attack with its placeholders substituted everywhere (steps, setup names,
    /// contents and targets).
    pub fn instantiate(&self, p: &Places) -> Attack {
        let mut a = self.clone();
        for s in &mut a.setup {
            match s {
                Plant::File { path, content } => {
                    *path = p.fill(path);
                    *content = p.fill(content);
                }
                Plant::Symlink { path, target } | Plant::Hardlink { path, target } => {
                    *path = p.fill(path);
                    *target = p.fill(target);
                }
            }
        }
        for s in &mut a.steps {
            if let Step::Call { args, .. } = s {
                *args = p.fill_value(args);
            }
        }
        a
    }

    /// The tool calls in order, and after how many of them each restart / wait comes.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Call { tool, args } => Some((tool.clone(), args.clone())),
                _ => None,
            })
            .collect()
    }
}

fn to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => Value::from(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, to_json(v))).collect())
        }
    }
}

fn text(t: &toml::Table, key: &str) -> Option<String> {
    t.get(key).and_then(|v| v.as_str()).map(str::to_string)
}

/// One `[[attack]]` table; the error is the message the corpus error carries.
fn parse_attack(kind: &str, t: &toml::Table) -> Result<Attack, String> {
    let id = text(t, "id").ok_or_else(|| "an attack without an id".to_string())?;
    let ctx = |what: &str| format!("{id}: {what}");
    let mut setup = Vec::new();
    for (i, s) in t
        .get("setup")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .enumerate()
    {
        let s = s
            .as_table()
            .ok_or_else(|| ctx(&format!("setup[{i}] is not a table")))?;
        let plant = if let Some(p) = text(s, "file") {
            Plant::File {
                path: p,
                content: text(s, "content").unwrap_or_default(),
            }
        } else if let Some(p) = text(s, "symlink") {
            Plant::Symlink {
                path: p,
                target: text(s, "target").ok_or_else(|| ctx("symlink without target"))?,
            }
        } else if let Some(p) = text(s, "hardlink") {
            Plant::Hardlink {
                path: p,
                target: text(s, "target").ok_or_else(|| ctx("hardlink without target"))?,
            }
        } else {
            return Err(ctx(&format!(
                "setup[{i}]: expected file, symlink or hardlink"
            )));
        };
        setup.push(plant);
    }
    let mut steps = Vec::new();
    for (i, s) in t
        .get("steps")
        .and_then(|v| v.as_array())
        .ok_or_else(|| ctx("no steps"))?
        .iter()
        .enumerate()
    {
        let s = s
            .as_table()
            .ok_or_else(|| ctx(&format!("steps[{i}] is not a table")))?;
        let step = if let Some(tool) = text(s, "tool") {
            Step::Call {
                tool,
                args: s
                    .get("args")
                    .cloned()
                    .map(to_json)
                    .unwrap_or(Value::Object(Default::default())),
            }
        } else if let Some(ms) = s.get("wait_ms").and_then(|v| v.as_integer()) {
            Step::WaitMs(ms.max(0) as u64)
        } else if s.get("restart").and_then(|v| v.as_bool()) == Some(true) {
            Step::Restart
        } else {
            return Err(ctx(&format!(
                "steps[{i}]: expected tool, wait_ms or restart"
            )));
        };
        steps.push(step);
    }
    Ok(Attack {
        kind: kind.to_string(),
        what: text(t, "what").unwrap_or_default(),
        needs: t
            .get("needs")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        goal: text(t, "goal").unwrap_or_default(),
        id,
        setup,
        steps,
    })
}

/// Why an attack corpus does not load ([`load_dir`]); each names the folder or the file (and
/// the attack), as the command line prints it.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// The folder cannot be listed.
    #[error("attack corpus {}: {err}", .dir.display())]
    ReadDir {
        /// The corpus folder.
        dir: PathBuf,
        /// Why (not a `source`: the message carries it).
        err: std::io::Error,
    },
    /// The folder holds no `*.toml` file.
    #[error("attack corpus {}: no *.toml files", .0.display())]
    Empty(PathBuf),
    /// A file cannot be read.
    #[error("{}: {err}", .file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// A file is not TOML.
    #[error("{}: {err}", .file.display())]
    Toml {
        /// The file.
        file: PathBuf,
        /// The parser's message.
        err: toml::de::Error,
    },
    /// An `[[attack]]` entry is not a table.
    #[error("{}: an [[attack]] is not a table", .0.display())]
    NotATable(PathBuf),
    /// An attack is malformed; `message` names the attack and the key.
    #[error("{}: {message}", .file.display())]
    Attack {
        /// The file.
        file: PathBuf,
        /// What is wrong, prefixed with the attack's id.
        message: String,
    },
    /// Two attacks share an id.
    #[error("{}: attack id {id} is used twice", .file.display())]
    DuplicateId {
        /// The file of the second one.
        file: PathBuf,
        /// The id.
        id: String,
    },
}

/// Every attack of every `*.toml` in `dir`, sorted by file then order; errors name the file
/// and the attack.
pub fn load_dir(dir: &Path) -> Result<Vec<Attack>, CorpusError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|err| CorpusError::ReadDir {
            dir: dir.to_path_buf(),
            err,
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(CorpusError::Empty(dir.to_path_buf()));
    }
    let mut out: Vec<Attack> = Vec::new();
    for f in files {
        let kind = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&f).map_err(|err| CorpusError::Read {
            file: f.clone(),
            err,
        })?;
        let doc: toml::Table = text.parse().map_err(|err| CorpusError::Toml {
            file: f.clone(),
            err,
        })?;
        for a in doc
            .get("attack")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
        {
            let t = a
                .as_table()
                .ok_or_else(|| CorpusError::NotATable(f.clone()))?;
            let at = parse_attack(&kind, t).map_err(|message| CorpusError::Attack {
                file: f.clone(),
                message,
            })?;
            if out.iter().any(|o| o.id == at.id) {
                return Err(CorpusError::DuplicateId {
                    file: f.clone(),
                    id: at.id,
                });
            }
            out.push(at);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("attacks")
    }

    #[test]
    fn the_corpus_loads_with_every_kind_and_step_form() {
        let all = load_dir(&corpus()).unwrap();
        assert!(all.len() >= 178, "{}", all.len());
        for k in [
            "state-symlink",
            "swap-race",
            "unix-socket",
            "computed-read",
            "background",
        ] {
            assert!(all.iter().filter(|a| a.kind == k).count() >= 10, "{k}");
        }
        assert!(all.iter().any(|a| a.steps.contains(&Step::Restart)));
        assert!(all
            .iter()
            .any(|a| a.steps.iter().any(|s| matches!(s, Step::WaitMs(_)))));
        let st1 = all.iter().find(|a| a.id == "STATE-01").unwrap();
        assert!(
            matches!(&st1.setup[1], Plant::Symlink { path, target } if path == ".lrab" && target == "{SIBLING}")
        );
    }

    #[test]
    fn placeholders_are_filled_everywhere() {
        let all = load_dir(&corpus()).unwrap();
        let p = Places {
            home: "/h".into(),
            sibling: "/s".into(),
            tmp: "/t".into(),
            socket: "/k.sock".into(),
            abstract_name: "abs".into(),
            port: 4242,
            workdir: "/w".into(),
        };
        for a in &all {
            let i = a.instantiate(&p);
            let dump = format!("{:?}", (&i.setup, &i.steps));
            for ph in [
                "{HOME}",
                "{SIBLING}",
                "{TMP}",
                "{SOCKET}",
                "{ABSTRACT}",
                "{PORT}",
                "{WORKDIR}",
            ] {
                assert!(!dump.contains(ph), "{}: {ph} left", a.id);
            }
        }
    }

    #[test]
    fn bad_files_are_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("x.toml"), "[[attack]]\nid = \"X-01\"\n").unwrap();
        let e = load_dir(d.path()).unwrap_err();
        assert!(matches!(&e, CorpusError::Attack { message, .. } if message == "X-01: no steps"));
        assert_eq!(
            format!("{:#}", anyhow::Error::from(e)),
            format!("{}: X-01: no steps", d.path().join("x.toml").display())
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            load_dir(empty.path()).unwrap_err().to_string(),
            format!("attack corpus {}: no *.toml files", empty.path().display())
        );
    }
}
