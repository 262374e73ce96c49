//! The curve's rows, in the published file's layout (`cost_curve_data_2609.csv`) plus the
//! cache state and the timing source, its statistics (median, IQR, least-squares slope) and the
//! published curve read back.

use std::path::Path;

use anyhow::{Context, Result};

/// The published file's header, in its order.
pub const PUBLISHED_HEADER: [&str; 12] = [
    "model",
    "tool_count",
    "n_runs",
    "median_s",
    "iqr_s",
    "min_s",
    "median_prompt_ms",
    "median_prompt_tokens",
    "wall_s_med",
    "anchor",
    "source_file",
    "note",
];
/// Columns a run adds after the published ones.
pub const EXTRA_HEADER: [&str; 3] = ["cache", "timing_source", "median_cached_tokens"];

/// Cold: a prompt prefix the server has not seen; warm: the same request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    Cold,
    Warm,
}

impl Cache {
    pub fn as_str(self) -> &'static str {
        match self {
            Cache::Cold => "cold",
            Cache::Warm => "warm",
        }
    }
}

/// Where a prefill time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingSource {
    /// The server's `prompt_eval_duration` (Ollama; llama.cpp's `timings.prompt_ms`).
    Server,
    /// No duration reported: the wall time from sending the request to the first streamed line
    /// (prefill plus one decoded token plus the network).
    WallFirstByte,
}

impl TimingSource {
    pub fn as_str(self) -> &'static str {
        match self {
            TimingSource::Server => "server_prompt_eval_duration",
            TimingSource::WallFirstByte => "wall_time_to_first_byte",
        }
    }
}

/// One row: a point (tool count × cache state) measured over `n_runs` requests, or not
/// measured (`n_runs` 0, the reason in `note`).
#[derive(Debug, Clone, PartialEq)]
pub struct PointRow {
    pub model: String,
    pub tool_count: usize,
    pub cache: Cache,
    pub prefill_ms: Vec<f64>,
    pub wall_ms: Vec<f64>,
    pub prompt_tokens: Vec<u64>,
    pub cached_tokens: Vec<u64>,
    pub source: Option<TimingSource>,
    pub anchor: String,
    pub source_file: String,
    pub note: String,
}

/// The median of `v` (mean of the middle two for an even count); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    quantile(v, 0.5)
}

/// The `q` quantile with linear interpolation between order statistics (numpy's default).
pub fn quantile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(s[lo] + (s[hi] - s[lo]) * (pos - lo as f64))
}

fn fmt3(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.3}")).unwrap_or_default()
}

fn fmt1(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.1}")).unwrap_or_default()
}

fn med_u(v: &[u64]) -> Option<f64> {
    median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

impl PointRow {
    pub fn measured(&self) -> bool {
        !self.prefill_ms.is_empty()
    }

    /// The row as CSV fields, in [`PUBLISHED_HEADER`] then [`EXTRA_HEADER`] order.
    pub fn fields(&self) -> Vec<String> {
        let s: Vec<f64> = self.prefill_ms.iter().map(|m| m / 1e3).collect();
        let wall: Vec<f64> = self.wall_ms.iter().map(|m| m / 1e3).collect();
        let iqr = (s.len() >= 2)
            .then(|| Some(quantile(&s, 0.75)? - quantile(&s, 0.25)?))
            .flatten();
        let min = s.iter().copied().reduce(f64::min);
        vec![
            self.model.clone(),
            self.tool_count.to_string(),
            self.prefill_ms.len().to_string(),
            fmt3(median(&s)),
            fmt3(iqr),
            fmt3(min),
            fmt1(median(&self.prefill_ms)),
            med_u(&self.prompt_tokens)
                .map(|t| format!("{t:.0}"))
                .unwrap_or_default(),
            fmt3(median(&wall)),
            self.anchor.clone(),
            self.source_file.clone(),
            self.note.clone(),
            self.cache.as_str().to_string(),
            self.source
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
            med_u(&self.cached_tokens)
                .map(|t| format!("{t:.0}"))
                .unwrap_or_default(),
        ]
    }

    /// (median prompt tokens, median prefill ms) when measured with token counts.
    pub fn xy(&self) -> Option<(f64, f64)> {
        Some((med_u(&self.prompt_tokens)?, median(&self.prefill_ms)?))
    }
}

/// A least-squares line `ms = intercept + slope · tokens` and its R².
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub slope: f64,
    pub intercept: f64,
    pub r2: f64,
    pub n: usize,
}

