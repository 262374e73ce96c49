//! The prefill cost curve (the paper's "Fig 9"): prompt-processing time against prompt
//! tokens, log–log, a run's curves beside the published ones (`cost_curve_data_2609.csv`).
//! Published series are drawn dashed so a reader never mistakes them for this run's.

use super::{colour, err, legend, register_fonts, FONT, H, W};
use crate::error::{Error, Result};
use plotters::prelude::*;
use std::path::Path;

/// One curve: its label, whether it is published (dashed) or from this run, and its points
/// (prompt tokens, prefill ms); points ≤ 0 cannot sit on a log axis and are left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveSeries {
    /// The legend's text.
    pub label: String,
    /// Drawn dashed with triangles (published) or solid with dots (this run).
    pub published: bool,
    /// (prompt tokens, prefill ms).
    pub points: Vec<(f64, f64)>,
}

fn range(series: &[CurveSeries], y: bool) -> (f64, f64) {
    let vals = series
        .iter()
        .flat_map(|s| s.points.iter().map(move |p| if y { p.1 } else { p.0 }))
        .filter(|v| *v > 0.0);
    let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        (1.0, 10.0)
    } else {
        (lo / 1.5, hi * 1.5)
    }
}

/// Writes the figure as an SVG at `path`.
pub fn prefill_curve_svg(path: &Path, title: &str, series: &[CurveSeries]) -> Result<()> {
    register_fonts();
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (chart_area, legend_area) = root.split_horizontally(W - 250);
    let entries: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.label.clone(), colour(i)))
        .collect();
    legend(&legend_area, &entries)?;
    let (x0, x1) = range(series, false);
    let (y0, y1) = range(series, true);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, (FONT, 22))
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("prompt tokens")
        .y_desc("prompt processing (ms)")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let c = colour(i);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0 > 0.0 && p.1 > 0.0)
            .collect();
        if s.published {
            chart
                .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, c.stroke_width(2)))
                .map_err(err)?;
            chart
                .draw_series(pts.iter().map(|p| TriangleMarker::new(*p, 5, c.filled())))
                .map_err(err)?;
        } else {
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(3)))
                .map_err(err)?;
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 5, c.filled())))
                .map_err(err)?;
        }
    }
    root.present()
        .map_err(|e| Error::Output(format!("{}: {e:?}", path.display())))?;
    Ok(())
}
