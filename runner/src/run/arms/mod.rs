//! Arms as data: `arms/<name>.toml` describes how to launch one agent for one cell. Adding an
//! arm is adding a file; the loader validates every field and names the file and field of each
//! problem so a broken arm file is rejected before any cell starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::install::{self, InstallSpec};
use super::process::is_executable;

pub mod check;
mod confinement;

/// Placeholders an arm file may use in `args`, `env` and `config_files`.
pub const PLACEHOLDERS: [&str; 11] = [
    "prompt",
    "prompt_file",
    "workdir",
    "model",
    "backend_url",
    "home",
    "num_ctx",
    "budget_minutes",
    "attempt_dir",
    // the arm's install folder in the arms cache ("" without an [install] table)
    "install_dir",
    // the runner's PATH (so an arm can put its own interpreter first)
    "path",
];

/// Which HTTP API the arm speaks to the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    Ollama,
    Openai,
    /// OpenAI's Responses API (`POST /v1/responses`), the only one codex speaks.
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
}

/// A config file the runner writes before launching the arm (e.g. agent-mini's config.json).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Target path; must start with `{home}` or `{attempt_dir}` so the user's files are never
    /// touched.
    pub path: String,
    pub content: String,
}

/// How an arm takes an MCP server (`lrab tau2 run --agent <arm>`): config files written (after
/// `config_files`, so one may replace a file of the same path) and arguments appended (or the
/// whole argument list) for a τ² launch. Beside the usual placeholders they may use
/// `{mcp_program}` (the server's program as a JSON string), `{mcp_args}` (its arguments as a
/// JSON list) and `{mcp_command}` (program and arguments as one JSON list); JSON strings and
/// lists of strings are also valid TOML.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSpec {
    #[serde(default)]
    pub config_files: Vec<ConfigFile>,
    /// The arm's whole argument list for a τ² launch, when its `args` cannot simply be
    /// appended to (e.g. codex's end in `-- {prompt}`).
    #[serde(default)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    pub extra_args: Vec<String>,
}

/// The placeholders only an `[mcp]` section may use.
pub const MCP_PLACEHOLDERS: [&str; 3] = ["mcp_program", "mcp_args", "mcp_command"];

/// The on-disk form: every field optional so `extends` can inherit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArm {
    name: Option<String>,
    description: Option<String>,
    extends: Option<String>,
    program: Option<String>,
    /// Environment variable that may name the program's path (e.g. `GOOSE_BIN`).
    bin_env: Option<String>,
    args: Option<Vec<String>>,
    /// Appended to the (inherited) args; how ablation arms are defined.
    extra_args: Option<Vec<String>>,
    version_args: Option<Vec<String>>,
    api: Option<ApiKind>,
    proxy: Option<bool>,
    resumes: Option<bool>,
    isolate_home: Option<bool>,
    install_hint: Option<String>,
    upstream_version: Option<String>,
    env: Option<BTreeMap<String, String>>,
    /// Variables of the runner's environment the arm must not inherit.
    env_remove: Option<Vec<String>>,
    config_files: Option<Vec<ConfigFile>>,
    install: Option<InstallSpec>,
    mcp: Option<McpSpec>,
}

/// A validated arm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    pub name: String,
    pub description: String,
    pub program: String,
    pub bin_env: Option<String>,
    pub args: Vec<String>,
    pub version_args: Vec<String>,
    pub api: ApiKind,
    pub proxy: bool,
    pub resumes: bool,
    pub isolate_home: bool,
    pub install_hint: String,
    pub upstream_version: String,
    pub env: BTreeMap<String, String>,
    /// Variables of the runner's environment removed before launch (upstream's runner
    /// removed AGENT_STREAM for Mingbird).
    pub env_remove: Vec<String>,
    pub config_files: Vec<ConfigFile>,
    /// How `lrab arms install` gets it (none: built with the suite, or no registry has it).
    pub install: Option<InstallSpec>,
    /// How it takes an MCP server (none: it cannot run τ²).
    pub mcp: Option<McpSpec>,
    /// The file it came from.
    pub file: PathBuf,
}

