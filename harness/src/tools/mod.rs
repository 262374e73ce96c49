//! The file and shell tools, confined to the workdir. [`Toolbox::execute`] runs one call and
//! returns text for the model plus what kind of effect it had (for the loop's bookkeeping).

pub mod confined;
pub mod shell;
pub mod specs;
pub mod todo;
pub mod web;

use crate::mechanisms::crawl_guard::{CrawlGuard, READ_WINDOW};
use crate::mechanisms::edit_safety::Backups;
use crate::mechanisms::security::{Access, Confinement, STATE_DIR};
use crate::shaping::{clamp_tail_first, denoise, detect_verdict, is_test_command, Verdict};
use serde_json::Value;
use shell::{ShellExecutor, ShellOutcome, ShellRequest};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    Read,
    Write,
    Exec,
}

#[derive(Clone, Debug)]
pub struct ToolOutcome {
    pub text: String,
    pub ok: bool,
    pub effect: Effect,
    pub verdict: Option<Verdict>,
    /// Workdir-relative path the call was about, if any.
    pub path: Option<String>,
}

impl ToolOutcome {
    fn err(text: impl Into<String>) -> Self {
        ToolOutcome {
            text: format!("error: {}", text.into()),
            ok: false,
            effect: Effect::None,
            verdict: None,
            path: None,
        }
    }
    fn ok(text: impl Into<String>, effect: Effect, path: Option<String>) -> Self {
        ToolOutcome {
            text: text.into(),
            ok: true,
            effect,
            verdict: None,
            path,
        }
    }
}

pub struct Toolbox {
    pub conf: Confinement,
    pub state_dir: PathBuf,
    pub backups: Option<Backups>,
    pub crawl: Option<CrawlGuard>,
    pub shell: Box<dyn ShellExecutor>,
    pub out_seq: u64,
    /// Characters of shell output shown to the model (the rest is in the output file).
    pub output_budget: usize,
    pub default_timeout: u64,
    pub max_timeout: u64,
    /// The optional web tools (`None`: not configured, the tools do not exist).
    pub web: Option<web::WebTools>,
}

fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(|v| v.as_str())
}

fn arg_u64(args: &Value, key: &str) -> Option<u64> {
    match args.get(key)? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Undo literal escape sequences when a model sent a whole file on one line with `\n` written
/// out (a common small-model failure).
pub fn unescape_if_flattened(content: &str) -> Option<String> {
    if content.contains('\n') || content.matches("\\n").count() < 3 {
        return None;
    }
    Some(
        content
            .replace("\\r\\n", "\n")
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\\"", "\""),
    )
}

impl Toolbox {
    /// `workdir` must exist. State goes to `<workdir>/.lrab/`.
    pub fn new(
        workdir: &Path,
        edit_safety: bool,
        crawl_guard: bool,
        shell: Box<dyn ShellExecutor>,
    ) -> std::io::Result<Self> {
        let conf = Confinement::new(workdir)?;
        let state_dir = conf.root().join(STATE_DIR);
        fs::create_dir_all(state_dir.join("out"))?;
        let backups = if edit_safety {
            Some(Backups::open(&state_dir)?)
        } else {
            None
        };
        // continue output numbering after a resume
        let out_seq = fs::read_dir(state_dir.join("out"))
            .map(|rd| rd.filter_map(|e| e.ok()).count() as u64)
            .unwrap_or(0);
        Ok(Toolbox {
            conf,
            state_dir,
            backups,
            crawl: crawl_guard.then(CrawlGuard::default),
            shell,
            out_seq,
            output_budget: 3000,
            default_timeout: 120,
            max_timeout: 600,
            web: None,
        })
    }

    pub fn root(&self) -> &Path {
        self.conf.root()
    }

