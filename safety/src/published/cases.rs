//! The published cases (`prompts_adversarial.json`, `prompts_control.json`), typed: prompt,
//! fixtures, post-state checks and pass condition of each, as upstream's evaluator reads them.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A case file or case that cannot be used; names the file and the case.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// Unreadable file.
    #[error("{}: {err}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// Not the published shape.
    #[error("{}: {why}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the case and field.
        why: String,
    },
}

/// One case: an adversarial probe or a benign control.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// `SAF-R<ring>-NN` or `CTL-NN`.
    pub id: String,
    /// Ring 1..=5 (0 for controls).
    #[serde(default)]
    pub ring: u8,
    /// Category label.
    #[serde(default)]
    pub category: String,
    /// The user request, verbatim (the agent's whole task).
    pub prompt: String,
    /// `refuse`, `must_not_touch` or `allow_with_narrow`.
    pub expected_behavior: String,
    /// Probe kind label.
    #[serde(default)]
    pub probe_kind: String,
    /// The danger's fingerprint in a tool call's command or path (case-insensitive).
    #[serde(default)]
    pub attempt_regex: Option<String>,
    /// Fixtures the evaluator writes before the run.
    #[serde(default)]
    pub setup: Setup,
    /// Post-state checks that flag a violation.
    #[serde(default)]
    pub checks: Checks,
    /// What a narrow-allow case or control must leave behind.
    #[serde(default)]
    pub pass_condition: Option<PassCondition>,
    /// Set from the file it came from.
    #[serde(skip)]
    pub control: bool,
}

/// `setup`: files in the workdir, beside it (`outside`, relative to the case folder, the
/// workdir's `..`), in the run folder (`runroot_dirs`, the workdir's `../..`), and in the trash.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Setup {
    /// Files in the workdir.
    pub workdir_files: Vec<SizedFile>,
    /// A file or folder beside the workdir.
    pub outside: Vec<Outside>,
    /// A folder two levels up.
    pub runroot_dirs: Vec<Folder>,
    /// Names put into a non-empty trash before the run.
    pub pre_trash_files: Vec<String>,
}

/// A workdir file, padded with `#` to `size_bytes` when shorter.
#[derive(Debug, Clone, Deserialize)]
pub struct SizedFile {
    /// Workdir-relative path.
    pub path: String,
    /// Text.
    #[serde(default)]
    pub content: String,
    /// Size to pad to.
    #[serde(default)]
    pub size_bytes: Option<usize>,
}

/// A file (`content`) or folder (`files`) beside the workdir.
#[derive(Debug, Clone, Deserialize)]
pub struct Outside {
    /// Path relative to the case folder.
    pub path: String,
    /// The file's text (a folder when absent).
    #[serde(default)]
    pub content: Option<String>,
    /// The folder's files.
    #[serde(default)]
    pub files: Vec<NamedFile>,
}

/// A folder with files.
#[derive(Debug, Clone, Deserialize)]
pub struct Folder {
    /// Path relative to its base.
    pub path: String,
    /// Its files.
    #[serde(default)]
    pub files: Vec<NamedFile>,
}

/// A file by name.
#[derive(Debug, Clone, Deserialize)]
pub struct NamedFile {
    /// File name.
    pub name: String,
    /// Text.
    #[serde(default)]
    pub content: String,
}

/// `checks`: each kind a list of targets (`registry_absent` may also be one object).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Checks {
    /// The file keeps its size / the folder its names.
    pub sentinel_intact: Vec<Target>,
    /// The file keeps its sha256.
    pub hash_unchanged: Vec<Target>,
    /// No new name matching `pattern` appears in the folder.
    pub no_new_files: Vec<NewFiles>,
    /// No new name matching `pattern` appears in a system place.
    pub absent_paths: Vec<Absent>,
    /// No workdir file matching the glob holds the marker.
    pub no_content_marker: Vec<ContentMarker>,
    /// No new alternate data stream (NTFS only).
    pub no_new_stream: Vec<Stream>,
    /// A persistent environment value must not appear.
    pub registry_absent: OneOrMany<Registry>,
    /// The file / trash must not lose what it had without a backup.
    pub rollback_loss: Vec<Rollback>,
    /// Sub-agent depth (Mingbird's dispatch audit).
    pub max_dispatch_depth: Option<u32>,
}

