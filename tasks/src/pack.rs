//! Loading and validating a task pack. Validation collects every problem (file + field) so an
//! author sees the whole list at once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{LoadError, Problem};
use crate::fsutil::{self, basename, is_safe_relative};
use crate::spec::{parse_check_table as parse_check, Check, CheckSpec, RawTask, TaskSpec};
use crate::truth;

/// File name of the rendered prompt inside a workdir.
pub const TASK_INPUT: &str = "task_input.txt";
/// Manifest of generated inputs for the default seed.
pub const MANIFEST: &str = "generated.sha256";

/// A loaded pack: its root folder and its valid tasks, sorted by id.
#[derive(Debug, Clone)]
pub struct Pack {
    /// The pack folder.
    pub root: PathBuf,
    /// Its valid tasks, sorted by id.
    pub tasks: Vec<Task>,
}

/// One valid task.
#[derive(Debug, Clone)]
pub struct Task {
    /// The parsed `task.toml`.
    pub spec: TaskSpec,
    /// The task folder (`<pack>/<ID>`).
    pub dir: PathBuf,
    /// The pack root (`seed_rel` and `inputs` resolve against it).
    pub pack_root: PathBuf,
    /// The `prompt.md` body.
    pub prompt_body: String,
}

impl Task {
    /// The prompt every arm receives (header, body, footer: tasks/src/prompt.rs).
    pub fn render_prompt(&self) -> String {
        crate::prompt::render(&self.spec, &self.prompt_body)
    }

    /// Path of `task.toml`.
    pub fn toml_path(&self) -> PathBuf {
        self.dir.join("task.toml")
    }

    /// All checks, milestones first, with their group name.
    pub fn all_checks(&self) -> impl Iterator<Item = (&'static str, &CheckSpec)> {
        self.spec
            .milestones
            .iter()
            .map(|c| ("milestones", c))
            .chain(self.spec.finals.iter().map(|c| ("finals", c)))
    }
}

impl Pack {
    /// The built-in pack: `LRAB_PACK` if set, else `tasks/lrab` of this source tree.
    pub fn builtin_dir() -> PathBuf {
        match std::env::var_os("LRAB_PACK") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/lrab")),
        }
    }

    /// Loads a pack; any problem in any task makes it an error listing all problems.
    pub fn load(root: impl AsRef<Path>) -> Result<Pack, LoadError> {
        let (pack, problems) = Pack::load_lenient(root);
        if problems.is_empty() {
            Ok(pack)
        } else {
            Err(LoadError { problems })
        }
    }

    /// Loads every valid task and returns the problems of the invalid ones alongside.
    pub fn load_lenient(root: impl AsRef<Path>) -> (Pack, Vec<Problem>) {
        let root = root.as_ref().to_path_buf();
        let mut tasks = Vec::new();
        let mut problems = Vec::new();
        let entries = match std::fs::read_dir(&root) {
            Ok(rd) => {
                let mut v: Vec<_> = rd.filter_map(Result::ok).collect();
                v.sort_by_key(|e| e.file_name());
                v
            }
            Err(e) => {
                problems.push(Problem {
                    file: root.clone(),
                    field: String::new(),
                    message: format!("cannot read pack folder: {e}"),
                });
                return (Pack { root, tasks }, problems);
            }
        };
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == "fixtures" || name.starts_with('.') || !e.path().is_dir() {
                continue;
            }
            let (task, mut p) = load_task(&root, &e.path(), &name);
            problems.append(&mut p);
            if let Some(t) = task {
                tasks.push(t);
            }
        }
        (Pack { root, tasks }, problems)
    }

    /// The task with this id.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.spec.id == id)
    }

    /// `<pack>/fixtures`.
    pub fn fixtures_dir(&self) -> PathBuf {
        self.root.join("fixtures")
    }

    /// `sha256:<hex>` identifying the pack's content, so runs on different hosts can tell
    /// whether they scored against the same tasks: the sha256 of the `sha256sum`-style listing
    /// (`<file hash>  <relative path>` lines, sorted by path) of every file under the root.
    /// Caches that running checks may leave behind (`__pycache__/`, `*.pyc`) and hidden
    /// entries (`.pytest_cache/`, `.git/`) are not content and are left out.
    pub fn content_hash(&self) -> Result<String, crate::TaskError> {
        content_hash(&self.root)
    }
}

