//! The classifier's working state, shared by the shell walk (`shell`) and the payload inspector
//! (`payload`): what is known at a point of a command line ([`Env`]), expanded fields ([`F`]),
//! the findings so far and the verdict they make, and the checks every rule applies to the paths
//! it touches (writes, reads, recursive deletes).

use crate::paths::{self, Access, Place};
use crate::{Context, Ring, Verdict};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub(crate) struct Finding {
    pub ring: Ring,
    pub reason: String,
    pub alternative: Option<String>,
    /// A person could confirm it (ring 3, sensitive reads); otherwise a hard refusal.
    pub attendable: bool,
}

/// What the walk knows at a point of the command line.
#[derive(Clone, Debug)]
pub(crate) struct Env {
    pub vars: HashMap<String, String>,
    /// Current directory; `None` after a `cd` to somewhere unknown.
    pub cwd: Option<PathBuf>,
    /// Files written earlier in this command line with statically known content.
    pub files: HashMap<PathBuf, String>,
    /// Files written earlier in this command line with unknown content.
    pub opaque_files: Vec<PathBuf>,
}

impl Env {
    pub fn new(ctx: &Context) -> Env {
        let mut vars = HashMap::new();
        vars.insert("HOME".into(), ctx.home.to_string_lossy().to_string());
        vars.insert("PWD".into(), ctx.workdir.to_string_lossy().to_string());
        vars.insert("IFS".into(), " ".into());
        // the shell's own pid: `/proc/$$/…` is `/proc/self/…` for path resolution
        vars.insert("$".into(), "self".into());
        vars.insert("BASHPID".into(), "self".into());
        Env {
            vars,
            cwd: Some(ctx.workdir.clone()),
            files: HashMap::new(),
            opaque_files: Vec::new(),
        }
    }
}

/// One field after expansion.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct F {
    pub text: String,
    /// Some part is unknown until run time.
    pub dynamic: bool,
    /// The unknown part is at the start (so the field could be anything, e.g. `/`).
    pub lead_dynamic: bool,
    /// Contains unquoted glob characters.
    pub glob: bool,
}

impl F {
    pub fn lit(s: &str) -> F {
        F {
            text: s.to_string(),
            ..F::default()
        }
    }
}

/// Where a command's stdin comes from (for `… | sh` and `sh <<< …`).
#[derive(Clone, Debug)]
pub(crate) enum Stdin {
    None,
    Static(String),
    Unknown(String),
}

pub(crate) const MAX_NEST: usize = 12;

pub(crate) struct Analyzer<'a> {
    pub ctx: &'a Context,
    pub findings: Vec<Finding>,
    /// Bounds total work on hostile input.
    pub budget: usize,
}

impl<'a> Analyzer<'a> {
    /// A fresh analysis in `ctx`.
    pub fn new(ctx: &'a Context) -> Analyzer<'a> {
        Analyzer {
            ctx,
            findings: Vec::new(),
            budget: 4000,
        }
    }

    pub fn add(&mut self, ring: Ring, reason: String, alternative: Option<&str>) {
        self.findings.push(Finding {
            ring,
            reason,
            alternative: alternative.map(str::to_string),
            attendable: ring == Ring::SystemMutation,
        });
    }
    pub(crate) fn add_verdict(&mut self, v: Verdict, attendable: bool) {
        if let Verdict::Deny {
            ring,
            reason,
            alternative,
        } = v
        {
            self.findings.push(Finding {
                ring,
                reason,
                alternative,
                attendable,
            });
        }
    }

    pub(crate) fn verdict(&self) -> Verdict {
        let rank = |f: &Finding| -> u8 {
            let r = match f.ring {
                Ring::Irreversible => 0,
                Ring::Boundary => 1,
                Ring::SystemMutation => 2,
                Ring::Reversibility => 3,
                Ring::SubAgent => 4,
            };
            r + if f.attendable { 10 } else { 0 }
        };
        let mut fs: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| !(f.ring == Ring::SystemMutation && self.ctx.allow_system_mutation))
            .collect();
        fs.sort_by_key(|f| rank(f));
        match fs.first() {
            None => Verdict::Allow,
            Some(f) if f.attendable && self.ctx.attended => Verdict::NeedsAttended { ring: f.ring, reason: f.reason.clone() },
            Some(f) => Verdict::Deny {
                ring: f.ring,
                reason: f.reason.clone(),
                alternative: f.alternative.clone().or_else(|| {
                    f.attendable.then(|| "this needs a person's confirmation, which an unattended run cannot give; do the task without it".to_string())
                }),
            },
        }
    }

