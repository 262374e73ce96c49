//! The `archive` install kind: a release archive downloaded from its URL (`curl`), checked
//! against the sha256 the arm file pins before anything of it is unpacked (`tar`, which reads
//! gzip, bzip2 and xz), into the install folder. An arm file without a digest is refused: an
//! archive is never installed unchecked.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::command::{fail, run_step, Failure};
use super::InstallSpec;

/// Downloads, checks and unpacks the archive of `spec` into `dir`; `arm` names the arm.
pub(super) fn fetch_and_unpack(
    arm: &str,
    spec: &InstallSpec,
    dir: &Path,
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let url = spec.url.clone().unwrap_or_default();
    let Some(want) = spec.sha256.clone() else {
        return Err(fail(
            "check the arm file",
            format!(
                "arm {arm}: install.sha256: missing — no published digest for {url} is pinned, and an archive is never installed unchecked (add the sha256 its project publishes)"
            ),
        ));
    };
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(|e| fail("create cache folder", e.to_string()))?;
    let name = url.rsplit('/').next().unwrap_or("archive").to_string();
    let download = parent.join(format!(".{}.download", spec.dir_name()));
    let step = format!("download {url}");
    say(&step);
    let _ = std::fs::remove_file(&download);
    let argv: [OsString; 8] = [
        "curl".into(),
        "--fail".into(),
        "--location".into(),
        "--silent".into(),
        "--show-error".into(),
        "--output".into(),
        download.clone().into(),
        url.clone().into(),
    ];
    run_step(log, &argv, parent, &[]).map_err(|e| fail(&step, e))?;
    let step = "check the archive's sha256";
    say(step);
    let bytes = std::fs::read(&download).map_err(|e| fail(step, e.to_string()))?;
    let got = lrab_util::sha256_hex(&bytes);
    if got != want {
        let _ = std::fs::remove_file(&download);
        return Err(fail(
            step,
            format!(
                "arm {arm}: install.sha256: {name} from {url} has sha256 {got}, expected {want} — refused"
            ),
        ));
    }
    let _ = writeln!(log, "{name}: {} bytes, sha256 {got} ok", bytes.len());
    let step = format!("unpack {name}");
    say(&step);
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| fail(&step, e.to_string()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(&step, e.to_string()))?;
    let argv: [OsString; 5] = [
        "tar".into(),
        "-xf".into(),
        download.clone().into(),
        "-C".into(),
        dir.to_path_buf().into(),
    ];
    let r = run_step(log, &argv, parent, &[]).map_err(|e| fail(&step, e));
    let _ = std::fs::remove_file(&download);
    r
}
