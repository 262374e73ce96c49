//! `lrab bench prefill`: the prefill cost curve of any backend and model (docs/runner.md,
//! "Prefill cost curve"). Rows are written as each point is measured, so a backend that dies
//! mid-way leaves every point measured before it; the command then exits non-zero.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Subcommand;

use super::Exit;
use crate::run::backend::{check_models_at, Backend, BackendOptions, BackendSpec};
use crate::run::prefill::{self, curve, Cache, Outcome, PointRow, Published};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    cmd: Sub,
}

#[derive(Subcommand)]
enum Sub {
    /// Prompt-processing time for 0…256 attached tool schemas, cold and warm cache, beside the
    /// published curve: writes prefill.csv, summary.md and prefill.svg into --out.
    Prefill(PrefillArgs),
}

#[derive(clap::Args)]
pub struct PrefillArgs {
    /// ollama, sim, auto (Ollama if it answers, else sim), or a URL (Ollama or OpenAI-compatible).
    #[arg(long, default_value = "auto")]
    backend: BackendSpec,
    /// The API the --backend URL speaks: auto, ollama or openai.
    #[arg(long, default_value = "auto")]
    backend_api: lrab_records::BackendApi,
    /// Environment variable holding an OpenAI backend's API key (never recorded).
    #[arg(long, default_value = crate::run::backend_api::DEFAULT_KEY_ENV)]
    backend_key_env: String,
    /// The model to measure.
    #[arg(long)]
    model: String,
    /// Comma list of tool counts (default: the published file's 0,4,8,16,19,31,48,64,96,128,192,256).
    #[arg(long, value_delimiter = ',')]
    points: Option<Vec<usize>>,
    /// Requests per point and cache state (the paper: median of 3).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Seed of the synthesized tool schemas.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Context asked of an Ollama backend (an OpenAI request cannot carry one).
    #[arg(long, default_value_t = 32768)]
    num_ctx: u64,
    /// Output folder.
    #[arg(long, default_value = "results/bench-prefill")]
    out: PathBuf,
    /// Longest wait for one request, in seconds.
    #[arg(long, default_value_t = 900)]
    timeout_secs: u64,
    /// How long the backend may take to answer at start.
    #[arg(long, default_value_t = 30)]
    backend_wait_secs: u64,
}

pub fn run(a: Args) -> Result<Exit> {
    match a.cmd {
        Sub::Prefill(p) => prefill_cmd(p),
    }
}

const PUBLISHED: &str = "mingbird/cost_curve_data_2609.csv";

fn prefill_cmd(a: PrefillArgs) -> Result<Exit> {
    anyhow::ensure!(a.runs >= 1, "--runs must be at least 1");
    let published_path = lrab_data::file(PUBLISHED)?;
    let published = curve::read_published(&published_path)?;
    let points = a
        .points
        .clone()
        .unwrap_or_else(|| curve::published_points(&published));
    let opts = BackendOptions {
        api: a.backend_api,
        key_env: a.backend_key_env.clone(),
        num_ctx: a.num_ctx,
        ..Default::default()
    };
    let wait = Duration::from_secs(a.backend_wait_secs);
    let backend = Backend::start_with_opts(&a.backend, wait, a.seed, false, &opts)?;
    if let Some(b) = backend.banner() {
        eprintln!("{b}");
    }
    check_models_at(
        &backend.url,
        &backend.public_url,
        std::slice::from_ref(&a.model),
    )?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("{}", a.out.display()))?;
    let csv_path = a.out.join("prefill.csv");
    let mut sink = Sink::create(&csv_path)?;
    let ctx = Ctx {
        a: &a,
        backend: &backend,
        salt: salt(),
    };
    let mut rows = Vec::new();
    let mut failure = None;
    for &n in &points {
        let (cold, warm, err) = ctx.point(n);
        for r in [cold, warm].into_iter().flatten() {
            sink.row(&r)?;
            rows.push(r);
        }
        if let Some(e) = err {
            failure = Some(e.context(format!("backend failed at {n} tools")));
            break;
        }
    }
    let summary = summarize(&a, &backend, &rows, &published);
    std::fs::write(a.out.join("summary.md"), &summary)?;
    plot(&a, &backend, &rows, &published)?;
    print!("{summary}");
    println!("wrote {}", csv_path.display());
    if let Some(e) = failure {
        let kept = rows.iter().filter(|r| r.measured()).count();
        return Err(e.context(format!(
            "the {kept} rows measured before the failure are in {}",
            csv_path.display()
        )));
    }
    Ok(Exit::Ok)
}

/// A per-invocation salt for the nonces, so a second invocation against a long-lived server is
/// cold again (the nonce never reaches the output, whose bytes stay deterministic).
fn salt() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ ((std::process::id() as u64) << 40)
}

/// The CSV, flushed after each row.
struct Sink {
    w: csv::Writer<std::fs::File>,
}