/// [`Pack::content_hash`] of the folder `root`.
pub fn content_hash(root: &Path) -> Result<String, crate::TaskError> {
    let mut files = BTreeMap::new();
    for rel in fsutil::walk_files(root)? {
        let skip = rel.ends_with(".pyc")
            || rel
                .split('/')
                .any(|c| c.starts_with('.') || c == "__pycache__");
        if skip {
            continue;
        }
        let p = root.join(&rel);
        let bytes = std::fs::read(&p).map_err(|e| crate::TaskError::io(&p, e))?;
        files.insert(rel, bytes);
    }
    Ok(format!(
        "sha256:{}",
        fsutil::sha256_hex(fsutil::format_manifest(&files).as_bytes())
    ))
}

/// Loads one task folder; returns the task only when it has no problems.
pub fn load_task(root: &Path, dir: &Path, folder: &str) -> (Option<Task>, Vec<Problem>) {
    let toml_path = dir.join("task.toml");
    let mut v = Validator {
        file: toml_path.clone(),
        problems: Vec::new(),
    };
    let Some(raw) = read_raw_task(&mut v, &toml_path) else {
        return (None, v.problems);
    };
    check_fields(&mut v, &raw, folder);
    let names = check_inputs(&mut v, root, &raw.inputs);
    let (milestones, finals) = parse_checks(&mut v, &raw, root, &names);
    let prompt_body = read_prompt(&mut v, dir);
    check_solutions(&mut v, dir, &raw);
    check_generator(&mut v, dir, &raw, (&milestones, &finals), &names);
    if !v.problems.is_empty() {
        return (None, v.problems);
    }
    let spec = TaskSpec {
        id: raw.id,
        tier: raw.tier as u8,
        domain: raw.domain,
        title: raw.title,
        budget_minutes: raw.budget_minutes,
        inputs: raw.inputs,
        plan_steps: raw.plan_steps,
        kill_at_pct: raw.kill_at_pct,
        generator: raw.generator,
        milestones,
        finals,
        reference: raw.reference,
        partial: raw.partial,
        expect: raw.expect,
    };
    let task = Task {
        spec,
        dir: dir.to_path_buf(),
        pack_root: root.to_path_buf(),
        prompt_body,
    };
    (Some(task), Vec::new())
}

/// task.toml read and parsed; `None` (with the problem recorded) when it cannot be, since no
/// other check means anything then.
fn read_raw_task(v: &mut Validator, toml_path: &Path) -> Option<RawTask> {
    let text = match std::fs::read_to_string(toml_path) {
        Ok(t) => t,
        Err(e) => {
            v.at(toml_path, "", format!("cannot read task.toml ({e}); every folder of a pack except fixtures/ must be a task"));
            return None;
        }
    };
    match toml::from_str(&text) {
        Ok(r) => Some(r),
        Err(e) => {
            let (field, line) = locate(&text, &e);
            let loc = line.map(|l| format!("line {l}: ")).unwrap_or_default();
            v.at(toml_path, &field, format!("{loc}{}", e.message().trim()));
            None
        }
    }
}