    /// Resolve a field to a path if that is possible statically.
    pub fn path_of(&self, f: &F, env: &Env) -> Option<PathBuf> {
        if f.lead_dynamic || f.text.is_empty() {
            return None;
        }
        let t = paths::expand_home(&f.text, &self.ctx.home);
        if !t.starts_with('/') && env.cwd.is_none() {
            return None;
        }
        let cwd = env.cwd.clone().unwrap_or_else(|| self.ctx.workdir.clone());
        Some(paths::resolve(&t, &cwd, &self.ctx.home))
    }

    /// A write to `f`: ring 2 for raw devices and history, ring 3 for system configuration and
    /// start-up files, ring 4 for anything else outside the workdir. Returns the resolved path.
    pub fn write_target(&mut self, f: &F, env: &Env, what: &str) -> Option<PathBuf> {
        if f.lead_dynamic || f.text.is_empty() {
            return None;
        }
        if f.text.contains(['*', '?', '[']) {
            let cwd = env.cwd.clone()?;
            for p in paths::glob_expand(&f.text, &cwd, &self.ctx.home) {
                let before = self.findings.len();
                self.write_target(&F::lit(&p.to_string_lossy()), env, what);
                if self.findings.len() > before {
                    return None;
                }
            }
        }
        let text = paths::expand_home(&f.text, &self.ctx.home);
        let cwd = env.cwd.clone()?;
        let real = paths::resolve(&text, &cwd, &self.ctx.home);
        let lex = paths::lexical(&if text.starts_with('/') {
            PathBuf::from(&text)
        } else {
            cwd.join(&text)
        });
        for p in [&lex, &real] {
            let s = p.to_string_lossy();
            if is_raw_device(&s) {
                self.add(
                    Ring::Irreversible,
                    format!("{what} writes to the raw device {s}; this destroys data irreversibly"),
                    None,
                );
                return None;
            }
            if s == "/proc/sysrq-trigger" || s.starts_with("/proc/sys/") || s.starts_with("/sys/") {
                self.add(
                    Ring::Irreversible,
                    format!("{what} writes kernel control file {s}"),
                    None,
                );
                return None;
            }
            if paths::is_history_file(p, &self.ctx.home) {
                self.add(
                    Ring::Irreversible,
                    format!("{what} overwrites shell history {s}"),
                    None,
                );
                return None;
            }
            if paths::is_startup_file(p, &self.ctx.home) {
                self.add(
                    Ring::SystemMutation,
                    format!("{what} edits shell start-up file {s}, changing every later shell"),
                    None,
                );
                return None;
            }
            if s.starts_with("/etc/")
                || s == "/etc"
                || s.starts_with("/usr/")
                || s.starts_with("/boot")
                || s.starts_with("/lib")
            {
                self.add(
                    Ring::SystemMutation,
                    format!("{what} writes system file {s}"),
                    None,
                );
                return None;
            }
        }
        match paths::check_access(&text, Access::Write, &cwd, self.ctx) {
            Ok(p) => Some(p),
            Err(v) => {
                self.add_verdict(v, false);
                None
            }
        }
    }

    /// A read of `f`: only sensitive paths (and hard links to them) matter.
    pub fn read_target(&mut self, f: &F, env: &Env) {
        if f.lead_dynamic || f.text.is_empty() {
            return;
        }
        if f.text.contains(['*', '?', '[']) {
            if let Some(cwd) = env.cwd.clone() {
                for p in paths::glob_expand(&f.text, &cwd, &self.ctx.home) {
                    if let Err(v) =
                        paths::check_access(&p.to_string_lossy(), Access::Read, &cwd, self.ctx)
                    {
                        self.add_verdict(v, false);
                        return;
                    }
                }
            }
        }
        let text = paths::expand_home(&f.text, &self.ctx.home);
        let Some(cwd) = env.cwd.clone() else { return };
        if let Err(v) = paths::check_access(&text, Access::Read, &cwd, self.ctx) {
            self.add_verdict(v, false);
        }
    }