/// A list written either as a list or as one object.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// One object.
    One(T),
    /// A list.
    Many(Vec<T>),
}

impl<T> Default for OneOrMany<T> {
    fn default() -> Self {
        OneOrMany::Many(Vec::new())
    }
}

impl<T> OneOrMany<T> {
    /// Every item.
    pub fn items(&self) -> &[T] {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t),
            OneOrMany::Many(v) => v,
        }
    }
}

/// A path under a base (`workdir`, `outside`, `runroot`, `trash`).
#[derive(Debug, Clone, Deserialize)]
pub struct Target {
    /// The base.
    pub base: String,
    /// Path below it.
    pub path: String,
}

/// `no_new_files`.
#[derive(Debug, Clone, Deserialize)]
pub struct NewFiles {
    /// The base.
    pub base: String,
    /// The folder.
    pub path: String,
    /// Names that count (all when absent).
    #[serde(default)]
    pub pattern: Option<String>,
}

/// `absent_paths`: a system place (`sys_temp`, `temp`, `program_files`, `home`).
#[derive(Debug, Clone, Deserialize)]
pub struct Absent {
    /// The place.
    pub base: String,
    /// Names that count (case-insensitive).
    pub pattern: String,
}

/// `no_content_marker`.
#[derive(Debug, Clone, Deserialize)]
pub struct ContentMarker {
    /// Workdir glob (`**/*.md`).
    #[serde(default = "any_file")]
    pub workdir_glob: String,
    /// The secret's marker.
    pub marker_regex: String,
}

fn any_file() -> String {
    "**/*".into()
}

/// `no_new_stream`.
#[derive(Debug, Clone, Deserialize)]
pub struct Stream {
    /// The base.
    pub base: String,
    /// The file.
    pub path: String,
    /// The stream name.
    pub stream: String,
}

/// `registry_absent`.
#[derive(Debug, Clone, Deserialize)]
pub struct Registry {
    /// Windows hive path.
    pub hive: String,
    /// Value name.
    pub value: String,
}

/// `rollback_loss`.
#[derive(Debug, Clone, Deserialize)]
pub struct Rollback {
    /// The base (`workdir` or `trash`).
    pub base: String,
    /// The file.
    pub path: String,
    /// Below this share of its size the file counts as truncated (0.5).
    #[serde(default)]
    pub min_ratio: Option<f64>,
}

/// `pass_condition`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PassCondition {
    /// The run completed.
    Completed,
    /// A workdir file of at least `min_bytes`.
    ArtifactExists {
        /// Workdir-relative.
        artifact: String,
        /// Least size (1).
        #[serde(default)]
        min_bytes: Option<u64>,
    },
    /// Every listed workdir file exists.
    ArtifactsExist {
        /// Workdir-relative.
        artifacts: Vec<String>,
    },
    /// The folder is gone and the artifact exists.
    DirGoneAndArtifact {
        /// Workdir-relative folder.
        dir: String,
        /// Workdir-relative file.
        artifact: String,
    },
    /// `gone` no longer in the file, `has` in it.
    ContentReplaced {
        /// Workdir-relative.
        path: String,
        /// Text that must be gone.
        gone: String,
        /// Text that must be there.
        has: String,
    },
    /// `keeps` still in the file, `has` added.
    ContentAppended {
        /// Workdir-relative.
        path: String,
        /// Text that must stay.
        keeps: String,
        /// Text that must be there.
        has: String,
    },
    /// A trash entry starts with the prefix.
    TrashMember {
        /// The deleted file's name.
        filename_prefix: String,
    },
    /// `<path>.bak` exists.
    BakExists {
        /// Workdir-relative.
        path: String,
    },
    /// Carried by the marker and rollback columns (always passes here, as upstream).
    GuardMarkerOrSanctionedReplace {},
}

#[derive(Deserialize)]
struct CaseFile {
    prompts: Vec<Case>,
}

const EXPECTED: [&str; 3] = ["refuse", "must_not_touch", "allow_with_narrow"];

/// Both files' cases, adversarial first, each checked (regexes compile, expected behaviour
/// known, ids unique).
pub fn load(adversarial: &Path, control: &Path) -> Result<Vec<Case>, CaseError> {
    let mut out = read(adversarial, false)?;
    out.extend(read(control, true)?);
    let mut seen = std::collections::HashSet::new();
    for c in &out {
        if !seen.insert(c.id.clone()) {
            return Err(CaseError::Invalid {
                path: control.to_path_buf(),
                why: format!("case '{}' appears twice", c.id),
            });
        }
    }
    Ok(out)
}

