//! The tools, confined to the workdir. [`table`] defines every tool once; [`Toolbox::execute`]
//! runs one call and returns text for the model plus what kind of effect it had (for the loop's
//! bookkeeping) and, when a safety ring refused it, the ring's verdict.

pub mod confined;
mod files;
mod refusal;
pub mod shell;
pub mod todo;
pub mod web;

use crate::mechanisms::crawl_guard::CrawlGuard;
use crate::mechanisms::edit_safety::Backups;
use crate::mechanisms::security::{Confinement, Refusal, STATE_DIR};
use crate::shaping::{
    clamp_tail_first, collapse_repeated_blocks, denoise, detect_verdict, is_test_command,
    relative_paths, shorten_passing_log, Verdict,
};
use crate::state_dir::{StateDir, OUT_PREFIX};
use crate::table::{self, Handler};
use lrab_safety::Beneath;
use serde_json::Value;
use shell::{ShellExecutor, ShellOutcome, ShellRequest};
use std::path::Path;
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
    /// The safety ring's verdict when a ring refused the call (nothing ran).
    pub refusal: Option<lrab_safety::Verdict>,
    /// A shell command's exit code, when it ran to its end.
    pub exit: Option<i32>,
    /// A shell command ran into its timeout.
    pub timed_out: bool,
}

impl ToolOutcome {
    fn err(text: impl Into<String>) -> Self {
        ToolOutcome {
            text: format!("error: {}", text.into()),
            ok: false,
            effect: Effect::None,
            verdict: None,
            path: None,
            refusal: None,
            exit: None,
            timed_out: false,
        }
    }
    /// A refusal: the error text for the model, with the ring's verdict when a ring refused.
    fn refused(r: Refusal) -> Self {
        ToolOutcome {
            refusal: r.verdict,
            ..ToolOutcome::err(r.text)
        }
    }
    fn ok(text: impl Into<String>, effect: Effect, path: Option<String>) -> Self {
        ToolOutcome {
            text: text.into(),
            ok: true,
            effect,
            verdict: None,
            path,
            refusal: None,
            exit: None,
            timed_out: false,
        }
    }
}