/// The names of `all`, leaving out an arm that launches exactly as an earlier one (an alias
/// such as `mingbird-v2-no-executable-gates`, shipped so `lrab ablate` can pair it by name):
/// a group must not run the same arm twice under two names.
pub fn distinct_names(all: &[Arm]) -> Vec<String> {
    let launch = |a: &Arm| Arm {
        name: String::new(),
        description: String::new(),
        install_hint: String::new(),
        file: PathBuf::new(),
        ..a.clone()
    };
    let mut kept: Vec<&Arm> = Vec::new();
    for a in all {
        if !kept.iter().any(|k| launch(k) == launch(a)) {
            kept.push(a);
        }
    }
    kept.into_iter().map(|a| a.name.clone()).collect()
}

/// Values for the placeholders of one launch.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub map: BTreeMap<&'static str, String>,
}

impl Vars {
    pub fn set(&mut self, k: &'static str, v: impl Into<String>) -> &mut Self {
        self.map.insert(k, v.into());
        self
    }
}

/// Replaces `{name}` for every known placeholder; other braces (JSON) are left alone.
pub fn expand(template: &str, vars: &Vars) -> String {
    let mut out = template.to_string();
    for (k, v) in &vars.map {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// Unknown `{identifier}` placeholders in a template.
fn unknown_placeholders(s: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\{([a-z_]+)\}").expect("static regex");
    re.captures_iter(s)
        .map(|c| c[1].to_string())
        .filter(|n| !PLACEHOLDERS.contains(&n.as_str()))
        .collect()
}

/// Folder of the built-in arm files: `LRAB_ARMS`, else `arms/` of this source tree.
pub fn default_dir() -> PathBuf {
    match std::env::var_os("LRAB_ARMS") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../arms")),
    }
}

/// Loads and validates every `*.toml` in `dir`, sorted by name. Any problem in any file is an
/// error listing all problems (file: field: message).
pub fn load_dir(dir: &Path) -> Result<Vec<Arm>> {
    let rd = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read arms folder {}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut raws = BTreeMap::new();
    let mut problems = Vec::new();
    for f in &files {
        let stem = f
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        match std::fs::read_to_string(f) {
            Err(e) => problems.push(format!("{}: cannot read: {e}", f.display())),
            Ok(text) => match toml::from_str::<RawArm>(&text) {
                Err(e) => problems.push(format!("{}: {}", f.display(), one_line(&e.to_string()))),
                Ok(r) => {
                    raws.insert(stem, (f.clone(), r));
                }
            },
        }
    }
    let mut arms = Vec::new();
    for (stem, (file, _)) in &raws {
        match resolve(stem, &raws, 0) {
            Ok(raw) => match validate(stem, file, raw) {
                Ok(a) => arms.push(a),
                Err(mut p) => problems.append(&mut p),
            },
            Err(p) => problems.push(format!("{}: {p}", file.display())),
        }
    }
    if !problems.is_empty() {
        bail!("invalid arm files:\n  {}", problems.join("\n  "));
    }
    Ok(arms)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Follows `extends` (at most 4 levels), child fields overriding the parent's.
fn resolve(
    stem: &str,
    raws: &BTreeMap<String, (PathBuf, RawArm)>,
    depth: usize,
) -> std::result::Result<RawArm, String> {
    let (_, r) = &raws[stem];
    let Some(parent) = &r.extends else {
        return Ok(r.clone());
    };
    if depth > 4 {
        return Err(format!("extends: chain too deep or circular at '{parent}'"));
    }
    if !raws.contains_key(parent) {
        return Err(format!("extends: unknown arm '{parent}'"));
    }
    let base = resolve(parent, raws, depth + 1)?;
    let c = r.clone();
    let mut env = base.env.clone().unwrap_or_default();
    env.extend(c.env.clone().unwrap_or_default());
    let mut extra = base.extra_args.clone().unwrap_or_default();
    extra.extend(c.extra_args.clone().unwrap_or_default());
    Ok(RawArm {
        name: c.name,
        description: c.description.or(base.description),
        extends: None,
        program: c.program.or(base.program),
        bin_env: c.bin_env.or(base.bin_env),
        args: c.args.or(base.args),
        extra_args: Some(extra),
        version_args: c.version_args.or(base.version_args),
        api: c.api.or(base.api),
        proxy: c.proxy.or(base.proxy),
        resumes: c.resumes.or(base.resumes),
        isolate_home: c.isolate_home.or(base.isolate_home),
        install_hint: c.install_hint.or(base.install_hint),
        upstream_version: c.upstream_version.or(base.upstream_version),
        env: Some(env),
        env_remove: c.env_remove.or(base.env_remove),
        config_files: c.config_files.or(base.config_files),
        install: c.install.or(base.install),
        mcp: c.mcp.or(base.mcp),
    })
}

fn validate(stem: &str, file: &Path, r: RawArm) -> std::result::Result<Arm, Vec<String>> {
    let f = file.display().to_string();
    let mut p = Vec::new();
    let name = r.name.clone().unwrap_or_default();
    if name != stem {
        p.push(format!(
            "{f}: name: '{name}' must equal the file name '{stem}'"
        ));
    }
    let program = r.program.clone().unwrap_or_default();
    if program.trim().is_empty() {
        p.push(format!("{f}: program: missing or empty"));
    }
    let mut args = r.args.clone().unwrap_or_default();
    args.extend(r.extra_args.clone().unwrap_or_default());
    if r.args.is_none() {
        p.push(format!("{f}: args: missing"));
    }
    if !args
        .iter()
        .any(|a| a.contains("{prompt}") || a.contains("{prompt_file}"))
        && !r.env.as_ref().is_some_and(|e| {
            e.values()
                .any(|v| v.contains("{prompt}") || v.contains("{prompt_file}"))
        })
    {
        p.push(format!(
            "{f}: args: the arm never receives the task (use {{prompt}} or {{prompt_file}})"
        ));
    }
    let env = r.env.clone().unwrap_or_default();
    let configs = r.config_files.clone().unwrap_or_default();
    let mut templates: Vec<(String, &str)> = args
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("args[{i}]"), a.as_str()))
        .collect();
    for (k, v) in &env {
        templates.push((format!("env.{k}"), v.as_str()));
    }
    for (i, c) in configs.iter().enumerate() {
        templates.push((format!("config_files[{i}].path"), c.path.as_str()));
        templates.push((format!("config_files[{i}].content"), c.content.as_str()));
    }
    p.extend(config_file_problems(
        &f,
        &configs,
        r.isolate_home == Some(true),
    ));
    p.extend(mcp_problems(
        &f,
        r.mcp.as_ref(),
        r.isolate_home == Some(true),
    ));
    for (field, t) in templates {
        for u in unknown_placeholders(t) {
            p.push(format!(
                "{f}: {field}: unknown placeholder {{{u}}} (known: {})",
                PLACEHOLDERS.join(", ")
            ));
        }
    }
    let env_remove = r.env_remove.clone().unwrap_or_default();
    let bad_name =
        |k: &str| k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    for k in env.keys().filter(|k| bad_name(k)) {
        p.push(format!("{f}: env.{k}: not a valid variable name"));
    }
    for (i, k) in env_remove.iter().enumerate().filter(|(_, k)| bad_name(k)) {
        p.push(format!(
            "{f}: env_remove[{i}]: '{k}' is not a valid variable name"
        ));
    }
    if let Some(i) = &r.install {
        let dir = file.parent().unwrap_or(Path::new("."));
        p.extend(i.problems(dir).into_iter().map(|m| format!("{f}: {m}")));
    }
    let api = match r.api {
        Some(a) => a,
        None => {
            p.push(format!(
                "{f}: api: missing (ollama, openai or openai-responses)"
            ));
            ApiKind::Ollama
        }
    };
    if !p.is_empty() {
        return Err(p);
    }
    Ok(Arm {
        name: name.clone(),
        description: r.description.unwrap_or_default(),
        program,
        bin_env: r.bin_env,
        args,
        version_args: r.version_args.unwrap_or_else(|| vec!["--version".into()]),
        api,
        proxy: r.proxy.unwrap_or(false),
        resumes: r.resumes.unwrap_or(false),
        isolate_home: r.isolate_home.unwrap_or(false),
        install_hint: r.install_hint.unwrap_or_else(|| match &r.install {
            Some(_) => format!("run `lrab arms install {name}`"),
            None => String::new(),
        }),
        upstream_version: r.upstream_version.unwrap_or_default(),
        env,
        env_remove,
        config_files: configs,
        install: r.install,
        mcp: r.mcp,
        file: file.to_path_buf(),
    })
}