    /// Workdir files (relative), recursively, skipping harness state and caches; at most `max`.
    pub fn list_files(&self, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![self.root().to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = fs::read_dir(&dir) else { continue };
            let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries.into_iter().rev() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name == STATE_DIR
                    || name == "__pycache__"
                    || name == ".git"
                    || name == "node_modules"
                {
                    continue;
                }
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push(self.conf.rel(&p));
                }
            }
        }
        out.sort();
        out.truncate(max);
        out
    }

    /// Run a command for the harness itself (the finish gate's tests), output kept under
    /// `.lrab/out/`.
    pub fn run_command(
        &mut self,
        command: &str,
        timeout_s: u64,
    ) -> std::io::Result<(ShellOutcome, String)> {
        self.run_with(command, timeout_s, false)
    }

    fn run_with(
        &mut self,
        command: &str,
        timeout_s: u64,
        model_chosen: bool,
    ) -> std::io::Result<(ShellOutcome, String)> {
        self.out_seq += 1;
        let rel = format!("{STATE_DIR}/out/{}.txt", self.out_seq);
        let file = self.root().join(&rel);
        let o = self.shell.run(&ShellRequest {
            command,
            cwd: self.conf.root(),
            timeout: Duration::from_secs(timeout_s),
            output_file: &file,
            model_chosen,
        })?;
        Ok((o, rel))
    }

    pub fn execute(&mut self, name: &str, args: &Value) -> ToolOutcome {
        if !args.is_object() {
            return ToolOutcome::err(format!(
                "arguments for {name} must be a JSON object, got: {}",
                args.to_string().chars().take(120).collect::<String>()
            ));
        }
        match name {
            "read_file" => self.read_file(args),
            "write_file" => self.write_file(args, false),
            "append_file" => self.write_file(args, true),
            "edit_file" => self.edit_file(args),
            "list_dir" => self.list_dir(args),
            "search_files" => self.search_files(args),
            "delete_file" => self.delete_file(args),
            "rollback" => self.rollback(args),
            "run_shell" => self.run_shell(args),
            "web_search" | "web_fetch" if self.web.is_some() => {
                let w = self.web.as_ref().expect("checked");
                if name == "web_search" {
                    w.search(args)
                } else {
                    w.fetch(args)
                }
            }
            other => ToolOutcome::err(format!(
                "unknown tool '{other}'. Available: read_file, write_file, edit_file, append_file, list_dir, run_shell, todo, finish"
            )),
        }
    }

    fn need_path(&self, args: &Value, access: Access) -> Result<(PathBuf, String), ToolOutcome> {
        let Some(raw) = arg(args, "path") else {
            return Err(ToolOutcome::err("missing required argument 'path'"));
        };
        match self.conf.resolve(raw, access) {
            Ok(abs) => {
                let rel = self.conf.rel(&abs);
                Ok((abs, rel))
            }
            Err(e) => Err(ToolOutcome::err(e)),
        }
    }

    fn read_file(&mut self, args: &Value) -> ToolOutcome {
        let (abs, rel) = match self.need_path(args, Access::Read) {
            Ok(x) => x,
            Err(e) => return e,
        };
        if abs.is_dir() {
            return ToolOutcome::err(format!("'{rel}' is a directory; use list_dir"));
        }
        let bytes = match fs::read(&abs) {
            Ok(b) => b,
            Err(e) => {
                return ToolOutcome::err(format!(
                    "cannot read '{rel}': {e}. Use list_dir to see what exists."
                ))
            }
        };
        if bytes.iter().take(8192).any(|&b| b == 0) {
            return ToolOutcome::err(format!(
                "'{rel}' is a binary file ({} bytes); inspect it with run_shell (e.g. python3)",
                bytes.len()
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len();
        let start = arg_u64(args, "start_line").unwrap_or(1).max(1) as usize;
        let end = arg_u64(args, "end_line")
            .map(|e| e as usize)
            .unwrap_or(total)
            .min(total);
        if start > total.max(1) {
            return ToolOutcome::err(format!("'{rel}' has only {total} lines"));
        }
        let allowance = match &self.crawl {
            Some(g) => g.allowance(&rel, bytes.len() as u64),
            None => crate::mechanisms::crawl_guard::Allowance {
                window: READ_WINDOW,
                hint: None,
            },
        };
        let mut out = String::new();
        let mut shown_to = start.saturating_sub(1);
        for (i, l) in lines.iter().enumerate().take(end).skip(start - 1) {
            if out.len() + l.len() > allowance.window {
                if out.is_empty() {
                    // one enormous line: cut it
                    let cut: String = l.chars().take(allowance.window).collect();
                    out.push_str(&cut);
                    shown_to = i + 1;
                }
                break;
            }
            out.push_str(l);
            shown_to = i + 1;
        }
        if let Some(g) = &mut self.crawl {
            g.record(&rel, out.len());
        }
        let mut text_out = out;
        if shown_to < end {
            text_out.push_str(&format!(
                "\n[… showing lines {start}-{shown_to} of {total}; continue with start_line={}]",
                shown_to + 1
            ));
        } else if start > 1 || end < total {
            text_out.push_str(&format!("\n[lines {start}-{end} of {total}]"));
        }
        if total == 0 {
            text_out = format!("[{rel} is empty]");
        }
        if let Some(h) = allowance.hint {
            text_out.push('\n');
            text_out.push_str(&h);
        }
        ToolOutcome::ok(text_out, Effect::Read, Some(rel))
    }

    fn backup(&mut self, abs: &Path, rel: &str) -> Result<(), ToolOutcome> {
        if let Some(b) = &mut self.backups {
            b.before_write(abs, rel).map_err(|e| {
                ToolOutcome::err(format!("cannot back up '{rel}' before writing: {e}"))
            })?;
        }
        if let Some(g) = &mut self.crawl {
            g.reset(rel);
        }
        Ok(())
    }

    /// A quick syntax check of Python files after a write, so the model hears about a broken
    /// file at once rather than at the end.
    fn python_check(&mut self, abs: &Path, rel: &str) -> String {
        if !rel.ends_with(".py") {
            return String::new();
        }
        let cmd = format!(
            "{} -c 'import ast,sys; ast.parse(open(sys.argv[1],encoding=\"utf-8\").read())' {}",
            shell_quote(python_exe()),
            shell_quote(&abs.to_string_lossy())
        );
        match self.run_command(&cmd, 20) {
            Ok((o, _)) if o.exit == Some(0) => String::new(),
            Ok((o, _)) => {
                let last: Vec<&str> = o.output.lines().rev().take(4).collect();
                let msg: Vec<&str> = last.into_iter().rev().collect();
                format!(
                    "\nwarning: {rel} does not parse as Python:\n{}",
                    msg.join("\n")
                )
            }
            Err(_) => String::new(),
        }
    }

    fn write_file(&mut self, args: &Value, append: bool) -> ToolOutcome {
        let (abs, rel) = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let Some(content) = args.get("content").map(|c| match c {
            Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }) else {
            return ToolOutcome::err("missing required argument 'content'");
        };
        if abs.is_dir() {
            return ToolOutcome::err(format!("'{rel}' is a directory"));
        }
        let mut note = String::new();
        let content = match unescape_if_flattened(&content) {
            Some(fixed) => {
                note.push_str(" (literal \\n sequences were turned into line breaks)");
                fixed
            }
            None => content,
        };
        if !append {
            // ring 5: replacing a large file with much less is how work silently disappears
            let replace = match args.get("replace") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
                _ => false,
            };
            let v = lrab_safety::rings::overwrite_guard(&abs, content.len() as u64, replace);
            if !v.is_allow() {
                return ToolOutcome::err(v.message().replace(&*abs.to_string_lossy(), &rel));
            }
        }
        if let Err(e) = self.backup(&abs, &rel) {
            return e;
        }
        if let Some(parent) = abs.parent() {
            if let Err(e) = fs::create_dir_all(parent) {
                return ToolOutcome::err(format!("cannot create folder for '{rel}': {e}"));
            }
        }
        let result = if append {
            let mut existing = fs::read(&abs).unwrap_or_default();
            if !existing.is_empty() && !existing.ends_with(b"\n") && !content.starts_with('\n') {
                existing.push(b'\n');
            }
            existing.extend_from_slice(content.as_bytes());
            fs::write(&abs, &existing).map(|_| existing.len())
        } else {
            fs::write(&abs, content.as_bytes()).map(|_| content.len())
        };
        match result {
            Ok(size) => {
                let check = self.python_check(&abs, &rel);
                let verb = if append { "appended to" } else { "wrote" };
                ToolOutcome::ok(
                    format!("{verb} {rel} (now {size} bytes){note}{check}"),
                    Effect::Write,
                    Some(rel),
                )
            }
            Err(e) => ToolOutcome::err(format!("cannot write '{rel}': {e}")),
        }
    }

    fn edit_file(&mut self, args: &Value) -> ToolOutcome {
        let (abs, rel) = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let (Some(old), Some(new)) = (arg(args, "old"), arg(args, "new")) else {
            return ToolOutcome::err("edit_file needs 'old' (exact text to replace) and 'new'");
        };
        if old.is_empty() {
            return ToolOutcome::err(
                "'old' is empty; to add text use append_file, to replace the file use write_file",
            );
        }
        let text = match fs::read_to_string(&abs) {
            Ok(t) => t,
            Err(e) => return ToolOutcome::err(format!("cannot read '{rel}': {e}")),
        };
        let mut old_s = old.to_string();
        let mut new_s = new.to_string();
        let mut count = text.matches(&old_s).count();
        if count == 0 && old.contains("\\n") {
            let o2 = old
                .replace("\\n", "\n")
                .replace("\\t", "\t")
                .replace("\\\"", "\"");
            if text.matches(&o2).count() > 0 {
                old_s = o2;
                new_s = new
                    .replace("\\n", "\n")
                    .replace("\\t", "\t")
                    .replace("\\\"", "\"");
                count = text.matches(&old_s).count();
            }
        }
        if count == 0 {
            let first = old
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim();
            let near = text
                .lines()
                .enumerate()
                .find(|(_, l)| !first.is_empty() && l.contains(first))
                .map(|(i, _)| format!(" A similar line is at line {} — read_file with start_line={} to copy the exact text.", i + 1, (i + 1).saturating_sub(2).max(1)))
                .unwrap_or_default();
            return ToolOutcome::err(format!(
                "'old' text not found in {rel} (it must match exactly, whitespace included).{near} Or rewrite the whole file with write_file."
            ));
        }
        if count > 1 {
            return ToolOutcome::err(format!(
                "'old' text occurs {count} times in {rel}; include more surrounding lines so it is unique"
            ));
        }
        if let Err(e) = self.backup(&abs, &rel) {
            return e;
        }
        let updated = text.replacen(&old_s, &new_s, 1);
        match fs::write(&abs, updated.as_bytes()) {
            Ok(()) => {
                let check = self.python_check(&abs, &rel);
                ToolOutcome::ok(
                    format!("edited {rel} (1 replacement){check}"),
                    Effect::Write,
                    Some(rel),
                )
            }
            Err(e) => ToolOutcome::err(format!("cannot write '{rel}': {e}")),
        }
    }

    fn list_dir(&mut self, args: &Value) -> ToolOutcome {
        let raw = arg(args, "path")
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let abs = match self.conf.resolve(raw, Access::Read) {
            Ok(a) => a,
            Err(e) => return ToolOutcome::err(e),
        };
        let rd = match fs::read_dir(&abs) {
            Ok(r) => r,
            Err(e) => return ToolOutcome::err(format!("cannot list '{raw}': {e}")),
        };
        let mut entries: Vec<(String, bool, u64)> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name() != STATE_DIR && e.file_name() != "__pycache__")
            .map(|e| {
                let md = e.metadata().ok();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    md.as_ref().is_some_and(|m| m.is_dir()),
                    md.map(|m| m.len()).unwrap_or(0),
                )
            })
            .collect();
        entries.sort();
        let n = entries.len();
        let mut lines: Vec<String> = entries
            .into_iter()
            .take(200)
            .map(|(name, dir, size)| {
                if dir {
                    format!("{name}/")
                } else {
                    format!("{name} ({size} bytes)")
                }
            })
            .collect();
        if n > 200 {
            lines.push(format!("[… {} more entries]", n - 200));
        }
        if lines.is_empty() {
            lines.push("[empty directory]".into());
        }
        ToolOutcome::ok(lines.join("\n"), Effect::Read, Some(self.conf.rel(&abs)))
    }

    fn search_files(&mut self, args: &Value) -> ToolOutcome {
        let Some(pattern) = arg(args, "pattern").filter(|p| !p.is_empty()) else {
            return ToolOutcome::err("missing required argument 'pattern'");
        };
        let raw = arg(args, "path")
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let abs = match self.conf.resolve(raw, Access::Read) {
            Ok(a) => a,
            Err(e) => return ToolOutcome::err(e),
        };
        let needle = pattern.to_lowercase();
        let mut hits = Vec::new();
        let mut stack = vec![abs];
        let mut files = 0;
        while let Some(p) = stack.pop() {
            if p.is_dir() {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if [STATE_DIR, "__pycache__", ".git", "node_modules"].contains(&name.as_str()) {
                    continue;
                }
                if let Ok(rd) = fs::read_dir(&p) {
                    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                    v.sort();
                    stack.extend(v.into_iter().rev());
                }
                continue;
            }
            files += 1;
            if files > 2000 || hits.len() >= 50 {
                break;
            }
            let Ok(md) = p.metadata() else { continue };
            if md.len() > 4 * 1024 * 1024 {
                continue;
            }
            let Ok(bytes) = fs::read(&p) else { continue };
            if bytes.iter().take(4096).any(|&b| b == 0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            let rel = self.conf.rel(&p);
            for (i, line) in text.lines().enumerate() {
                if line.to_lowercase().contains(&needle) {
                    hits.push(format!(
                        "{rel}:{}: {}",
                        i + 1,
                        line.trim().chars().take(200).collect::<String>()
                    ));
                    if hits.len() >= 50 {
                        break;
                    }
                }
            }
        }
        if hits.is_empty() {
            return ToolOutcome::ok(format!("no lines contain '{pattern}'"), Effect::Read, None);
        }
        if hits.len() >= 50 {
            hits.push("[… stopped at 50 matches; narrow the pattern or path]".into());
        }
        ToolOutcome::ok(hits.join("\n"), Effect::Read, None)
    }

    fn delete_file(&mut self, args: &Value) -> ToolOutcome {
        let (abs, rel) = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        if abs == self.root() {
            return ToolOutcome::err("refusing to delete the working directory");
        }
        if !abs.exists() {
            return ToolOutcome::err(format!("'{rel}' does not exist"));
        }
        match &mut self.backups {
            Some(b) => match b.trash(&abs, &rel) {
                Ok(t) => ToolOutcome::ok(
                    format!("moved {rel} to .lrab/{t} (recoverable)"),
                    Effect::Write,
                    Some(rel),
                ),
                Err(e) => ToolOutcome::err(format!("cannot delete '{rel}': {e}")),
            },
            None => {
                let r = if abs.is_dir() {
                    fs::remove_dir_all(&abs)
                } else {
                    fs::remove_file(&abs)
                };
                match r {
                    Ok(()) => ToolOutcome::ok(format!("deleted {rel}"), Effect::Write, Some(rel)),
                    Err(e) => ToolOutcome::err(format!("cannot delete '{rel}': {e}")),
                }
            }
        }
    }

    fn rollback(&mut self, args: &Value) -> ToolOutcome {
        let (abs, rel) = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let Some(b) = &mut self.backups else {
            return ToolOutcome::err("rollback is unavailable (edit safety is switched off)");
        };
        match b.rollback(&abs, &rel) {
            Ok(msg) => {
                if let Some(g) = &mut self.crawl {
                    g.reset(&rel);
                }
                ToolOutcome::ok(msg, Effect::Write, Some(rel))
            }
            Err(e) => ToolOutcome::err(e),
        }
    }

    fn run_shell(&mut self, args: &Value) -> ToolOutcome {
        let Some(command) = arg(args, "command").filter(|c| !c.trim().is_empty()) else {
            return ToolOutcome::err("missing required argument 'command'");
        };
        if let Err(e) = self.shell.admit(command) {
            return ToolOutcome::err(e);
        }
        let timeout = arg_u64(args, "timeout")
            .unwrap_or(self.default_timeout)
            .clamp(1, self.max_timeout);
        let (o, rel) = match self.run_with(command, timeout, true) {
            Ok(x) => x,
            Err(e) => return ToolOutcome::err(format!("could not start the command: {e}")),
        };
        let clean = denoise(&o.output);
        let verdict = detect_verdict(&clean, o.exit).or_else(|| {
            is_test_command(command).then(|| {
                if o.exit == Some(0) {
                    Verdict::Passed
                } else {
                    Verdict::Failed
                }
            })
        });
        let mut text = String::new();
        if let Some(v) = verdict {
            text.push_str(&format!("[verdict: {}] ", v.as_str()));
        }
        if o.timed_out {
            text.push_str(&format!(
                "[timed out after {timeout}s; the process group was killed. Make it faster, or pass a larger timeout]\n"
            ));
        } else {
            text.push_str(&format!(
                "[exit {}]\n",
                o.exit
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "signal".into())
            ));
        }
        if clean.trim().is_empty() {
            text.push_str("(no output)");
        } else {
            text.push_str(&clamp_tail_first(&clean, self.output_budget, &rel));
        }
        if o.exit == Some(127) {
            text.push_str(
                "\nhint: command not found; on this system use python3 and standard tools",
            );
        }
        ToolOutcome {
            text,
            ok: o.exit == Some(0) && !o.timed_out,
            effect: Effect::Exec,
            verdict,
            path: None,
        }
    }
}

