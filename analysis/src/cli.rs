//! `lrab analyze <input>... --out <dir>`: the command-line entry point (wired into the `lrab`
//! binary by the runner crate; `examples/analyze.rs` runs it standalone).

use crate::analysis::{analyze, Config};
use crate::error::{Error, Result};
use crate::load::{LoadOptions, TimeoutPolicy};
use crate::report::{markdown, markdown_to_html, tables_markdown, Provenance};
use crate::rng::RngKind;
use std::path::{Path, PathBuf};

/// Arguments of `lrab analyze`.
#[derive(Clone, Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// Input files: our cells.csv (or a run folder holding one), the published per-cell,
    /// annotation and ablation CSVs (long and wide repeat layouts), τ² manifests (*.json) or τ²
    /// result CSVs; the format is detected from the header (docs/statistics.md, "Inputs").
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output directory for paper.md (the paper's tables and figures in its order), report.md,
    /// report.html, cells/ (one page per attempt), analysis.json, figures/ and, for Mingbird
    /// arms, mechanism_activation.csv.
    #[arg(long)]
    pub out: PathBuf,
    /// Arm compared against all others (default: `harness`, else `Mingbird`, else the first).
    #[arg(long)]
    pub focal: Option<String>,
    /// Bootstrap and permutation iterations.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Seed of the per-model bootstrap CIs and base of the tier-cluster seeds.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Seed of the pooled overall comparison.
    #[arg(long, default_value_t = 2609)]
    pub pooled_seed: u64,
    /// Base seed of the stratified sign-flip permutations.
    #[arg(long, default_value_t = 20_260_920)]
    pub perm_seed: u64,
    /// Random source: `chacha` (default) or `cpython` (bit-exact CPython `random`, reproduces
    /// upstream's published intervals).
    #[arg(long, value_enum, default_value_t = RngKind::Chacha)]
    pub rng: RngKind,
    /// Also compute, for every ablation, the repeats and tasks needed to detect a delta of D
    /// (score units, e.g. 0.05) at 80 % power.
    #[arg(long, value_name = "D")]
    pub power: Option<f64>,
    /// What a timed-out cell without a score counts as: `zero` (the protocol) or `exclude`
    /// (left out, as the published frontier-probe means are).
    #[arg(long, value_enum, default_value_t = TimeoutPolicy::Zero)]
    pub timeouts: TimeoutPolicy,
    /// Skip the figures (tables and report only).
    #[arg(long)]
    pub no_figures: bool,
    /// Do not print the summary tables to stdout.
    #[arg(long)]
    pub quiet: bool,
    /// Also write the inputs' cells in the published frontier probe's format
    /// (`frontier_probe_scores.csv`: arm,task,score,failure_mode,wall_seconds) to this file.
    #[arg(long, value_name = "CSV")]
    pub probe_out: Option<PathBuf>,
    /// Compare the inputs' cells (one model) with this published frontier probe file: per-arm
    /// means, per task, missing cells (printed and written to probe_comparison.md).
    #[arg(long, value_name = "CSV")]
    pub probe_compare: Option<PathBuf>,
    /// Print the wall time of each phase (load, statistics, figures, report) to stderr.
    #[arg(long)]
    pub timings: bool,
}

impl AnalyzeArgs {
    /// Defaults for the given inputs and output directory.
    pub fn new(inputs: Vec<PathBuf>, out: PathBuf) -> Self {
        AnalyzeArgs {
            inputs,
            out,
            focal: None,
            resamples: 10_000,
            seed: 42,
            pooled_seed: 2609,
            perm_seed: 20_260_920,
            rng: RngKind::Chacha,
            power: None,
            timeouts: TimeoutPolicy::Zero,
            no_figures: false,
            probe_out: None,
            probe_compare: None,
            quiet: false,
            timings: false,
        }
    }
}

/// Writes a report file atomically and durably ([`lrab_util::write_atomic`]), so an interrupted
/// run never leaves a half-written report over a good one.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    lrab_util::write_atomic(path, bytes).map_err(|e| Error::io(path.display(), "cannot write", e))
}

/// What `run` produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The summary printed to stdout (Markdown tables).
    pub summary: String,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// Run the analysis: load, compute, draw, write report.md / report.html / analysis.json.