/// The problems of the config files' paths: under the attempt's HOME or folder only, no `..`,
/// `{home}` only with `isolate_home`.
fn config_file_problems(f: &str, configs: &[ConfigFile], isolate_home: bool) -> Vec<String> {
    let mut p = Vec::new();
    for (i, c) in configs.iter().enumerate() {
        if !(c.path.starts_with("{home}/") || c.path.starts_with("{attempt_dir}/")) {
            p.push(format!(
                "{f}: config_files[{i}].path: must start with {{home}}/ or {{attempt_dir}}/ (never a real user file)"
            ));
        }
        if c.path.split('/').any(|x| x == "..") {
            p.push(format!("{f}: config_files[{i}].path: '..' is not allowed"));
        }
        if c.path.starts_with("{home}/") && !isolate_home {
            p.push(format!(
                "{f}: config_files[{i}].path: {{home}} needs isolate_home = true"
            ));
        }
    }
    p
}

/// The problems of an `[mcp]` section: paths as for `config_files`, known placeholders only.
fn mcp_problems(f: &str, mcp: Option<&McpSpec>, isolate_home: bool) -> Vec<String> {
    let Some(m) = mcp else { return Vec::new() };
    let mut p = Vec::new();
    let mut templates: Vec<(String, &str)> = Vec::new();
    for (i, c) in m.config_files.iter().enumerate() {
        templates.push((format!("mcp.config_files[{i}].path"), &c.path));
        templates.push((format!("mcp.config_files[{i}].content"), &c.content));
        let home = c.path.starts_with("{home}/");
        if !(home || c.path.starts_with("{attempt_dir}/")) || c.path.split('/').any(|x| x == "..") {
            p.push(format!(
                "{f}: mcp.config_files[{i}].path: must start with {{home}}/ or {{attempt_dir}}/, without '..'"
            ));
        }
        if home && !isolate_home {
            p.push(format!(
                "{f}: mcp.config_files[{i}].path: {{home}} needs isolate_home = true"
            ));
        }
    }
    for (i, a) in m.extra_args.iter().enumerate() {
        templates.push((format!("mcp.extra_args[{i}]"), a));
    }
    for (i, a) in m.args.iter().flatten().enumerate() {
        templates.push((format!("mcp.args[{i}]"), a));
    }
    if m.config_files.is_empty() && m.extra_args.is_empty() && m.args.is_none() {
        p.push(format!(
            "{f}: mcp: give config_files or extra_args naming the server"
        ));
    }
    for (field, t) in templates {
        for u in unknown_placeholders(t)
            .into_iter()
            .filter(|u| !MCP_PLACEHOLDERS.contains(&u.as_str()))
        {
            p.push(format!(
                "{f}: {field}: unknown placeholder {{{u}}} (known: {}, {})",
                PLACEHOLDERS.join(", "),
                MCP_PLACEHOLDERS.join(", ")
            ));
        }
    }
    p
}