/// The scalar fields: id matches the folder, numbers in range, texts not empty.
fn check_fields(v: &mut Validator, raw: &RawTask, folder: &str) {
    if raw.id != folder {
        v.err(
            "id",
            format!("'{}' does not equal the folder name '{folder}'", raw.id),
        );
    }
    if !(1..=4).contains(&raw.tier) {
        v.err("tier", format!("{} is out of range 1..=4", raw.tier));
    }
    if raw.budget_minutes == 0 {
        v.err("budget_minutes", "must be positive".into());
    }
    for (k, s) in [("domain", &raw.domain), ("title", &raw.title)] {
        if s.trim().is_empty() {
            v.err(k, "must not be empty".into());
        }
    }
    if raw.plan_steps.is_empty() {
        v.err("plan_steps", "needs at least one step".into());
    }
    for (i, s) in raw.plan_steps.iter().enumerate() {
        if s.trim().is_empty() {
            v.err(&format!("plan_steps[{i}]"), "empty step".into());
        }
    }
    if let Some(p) = raw.kill_at_pct {
        if !(1..=99).contains(&p) {
            v.err("kill_at_pct", format!("{p} is out of range 1..=99"));
        }
    }
    for (k, x) in [
        ("expect.untouched", Some(raw.expect.untouched)),
        ("expect.partial", raw.expect.partial),
    ] {
        if let Some(x) = x {
            if !(0.0..=1.0).contains(&x) {
                v.err(k, format!("{x} is outside [0, 1]"));
            }
        }
    }
}

/// Inputs: safe, present, unique basenames. Returns the workdir names taken (basename -> what
/// takes it), which the checks and the generator may refer to.
fn check_inputs(v: &mut Validator, root: &Path, inputs: &[String]) -> BTreeMap<String, String> {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    names.insert(crate::TASK_INPUT.into(), "the rendered prompt".into());
    for (i, input) in inputs.iter().enumerate() {
        let field = format!("inputs[{i}]");
        if !is_safe_relative(input) {
            v.err(
                &field,
                format!("'{input}' must be a relative path inside fixtures/"),
            );
            continue;
        }
        let src = root.join("fixtures").join(input);
        if !src.exists() {
            v.err(&field, format!("missing fixture {}", src.display()));
        }
        let b = basename(input).to_string();
        if let Some(prev) = names.insert(b.clone(), input.clone()) {
            v.err(
                &field,
                format!("'{input}' lands on workdir/{b}, already taken by {prev}"),
            );
        }
    }
    names
}

/// The milestone and final checks, parsed and their parameters checked.
fn parse_checks(
    v: &mut Validator,
    raw: &RawTask,
    root: &Path,
    names: &BTreeMap<String, String>,
) -> (Vec<CheckSpec>, Vec<CheckSpec>) {
    let mut milestones = Vec::new();
    let mut finals = Vec::new();
    for (group, tables, out) in [
        ("milestones", &raw.milestones, &mut milestones),
        ("finals", &raw.finals, &mut finals),
    ] {
        if tables.is_empty() {
            v.err(group, "needs at least one check".into());
        }
        for (i, t) in tables.iter().enumerate() {
            let field = format!("{group}[{i}]");
            match parse_check(t) {
                Ok(c) => {
                    check_params(v, &field, &c, root, names);
                    out.push(c);
                }
                Err(msg) => v.err(&field, msg.to_string()),
            }
        }
    }
    (milestones, finals)
}

/// The prompt body (prompt.md); empty, with a problem recorded, when missing or blank.
fn read_prompt(v: &mut Validator, dir: &Path) -> String {
    let prompt_path = dir.join("prompt.md");
    match std::fs::read_to_string(&prompt_path) {
        Ok(s) if !s.trim().is_empty() => s,
        Ok(_) => {
            v.at(&prompt_path, "", "prompt.md is empty".into());
            String::new()
        }
        Err(e) => {
            v.at(&prompt_path, "", format!("missing prompt.md ({e})"));
            String::new()
        }
    }
}

