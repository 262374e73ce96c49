//! Loading probes: our own probes from their data (`own.rs`), the published benchmark's
//! adversarial and control prompts from their JSON files mapped to concrete actions
//! (`upstream.rs`), both turned into [`Probe`]s with their setup, steps and expectations.

use super::*;
use anyhow::{anyhow, bail, Context as _};
use std::path::Path;

fn parse_step(s: &str) -> anyhow::Result<Step> {
    if let Some(rest) = s.strip_prefix("@subagent ") {
        let mut it = rest.split_whitespace();
        let tool = it
            .next()
            .ok_or_else(|| anyhow!("@subagent needs a tool"))?
            .to_string();
        let depth = it
            .next()
            .unwrap_or("1")
            .parse()
            .map_err(|_| anyhow!("bad depth in '{s}'"))?;
        return Ok(Step::SubAgent { tool, depth });
    }
    if let Some(rest) = s.strip_prefix("@write ") {
        let v: Vec<&str> = rest.split_whitespace().collect();
        if v.len() != 3 {
            bail!("'@write PATH SIZE replace|plain' expected, got '{s}'");
        }
        return Ok(Step::Write {
            path: v[0].into(),
            size: v[1].parse().map_err(|_| anyhow!("bad size in '{s}'"))?,
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
pub fn own_probes() -> anyhow::Result<Vec<Probe>> {
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
                    .ok_or_else(|| anyhow!("{}: bad setup '{s}'", p.id))?;
                setup.push(match k {
                    "work" | "out" => {
                        let (path, c) = v
                            .split_once('=')
                            .ok_or_else(|| anyhow!("{}: bad setup '{s}'", p.id))?;
                        if k == "work" {
                            Setup::Work(path.into(), content_spec(c))
                        } else {
                            Setup::Outside(path.into(), content_spec(c))
                        }
                    }
                    "symlink" | "hardlink" => {
                        let (l, t) = v
                            .split_once("->")
                            .ok_or_else(|| anyhow!("{}: bad setup '{s}'", p.id))?;
                        if k == "symlink" {
                            Setup::Symlink(l.into(), t.into())
                        } else {
                            Setup::Hardlink(l.into(), t.into())
                        }
                    }
                    _ => bail!("{}: unknown setup kind '{k}'", p.id),
                });
            }
            let mut expect = Vec::new();
            for e in p.expect {
                let (k, v) = e
                    .split_once(':')
                    .ok_or_else(|| anyhow!("{}: bad expectation '{e}'", p.id))?;
                expect.push(match k {
                    "exists" => Expect::Exists(v.into()),
                    "gone" => Expect::Gone(v.into()),
                    "contains" => {
                        let (path, t) = v
                            .split_once('=')
                            .ok_or_else(|| anyhow!("{}: bad expectation '{e}'", p.id))?;
                        Expect::Contains(path.into(), t.into())
                    }
                    _ => bail!("{}: unknown expectation '{k}'", p.id),
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
                    .collect::<anyhow::Result<_>>()?,
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

fn jstr<'a>(v: &'a serde_json::Value, key: &str, file: &Path, id: &str) -> anyhow::Result<&'a str> {
    v.get(key).and_then(|x| x.as_str()).ok_or_else(|| {
        anyhow!(
            "{}: prompt '{id}': field '{key}' missing or not a string",
            file.display()
        )
    })
}

/// The upstream prompts (read from `dir`), mapped to concrete actions.
pub fn upstream_probes(dir: &Path) -> anyhow::Result<Vec<Probe>> {
    let mut out = Vec::new();
    for (file, is_control) in [
        ("prompts_adversarial.json", false),
        ("prompts_control.json", true),
    ] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| anyhow!("{}: line {}: {}", path.display(), e.line(), e))?;
        let prompts = v.get("prompts").and_then(|p| p.as_array()).ok_or_else(|| {
            anyhow!(
                "{}: field 'prompts' missing or not an array",
                path.display()
            )
        })?;
        for p in prompts {
            let id = p
                .get("id")
                .and_then(|x| x.as_str())
                .ok_or_else(|| anyhow!("{}: a prompt has no string 'id'", path.display()))?;
            let expected = jstr(p, "expected_behavior", &path, id)?;
            let ring =
                p.get("ring").and_then(|x| x.as_u64()).ok_or_else(|| {
                    anyhow!("{}: prompt '{id}': field 'ring' missing", path.display())
                })? as u8;
            let steps = upstream::actions(id).ok_or_else(|| anyhow!("{}: prompt '{id}' has no concrete action mapping in lrab-safety (probes/upstream.rs)", path.display()))?;
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
                        let a = g("artifact").ok_or_else(|| {
                            anyhow!("{}: '{id}': artifact missing", path.display())
                        })?;
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
                    .collect::<anyhow::Result<_>>()?,
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
) -> anyhow::Result<Vec<Setup>> {
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
        let p = o.get("path").and_then(|x| x.as_str()).ok_or_else(|| {
            anyhow!(
                "{}: '{id}': setup.outside entry without 'path'",
                file.display()
            )
        })?;
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
            anyhow!(
                "{}: '{id}': setup.runroot_dirs entry without 'path'",
                file.display()
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
            anyhow!(
                "{}: '{id}': setup.workdir_files entry without 'path'",
                file.display()
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
