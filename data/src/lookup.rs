//! Where a data file is found, in one order for every command and test: `LRAB_DATA` (a folder
//! laid out like `../shared/data`) when set — it then stands in for `../shared/data` —, else
//! `../shared/data` beside the checkout; then the figures carried in the repository's `data/`;
//! then the per-user cache that `lrab data fetch` fills. A file found with the wrong sha256 is
//! refused, never read.

use crate::catalogue::{self, DataFile};
use crate::DataError;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One place a data file may be found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    /// How the place is named to a user (`LRAB_DATA=/x`, `../shared/data`, …).
    pub label: String,
    /// The folder laid out like `../shared/data`.
    pub dir: PathBuf,
}

/// The repository's carried data folder (this crate's own folder).
pub fn carried_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The per-user cache: `LRAB_DATA_CACHE`, else `$XDG_CACHE_HOME/lrab/data`, else
/// `~/.cache/lrab/data` (never inside the repository).
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("LRAB_DATA_CACHE").filter(|d| !d.is_empty()) {
        return d.into();
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Path::new(&x).join("lrab/data");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    Path::new(&home).join(".cache/lrab/data")
}

/// The places searched, in order.
pub fn roots() -> Vec<Root> {
    let first = match std::env::var_os("LRAB_DATA").filter(|d| !d.is_empty()) {
        Some(d) => Root {
            label: format!("LRAB_DATA={}", Path::new(&d).display()),
            dir: d.into(),
        },
        None => Root {
            label: "../shared/data".into(),
            dir: carried_dir().join("../../shared/data"),
        },
    };
    let cache = cache_dir();
    vec![
        first,
        Root {
            label: "the repository's data/".into(),
            dir: carried_dir(),
        },
        Root {
            label: format!("the cache {}", cache.display()),
            dir: cache,
        },
    ]
}

/// The path of catalogue file `path` (e.g. `mingbird/lrab_scores.csv`), its digest checked.
pub fn file(path: &str) -> Result<PathBuf, DataError> {
    let entry = catalogue::entry(path).ok_or_else(|| DataError::Unknown(path.into()))?;
    find(entry, &roots())
}

/// The folder `dir` (e.g. `tau2`) of the first root that holds every fetched file below it,
/// all digests checked: sets read together (the τ² domains, the safety prompts) come from one
/// place.
pub fn folder(dir: &str) -> Result<PathBuf, DataError> {
    let files: Vec<&DataFile> = catalogue::fetched_in(dir).collect();
    if files.is_empty() {
        return Err(DataError::Unknown(dir.into()));
    }
    let roots = roots();
    // The file to name when no place is complete: the first one missing from the place that
    // lacks the fewest (a cache that `lrab data fetch` half filled names what it could not get).
    let mut closest: Option<(usize, &DataFile)> = None;
    for root in &roots {
        let absent: Vec<&DataFile> = files
            .iter()
            .copied()
            .filter(|f| !root.dir.join(f.path).is_file())
            .collect();
        let Some(first) = absent.first() else {
            for f in &files {
                verify(&root.dir.join(f.path), f)?;
            }
            return Ok(root.dir.join(dir));
        };
        if closest.is_none_or(|(n, _)| absent.len() < n) {
            closest = Some((absent.len(), first));
        }
    }
    Err(missing(closest.map_or(files[0], |(_, f)| f), &roots))
}

/// The first root holding `entry`, its digest checked.
pub fn find(entry: &DataFile, roots: &[Root]) -> Result<PathBuf, DataError> {
    for root in roots {
        let p = root.dir.join(entry.path);
        if p.is_file() {
            verify(&p, entry)?;
            return Ok(p);
        }
    }
    Err(missing(entry, roots))
}

fn missing(entry: &DataFile, roots: &[Root]) -> DataError {
    let places: Vec<&str> = roots.iter().map(|r| r.label.as_str()).collect();
    let how = if entry.is_fetched() {
        "; `lrab data fetch` gets it from where it is published"
    } else {
        "; it is carried in the repository's data/ — is this checkout complete?"
    };
    DataError::Missing {
        file: entry.path.into(),
        why: format!("not in {}{how}", places.join(", ")),
    }
}

/// Refuse `path` unless its sha256 is the catalogue's (checked once per process for a file of
/// the same path, size and modification time).
pub fn verify(path: &Path, entry: &DataFile) -> Result<(), DataError> {
    type Seen = HashSet<(PathBuf, u64, Option<std::time::SystemTime>)>;
    static SEEN: Mutex<Option<Seen>> = Mutex::new(None);
    let key = std::fs::metadata(path)
        .map(|m| (path.to_path_buf(), m.len(), m.modified().ok()))
        .map_err(|err| DataError::Io {
            path: path.to_path_buf(),
            err,
        })?;
    let seen = |s: &Option<Seen>| s.as_ref().is_some_and(|s| s.contains(&key));
    if SEEN.lock().map(|s| seen(&s)).unwrap_or(false) {
        return Ok(());
    }
    let actual = crate::digest::file_sha256(path)?;
    if actual != entry.sha256 {
        return Err(DataError::Digest {
            file: path.to_path_buf(),
            expected: entry.sha256.into(),
            actual,
        });
    }
    if let Ok(mut s) = SEEN.lock() {
        s.get_or_insert_with(HashSet::new).insert(key);
    }
    Ok(())
}