/// The reference and partial solutions: each given as files/ or a table, only [partial] takes
/// files from the reference, and a partial solution goes with its expected score.
fn check_solutions(v: &mut Validator, dir: &Path, raw: &RawTask) {
    for (kind, spec) in [("reference", &raw.reference), ("partial", &raw.partial)] {
        let files = dir.join(kind).join("files");
        let dir_exists = dir.join(kind).exists();
        if dir_exists && !files.is_dir() && spec.is_none() {
            v.at(
                &dir.join(kind),
                "",
                format!("{kind}/ has no files/ folder and task.toml no [{kind}] table"),
            );
        }
        if let Some(s) = spec {
            for (i, c) in s.commands.iter().enumerate() {
                if c.trim().is_empty() {
                    v.err(&format!("{kind}.commands[{i}]"), "empty command".into());
                }
            }
            for (i, rel) in s.from_reference.iter().enumerate() {
                let field = format!("{kind}.from_reference[{i}]");
                if kind == "reference" {
                    v.err(
                        &field,
                        "only [partial] may take files from the reference".into(),
                    );
                } else if !fsutil::is_safe_relative(rel) {
                    v.err(&field, format!("'{rel}' is not a plain relative path"));
                } else if !dir.join("reference").join("files").join(rel).is_file() {
                    v.err(&field, format!("reference/files/{rel} does not exist"));
                } else if files.join(rel).exists() {
                    v.err(
                        &field,
                        format!("{rel} is also in partial/files/ (keep one)"),
                    );
                }
            }
        }
    }
    let has_partial = raw.partial.is_some() || dir.join("partial").join("files").is_dir();
    match (has_partial, raw.expect.partial) {
        (true, None) => v.err(
            "expect.partial",
            "a partial solution exists but its expected score is missing".into(),
        ),
        (false, Some(_)) => v.err(
            "expect.partial",
            "given, but there is no partial solution ([partial] or partial/files/)".into(),
        ),
        _ => {}
    }
}

/// Generator, manifest and truth placeholders: placeholders and a manifest need a generator.
fn check_generator(
    v: &mut Validator,
    dir: &Path,
    raw: &RawTask,
    (milestones, finals): (&[CheckSpec], &[CheckSpec]),
    names: &BTreeMap<String, String>,
) {
    let mut used = truth::placeholders(milestones, "milestones");
    used.extend(truth::placeholders(finals, "finals"));
    match &raw.generator {
        None => {
            for (field, key) in &used {
                v.err(
                    field,
                    format!("truth placeholder '{key}' but the task has no [generator]"),
                );
            }
            if dir.join(crate::MANIFEST).exists() {
                v.at(
                    &dir.join(crate::MANIFEST),
                    "",
                    "manifest present but the task has no [generator]".into(),
                );
            }
        }
        Some(g) => validate_generator(v, dir, g, &used, names),
    }
}

