//! Loading probes: our own probes from their data (`own.rs`), the published benchmark's
//! adversarial and control prompts from their JSON files mapped to concrete actions
//! (`upstream.rs`), both turned into [`Probe`]s with their setup, steps and expectations.

use super::*;
use std::path::{Path, PathBuf};

/// Why probes do not load ([`own_probes`], [`upstream_probes`]); each displays as the command
/// line prints it.
#[derive(Debug, thiserror::Error)]
pub enum ProbeLoadError {
    /// A prompt file cannot be read.
    #[error("reading {}: {err}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (not a `source`: the message carries it).
        err: std::io::Error,
    },
    /// A prompt file is not JSON.
    #[error("{}: line {line}: {err}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The line the parser stopped at.
        line: usize,
        /// The parser's message.
        err: serde_json::Error,
    },
    /// A prompt file is JSON but a field is missing or of the wrong type; `message` names the
    /// prompt and the field.
    #[error("{}: {message}", .path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A step's text (ours or an upstream prompt's action mapping) does not parse.
    #[error("{0}")]
    Step(String),
    /// One of our own probes is malformed (a bug in the probe data, named by its id).
    #[error("{0}")]
    Own(String),
}

fn field(path: &Path, message: String) -> ProbeLoadError {
    ProbeLoadError::Field {
        path: path.to_path_buf(),
        message,
    }
}

fn parse_step(s: &str) -> Result<Step, ProbeLoadError> {
    if let Some(rest) = s.strip_prefix("@subagent ") {
        let mut it = rest.split_whitespace();
        let tool = it
            .next()
            .ok_or_else(|| ProbeLoadError::Step("@subagent needs a tool".into()))?
            .to_string();
        let depth = it
            .next()
            .unwrap_or("1")
            .parse()
            .map_err(|_| ProbeLoadError::Step(format!("bad depth in '{s}'")))?;
        return Ok(Step::SubAgent { tool, depth });
    }
    if let Some(rest) = s.strip_prefix("@write ") {
        let v: Vec<&str> = rest.split_whitespace().collect();
        if v.len() != 3 {
            return Err(ProbeLoadError::Step(format!(
                "'@write PATH SIZE replace|plain' expected, got '{s}'"
            )));
        }
        return Ok(Step::Write {
            path: v[0].into(),
            size: v[1]
                .parse()
                .map_err(|_| ProbeLoadError::Step(format!("bad size in '{s}'")))?,
            replace: v[2] == "replace",
        });
    }
    Ok(match s.strip_prefix('+') {
        Some(c) => Step::Shell {
            cmd: c.to_string(),
            prep: true,
        },
        None => Step::Shell {
            cmd: s.to_string(),
            prep: false,
        },
    })
}

fn content_spec(c: &str) -> Vec<u8> {
    // `@N` = N bytes of CSV-like filler
    match c.strip_prefix('@').and_then(|n| n.parse::<usize>().ok()) {
        Some(n) => "row,value\n".bytes().cycle().take(n).collect(),
        None => c.as_bytes().to_vec(),
    }
}

/// Our own probes and controls as [`Probe`]s.
pub fn own_probes() -> Result<Vec<Probe>, ProbeLoadError> {
    let mut out = Vec::new();
    for (list, kind) in [
        (own::OWN, Kind::Adversarial),
        (own::OWN_CONTROLS, Kind::Control),
    ] {
        for p in list {
            let mut setup = Vec::new();
            for s in p.setup {
                let (k, v) = s
                    .split_once(':')
                    .ok_or_else(|| ProbeLoadError::Own(format!("{}: bad setup '{s}'", p.id)))?;
                setup.push(match k {
                    "work" | "out" => {
                        let (path, c) = v.split_once('=').ok_or_else(|| {
                            ProbeLoadError::Own(format!("{}: bad setup '{s}'", p.id))
                        })?;
                        if k == "work" {
                            Setup::Work(path.into(), content_spec(c))
                        } else {
                            Setup::Outside(path.into(), content_spec(c))
                        }
                    }
                    "symlink" | "hardlink" => {
                        let (l, t) = v.split_once("->").ok_or_else(|| {
                            ProbeLoadError::Own(format!("{}: bad setup '{s}'", p.id))
                        })?;
                        if k == "symlink" {
                            Setup::Symlink(l.into(), t.into())
                        } else {
                            Setup::Hardlink(l.into(), t.into())
                        }
                    }
                    _ => {
                        return Err(ProbeLoadError::Own(format!(
                            "{}: unknown setup kind '{k}'",
                            p.id
                        )))
                    }
                });
            }
            let mut expect = Vec::new();
            for e in p.expect {
                let (k, v) = e.split_once(':').ok_or_else(|| {
                    ProbeLoadError::Own(format!("{}: bad expectation '{e}'", p.id))
                })?;
                expect.push(match k {
                    "exists" => Expect::Exists(v.into()),
                    "gone" => Expect::Gone(v.into()),
                    "contains" => {
                        let (path, t) = v.split_once('=').ok_or_else(|| {
                            ProbeLoadError::Own(format!("{}: bad expectation '{e}'", p.id))
                        })?;
                        Expect::Contains(path.into(), t.into())
                    }
                    _ => {
                        return Err(ProbeLoadError::Own(format!(
                            "{}: unknown expectation '{k}'",
                            p.id
                        )))
                    }
                });
            }
            expect.push(Expect::AllSucceed);
            out.push(Probe {
                id: p.id.into(),
                source: "own",
                kind: kind.clone(),
                ring: p.ring,
                irreversible: p.irreversible,
                setup,
                steps: p
                    .steps
                    .iter()
                    .map(|s| parse_step(s))
                    .collect::<Result<_, _>>()?,
                expect: if kind == Kind::Control {
                    expect
                } else {
                    Vec::new()
                },
            });
        }
    }
    Ok(out)
}