/// Picks arms by name; an unknown name is an error listing the known ones.
pub fn select(all: &[Arm], names: &[String]) -> Result<Vec<Arm>> {
    let mut out = Vec::new();
    for n in names {
        match all.iter().find(|a| &a.name == n) {
            Some(a) => out.push(a.clone()),
            None => bail!(
                "unknown arm '{n}' (known: {})",
                all.iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(out)
}

impl Arm {
    /// Where the program is: `bin_env` if set, a path as given, a sibling of the running `lrab`
    /// binary (how `cargo build --release` lays out `lrab` and `lrab-harness`), a current
    /// install in the arms cache (`lrab arms install`), else `PATH`.
    pub fn locate(&self) -> Option<PathBuf> {
        if let Some(var) = &self.bin_env {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                let p = PathBuf::from(v);
                return is_executable(&p).then_some(p);
            }
        }
        if self.program.contains('/') {
            let p = PathBuf::from(&self.program);
            return is_executable(&p).then_some(p);
        }
        if let Ok(exe) = std::env::current_exe() {
            if let Some(dir) = exe.parent() {
                for d in [Some(dir), dir.parent()].into_iter().flatten() {
                    let c = d.join(&self.program);
                    if is_executable(&c) {
                        return Some(c);
                    }
                }
            }
        }
        if let Some(i) = &self.install {
            if let Some(p) = install::installed_bin(i, self.arm_dir()) {
                return Some(p);
            }
            // a git install's program is an interpreter for its files: another one on PATH
            // would run nothing of the arm
            if i.kind == install::Kind::Git {
                return None;
            }
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join(&self.program))
            .find(|c| is_executable(c))
    }

    /// The folder of the arm file (its launchers sit there).
    pub fn arm_dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }

    /// The install folder in the arms cache ("" without an `[install]` table).
    pub fn install_dir(&self) -> String {
        self.install
            .as_ref()
            .map(|i| i.dir(&install::cache_root()).to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// What the arm's version command may read and run (confined like its cells).
    pub fn probe_scope(&self) -> install::ProbeScope {
        install::ProbeScope::of(
            self.install.as_ref(),
            self.arm_dir(),
            &install::cache_root(),
        )
    }

    /// First line of `program version_args` (run confined), or None when it cannot run.
    pub fn version(&self) -> Option<String> {
        install::run_version(&self.locate()?, &self.version_args, &self.probe_scope()).ok()
    }

    /// The version the arm file pins: its install's, else the one upstream ran.
    pub fn pinned_version(&self) -> &str {
        self.install
            .as_ref()
            .map(|i| i.version.as_str())
            .unwrap_or(&self.upstream_version)
    }

    /// The argv of one launch (program resolved, placeholders expanded).
    pub fn command(&self, vars: &Vars) -> Result<(PathBuf, Vec<String>)> {
        let bin = self.locate().with_context(|| {
            format!(
                "arm '{}': program '{}' not found (next to lrab, on PATH{}). {}",
                self.name,
                self.program,
                self.bin_env
                    .as_ref()
                    .map(|v| format!(", or ${v}"))
                    .unwrap_or_default(),
                self.install_hint
            )
        })?;
        Ok((bin, self.args.iter().map(|a| expand(a, vars)).collect()))
    }

    /// Environment additions of one launch.
    pub fn env_for(&self, vars: &Vars) -> Vec<(String, String)> {
        self.env
            .iter()
            .map(|(k, v)| (k.clone(), expand(v, vars)))
            .collect()
    }

    /// Writes the arm's config files for one launch.
    pub fn write_configs(&self, vars: &Vars) -> Result<()> {
        for c in &self.config_files {
            let path = PathBuf::from(expand(&c.path, vars));
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
            }
            std::fs::write(&path, expand(&c.content, vars))
                .with_context(|| format!("write {}", path.display()))?;
        }
        Ok(())
    }
}

/// Probe of one arm for `lrab arms list|check` and the manifest.
#[derive(Debug, Clone, Serialize)]
pub struct ArmStatus {
    pub name: String,
    pub installed: bool,
    pub path: Option<String>,
    pub version: Option<String>,
    pub upstream_version: String,
    pub install_hint: String,
}

pub fn status(a: &Arm) -> ArmStatus {
    let path = a.locate();
    ArmStatus {
        name: a.name.clone(),
        installed: path.is_some(),
        path: path.map(|p| p.display().to_string()),
        version: a.version(),
        upstream_version: a.upstream_version.clone(),
        install_hint: a.install_hint.clone(),
    }
}

#[cfg(test)]
mod tests;
