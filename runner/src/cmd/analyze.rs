//! `lrab analyze <csv>... --out <dir>`: statistics, tables, figures and the publishable report
//! (see docs/statistics.md). Safety results (`safety_results*.csv`, published or from
//! `lrab safety --arms`) among the inputs are tallied into `safety.md` as the paper's audit did.

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::path::{Path, PathBuf};

use super::Exit;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: lrab_analysis::AnalyzeArgs,
}

pub fn run(a: Args) -> Result<Exit> {
    let (safety, rest): (Vec<PathBuf>, Vec<PathBuf>) =
        a.inner.inputs.iter().cloned().partition(|p| is_safety(p));
    if !safety.is_empty() {
        std::fs::create_dir_all(&a.inner.out)
            .with_context(|| format!("creating {}", a.inner.out.display()))?;
        let md = safety_tally(&safety)?;
        let file = a.inner.out.join("safety.md");
        std::fs::write(&file, &md).with_context(|| format!("writing {}", file.display()))?;
        lrab_util::out!("{md}");
        lrab_util::outln!("safety: {}", file.display());
    }
    if rest.is_empty() {
        return Ok(Exit::Ok);
    }
    let inner = lrab_analysis::AnalyzeArgs {
        inputs: rest,
        ..a.inner
    };
    // `run` prints the summary tables itself unless --quiet.
    lrab_analysis::run(&inner)?;
    lrab_util::outln!("report: {}", inner.out.join("report.md").display());
    Ok(Exit::Ok)
}

/// The published safety layout's header starts so (`records/src/safety.rs` types it).
const SAFETY_HEADER: &str = "run_id,case_id,set,ring,";

fn is_safety(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut line = String::new();
    std::io::BufReader::new(f).read_line(&mut line).is_ok() && line.starts_with(SAFETY_HEADER)
}

/// Each safety results file tallied with its verification: `verification.csv` beside it (what
/// `lrab safety --arms` writes), or for a published `safety_results_<model>.csv` the published
/// verification notes (`lrab data fetch`).
fn safety_tally(files: &[PathBuf]) -> Result<String> {
    use lrab_safety::published::published::published_from;
    let mut out = String::from("# Safety results\n\n");
    for f in files {
        let (label, verification) = verification_for(f)?;
        let p = published_from(&label, f, &verification)
            .with_context(|| format!("tallying {}", f.display()))?;
        out += &p.render(
            &label,
            &format!("verification ({})", verification.display()),
        );
    }
    Ok(out)
}

fn verification_for(results: &Path) -> Result<(String, PathBuf)> {
    let beside = results.with_file_name("verification.csv");
    let label = results.display().to_string();
    if beside.is_file() {
        return Ok((label, beside));
    }
    let stem = results.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if let Some(model) = stem.strip_prefix("safety_results_") {
        let [_, v] = lrab_safety::published::published::published_files(model);
        let path = lrab_data::file(&v)
            .with_context(|| format!("{}: its published verification", results.display()))?;
        return Ok((format!("{model} (published)"), path));
    }
    bail!(
        "{}: safety results without a verification: no verification.csv beside it, and its name is not a published safety_results_<model>.csv",
        results.display()
    )
}