pub struct Toolbox {
    pub conf: Confinement,
    /// The workdir held open: every file tool resolves its path beneath this handle, in the
    /// kernel and without following symlinks, so the object checked is the object used.
    pub wd: Beneath,
    /// The state folder outside the workdir, held open.
    pub state: StateDir,
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
    /// `workdir` must exist; `state` is its state folder ([`StateDir::open`]).
    pub fn new(
        workdir: &Path,
        state: StateDir,
        edit_safety: bool,
        crawl_guard: bool,
        shell: Box<dyn ShellExecutor>,
    ) -> std::io::Result<Self> {
        let conf = Confinement::new(workdir)?;
        let wd = open_beneath(conf.root(), &crate::mechanisms::security::real_home())?;
        let backups = if edit_safety {
            Some(Backups::open(&state.dir)?)
        } else {
            None
        };
        // continue output numbering after a resume
        let out_seq = state.outputs_so_far();
        Ok(Toolbox {
            conf,
            wd,
            state,
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

    /// Judge sensitive paths (and forbid the credential inodes) of this home instead of
    /// `$HOME`. Called at start-up, before any tool runs.
    pub fn set_home(&mut self, home: &Path) -> std::io::Result<()> {
        self.conf.set_home(home);
        self.wd = open_beneath(self.conf.root(), home)?;
        Ok(())
    }

    /// Workdir files (relative), recursively, skipping harness state and caches; at most `max`.
    /// Walked through the workdir handle: a symlink is listed as a name, never descended.
    pub fn list_files(&self, max: usize) -> Vec<String> {
        use lrab_safety::FileKind as Kind;
        let mut out = Vec::new();
        let mut stack = vec![String::new()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = self.wd.list(&dir) else {
                continue;
            };
            for e in entries.into_iter().rev() {
                let name = e.name.to_string_lossy().into_owned();
                if name == STATE_DIR
                    || name == "__pycache__"
                    || name == ".git"
                    || name == "node_modules"
                {
                    continue;
                }
                let rel = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                if e.kind == Kind::Dir {
                    stack.push(rel);
                } else {
                    out.push(rel);
                }
            }
        }
        out.sort();
        out.truncate(max);
        out
    }

    /// Run a command for the harness itself (the finish gate's tests), output kept under
    /// the state folder's `out/` (the model reads it as `.lrab/out/N.txt`).
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
        let rel = format!("{OUT_PREFIX}{}.txt", self.out_seq);
        let file = self.state.create_output(self.out_seq)?;
        self.state.restore_private_dirs();
        let o = self.shell.run(&ShellRequest {
            command,
            cwd: self.conf.root(),
            timeout: Duration::from_secs(timeout_s),
            output: &file,
            model_chosen,
        })?;
        Ok((o, rel))
    }

    /// Runs one call of a tool the toolbox handles (see [`table`]); any other name is an error
    /// listing the toolbox's tools.
    pub fn execute(&mut self, name: &str, args: &Value) -> ToolOutcome {
        if !args.is_object() {
            return ToolOutcome::err(format!(
                "arguments for {name} must be a JSON object, got: {}",
                args.to_string().chars().take(120).collect::<String>()
            ));
        }
        let web = self.web.is_some();
        let def = table::find(name).filter(|t| web || t.offer != table::Offer::Web);
        match def
            .filter(|d| d.handler == Handler::Toolbox)
            .and_then(|d| method(d.name))
        {
            Some(run) => run(self, args),
            _ => ToolOutcome::err(format!(
                "unknown tool '{name}'. Available: {}",
                table::names(
                    |t| t.handler == Handler::Toolbox && (web || t.offer != table::Offer::Web)
                )
                .join(", ")
            )),
        }
    }

    /// A web tool's call (only reachable when the web tools exist).
    fn web_call(
        &mut self,
        args: &Value,
        f: fn(&web::WebTools, &Value) -> ToolOutcome,
    ) -> ToolOutcome {
        match &self.web {
            Some(w) => f(w, args),
            None => ToolOutcome::err("the web tools are not configured"),
        }
    }

    fn run_shell(&mut self, args: &Value) -> ToolOutcome {
        let Some(command) = arg(args, "command").filter(|c| !c.trim().is_empty()) else {
            return ToolOutcome::err("missing required argument 'command'");
        };
        if let Err(r) = self.shell.admit(command, self.conf.safety()) {
            return ToolOutcome::refused(r);
        }
        let timeout = arg_u64(args, "timeout")
            .unwrap_or(self.default_timeout)
            .clamp(1, self.max_timeout);
        let (o, rel) = match self.run_with(command, timeout, true) {
            Ok(x) => x,
            Err(e) => return ToolOutcome::err(format!("could not start the command: {e}")),
        };
        // what carries no information is left out of the result (the output file keeps all):
        // the workdir's absolute prefix, consecutive copies of one block
        let clean =
            collapse_repeated_blocks(&relative_paths(&denoise(&o.output), self.conf.root()));
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
            // saved outside the workdir: the model reads it with read_file, not the shell
            let full = format!("{rel} (read_file)");
            let shown = shorten_passing_log(&clean, verdict, &full);
            text.push_str(&clamp_tail_first(&shown, self.output_budget, &full));
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
            refusal: None,
            exit: if o.timed_out { None } else { o.exit },
            timed_out: o.timed_out,
        }
    }
}

/// The workdir handle, with the home's credential files forbidden under any name.
fn open_beneath(root: &Path, home: &Path) -> std::io::Result<Beneath> {
    Ok(Beneath::open(root)
        .map_err(crate::state_dir::io_err)?
        .forbid_inodes(lrab_safety::sensitive_inodes(home)))
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

/// The toolbox method of each tool the table says the toolbox handles ([`Handler::Toolbox`]).
fn method(name: &str) -> Option<fn(&mut Toolbox, &Value) -> ToolOutcome> {
    let run: fn(&mut Toolbox, &Value) -> ToolOutcome = match name {
        "read_file" => Toolbox::read_file,
        "write_file" => |t, a| t.write_file(a, false),
        "edit_file" => Toolbox::edit_file,
        "append_file" => |t, a| t.write_file(a, true),
        "list_dir" => Toolbox::list_dir,
        "run_shell" => Toolbox::run_shell,
        "search_files" => Toolbox::search_files,
        "rollback" => Toolbox::rollback,
        "delete_file" => Toolbox::delete_file,
        "web_search" => |t, a| t.web_call(a, web::WebTools::search),
        "web_fetch" => |t, a| t.web_call(a, web::WebTools::fetch),
        _ => return None,
    };
    Some(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shell::LocalExecutor;
    use std::fs;
    use std::path::PathBuf;

    /// A workdir `w/` and its state folder `state/` in one temporary folder.
    struct Run(tempfile::TempDir);
    impl Run {
        fn path(&self) -> PathBuf {
            self.0.path().join("w")
        }
    }

    fn tb() -> (Run, Toolbox) {
        let d = Run(tempfile::tempdir().unwrap());
        fs::create_dir(d.path()).unwrap();
        let st = StateDir::open(&d.0.path().join("state"), &d.path()).unwrap();
        let t = Toolbox::new(&d.path(), st, true, true, Box::new(LocalExecutor)).unwrap();
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
        // a ring's refusal carries its verdict
        let o = t.execute("read_file", &json!({"path": "/etc/passwd"}));
        assert_eq!(
            o.refusal.and_then(|v| v.ring()),
            Some(lrab_safety::Ring::Boundary)
        );
    }

    #[test]
    fn every_tool_the_toolbox_handles_has_its_method() {
        for d in table::TOOLS {
            assert_eq!(
                d.handler == Handler::Toolbox,
                method(d.name).is_some(),
                "{}",
                d.name
            );
        }
    }

    #[test]
    fn unknown_tools_are_answered_with_the_real_set() {
        let (_d, mut t) = tb();
        let o = t.execute("todo_write", &json!({}));
        let want = table::names(|d| d.handler == Handler::Toolbox && d.offer != table::Offer::Web);
        assert!(
            o.text.ends_with(&format!("Available: {}", want.join(", "))),
            "{}",
            o.text
        );
        assert!(o.text.contains("search_files") && !o.text.contains("web_search"));
        // without a search endpoint the web tools do not exist
        assert!(t
            .execute("web_search", &json!({"query": "x"}))
            .text
            .contains("unknown tool"));
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
        // saved in the state folder, not in the workdir
        assert!(!d.path().join(&rel).exists());
        let saved = t.state.path.join(rel.strip_prefix(".lrab/").unwrap());
        assert!(fs::read_to_string(saved).unwrap().contains("line250"));
        let r = t.execute("read_file", &json!({"path": rel}));
        assert!(r.ok && r.text.contains("line1\n"));
        let o = t.execute("run_shell", &json!({"command": "sleep 5", "timeout": 1}));
        assert!(!o.ok && o.text.contains("timed out"));
    }

    /// A loop that fails the same way for every item: the result shows one traceback with
    /// workdir-relative paths and the count of copies; the output file keeps every copy.
    #[test]
    fn shell_output_drops_the_workdir_prefix_and_repeated_blocks() {
        let (d, mut t) = tb();
        t.execute(
            "write_file",
            &json!({"path": "agg.py", "content": "import sys\nOUT = ROOT / 'out'\n"}),
        );
        let o = t.execute(
            "run_shell",
            &json!({"command": "for b in B1 B2 B3 B4 B5 B6; do python3 agg.py $b; done; exit 1"}),
        );
        let root = d.path().canonicalize().unwrap();
        assert!(!o.text.contains(&*root.to_string_lossy()), "{}", o.text);
        assert_eq!(o.text.matches("NameError").count(), 1, "{}", o.text);
        assert!(o.text.contains("File \"agg.py\", line 2"), "{}", o.text);
        assert!(o.text.contains("repeated 5 more times]"), "{}", o.text);
        let saved = fs::read_dir(t.state.path.join("out"))
            .unwrap()
            .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
            .find(|s| s.contains("NameError"))
            .unwrap();
        assert_eq!(saved.matches("NameError").count(), 6);
        // a long passing test log keeps its head and tail
        let o = t.execute(
            "run_shell",
            &json!({"command": "for i in $(seq 1 80); do echo \"test_$i PASSED\"; done; echo '80 passed in 0.2s'"}),
        );
        assert_eq!(o.verdict, Some(Verdict::Passed));
        assert!(
            o.text.contains("lines of the passing run elided"),
            "{}",
            o.text
        );
        assert!(
            o.text.ends_with("test_80 PASSED\n80 passed in 0.2s"),
            "{}",
            o.text
        );
        assert!(!o.text.contains("test_40 PASSED"));
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