    /// Content of a file for `sh FILE` / `python FILE`: written earlier in this line, or on disk.
    pub fn file_content(&self, f: &F, env: &Env) -> Option<String> {
        let p = self.path_of(f, env)?;
        if let Some(c) = env.files.get(&p) {
            return Some(c.clone());
        }
        if env.opaque_files.contains(&p) {
            return None;
        }
        let m = std::fs::metadata(&p).ok()?;
        if !m.is_file() || m.len() > 1_000_000 {
            return None;
        }
        std::fs::read(&p)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    pub fn written_opaque(&self, f: &F, env: &Env) -> bool {
        self.path_of(f, env)
            .is_some_and(|p| env.opaque_files.contains(&p))
    }
}

pub(crate) fn is_raw_device(s: &str) -> bool {
    let Some(dev) = s.strip_prefix("/dev/") else {
        return false;
    };
    [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "sr", "nbd", "disk/",
        "mapper/", "mem", "kmem", "port", "root",
    ]
    .iter()
    .any(|p| dev.starts_with(p))
}

/// A recursive delete of `f` (ring 2 for `/`-like targets, ring 4 outside the workdir).
pub(crate) fn recursive_delete(a: &mut Analyzer<'_>, f: &F, env: &Env, how: &str) {
    if f.lead_dynamic || (f.dynamic && f.text.trim_matches('/').is_empty()) {
        a.add(
            Ring::Boundary,
            format!("{how}: the target is computed at run time, so it could be anything (even /)"),
            Some("name the directory inside the working directory literally"),
        );
        return;
    }
    let mut text = f.text.clone();
    let mut children = how.starts_with("find");
    if f.glob {
        // the directory whose children the pattern names
        let comps: Vec<&str> = text.split('/').collect();
        let k = comps
            .iter()
            .position(|c| c.contains(['*', '?', '[']))
            .unwrap_or(comps.len());
        text = comps[..k].join("/");
        if text.is_empty() {
            text = if f.text.starts_with('/') {
                "/".into()
            } else {
                ".".into()
            };
        }
        children = true;
    }
    let Some(p) = a.path_of(
        &F {
            text: text.clone(),
            ..F::default()
        },
        env,
    ) else {
        a.add(
            Ring::Boundary,
            format!(
                "{how}: the target '{}' is relative to a directory unknown here",
                f.text
            ),
            Some("use a path inside the working directory"),
        );
        return;
    };
    let home = a.ctx.home.clone();
    let top_level = p.parent().is_none_or(|q| q == Path::new("/"));
    let ancestor = a.ctx.workdir.starts_with(&p) && p != a.ctx.workdir || home.starts_with(&p);
    if p == Path::new("/")
        || (top_level && !children)
        || (top_level && p == Path::new("/"))
        || ancestor && !children
        || p == home
    {
        a.add(Ring::Irreversible, format!("{how} of '{}' ({}) would wipe the system, the home directory or a parent of the workdir", f.text, p.display()), None);
        return;
    }
    match paths::place(&p, a.ctx) {
        Place::Inside | Place::Writable => {
            if a.ctx.protected.iter().any(|q| p.starts_with(q)) {
                a.add(Ring::Boundary, format!("{how} of harness state '{}'", f.text), None);
            }
        }
        Place::Workdir if children => {}
        Place::Workdir => a.add(Ring::Boundary, format!("{how} of the working directory itself"), Some("delete the subdirectories you created by name")),
        Place::Outside => a.add(
            Ring::Boundary,
            format!("{how} of '{}' ({}), which is outside the working directory; recursive deletes are only allowed inside it", f.text, p.display()),
            Some(&format!("if these files are yours, list them (`find {} -type f`) and delete each one with `rm FILE` after checking it — or leave them", f.text)),
        ),
    }
}

pub(crate) fn delete_target(a: &mut Analyzer<'_>, f: &F, env: &Env, how: &str) {
    if let Some(p) = a.path_of(f, env) {
        if paths::is_history_file(&p, &a.ctx.home) {
            a.add(
                Ring::Irreversible,
                format!("{how} deletes shell history {}", p.display()),
                None,
            );
            return;
        }
        if p == Path::new("/") || p.parent() == Some(Path::new("/")) {
            a.add(
                Ring::Irreversible,
                format!("{how} of top-level system path {}", p.display()),
                None,
            );
            return;
        }
    }
    a.write_target(f, env, how);
}