/// All input is validated before anything is written.
pub fn run(args: &AnalyzeArgs) -> Result<Outcome> {
    let expanded = AnalyzeArgs {
        inputs: expand_inputs(&args.inputs)?,
        ..args.clone()
    };
    let args = &expanded;
    check_args(args)?;
    let t0 = std::time::Instant::now();
    let ds = crate::load::load_with(
        &args.inputs,
        &LoadOptions {
            timeouts: args.timeouts,
        },
    )?;
    let probe = probe_outputs(args)?;
    let t_load = t0.elapsed();
    if ds.cells.is_empty() && ds.tau.is_empty() && ds.ablations.is_empty() {
        return Err(Error::Input("no data rows in the inputs".into()));
    }
    let t1 = std::time::Instant::now();
    let a = analyze(&ds, &config(args))?;
    if args.power.is_some() && a.ablations.is_empty() {
        return Err(Error::Design(
            "--power needs an ablation in the inputs (a variant arm `<arm>-no-<mechanism>` with \
             its baseline, or a published ablation file); none was found"
                .into(),
        ));
    }
    let t_stats = t1.elapsed();
    let t2 = std::time::Instant::now();
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::io(args.out.display(), "cannot create output directory", e))?;
    let mut files = Vec::new();
    let (figures, svgs) = if args.no_figures {
        (Vec::new(), Vec::new())
    } else {
        write_figures(&ds, &a, &args.out, &mut files)?
    };
    let t_figs = t2.elapsed();
    let t3 = std::time::Instant::now();
    let pages = crate::report::cell_pages(&ds.cells, &ds.scorer_errors);
    let prov = Provenance {
        sources: ds.sources.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        figures,
        cells_index: crate::report::cells_index(&ds.cells, &pages),
        activation: crate::report::activation_markdown(&ds.cells),
    };
    let md = markdown(&a, &prov);
    let paper = paper_report(&ds, &a, &prov);
    let html = markdown_to_html(&md, &svgs);
    let json = serde_json::to_string_pretty(&a)
        .map_err(|e| Error::Output(format!("serialising analysis: {e}")))?;
    write_cell_pages(&args.out, &pages, &mut files)?;
    if let Some(csv) = crate::report::activation_csv(&ds.cells) {
        let p = args.out.join("mechanism_activation.csv");
        write_atomic(&p, csv.as_bytes())?;
        files.push(p);
    }
    for (name, body) in [
        ("paper.md", paper.as_bytes()),
        ("report.md", md.as_bytes()),
        ("report.html", html.as_bytes()),
        ("analysis.json", json.as_bytes()),
    ] {
        let p = args.out.join(name);
        write_atomic(&p, body)?;
        files.push(p);
    }
    let mut summary = tables_markdown(&a);
    files.extend(write_probe(args, probe, &mut summary)?);
    if args.timings {
        eprintln!(
            "timings: load {:.3} s, statistics {:.3} s, figures {:.3} s, report {:.3} s, total {:.3} s ({} cells, {} cell pages)",
            t_load.as_secs_f64(),
            t_stats.as_secs_f64(),
            t_figs.as_secs_f64(),
            t3.elapsed().as_secs_f64(),
            t0.elapsed().as_secs_f64(),
            ds.cells.len(),
            pages.len()
        );
    }
    if !args.quiet {
        print_summary(args, &a, &summary, &paper);
    }
    Ok(Outcome { summary, files })
}

/// Usage errors found in the arguments alone, before any input is read.
fn check_args(args: &AnalyzeArgs) -> Result<()> {
    if args.resamples == 0 {
        return Err(Error::Usage("--resamples must be at least 1".into()));
    }
    if let Some(d) = args.power {
        if !(d > 0.0 && d <= 1.0) {
            return Err(Error::Usage(format!(
                "--power {d}: the delta must be in (0, 1] (score units)"
            )));
        }
    }
    Ok(())
}

/// The statistics' configuration the arguments ask for.
fn config(args: &AnalyzeArgs) -> Config {
    Config {
        focal: args.focal.clone(),
        resamples: args.resamples,
        seed: args.seed,
        pooled_seed: args.pooled_seed,
        perm_seed: args.perm_seed,
        rng: args.rng,
        power_delta: args.power,
        timeouts: args.timeouts,
        ..Config::default()
    }
}

/// A figure for the report: its path relative to the output folder, and its caption.
type FigureRef = (String, String);
/// A figure's path relative to the output folder, and its SVG text to inline in report.html.
type InlineSvg = (String, String);

