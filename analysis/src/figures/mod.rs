//! Figures (SVG and PNG) with plotters. Text in PNGs is rendered with DejaVu Sans bundled in the
//! binary (crate `dejavu`), so output does not depend on system fonts; SVGs carry text as text.
//! Colours are the Okabe–Ito palette (distinguishable with common colour-vision deficiencies).

mod ablation;
mod prefill;

pub use prefill::{prefill_curve_svg, CurveSeries};

use crate::analysis::Analysis;
use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::Once;

/// Okabe–Ito colours.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

const W: u32 = 960;
const H: u32 = 540;
const FONT: &str = "sans-serif";

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled font is known-good; a failure would only lose PNG text.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

type Area<DB> = DrawingArea<DB, Shift>;
/// Optional (lo, hi) whisker per bar, per series.
type Whiskers = [Vec<Option<(f64, f64)>>];

fn err<E: std::fmt::Debug>(e: E) -> Error {
    Error::Output(format!("drawing failed: {e:?}"))
}

fn cat_label(names: &[String], x: f64) -> String {
    if (x - x.round()).abs() < 1e-6 && x >= -0.01 {
        names.get(x.round() as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// Draw a legend (colour swatch + name per entry) into its own area, right of the chart, so it
/// never hides data.
fn legend<DB: DrawingBackend>(area: &Area<DB>, entries: &[(String, RGBColor)]) -> Result<()> {
    area.fill(&WHITE).map_err(err)?;
    for (i, (name, c)) in entries.iter().enumerate() {
        let y = 70 + i as i32 * 26;
        area.draw(&Rectangle::new([(6, y - 7), (22, y + 7)], c.filled()))
            .map_err(err)?;
        area.draw(&Text::new(
            name.clone(),
            (30, y - 8),
            (FONT, 15).into_font().color(&BLACK),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// Split off a legend column when there is more than one series.
fn with_legend<DB: DrawingBackend>(
    root: &Area<DB>,
    entries: &[(String, RGBColor)],
) -> Result<Area<DB>> {
    root.fill(&WHITE).map_err(err)?;
    if entries.len() < 2 {
        return Ok(root.clone());
    }
    let longest = entries
        .iter()
        .map(|e| e.0.chars().count())
        .max()
        .unwrap_or(0) as u32;
    let (chart, side) = root.split_horizontally(W - (longest * 9 + 50).min(W / 3));
    legend(&side, entries)?;
    Ok(chart)
}

/// Grouped bars: categories on x, one bar per series; values `None` are skipped.
/// `err_bars` gives optional (lo, hi) whiskers per bar.
#[allow(clippy::too_many_arguments)]
fn grouped_bars<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    y_desc: &str,
    cats: &[String],
    series: &[(String, Vec<Option<f64>>)],
    whiskers: Option<&Whiskers>,
    y_range: (f64, f64),
    value_labels: bool,
) -> Result<()> {
    let entries: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(j, s)| (s.0.clone(), colour(j)))
        .collect();
    let area = with_legend(root, &entries)?;
    let n = cats.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&area)
        .caption(title, (FONT, 24))
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n - 0.5), y_range.0..y_range.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(cats.len() * 2 + 1)
        .x_label_formatter(&|x| cat_label(cats, *x))
        .y_label_formatter(&|v| format!("{:.2}", if v.abs() < 1e-9 { 0.0 } else { *v }))
        .y_desc(y_desc)
        .light_line_style(WHITE)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(err)?;
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (j, (name, vals)) in series.iter().enumerate() {
        let c = colour(j);
        let bars = vals.iter().enumerate().filter_map(|(i, v)| {
            v.map(|v| {
                let x0 = i as f64 - 0.4 + j as f64 * width;
                Rectangle::new(
                    [
                        (x0, 0.0f64.max(y_range.0).min(v)),
                        (x0 + width * 0.92, v.max(0.0f64.max(y_range.0))),
                    ],
                    c.filled(),
                )
            })
        });
        chart.draw_series(bars).map_err(err)?;
        let _ = name;
        if value_labels {
            let labels = vals.iter().enumerate().filter_map(|(i, v)| {
                v.map(|v| {
                    let x = i as f64 - 0.4 + (j as f64 + 0.46) * width;
                    Text::new(
                        format!("{v:.2}"),
                        (x, v + (y_range.1 - y_range.0) * 0.012),
                        (FONT, 12)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )
                })
            });
            chart.draw_series(labels).map_err(err)?;
        }
        if let Some(w) = whiskers {
            let segs = w[j].iter().enumerate().filter_map(|(i, lh)| {
                lh.map(|(lo, hi)| {
                    let x = i as f64 - 0.4 + (j as f64 + 0.46) * width;
                    PathElement::new(vec![(x, lo), (x, hi)], BLACK.stroke_width(2))
                })
            });
            chart.draw_series(segs).map_err(err)?;
            let caps = w[j].iter().enumerate().filter_map(|(i, lh)| {
                lh.map(|(lo, hi)| {
                    let x = i as f64 - 0.4 + (j as f64 + 0.46) * width;
                    let d = width * 0.2;
                    vec![
                        PathElement::new(vec![(x - d, lo), (x + d, lo)], BLACK.stroke_width(2)),
                        PathElement::new(vec![(x - d, hi), (x + d, hi)], BLACK.stroke_width(2)),
                    ]
                })
            });
            chart.draw_series(caps.flatten()).map_err(err)?;
        }
    }
    if y_range.0 < 0.0 {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(-0.5, 0.0), (n - 0.5, 0.0)],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

fn cliff_lines<DB: DrawingBackend>(root: &Area<DB>, a: &Analysis) -> Result<()> {
    let entries: Vec<(String, RGBColor)> = a
        .rows
        .iter()
        .enumerate()
        .map(|(j, r)| (r.arm.clone(), colour(j)))
        .collect();
    let area = with_legend(root, &entries)?;
    let n = a.models.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&area)
        .caption("Mean score across model sizes (the cliff)", (FONT, 24))
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.3..(n - 0.7), 0.0..1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(a.models.len() * 2 + 1)
        .x_label_formatter(&|x| cat_label(&a.models, *x))
        .x_desc("model (ordered by size)")
        .y_desc("mean score")
        .light_line_style(WHITE)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(err)?;
    for (j, r) in a.rows.iter().enumerate() {
        let c = colour(j);
        let pts: Vec<(f64, f64)> = r
            .per_model
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i as f64, v)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(3)))
            .map_err(err)?;
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 5, c.filled())))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