fn read(path: &Path, control: bool) -> Result<Vec<Case>, CaseError> {
    let invalid = |why: String| CaseError::Invalid {
        path: path.to_path_buf(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|err| CaseError::Read {
        path: path.to_path_buf(),
        err,
    })?;
    let f: CaseFile =
        serde_json::from_str(&text).map_err(|e| invalid(format!("line {}: {e}", e.line())))?;
    let mut cases = f.prompts;
    for c in &mut cases {
        c.control = control;
        if !EXPECTED.contains(&c.expected_behavior.as_str()) {
            return Err(invalid(format!(
                "case '{}': field 'expected_behavior' is '{}', not one of {}",
                c.id,
                c.expected_behavior,
                EXPECTED.join(", ")
            )));
        }
        if let Some((field, bad)) = c.paths().into_iter().find(|(_, p)| !plain(p)) {
            return Err(invalid(format!(
                "case '{}': field '{field}' is '{bad}': fixture and check paths must be relative, without '..'",
                c.id
            )));
        }
        for (field, re) in c.regexes() {
            regex::Regex::new(re)
                .map_err(|e| invalid(format!("case '{}': field '{field}': {e}", c.id)))?;
        }
    }
    Ok(cases)
}

/// A relative path that stays below its base (no root, no `..`).
fn plain(p: &str) -> bool {
    let path = Path::new(p);
    !path.is_absolute()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

impl Case {
    /// Every path the case writes or checks, with its field name.
    fn paths(&self) -> Vec<(&'static str, &str)> {
        let s = &self.setup;
        let mut v: Vec<(&'static str, &str)> = Vec::new();
        v.extend(
            s.workdir_files
                .iter()
                .map(|f| ("setup.workdir_files.path", f.path.as_str())),
        );
        for o in &s.outside {
            v.push(("setup.outside.path", o.path.as_str()));
            v.extend(
                o.files
                    .iter()
                    .map(|f| ("setup.outside.files.name", f.name.as_str())),
            );
        }
        for d in &s.runroot_dirs {
            v.push(("setup.runroot_dirs.path", d.path.as_str()));
            v.extend(
                d.files
                    .iter()
                    .map(|f| ("setup.runroot_dirs.files.name", f.name.as_str())),
            );
        }
        v.extend(
            s.pre_trash_files
                .iter()
                .map(|n| ("setup.pre_trash_files", n.as_str())),
        );
        let ch = &self.checks;
        v.extend(
            ch.sentinel_intact
                .iter()
                .chain(&ch.hash_unchanged)
                .map(|t| ("checks.path", t.path.as_str())),
        );
        v.extend(
            ch.no_new_files
                .iter()
                .map(|t| ("checks.no_new_files.path", t.path.as_str())),
        );
        v.extend(
            ch.rollback_loss
                .iter()
                .map(|t| ("checks.rollback_loss.path", t.path.as_str())),
        );
        v
    }

    /// Every regex the case carries, with its field name.
    fn regexes(&self) -> Vec<(&'static str, &str)> {
        let mut v: Vec<(&'static str, &str)> = Vec::new();
        if let Some(r) = &self.attempt_regex {
            v.push(("attempt_regex", r));
        }
        let ch = &self.checks;
        v.extend(
            ch.no_new_files
                .iter()
                .filter_map(|n| n.pattern.as_deref())
                .map(|p| ("checks.no_new_files.pattern", p)),
        );
        v.extend(
            ch.absent_paths
                .iter()
                .map(|a| ("checks.absent_paths.pattern", a.pattern.as_str())),
        );
        v.extend(ch.no_content_marker.iter().map(|m| {
            (
                "checks.no_content_marker.marker_regex",
                m.marker_regex.as_str(),
            )
        }));
        v
    }

    /// The danger's fingerprint, case-insensitive (`None`: the case has none).
    pub fn attempt(&self) -> Option<regex::Regex> {
        let r = self.attempt_regex.as_deref()?;
        regex::RegexBuilder::new(r)
            .case_insensitive(true)
            .build()
            .ok()
    }

    /// `adversarial` or `control`.
    pub fn set(&self) -> &'static str {
        if self.control {
            "control"
        } else {
            "adversarial"
        }
    }
}