/// The real Python interpreter behind `python3` (resolved once: version-manager shims can
/// cost hundreds of milliseconds per start).
pub fn python_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .stdin(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "python3".to_string())
    })
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shell::LocalExecutor;

    fn tb() -> (tempfile::TempDir, Toolbox) {
        let d = tempfile::tempdir().unwrap();
        let t = Toolbox::new(d.path(), true, true, Box::new(LocalExecutor)).unwrap();
        (d, t)
    }

    #[test]
    fn write_read_edit_append_roundtrip() {
        let (d, mut t) = tb();
        let o = t.execute(
            "write_file",
            &json!({"path": "a/b.md", "content": "one\ntwo\nthree\n"}),
        );
        assert!(o.ok && o.effect == Effect::Write, "{}", o.text);
        assert_eq!(
            fs::read_to_string(d.path().join("a/b.md")).unwrap(),
            "one\ntwo\nthree\n"
        );
        let o = t.execute(
            "read_file",
            &json!({"path": "a/b.md", "start_line": 2, "end_line": 2}),
        );
        assert!(
            o.text.starts_with("two\n") && o.text.contains("lines 2-2 of 3"),
            "{}",
            o.text
        );
        let o = t.execute(
            "edit_file",
            &json!({"path": "a/b.md", "old": "two", "new": "TWO"}),
        );
        assert!(o.ok, "{}", o.text);
        let o = t.execute(
            "edit_file",
            &json!({"path": "a/b.md", "old": "zzz", "new": "y"}),
        );
        assert!(!o.ok && o.text.contains("not found"));
        t.execute("write_file", &json!({"path": "r.txt", "content": "x\nx\n"}));
        let o = t.execute(
            "edit_file",
            &json!({"path": "r.txt", "old": "x", "new": "y"}),
        );
        assert!(!o.ok && o.text.contains("2 times"));
        let o = t.execute("append_file", &json!({"path": "a/b.md", "content": "four"}));
        assert!(o.ok);
        assert_eq!(
            fs::read_to_string(d.path().join("a/b.md")).unwrap(),
            "one\nTWO\nthree\nfour"
        );
        // rollback undoes the append, then the edit
        assert!(t.execute("rollback", &json!({"path": "a/b.md"})).ok);
        assert!(t.execute("rollback", &json!({"path": "a/b.md"})).ok);
        assert_eq!(
            fs::read_to_string(d.path().join("a/b.md")).unwrap(),
            "one\ntwo\nthree\n"
        );
    }

    #[test]
    fn flattened_content_is_unescaped() {
        let (d, mut t) = tb();
        let o = t.execute(
            "write_file",
            &json!({"path": "x.md", "content": "# T\\n\\na\\nb"}),
        );
        assert!(o.text.contains("line breaks"));
        assert_eq!(
            fs::read_to_string(d.path().join("x.md")).unwrap(),
            "# T\n\na\nb"
        );
    }

    #[test]
    fn python_syntax_warning_after_write() {
        let (_d, mut t) = tb();
        let o = t.execute(
            "write_file",
            &json!({"path": "bad.py", "content": "def f(:\n  pass\n"}),
        );
        assert!(o.ok && o.text.contains("does not parse"), "{}", o.text);
        let o = t.execute(
            "write_file",
            &json!({"path": "good.py", "content": "x = 1\n"}),
        );
        assert!(!o.text.contains("warning"));
    }

    #[test]
    fn confinement_and_state_dir_protection() {
        let (_d, mut t) = tb();
        assert!(
            !t.execute("write_file", &json!({"path": "../x", "content": "a"}))
                .ok
        );
        assert!(
            !t.execute(
                "write_file",
                &json!({"path": ".lrab/checkpoint.json", "content": "a"})
            )
            .ok
        );
        assert!(!t.execute("read_file", &json!({"path": "/etc/passwd"})).ok);
        assert!(!t.execute("run_shell", &json!({"command": "sudo ls"})).ok);
        assert!(!t.execute("write_file", &json!("not an object")).ok);
    }

    #[test]
    fn shell_shaping_verdict_and_full_output_file() {
        let (d, mut t) = tb();
        t.output_budget = 300;
        let o = t.execute(
            "run_shell",
            &json!({"command": "for i in $(seq 1 500); do echo line$i; done; echo '3 failed, 2 passed'; exit 1"}),
        );
        assert!(!o.ok);
        assert_eq!(o.verdict, Some(Verdict::Failed));
        assert!(
            o.text.starts_with("[verdict: FAILED] [exit 1]"),
            "{}",
            o.text
        );
        assert!(o.text.contains("3 failed"));
        assert!(o.text.contains(".lrab/out/"));
        // the full output is retrievable through read_file
        let rel = o
            .text
            .split("full output: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string();
        assert!(fs::read_to_string(d.path().join(&rel))
            .unwrap()
            .contains("line250"));
        let r = t.execute("read_file", &json!({"path": rel}));
        assert!(r.ok && r.text.contains("line1\n"));
        let o = t.execute("run_shell", &json!({"command": "sleep 5", "timeout": 1}));
        assert!(!o.ok && o.text.contains("timed out"));
    }

    #[test]
    fn delete_goes_to_trash_and_list_hides_state() {
        let (d, mut t) = tb();
        t.execute("write_file", &json!({"path": "junk.txt", "content": "j"}));
        let o = t.execute("delete_file", &json!({"path": "junk.txt"}));
        assert!(o.ok && o.text.contains("trash"));
        assert!(!d.path().join("junk.txt").exists());
        let o = t.execute("list_dir", &json!({}));
        assert!(!o.text.contains(".lrab"));
        t.execute(
            "write_file",
            &json!({"path": "s/a.md", "content": "Needle here\nno\n"}),
        );
        let o = t.execute("search_files", &json!({"pattern": "needle"}));
        assert!(o.text.contains("s/a.md:1: Needle here"), "{}", o.text);
    }
}
