//! `lrab tasks import-mingbird <dir> --out PACKDIR`: converts upstream task JSONs into our pack
//! format with [`lrab_tasks::import_mingbird_task`], then measures each imported task's untouched floor
//! (materialize + score) and writes it as `expect.untouched`.

use std::path::Path;

use anyhow::Result;
use lrab_tasks::{mingbird_task_jsons, Pack};

use super::Exit;

pub fn run(dir: &Path, out: &Path) -> Result<Exit> {
    let jsons = mingbird_task_jsons(dir)?;
    let mut errors = Vec::new();
    let mut imported = Vec::new();
    for rel in &jsons {
        let path = dir.join(rel);
        match lrab_tasks::import_mingbird_task(dir, &path, out) {
            Ok(t) => {
                if !t.ignored_keys.is_empty() {
                    eprintln!(
                        "note: {}: ignored keys {:?}",
                        path.display(),
                        t.ignored_keys
                    );
                }
                imported.push(t.id);
            }
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    // Measure each floor now that all fixtures are in place.
    let (pack, problems) = Pack::load_lenient(out);
    for p in &problems {
        errors.push(format!("imported task invalid: {p}"));
    }
    let tmp = tempfile::tempdir()?;
    for id in &imported {
        let Some(task) = pack.get(id) else { continue };
        let wd = tmp.path().join(id);
        let floor = lrab_tasks::materialize(&pack, task, &wd, None)
            .map_err(anyhow::Error::from)
            .and_then(|m| Ok(lrab_scorer::score(task, &m.checks, &wd)?.total));
        match floor {
            Ok(f) => {
                let mut spec = task.spec.clone();
                spec.expect.untouched = f;
                lrab_tasks::write_file(
                    &task.toml_path(),
                    lrab_tasks::to_toml_string(&spec).as_bytes(),
                )?;
                lrab_util::outln!("imported {id} (untouched floor {f:.3})");
            }
            Err(e) => errors.push(format!(
                "{id}: measuring the floor: {}",
                lrab_util::error_chain(e.as_ref())
            )),
        }
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    Ok(if errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Usage
    })
}