fn jstr<'a>(
    v: &'a serde_json::Value,
    key: &str,
    file: &Path,
    id: &str,
) -> Result<&'a str, ProbeLoadError> {
    v.get(key).and_then(|x| x.as_str()).ok_or_else(|| {
        field(
            file,
            format!("prompt '{id}': field '{key}' missing or not a string"),
        )
    })
}

/// The upstream prompts (read from `dir`), mapped to concrete actions.
pub fn upstream_probes(dir: &Path) -> Result<Vec<Probe>, ProbeLoadError> {
    let mut out = Vec::new();
    for (file, is_control) in [
        ("prompts_adversarial.json", false),
        ("prompts_control.json", true),
    ] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).map_err(|err| ProbeLoadError::Read {
            path: path.clone(),
            err,
        })?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|err| ProbeLoadError::Json {
                path: path.clone(),
                line: err.line(),
                err,
            })?;
        let prompts = v
            .get("prompts")
            .and_then(|p| p.as_array())
            .ok_or_else(|| field(&path, "field 'prompts' missing or not an array".into()))?;
        for p in prompts {
            let id = p
                .get("id")
                .and_then(|x| x.as_str())
                .ok_or_else(|| field(&path, "a prompt has no string 'id'".into()))?;
            let expected = jstr(p, "expected_behavior", &path, id)?;
            let ring = p
                .get("ring")
                .and_then(|x| x.as_u64())
                .ok_or_else(|| field(&path, format!("prompt '{id}': field 'ring' missing")))?
                as u8;
            let steps = upstream::actions(id).ok_or_else(|| field(&path, format!("prompt '{id}' has no concrete action mapping in lrab-safety (probes/upstream.rs)")))?;
            let kind = if is_control || expected == "allow_with_narrow" {
                Kind::Control
            } else {
                Kind::Adversarial
            };
            let setup = upstream_setup(p.get("setup"), &path, id)?;
            let mut expect = Vec::new();
            if let Some(pc) = p.get("pass_condition") {
                let ty = jstr(pc, "type", &path, id)?;
                let g = |k: &str| pc.get(k).and_then(|x| x.as_str()).map(str::to_string);
                match ty {
                    "artifact_exists" => {
                        let a = g("artifact")
                            .ok_or_else(|| field(&path, format!("'{id}': artifact missing")))?;
                        expect.push(Expect::MinBytes(
                            a,
                            pc.get("min_bytes").and_then(|x| x.as_u64()).unwrap_or(1),
                        ));
                    }
                    "artifacts_exist" => {
                        for a in pc
                            .get("artifacts")
                            .and_then(|x| x.as_array())
                            .into_iter()
                            .flatten()
                        {
                            expect.push(Expect::Exists(a.as_str().unwrap_or_default().to_string()));
                        }
                    }
                    "dir_gone_and_artifact" => {
                        expect.push(Expect::Gone(g("dir").unwrap_or_default()));
                        expect.push(Expect::Exists(g("artifact").unwrap_or_default()));
                    }
                    "content_replaced" => {
                        let p2 = g("path").unwrap_or_default();
                        expect.push(Expect::NotContains(
                            p2.clone(),
                            g("gone").unwrap_or_default(),
                        ));
                        expect.push(Expect::Contains(p2, g("has").unwrap_or_default()));
                    }
                    "content_appended" => {
                        let p2 = g("path").unwrap_or_default();
                        expect.push(Expect::Contains(p2.clone(), g("keeps").unwrap_or_default()));
                        expect.push(Expect::Contains(p2, g("has").unwrap_or_default()));
                    }
                    // upstream-specific rollback artifacts (.mingbird_trash, .bak) belong to its
                    // file tools; for the shell actions here success is what is checked
                    _ => {}
                }
            }
            if kind == Kind::Control {
                expect.push(Expect::AllSucceed);
            }
            out.push(Probe {
                id: id.to_string(),
                source: "upstream",
                kind,
                ring,
                irreversible: ring == 2 && expected == "refuse",
                setup,
                steps: steps
                    .iter()
                    .map(|s| parse_step(s))
                    .collect::<Result<_, _>>()?,
                expect,
            });
        }
    }
    Ok(out)
}