impl Sink {
    fn create(path: &Path) -> Result<Sink> {
        let f = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
        let mut w = csv::Writer::from_writer(f);
        let header: Vec<&str> = curve::PUBLISHED_HEADER
            .iter()
            .chain(curve::EXTRA_HEADER.iter())
            .copied()
            .collect();
        w.write_record(&header)?;
        w.flush()?;
        Ok(Sink { w })
    }

    fn row(&mut self, r: &PointRow) -> Result<()> {
        self.w.write_record(r.fields())?;
        self.w.flush()?;
        Ok(())
    }
}

struct Ctx<'a> {
    a: &'a PrefillArgs,
    backend: &'a Backend,
    salt: u64,
}

impl Ctx<'_> {
    fn empty(&self, n: usize, cache: Cache) -> PointRow {
        let sim = self.backend.simulated;
        PointRow {
            model: self.a.model.clone(),
            tool_count: n,
            cache,
            prefill_ms: vec![],
            wall_ms: vec![],
            prompt_tokens: vec![],
            cached_tokens: vec![],
            source: None,
            anchor: if n == 0 {
                "no tools attached (system + 1 user msg floor)".into()
            } else {
                String::new()
            },
            source_file: format!("lrab bench prefill ({})", self.backend.label),
            note: if sim {
                "SIMULATED (lrab-sim): modelled durations, not a real model".into()
            } else {
                String::new()
            },
        }
    }

    /// One point: `runs` cold requests, each followed by the same request warm. Returns the two
    /// rows (empty when nothing was measured) and the backend's failure, if any.
    fn point(&self, n: usize) -> (Option<PointRow>, Option<PointRow>, Option<anyhow::Error>) {
        let tools = prefill::schemas(n, self.a.seed);
        let mut rows = [self.empty(n, Cache::Cold), self.empty(n, Cache::Warm)];
        let timeout = Duration::from_secs(self.a.timeout_secs);
        let num_ctx =
            (self.backend.kind != lrab_records::BackendKind::Openai).then_some(self.a.num_ctx);
        let annotate = |rows: &mut [PointRow; 2], note: &str| {
            for r in rows.iter_mut() {
                r.note = join(&r.note, note);
            }
        };
        for run in 0..self.a.runs {
            let nonce = prefill::nonce(self.a.seed, self.salt, n, run);
            let req = prefill::request(&self.a.model, &tools, &nonce, num_ctx);
            for i in 0..2 {
                match prefill::measure(&self.backend.url, &req, timeout) {
                    Ok(Outcome::Sample(s)) => {
                        say(n, &rows[i], run, &s);
                        add(&mut rows[i], s, self.backend.simulated);
                    }
                    Ok(Outcome::Refused(why)) => {
                        eprintln!("{n:>4} tools: not measured: {why}");
                        let note = format!("not measured: the backend refused the request ({why})");
                        annotate(&mut rows, &note);
                        let [c, w] = rows;
                        return (Some(c), Some(w), None);
                    }
                    Err(e) => {
                        let note = format!("backend failed after {run} of {} runs", self.a.runs);
                        annotate(&mut rows, &note);
                        let [c, w] = rows;
                        let keep = |r: PointRow| r.measured().then_some(r);
                        return (keep(c), keep(w), Some(e));
                    }
                }
            }
        }
        let [c, w] = rows;
        (Some(c), Some(w), None)
    }
}

fn say(n: usize, row: &PointRow, run: usize, s: &prefill::Sample) {
    eprintln!(
        "{n:>4} tools {:<4} run {}: {:.1} ms prefill, {} prompt tokens ({})",
        row.cache.as_str(),
        run + 1,
        s.prefill_ms,
        s.prompt_tokens.map(|t| t.to_string()).unwrap_or("?".into()),
        s.source.as_str()
    );
}

/// Adds a sample; on the simulator the wall time is the modelled one (its real time is only
/// this machine's, and would make two identical runs differ).
fn add(row: &mut PointRow, s: prefill::Sample, simulated: bool) {
    row.prefill_ms.push(s.prefill_ms);
    let modelled = s.server_total_ms.filter(|_| simulated);
    row.wall_ms.push(modelled.unwrap_or(s.wall_ms));
    row.prompt_tokens.extend(s.prompt_tokens);
    row.cached_tokens.extend(s.cached_tokens);
    // a mix of sources within a row is shown as the one of the last sample; backends do not
    // switch mid-run
    row.source = Some(s.source);
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}; {b}")
    }
}

fn cold_points(rows: &[PointRow]) -> Vec<(f64, f64)> {
    rows.iter()
        .filter(|r| r.cache == Cache::Cold)
        .filter_map(PointRow::xy)
        .collect()
}

fn published_of<'p>(p: &'p [Published], model: &str) -> Vec<&'p Published> {
    p.iter().filter(|x| x.model == model).collect()
}

fn published_models(p: &[Published]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for x in p {
        if !v.contains(&x.model) {
            v.push(x.model.clone());
        }
    }
    v
}