/// Draws the figures into `<out>/figures` (SVG and PNG, both pushed onto `files`); returns
/// their captions for the report and their SVG text for report.html.
fn write_figures(
    ds: &crate::model::Dataset,
    a: &crate::Analysis,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<(Vec<FigureRef>, Vec<InlineSvg>)> {
    let fig_dir = out.join("figures");
    std::fs::create_dir_all(&fig_dir)
        .map_err(|e| Error::io(fig_dir.display(), "cannot create", e))?;
    let walls: Vec<(String, Vec<f64>)> = a
        .arms
        .iter()
        .map(|arm| {
            (
                arm.clone(),
                ds.cells
                    .iter()
                    .filter(|c| &c.arm == arm)
                    .filter_map(|c| c.wall_seconds)
                    .collect(),
            )
        })
        .collect();
    let mut figures = Vec::new();
    let mut svgs = Vec::new();
    for (stem, caption, svg) in crate::figures::draw_all(a, &walls, &fig_dir)? {
        let rel = format!("figures/{stem}.svg");
        files.push(fig_dir.join(format!("{stem}.svg")));
        files.push(fig_dir.join(format!("{stem}.png")));
        figures.push((rel.clone(), caption));
        svgs.push((rel, svg));
    }
    Ok((figures, svgs))
}

/// Writes one HTML page per cell under `<out>/cells` and removes stale pages there.
fn write_cell_pages(
    out: &Path,
    pages: &[crate::report::CellPage],
    files: &mut Vec<PathBuf>,
) -> Result<()> {
    let cells_dir = out.join("cells");
    if !pages.is_empty() {
        std::fs::create_dir_all(&cells_dir)
            .map_err(|e| Error::io(cells_dir.display(), "cannot create", e))?;
        for p in pages {
            let path = out.join(&p.rel);
            write_atomic(&path, p.html.as_bytes())?;
            files.push(path);
        }
    }
    // Pages of an earlier analysis into this folder whose cells are gone would be linked from
    // nowhere and contradict this report: only this run's pages stay.
    if let Ok(rd) = std::fs::read_dir(&cells_dir) {
        for e in rd.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "html") && !files.contains(&path) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    Ok(())
}

/// Prints the summary tables, the caveats, what paper.md could not compute, and where it all went.
fn print_summary(args: &AnalyzeArgs, a: &crate::Analysis, summary: &str, paper: &str) {
    lrab_util::out!("{summary}");
    for c in &a.caveats {
        lrab_util::outln!("caveat: {c}");
    }
    for line in not_computed(paper) {
        lrab_util::outln!("{line}");
    }
    lrab_util::outln!("wrote {}", args.out.display());
}

/// paper.md: the report's sections in the paper's order, each marked by where it came from.
fn paper_report(ds: &crate::model::Dataset, a: &crate::Analysis, prov: &Provenance) -> String {
    use crate::failure_forms::SourceKind;
    let forms = |k: SourceKind| ds.forms.iter().any(|s| s.kind == k && !s.cells.is_empty());
    let origins = crate::report::Origins::of(
        &ds.sources,
        forms(SourceKind::Run),
        forms(SourceKind::Published),
    );
    let body = format!("{}{}", tables_markdown(a), prov.activation);
    crate::report::paper_markdown(&body, &prov.figures, &origins)
}

/// One line per item of paper.md's index that could not be computed, with the reason.
fn not_computed(paper: &str) -> Vec<String> {
    paper
        .lines()
        .filter(|l| l.starts_with("| "))
        .filter_map(|l| {
            let f: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let why = f.get(3)?.strip_prefix("not computed: ")?;
            Some(format!(
                "paper.md item {} ({}: {}) not computed: {why}",
                f[0], f[1], f[2]
            ))
        })
        .collect()
}

/// Inputs with every run folder replaced by its `cells.csv` (`lrab analyze results/<run>`).
fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    inputs
        .iter()
        .map(|p| {
            if !p.is_dir() {
                return Ok(p.clone());
            }
            let cells = p.join("cells.csv");
            if cells.is_file() {
                Ok(cells)
            } else {
                Err(Error::Input(format!(
                    "{}: a folder given as input must be a run folder with a cells.csv",
                    p.display()
                )))
            }
        })
        .collect()
}

/// The probe CSV and the comparison Markdown, when asked for (computed before anything is
/// written, so bad input loses nothing).
fn probe_outputs(args: &AnalyzeArgs) -> Result<(Option<String>, Option<String>)> {
    use crate::frontier_probe as fp;
    if args.probe_out.is_none() && args.probe_compare.is_none() {
        return Ok((None, None));
    }
    let rows = fp::rows_from_inputs(&args.inputs)?;
    let csv = args.probe_out.as_ref().map(|_| fp::to_csv(&rows.rows));
    let cmp = match &args.probe_compare {
        Some(p) => {
            let published = fp::rows_from_inputs(std::slice::from_ref(p))?;
            Some(fp::markdown(&fp::compare(&rows, &published)))
        }
        None => None,
    };
    Ok((csv, cmp))
}

/// Write what [`probe_outputs`] made; the comparison is appended to the printed summary.
fn write_probe(
    args: &AnalyzeArgs,
    (csv, cmp): (Option<String>, Option<String>),
    summary: &mut String,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if let (Some(p), Some(csv)) = (&args.probe_out, csv) {
        write_atomic(p, csv.as_bytes())?;
        files.push(p.clone());
    }
    if let Some(md) = cmp {
        let p = args.out.join("probe_comparison.md");
        write_atomic(&p, md.as_bytes())?;
        files.push(p);
        summary.push('\n');
        summary.push_str(&md);
    }
    Ok(files)
}