fn wall_boxes<DB: DrawingBackend>(
    root: &Area<DB>,
    a: &Analysis,
    walls: &[(String, Vec<f64>)],
) -> Result<()> {
    let _ = a;
    root.fill(&WHITE).map_err(err)?;
    let names: Vec<String> = walls.iter().map(|w| w.0.clone()).collect();
    let ymax = walls
        .iter()
        .flat_map(|w| w.1.iter().copied())
        .fold(1.0f64, f64::max)
        * 1.05;
    let n = names.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption("Wall time per cell", (FONT, 24))
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(72)
        .build_cartesian_2d(-0.5..(n - 0.5), 0.0..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(names.len() * 2 + 1)
        .x_label_formatter(&|x| cat_label(&names, *x))
        .y_desc("seconds")
        .light_line_style(WHITE)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(err)?;
    for (i, (_, v)) in walls.iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        let mut s = v.clone();
        s.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let pos = p * (s.len() - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
        };
        let (q1, q2, q3) = (q(0.25), q(0.5), q(0.75));
        let c = colour(i);
        let x = i as f64;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x - 0.25, q1), (x + 0.25, q3)],
                c.mix(0.6).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x - 0.25, q1), (x + 0.25, q3)],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x - 0.25, q2), (x + 0.25, q2)],
                BLACK.stroke_width(3),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, s[0]), (x, q1)],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, q3), (x, s[s.len() - 1])],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?;
        // Individual cells as small dots, jittered deterministically.
        chart
            .draw_series(s.iter().enumerate().map(|(k, y)| {
                Circle::new(
                    (x + 0.3 + ((k % 7) as f64) * 0.012, *y),
                    2,
                    BLACK.mix(0.5).filled(),
                )
            }))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Draw with one body into an SVG string and a PNG file, write the SVG file too, and yield
/// the SVG text (for inlining in HTML).
macro_rules! both {
    ($dir:expr, $name:expr, |$root:ident| $body:expr) => {{
        let mut svg = String::new();
        {
            let $root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
            $body?;
        }
        let png = $dir.join(format!("{}.png", $name));
        {
            let $root = BitMapBackend::new(&png, (W, H)).into_drawing_area();
            $body?;
        }
        std::fs::write($dir.join(format!("{}.svg", $name)), &svg).map_err(|e| {
            Error::io(
                $dir.join(format!("{}.svg", $name)).display(),
                "cannot write",
                e,
            )
        })?;
        svg
    }};
}