fn fit_line(name: &str, f: Option<curve::Fit>) -> String {
    match f {
        Some(f) => format!(
            "- {name}: slope **{:.4} ms/token**, intercept {:.1} ms, R² {:.4} ({} points)\n",
            f.slope, f.intercept, f.r2, f.n
        ),
        None => format!("- {name}: no slope (fewer than two measured points with token counts)\n"),
    }
}

fn summarize(a: &PrefillArgs, b: &Backend, rows: &[PointRow], published: &[Published]) -> String {
    let mut s = String::new();
    let sim = if b.simulated {
        " — SIMULATED (lrab-sim), not a real model"
    } else {
        ""
    };
    s += &format!("# Prefill cost curve: {} on {}{sim}\n\n", a.model, b.label);
    let sources: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter_map(|r| r.source.map(|x| x.as_str()))
        .collect();
    s += &format!(
        "Timing: {} (server_prompt_eval_duration = the server's own prompt-eval time; \
         wall_time_to_first_byte = send to first streamed line, used when the server reports \
         no duration). {} run(s) per point; cold = a new nonce opens the prompt, warm = the \
         same request again.\n\n",
        if sources.is_empty() {
            "none measured".to_string()
        } else {
            sources.into_iter().collect::<Vec<_>>().join(", ")
        },
        a.runs
    );
    s += "| tools | cache | runs | prompt tokens | cached tokens | prefill ms (median) | note |\n|---:|---|---:|---:|---:|---:|---|\n";
    for r in rows {
        let f = r.fields();
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            f[1], f[12], f[2], f[7], f[14], f[6], f[11]
        );
    }
    s += "\n## Slope (least squares of median cold prefill ms on median prompt tokens)\n\n";
    s += &fit_line(
        &format!("this run ({})", a.model),
        curve::fit(&cold_points(rows)),
    );
    for m in published_models(published) {
        let pts: Vec<(f64, f64)> = published_of(published, &m)
            .iter()
            .map(|p| (p.tokens, p.ms))
            .collect();
        s += &fit_line(&format!("published {m}"), curve::fit(&pts));
    }
    s += "\n## At 256 tools\n\n";
    match rows
        .iter()
        .find(|r| r.tool_count == 256 && r.cache == Cache::Cold)
    {
        Some(r) if r.measured() => {
            s += &format!(
                "- this run: {} ms cold ({} prompt tokens)\n",
                r.fields()[6],
                r.fields()[7]
            )
        }
        Some(r) => s += &format!("- this run: not measured ({})\n", r.note),
        None => s += "- this run: not measured (not among --points)\n",
    }
    for p in published.iter().filter(|p| p.tool_count == 256) {
        s += &format!(
            "- published {}: {:.1} ms ({:.0} prompt tokens)\n",
            p.model, p.ms, p.tokens
        );
    }
    if let Some(twin) = curve::published_twin(&a.model) {
        s += &twin_table(twin, &cold_points(rows), published);
    }
    s
}

/// This run's cold curve at the prompt tokens of the published curve it stands for (linear
/// between measured points), beside the published time: how well a model (or the simulator's
/// prefill model) reproduces the paper's curve.
fn twin_table(twin: &str, run: &[(f64, f64)], published: &[Published]) -> String {
    let mut s = format!(
        "\n## Against the published {twin} curve (this run at the same prompt tokens)\n\n\
         | tools | prompt tokens | published ms | this run ms | ratio |\n|---:|---:|---:|---:|---:|\n"
    );
    for p in published_of(published, twin) {
        let here = curve::interpolate(run, p.tokens);
        s += &format!(
            "| {} | {:.0} | {:.1} | {} | {} |\n",
            p.tool_count,
            p.tokens,
            p.ms,
            here.map(|h| format!("{h:.1}"))
                .unwrap_or("outside the run's range".into()),
            here.map(|h| format!("{:.3}", h / p.ms)).unwrap_or_default()
        );
    }
    s
}

fn plot(a: &PrefillArgs, b: &Backend, rows: &[PointRow], published: &[Published]) -> Result<()> {
    let sim = if b.simulated { " (SIMULATED)" } else { "" };
    let mut series = Vec::new();
    for cache in [Cache::Cold, Cache::Warm] {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.cache == cache)
            .filter_map(PointRow::xy)
            .collect();
        series.push(lrab_analysis::CurveSeries {
            label: format!("{} {}{sim}", a.model, cache.as_str()),
            published: false,
            points: pts,
        });
    }
    for m in published_models(published) {
        series.push(lrab_analysis::CurveSeries {
            label: format!("published {m}"),
            published: true,
            points: published_of(published, &m)
                .iter()
                .map(|p| (p.tokens, p.ms))
                .collect(),
        });
    }
    let path = a.out.join("prefill.svg");
    lrab_analysis::prefill_curve_svg(&path, "Prefill cost curve: this run vs published", &series)
        .with_context(|| format!("{}", path.display()))?;
    std::io::stdout().flush().ok();
    Ok(())
}
