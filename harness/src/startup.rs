//! Start-up checks of the binary's surroundings, before any backend is contacted or anything
//! is written: a workdir that is a symbolic link (its target could be anywhere, and the file
//! tools hold the workdir open without following links), a workdir that cannot be written (a
//! read-only filesystem), and a `HOME` that does not exist (its credential files are what the
//! sandbox hides; a wrong `HOME` would hide nothing).

use std::path::{Path, PathBuf};

/// Exit code of a workdir that cannot be used (missing, unwritable, a link).
pub const EXIT_WORKDIR: i32 = 4;
/// Exit code for a `HOME` that does not exist or is not a directory.
pub const EXIT_HOME: i32 = 10;

/// Why the binary's surroundings cannot be used (each message one line).
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("workdir '{}' is not writable: {why}", workdir.display())]
    NotWritable { workdir: PathBuf, why: String },
    #[error("workdir '{}': {err}", workdir.display())]
    Unreadable {
        workdir: PathBuf,
        err: std::io::Error,
    },
    #[error("workdir '{}' is a symbolic link (to '{target}'); pass the real folder", workdir.display())]
    Symlink { workdir: PathBuf, target: String },
    #[error("HOME '{}' does not exist or is not a directory; set HOME to your home folder (its credential files are what model-chosen commands are kept from)", home.display())]
    BadHome { home: PathBuf },
}

impl StartupError {
    /// The exit code the binary ends with ([`EXIT_WORKDIR`], [`EXIT_HOME`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            StartupError::BadHome { .. } => EXIT_HOME,
            _ => EXIT_WORKDIR,
        }
    }
}

/// Both checks; the first that fails is the error.
pub fn check(workdir: &Path) -> Result<(), StartupError> {
    check_workdir(workdir)?;
    check_home(std::env::var_os("HOME").as_deref())
}

/// Why the workdir cannot be used, or `Ok`. The writability probe comes first, so a link to a
/// folder that cannot be written is reported as not writable.
pub fn check_workdir(wd: &Path) -> Result<(), StartupError> {
    probe_writable(wd).map_err(|why| StartupError::NotWritable {
        workdir: wd.to_path_buf(),
        why,
    })?;
    let meta = wd
        .symlink_metadata()
        .map_err(|err| StartupError::Unreadable {
            workdir: wd.to_path_buf(),
            err,
        })?;
    if meta.file_type().is_symlink() {
        let target = wd
            .canonicalize()
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(StartupError::Symlink {
            workdir: wd.to_path_buf(),
            target,
        });
    }
    Ok(())
}

/// Create and remove a probe file (exclusively, under a name of this process).
fn probe_writable(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!(".lrab-write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.raw_os_error() == Some(libc::EROFS) => Err("read-only filesystem".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A `HOME` that is set must be an existing directory (unset or empty: the default applies).
pub fn check_home(home: Option<&std::ffi::OsStr>) -> Result<(), StartupError> {
    let Some(h) = home.filter(|h| !h.is_empty()) else {
        return Ok(());
    };
    let p = Path::new(h);
    if p.is_dir() {
        return Ok(());
    }
    Err(StartupError::BadHome {
        home: p.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinked_workdir_and_missing_home_are_named() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("link")).unwrap();
        assert!(check_workdir(&real).is_ok());
        let e = check_workdir(&d.path().join("link")).unwrap_err();
        assert_eq!(e.exit_code(), EXIT_WORKDIR);
        let e = e.to_string();
        assert!(e.contains("symbolic link") && e.contains("real"), "{e}");
        assert_eq!(
            std::fs::read_dir(&real).unwrap().count(),
            0,
            "no probe left"
        );
        assert!(check_home(None).is_ok());
        assert!(check_home(Some(d.path().as_os_str())).is_ok());
        let e = check_home(Some(d.path().join("nope").as_os_str())).unwrap_err();
        assert_eq!(e.exit_code(), EXIT_HOME);
        let e = e.to_string();
        assert!(e.starts_with("HOME '") && e.contains("nope"), "{e}");
    }
}