/// Least squares of y against x; `None` with fewer than two distinct x.
pub fn fit(pts: &[(f64, f64)]) -> Option<Fit> {
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if pts.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_tot: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
    let ss_res: f64 = pts
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    Some(Fit {
        slope,
        intercept,
        r2,
        n: pts.len(),
    })
}

/// The curve through `pts` (linear between neighbours) at `x`; `None` outside their range.
pub fn interpolate(pts: &[(f64, f64)], x: f64) -> Option<f64> {
    let mut s = pts.to_vec();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    let i = s.iter().position(|p| p.0 >= x)?;
    if s[i].0 == x {
        return Some(s[i].1);
    }
    let (a, b) = (s.get(i.checked_sub(1)?)?, s[i]);
    Some(a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0))
}

/// One published point: model, tool count, median prompt tokens, median prompt ms.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub model: String,
    pub tool_count: usize,
    pub tokens: f64,
    pub ms: f64,
}

/// Reads the published curve (`cost_curve_data_2609.csv`); a malformed row is an error naming
/// the file, the line and the field.
pub fn read_published(path: &Path) -> Result<Vec<Published>> {
    let mut r = csv::Reader::from_path(path).with_context(|| format!("{}", path.display()))?;
    let h = r.headers()?.clone();
    let col = |name: &str| {
        h.iter()
            .position(|c| c == name)
            .with_context(|| format!("{}: no column '{name}'", path.display()))
    };
    let (m, t, ms, tok) = (
        col("model")?,
        col("tool_count")?,
        col("median_prompt_ms")?,
        col("median_prompt_tokens")?,
    );
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        let num = |c: usize, name: &str| -> Result<f64> {
            rec.get(c)
                .and_then(|v| v.parse::<f64>().ok())
                .with_context(|| {
                    format!(
                        "{}: line {}: field '{name}' is not a number",
                        path.display(),
                        i + 2
                    )
                })
        };
        out.push(Published {
            model: rec.get(m).unwrap_or_default().to_string(),
            tool_count: num(t, "tool_count")? as usize,
            tokens: num(tok, "median_prompt_tokens")?,
            ms: num(ms, "median_prompt_ms")?,
        });
    }
    Ok(out)
}

/// The paper's tool counts (each distinct `tool_count` of the published file, ascending).
pub fn published_points(p: &[Published]) -> Vec<usize> {
    let mut v: Vec<usize> = p.iter().map(|x| x.tool_count).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The published model a simulated one stands for (docs/sim.md, "The models"), so a sim curve
/// is compared with the curve it was fitted to.
pub fn published_twin(model: &str) -> Option<&'static str> {
    match model {
        "sim-2b" => Some("gemma4:e2b"),
        "sim-4b" | "sim-35b" => Some("qwen3.5:4b"),
        "gemma4:e2b" => Some("gemma4:e2b"),
        "qwen3.5:4b" => Some("qwen3.5:4b"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), Some(1.75));
        let f = fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12);
        assert!((f.r2 - 1.0).abs() < 1e-12);
        assert!(fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
        let pts = [(10.0, 100.0), (0.0, 0.0), (20.0, 300.0)];
        assert_eq!(interpolate(&pts, 15.0), Some(200.0));
        assert_eq!(interpolate(&pts, 0.0), Some(0.0));
        assert_eq!(interpolate(&pts, 25.0), None);
        assert_eq!(interpolate(&pts, -1.0), None);
    }
}