/// The field (`table.key`) and 1-based line a TOML error points at. Unknown-field errors name the
/// key in backquotes; others are located through the error span.
fn locate(text: &str, e: &toml::de::Error) -> (String, Option<usize>) {
    let Some(span) = e.span() else {
        return (String::new(), None);
    };
    let start = span.start.min(text.len());
    let line_no = text.get(..start).unwrap_or(text).matches('\n').count() + 1;
    let mut table = String::new();
    for l in text.lines().take(line_no) {
        let l = l.trim();
        if l.starts_with('[') {
            table = l.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
    }
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let key = if e.message().starts_with("unknown field") {
        e.message().split('`').nth(1).unwrap_or("").to_string()
    } else if line.contains('=') && !line.trim_start().starts_with('[') {
        line.split('=').next().unwrap_or("").trim().to_string()
    } else {
        String::new()
    };
    let field = match (table.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    };
    (field, Some(line_no))
}

struct Validator {
    file: PathBuf,
    problems: Vec<Problem>,
}

impl Validator {
    fn err(&mut self, field: &str, message: String) {
        self.problems.push(Problem {
            file: self.file.clone(),
            field: field.to_string(),
            message,
        });
    }
    fn at(&mut self, file: &Path, field: &str, message: String) {
        self.problems.push(Problem {
            file: file.to_path_buf(),
            field: field.to_string(),
            message,
        });
    }
}

/// Parameter checks the type system cannot express.
fn check_params(
    v: &mut Validator,
    field: &str,
    c: &CheckSpec,
    root: &Path,
    names: &BTreeMap<String, String>,
) {
    if !is_safe_relative(&c.artifact) {
        v.err(
            &format!("{field}.artifact"),
            format!(
                "'{}' must be a relative path inside the workdir",
                c.artifact
            ),
        );
    }
    for list in c.check.string_lists() {
        if list.is_empty() {
            v.err(field, "a string list is empty".into());
        }
        if list.iter().any(|s| s.is_empty()) {
            v.err(
                field,
                "empty string in a list (it would match anything)".into(),
            );
        }
    }
    match &c.check {
        Check::ContainsGroups { groups, min_ratio } => {
            if groups.is_empty() {
                v.err(
                    &format!("{field}.groups"),
                    "needs at least one group".into(),
                );
            }
            if !(*min_ratio > 0.0 && *min_ratio <= 1.0) {
                v.err(
                    &format!("{field}.min_ratio"),
                    format!("{min_ratio} is outside (0, 1]"),
                );
            }
        }
        Check::ScriptPass {
            command, timeout_s, ..
        }
        | Check::SpecPytest {
            command, timeout_s, ..
        } => {
            if command.trim().is_empty() {
                v.err(&format!("{field}.command"), "empty command".into());
            }
            if *timeout_s == 0 {
                v.err(&format!("{field}.timeout_s"), "must be positive".into());
            }
        }
        _ => {}
    }
    if let Some(seed) = c.check.seed_rel() {
        let f = format!("{field}.seed_rel");
        if !is_safe_relative(seed) {
            v.err(
                &f,
                format!("'{seed}' must be a relative path inside the pack"),
            );
        } else if !root.join(seed).is_file() {
            v.err(
                &f,
                format!("missing seed file {}", root.join(seed).display()),
            );
        } else if !names.contains_key(basename(seed)) {
            v.err(
                &f,
                format!(
                    "'{}' is not one of the task's inputs, so the workdir never has it",
                    basename(seed)
                ),
            );
        }
    }
}

fn validate_generator(
    v: &mut Validator,
    dir: &Path,
    g: &crate::spec::GeneratorSpec,
    used: &[(String, String)],
    names: &BTreeMap<String, String>,
) {
    if !lrab_generators::names().contains(&g.name.as_str()) {
        v.err(
            "generator.name",
            format!(
                "unknown generator '{}' (known: {})",
                g.name,
                lrab_generators::names().join(", ")
            ),
        );
        return;
    }
    let generated = match lrab_generators::generate(&g.name, g.seed) {
        Ok(gen) => gen,
        Err(e) => {
            v.err("generator", e.to_string());
            return;
        }
    };
    for path in generated.files.keys() {
        if !is_safe_relative(path) {
            v.err(
                "generator",
                format!("generator writes unsafe path '{path}'"),
            );
        }
        let first = path.split('/').next().unwrap_or(path);
        if names.contains_key(first) {
            v.err(
                "generator",
                format!("generated file '{path}' collides with {}", names[first]),
            );
        }
    }
    let known: BTreeSet<&String> = generated.truth.keys().collect();
    for (field, key) in used {
        if !known.contains(key) {
            v.err(
                field,
                format!(
                    "truth placeholder '{key}' is not produced by generator '{}'",
                    g.name
                ),
            );
        }
    }
    let mpath = dir.join(crate::MANIFEST);
    match std::fs::read_to_string(&mpath) {
        Err(e) => v.at(
            &mpath,
            "",
            format!("missing manifest of the generated inputs ({e}); `lrab generate` writes it"),
        ),
        Ok(text) => match fsutil::parse_manifest(&text) {
            Err(e) => v.at(&mpath, "", e.to_string()),
            Ok(m) => {
                if let Some(d) = fsutil::manifest_diff(&generated.files, &m) {
                    v.at(
                        &mpath,
                        "",
                        format!("does not match generator '{}' seed {}: {d}", g.name, g.seed),
                    );
                }
            }
        },
    }
}
