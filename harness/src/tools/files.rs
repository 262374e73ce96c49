//! The file tools: reading, writing, editing, listing, searching, deleting and rolling back,
//! every path resolved through the workdir boundary first ([`Confinement::resolve`]).
//!
//! [`Confinement::resolve`]: crate::mechanisms::security::Confinement::resolve

use super::{
    arg, arg_u64, python_exe, shell_quote, unescape_if_flattened, Effect, ToolOutcome, Toolbox,
};
use crate::mechanisms::crawl_guard::READ_WINDOW;
use crate::mechanisms::security::{Access, Refusal, STATE_DIR};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

impl Toolbox {
    fn need_path(&self, args: &Value, access: Access) -> Result<(PathBuf, String), ToolOutcome> {
        let Some(raw) = arg(args, "path") else {
            return Err(ToolOutcome::err("missing required argument 'path'"));
        };
        match self.conf.resolve_checked(raw, access) {
            Ok(abs) => {
                let rel = self.conf.rel(&abs);
                Ok((abs, rel))
            }
            Err(r) => Err(ToolOutcome::refused(r)),
        }
    }

    pub(super) fn read_file(&mut self, args: &Value) -> ToolOutcome {
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

    pub(super) fn write_file(&mut self, args: &Value, append: bool) -> ToolOutcome {
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
                // the model knows the file by its workdir-relative name
                let abs_s = abs.to_string_lossy();
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

    pub(super) fn edit_file(&mut self, args: &Value) -> ToolOutcome {
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

    pub(super) fn list_dir(&mut self, args: &Value) -> ToolOutcome {
        let raw = arg(args, "path")
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let abs = match self.conf.resolve_checked(raw, Access::Read) {
            Ok(a) => a,
            Err(r) => return ToolOutcome::refused(r),
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

    pub(super) fn search_files(&mut self, args: &Value) -> ToolOutcome {
        let Some(pattern) = arg(args, "pattern").filter(|p| !p.is_empty()) else {
            return ToolOutcome::err("missing required argument 'pattern'");
        };
        let raw = arg(args, "path")
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let abs = match self.conf.resolve_checked(raw, Access::Read) {
            Ok(a) => a,
            Err(r) => return ToolOutcome::refused(r),
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

    pub(super) fn delete_file(&mut self, args: &Value) -> ToolOutcome {
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

    pub(super) fn rollback(&mut self, args: &Value) -> ToolOutcome {
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
}