/// Draw every figure the data supports into `dir`; returns (file stem, caption, SVG text).
pub fn draw_all(
    a: &Analysis,
    walls: &[(String, Vec<f64>)],
    dir: &Path,
) -> Result<Vec<(String, String, String)>> {
    register_fonts();
    let mut out = Vec::new();
    if !a.rows.is_empty() {
        let series: Vec<(String, Vec<Option<f64>>)> = a
            .rows
            .iter()
            .map(|r| (r.arm.clone(), r.per_model.clone()))
            .collect();
        let svg = both!(dir, "by_model", |root| grouped_bars(
            &root,
            "Mean score by model size",
            "mean score",
            &a.models,
            &series,
            None,
            (0.0, 1.05),
            true
        ));
        out.push((
            "by_model".into(),
            "Mean score per arm, grouped by model (ordered by size).".into(),
            svg,
        ));

        let arms: Vec<String> = a.rows.iter().map(|r| r.arm.clone()).collect();
        let overall = vec![(
            "overall".to_string(),
            a.rows.iter().map(|r| r.overall).collect(),
        )];
        let svg = both!(dir, "overall", |root| grouped_bars(
            &root,
            "Overall mean score (mean of model means)",
            "mean score",
            &arms,
            &overall,
            None,
            (0.0, 1.1),
            true
        ));
        out.push(("overall".into(), "Overall mean score per arm.".into(), svg));

        if a.models.len() > 1 {
            let svg = both!(dir, "cliff", |root| cliff_lines(&root, a));
            out.push(("cliff".into(), "Each arm's mean score across model sizes: the drop from its best model is its cliff.".into(), svg));
        }
    }
    if !a.ablations.is_empty() {
        let svg = both!(dir, "ablations", |root| ablation::chart(&root, a));
        out.push((
            "ablations".into(),
            "Mechanism effect of each ablation (baseline − variant): bar = mean over repeats, \
             whisker = task-cluster bootstrap CI, dots = per-repeat deltas, grey band = noise \
             floor (largest shift between two repeats of the baseline; none for a single repeat)."
                .into(),
            svg,
        ));
    }
    if walls.iter().any(|w| !w.1.is_empty()) {
        let svg = both!(dir, "wall_time", |root| wall_boxes(&root, a, walls));
        out.push((
            "wall_time".into(),
            "Wall time per cell: box = quartiles, thick line = median, dots = cells.".into(),
            svg,
        ));
    }
    if !a.failure_modes.is_empty() {
        let arms: Vec<String> = a.failure_modes.keys().cloned().collect();
        let modes: Vec<String> = a
            .failure_modes
            .values()
            .flat_map(|m| m.keys().cloned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let svg = both!(dir, "failure_modes", |root| stacked(
            &root, &arms, &modes, a
        ));
        out.push((
            "failure_modes".into(),
            "Share of failure modes per arm.".into(),
            svg,
        ));
    }
    Ok(out)
}

fn stacked<DB: DrawingBackend>(
    root: &Area<DB>,
    arms: &[String],
    modes: &[String],
    a: &Analysis,
) -> Result<()> {
    let entries: Vec<(String, RGBColor)> = modes
        .iter()
        .enumerate()
        .map(|(j, m)| (m.clone(), colour(j)))
        .collect();
    let area = with_legend(root, &entries)?;
    let n = arms.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&area)
        .caption("Failure modes per arm", (FONT, 24))
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n - 0.5), 0.0..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(arms.len() * 2 + 1)
        .x_label_formatter(&|x| cat_label(arms, *x))
        .y_desc("share of cells")
        .light_line_style(WHITE)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(err)?;
    let mut base = vec![0.0f64; arms.len()];
    for (j, m) in modes.iter().enumerate() {
        let c = colour(j);
        let mut rects = Vec::new();
        for (i, arm) in arms.iter().enumerate() {
            let counts = &a.failure_modes[arm];
            let total: usize = counts.values().sum();
            let share = counts.get(m).copied().unwrap_or(0) as f64 / total.max(1) as f64;
            rects.push(Rectangle::new(
                [
                    (i as f64 - 0.35, base[i]),
                    (i as f64 + 0.35, base[i] + share),
                ],
                c.filled(),
            ));
            base[i] += share;
        }
        let _ = m;
        chart.draw_series(rects).map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
