//! The file tools: reading, writing, editing, listing, searching, deleting and rolling back.
//! Every path is judged by the workdir boundary first ([`Confinement::resolve`]: the
//! ring refusals the model reads), then used only through the workdir handle
//! ([`Toolbox::wd`], a `lrab_safety::Beneath`): resolved again in the kernel beneath
//! the workdir's fd, never following a symlink, so a path swapped for a symlink between the
//! check and the use is refused instead of followed.
//!
//! [`Confinement::resolve`]: crate::mechanisms::security::Confinement::resolve

use super::{arg, arg_u64, python_exe, unescape_if_flattened, Effect, ToolOutcome, Toolbox};
use crate::mechanisms::crawl_guard::READ_WINDOW;
use crate::mechanisms::security::{Access, Refusal, STATE_DIR};
use lrab_safety::{BeneathError as BError, FileKind as Kind};
use serde_json::Value;
use std::path::Path;

/// A resolver error for the model: a refusal is a ring-4 refusal; an I/O error is worded by
/// `io` from the underlying error.
fn beneath_err(e: BError, io: impl FnOnce(&std::io::Error) -> String) -> ToolOutcome {
    match &e {
        BError::Io { err, .. } => ToolOutcome::err(io(err)),
        BError::Refused { .. } => match e.verdict() {
            Some(v) => ToolOutcome::refused(Refusal::ring(v)),
            None => ToolOutcome::err(e.to_string()),
        },
    }
}

fn is_not_found(e: &BError) -> bool {
    e.io_kind() == Some(std::io::ErrorKind::NotFound)
}

impl Toolbox {
    /// The checked workdir-relative path of the call (`""` is the workdir itself).
    fn need_path(&self, args: &Value, access: Access) -> Result<String, ToolOutcome> {
        let Some(raw) = arg(args, "path") else {
            return Err(ToolOutcome::err("missing required argument 'path'"));
        };
        self.checked(raw, access)
    }

    fn checked(&self, raw: &str, access: Access) -> Result<String, ToolOutcome> {
        match self.conf.resolve(raw, access) {
            Ok(abs) => Ok(self.conf.rel(&abs)),
            Err(r) => Err(ToolOutcome::refused(r)),
        }
    }

    /// Whether `rel` names a directory (not following a symlink).
    fn is_dir(&self, rel: &str) -> bool {
        self.wd.stat(rel).is_ok_and(|s| s.kind == Kind::Dir)
    }