fn upstream_setup(
    s: Option<&serde_json::Value>,
    file: &Path,
    id: &str,
) -> Result<Vec<Setup>, ProbeLoadError> {
    let mut out = Vec::new();
    let Some(s) = s else { return Ok(out) };
    let files_of = |v: &serde_json::Value| -> Vec<(String, Vec<u8>)> {
        v.get("files")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f.get("name")
                        .and_then(|x| x.as_str())
                        .unwrap_or("f")
                        .to_string(),
                    f.get("content")
                        .and_then(|x| x.as_str())
                        .unwrap_or("")
                        .as_bytes()
                        .to_vec(),
                )
            })
            .collect()
    };
    for o in s
        .get("outside")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        let p = o
            .get("path")
            .and_then(|x| x.as_str())
            .ok_or_else(|| field(file, format!("'{id}': setup.outside entry without 'path'")))?;
        if let Some(c) = o.get("content").and_then(|x| x.as_str()) {
            out.push(Setup::Outside(p.into(), c.as_bytes().to_vec()));
        } else {
            out.push(Setup::Outside(format!("{p}/.keep"), Vec::new()));
            for (n, c) in files_of(o) {
                out.push(Setup::Outside(format!("{p}/{n}"), c));
            }
        }
    }
    for o in s
        .get("runroot_dirs")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        let p = o.get("path").and_then(|x| x.as_str()).ok_or_else(|| {
            field(
                file,
                format!("'{id}': setup.runroot_dirs entry without 'path'"),
            )
        })?;
        out.push(Setup::RootDir(p.into()));
        for (n, c) in files_of(o) {
            out.push(Setup::Root(format!("{p}/{n}"), c));
        }
    }
    for o in s
        .get("workdir_files")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        let p = o.get("path").and_then(|x| x.as_str()).ok_or_else(|| {
            field(
                file,
                format!("'{id}': setup.workdir_files entry without 'path'"),
            )
        })?;
        let mut c = o
            .get("content")
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .as_bytes()
            .to_vec();
        if let Some(n) = o.get("size_bytes").and_then(|x| x.as_u64()) {
            let base = c.clone();
            while (c.len() as u64) < n && !base.is_empty() {
                c.extend_from_slice(&base);
            }
        }
        out.push(Setup::Work(p.into(), c));
    }
    for n in s
        .get("pre_trash_files")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        out.push(Setup::Work(
            format!(".mingbird_trash/{}.0.trash", n.as_str().unwrap_or("f")),
            b"junk\n".to_vec(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_files_fail_with_a_kind_and_the_file() {
        let d = tempfile::tempdir().unwrap();
        let adv = d.path().join("prompts_adversarial.json");
        assert!(matches!(
            upstream_probes(d.path()),
            Err(ProbeLoadError::Read { .. })
        ));
        std::fs::write(&adv, "{\n  \"prompts\": [\n").unwrap();
        let e = upstream_probes(d.path()).unwrap_err();
        assert!(matches!(e, ProbeLoadError::Json { line: 3, .. }), "{e:?}");
        assert!(e
            .to_string()
            .starts_with(&format!("{}: line 3: ", adv.display())));
        std::fs::write(&adv, r#"{"prompts": [{"ring": 2}]}"#).unwrap();
        assert_eq!(
            upstream_probes(d.path()).unwrap_err().to_string(),
            format!("{}: a prompt has no string 'id'", adv.display())
        );
        assert!(matches!(
            parse_step("@write a.txt big replace"),
            Err(ProbeLoadError::Step(m)) if m == "bad size in '@write a.txt big replace'"
        ));
        assert!(own_probes().is_ok());
    }
}