    pub(super) fn read_file(&mut self, args: &Value) -> ToolOutcome {
        // saved shell outputs live in the state folder, read through its handle under their
        // own name (whatever the workdir holds at `.lrab/`)
        let raw = arg(args, "path").unwrap_or("");
        let saved = self.state.read_output(raw.trim_start_matches("./"));
        let rel = match &saved {
            Some(_) => raw.trim_start_matches("./").to_string(),
            None => match self.need_path(args, Access::Read) {
                Ok(x) => x,
                Err(e) => return e,
            },
        };
        if saved.is_none() && (rel.is_empty() || self.is_dir(&rel)) {
            return ToolOutcome::err(format!("'{rel}' is a directory; use list_dir"));
        }
        let bytes = match saved.unwrap_or_else(|| self.wd.read_bytes(&rel)) {
            Ok(b) => b,
            Err(e) => {
                return beneath_err(e, |e| {
                    format!("cannot read '{rel}': {e}. Use list_dir to see what exists.")
                })
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

    /// Record `old` (the content about to be replaced, as read through the handle).
    fn backup(&mut self, rel: &str, old: Option<&[u8]>) -> Result<(), ToolOutcome> {
        if let Some(b) = &mut self.backups {
            b.before_write(rel, old).map_err(|e| {
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
    /// The content checked is the content the tool wrote (fed on stdin; `ast.parse` runs
    /// nothing), never the file re-opened by name.
    fn python_check(&mut self, content: &[u8], rel: &str) -> String {
        if !rel.ends_with(".py") {
            return String::new();
        }
        match parse_python(content) {
            Some(out) if !out.is_empty() => {
                let last: Vec<&str> = out.lines().rev().take(4).collect();
                let msg: Vec<&str> = last.into_iter().rev().collect();
                format!(
                    "\nwarning: {rel} does not parse as Python:\n{}",
                    msg.join("\n")
                )
            }
            _ => String::new(),
        }
    }

    pub(super) fn write_file(&mut self, args: &Value, append: bool) -> ToolOutcome {
        let rel = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let Some(content) = args.get("content").map(|c| match c {
            Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }) else {
            return ToolOutcome::err("missing required argument 'content'");
        };
        if rel.is_empty() || self.is_dir(&rel) {
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
        let old = match self.wd.read_bytes(&rel) {
            Ok(b) => Some(b),
            Err(e) if is_not_found(&e) => None,
            Err(e) => return beneath_err(e, |e| format!("cannot write '{rel}': {e}")),
        };
        if !append && old.as_deref() == Some(content.as_bytes()) {
            // rewriting a file with what it already holds changes nothing: said plainly, and
            // no change for the loop's bookkeeping (a rerun of a failing test after it is not
            // progress)
            return ToolOutcome::ok(
                format!(
                    "unchanged: {rel} already has exactly this content; nothing was written{note}"
                ),
                Effect::None,
                Some(rel),
            );
        }
        if !append {
            // ring 5: replacing a large file with much less is how work silently disappears
            let replace = match args.get("replace") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
                _ => false,
            };
            // judged on the file the handle opens (its fd), not on a second look by name
            let v = match self.wd.read(&rel) {
                Ok(f) => {
                    use std::os::fd::AsRawFd;
                    let fd_path = format!("/proc/self/fd/{}", f.as_raw_fd());
                    let v = lrab_safety::overwrite_guard(
                        Path::new(&fd_path),
                        content.len() as u64,
                        replace,
                    );
                    (v, fd_path)
                }
                Err(_) => (lrab_safety::Verdict::Allow, String::new()),
            };
            let (v, abs_s) = v;
            if !v.is_allow() {
                // the model knows the file by its workdir-relative name
                let v = match v {
                    lrab_safety::Verdict::Deny {
                        ring,
                        reason,
                        alternative,
                    } => lrab_safety::Verdict::Deny {
                        ring,
                        reason: reason.replace(&*abs_s, &rel),
                        alternative,
                    },
                    other => other,
                };
                return ToolOutcome::refused(Refusal::ring(v));
            }
        }
        if let Err(e) = self.backup(&rel, old.as_deref()) {
            return e;
        }
        if let Some((parent, _)) = rel.rsplit_once('/') {
            if let Err(e) = self.wd.mkdir_all(parent) {
                return beneath_err(e, |e| format!("cannot create folder for '{rel}': {e}"));
            }
        }
        let mut extra_bytes = Vec::new();
        let result = if append {
            let extra = &mut extra_bytes;
            let existing = old.as_deref().unwrap_or_default();
            if !existing.is_empty() && !existing.ends_with(b"\n") && !content.starts_with('\n') {
                extra.push(b'\n');
            }
            extra.extend_from_slice(content.as_bytes());
            self.wd.append(&rel, extra)
        } else {
            self.wd.write(&rel, content.as_bytes())
        };
        match result {
            Ok(w) => {
                let size = w.len;
                let check = if append {
                    let mut now = old.unwrap_or_default();
                    now.extend_from_slice(&extra_bytes);
                    self.python_check(&now, &rel)
                } else {
                    self.python_check(content.as_bytes(), &rel)
                };
                let verb = if append { "appended to" } else { "wrote" };
                ToolOutcome::ok(
                    format!("{verb} {rel} (now {size} bytes){note}{check}"),
                    Effect::Write,
                    Some(rel),
                )
            }
            Err(e) => beneath_err(e, |e| format!("cannot write '{rel}': {e}")),
        }
    }

    pub(super) fn edit_file(&mut self, args: &Value) -> ToolOutcome {
        let rel = match self.need_path(args, Access::Write) {
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
        // read, match, back up and replace the one inode the handle opened
        let backups = &mut self.backups;
        let mut written = Vec::new();
        let result = self.wd.edit(&rel, |bytes| {
            let text = std::str::from_utf8(bytes).map_err(|e| {
                ToolOutcome::err(format!("cannot read '{rel}': not UTF-8 text ({e})"))
            })?;
            let updated = plan_edit(text, old, new, &rel)?;
            if let Some(b) = backups {
                b.before_write(&rel, Some(bytes)).map_err(|e| {
                    ToolOutcome::err(format!("cannot back up '{rel}' before writing: {e}"))
                })?;
            }
            written = updated.clone().into_bytes();
            Ok(updated.into_bytes())
        });
        match result {
            Ok(Ok(_)) => {
                if let Some(g) = &mut self.crawl {
                    g.reset(&rel);
                }
                let check = self.python_check(&written, &rel);
                ToolOutcome::ok(
                    format!("edited {rel} (1 replacement){check}"),
                    Effect::Write,
                    Some(rel),
                )
            }
            Ok(Err(outcome)) => outcome,
            Err(e) if is_not_found(&e) => beneath_err(e, |e| format!("cannot read '{rel}': {e}")),
            Err(e) => beneath_err(e, |e| format!("cannot write '{rel}': {e}")),
        }
    }

    pub(super) fn list_dir(&mut self, args: &Value) -> ToolOutcome {
        let raw = arg(args, "path")
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let rel = match self.checked(raw, Access::Read) {
            Ok(r) => r,
            Err(e) => return e,
        };
        let listed = match self.wd.list(&rel) {
            Ok(l) => l,
            Err(e) => return beneath_err(e, |e| format!("cannot list '{raw}': {e}")),
        };
        let mut entries: Vec<(String, bool, u64)> = listed
            .into_iter()
            .filter(|e| e.name != STATE_DIR && e.name != "__pycache__")
            .map(|e| {
                (
                    e.name.to_string_lossy().into_owned(),
                    e.kind == Kind::Dir,
                    e.len,
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
        ToolOutcome::ok(lines.join("\n"), Effect::Read, Some(rel))
    }

    pub(super) fn search_files(&mut self, args: &Value) -> ToolOutcome {
        let Some(pattern) = arg(args, "pattern").filter(|p| !p.is_empty()) else {
            return ToolOutcome::err("missing required argument 'pattern'");
        };
        let raw = arg(args, "path")
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let start = match self.checked(raw, Access::Read) {
            Ok(r) => r,
            Err(e) => return e,
        };
        let needle = pattern.to_lowercase();
        let mut hits = Vec::new();
        // walked through the handle: directories by fd, symlinks listed but never followed
        let start_dir = start.is_empty() || self.is_dir(&start);
        let mut stack = vec![(start, start_dir)];
        let mut files = 0;
        let join = |dir: &str, name: &str| {
            if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            }
        };
        while let Some((p, is_dir)) = stack.pop() {
            if is_dir {
                let name = p.rsplit('/').next().unwrap_or("");
                if [STATE_DIR, "__pycache__", ".git", "node_modules"].contains(&name) {
                    continue;
                }
                if let Ok(entries) = self.wd.list(&p) {
                    let v: Vec<(String, bool)> = entries
                        .into_iter()
                        .filter(|e| matches!(e.kind, Kind::Dir | Kind::File))
                        .map(|e| (join(&p, &e.name.to_string_lossy()), e.kind == Kind::Dir))
                        .collect();
                    stack.extend(v.into_iter().rev());
                }
                continue;
            }
            files += 1;
            if files > 2000 || hits.len() >= 50 {
                break;
            }
            let Ok(st) = self.wd.stat(&p) else { continue };
            if st.len > 4 * 1024 * 1024 {
                continue;
            }
            let Ok(bytes) = self.wd.read_bytes(&p) else {
                continue;
            };
            if bytes.iter().take(4096).any(|&b| b == 0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            let rel = p.clone();
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

    pub(super) fn delete_file(&mut self, args: &Value) -> ToolOutcome {
        let rel = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        if rel.is_empty() {
            return ToolOutcome::err("refusing to delete the working directory");
        }
        let is_dir = match self.wd.stat(&rel) {
            Ok(st) => st.kind == Kind::Dir,
            Err(e) if is_not_found(&e) => {
                return ToolOutcome::err(format!("'{rel}' does not exist"))
            }
            Err(e) => return beneath_err(e, |e| format!("cannot delete '{rel}': {e}")),
        };
        match &mut self.backups {
            Some(b) => match b.trash(&self.wd, &rel) {
                Ok(t) => ToolOutcome::ok(
                    format!("moved {rel} to the harness's {t} (recoverable)"),
                    Effect::Write,
                    Some(rel),
                ),
                Err(e) => ToolOutcome::err(format!("cannot delete '{rel}': {e}")),
            },
            None => {
                let r = if is_dir {
                    self.wd.remove_all(&rel)
                } else {
                    self.wd.remove(&rel)
                };
                match r {
                    Ok(()) => ToolOutcome::ok(format!("deleted {rel}"), Effect::Write, Some(rel)),
                    Err(e) => beneath_err(e, |e| format!("cannot delete '{rel}': {e}")),
                }
            }
        }
    }

    pub(super) fn rollback(&mut self, args: &Value) -> ToolOutcome {
        let rel = match self.need_path(args, Access::Write) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let Some(b) = &mut self.backups else {
            return ToolOutcome::err("rollback is unavailable (edit safety is switched off)");
        };
        match b.rollback(&self.wd, &rel) {
            Ok(msg) => {
                if let Some(g) = &mut self.crawl {
                    g.reset(&rel);
                }
                ToolOutcome::ok(msg, Effect::Write, Some(rel))
            }
            Err(e) => ToolOutcome::err(e.to_string()),
        }
    }
}

/// `ast.parse` of `source` in a fresh interpreter, fed on stdin: `None` when it parses (or
/// the check could not run), else the interpreter's error output.
fn parse_python(source: &[u8]) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(python_exe())
        .args([
            "-I",
            "-c",
            "import ast,sys; ast.parse(sys.stdin.buffer.read())",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let data = source.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let _ = feeder.join();
    let out = child.wait_with_output().ok()?;
    if out.status.success() {
        None
    } else {
        Some(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The edited text, or the outcome to report instead (no match, several matches, no change).
fn plan_edit(text: &str, old: &str, new: &str, rel: &str) -> Result<String, ToolOutcome> {
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
        return Err(ToolOutcome::err(format!(
                "'old' text not found in {rel} (it must match exactly, whitespace included).{near} Or rewrite the whole file with write_file."
            )));
    }
    if count > 1 {
        return Err(ToolOutcome::err(format!(
                "'old' text occurs {count} times in {rel}; include more surrounding lines so it is unique"
            )));
    }
    if old_s == new_s {
        return Err(ToolOutcome::ok(
            format!("unchanged: 'old' and 'new' are identical, so {rel} was not edited"),
            Effect::None,
            Some(rel.to_string()),
        ));
    }
    Ok(text.replacen(&old_s, &new_s, 1))
}
