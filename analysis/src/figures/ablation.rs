//! The ablation figure: one bar per variant (the mechanism effect, baseline − variant), its
//! task-cluster bootstrap CI as a whisker, each repeat's delta as a dot, and the noise floor as
//! a grey band ±floor around zero behind the bar, so a bar that does not leave its band reads
//! as rerun noise at a glance.

use super::{cat_label, colour, err, Area, FONT, H};
use crate::analysis::Analysis;
use crate::error::Result;
use plotters::prelude::*;

/// Category label of an ablation row: the variant, with the model or file when two rows would
/// otherwise share a label.
fn labels(a: &Analysis) -> Vec<String> {
    let plain: Vec<String> = a.ablations.iter().map(|r| r.variant.clone()).collect();
    plain
        .iter()
        .zip(&a.ablations)
        .map(|(v, r)| {
            if plain.iter().filter(|x| *x == v).count() > 1 {
                let from = r.model.clone().unwrap_or_else(|| {
                    std::path::Path::new(&r.source)
                        .file_stem()
                        .map_or(r.source.clone(), |s| s.to_string_lossy().into_owned())
                });
                format!("{v} ({from})")
            } else {
                v.clone()
            }
        })
        .collect()
}

pub(super) fn chart<DB: DrawingBackend>(root: &Area<DB>, a: &Analysis) -> Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let cats = labels(a);
    let n = cats.len().max(1) as f64;
    let mut lo: f64 = -0.1;
    let mut hi: f64 = 0.1;
    for r in &a.ablations {
        let vals = [
            Some(r.effect),
            r.ci.as_ref().map(|c| c.lo),
            r.ci.as_ref().map(|c| c.hi),
        ];
        for v in vals
            .into_iter()
            .flatten()
            .chain(r.per_repeat.iter().map(|d| d.delta))
        {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if let Some(f) = r.noise.floor {
            lo = lo.min(-f);
            hi = hi.max(f);
        }
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let x_area = if cats.iter().any(|c| c.len() > 14) {
        70
    } else {
        46
    };
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Ablations: mechanism effect (baseline − variant), noise floor shaded",
            (FONT, 22),
        )
        .margin(14)
        .x_label_area_size(x_area)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n - 0.5), lo..hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(cats.len() * 2 + 1)
        .x_label_formatter(&|x| cat_label(&cats, *x))
        .y_label_formatter(&|v| format!("{:+.2}", if v.abs() < 1e-9 { 0.0 } else { *v }))
        .y_desc("Δ mean score")
        .light_line_style(WHITE)
        .label_style((FONT, if H > 500 { 14 } else { 12 }))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(err)?;
    let band = RGBColor(200, 200, 200);
    chart
        .draw_series(a.ablations.iter().enumerate().filter_map(|(i, r)| {
            r.noise.floor.map(|f| {
                let x = i as f64;
                Rectangle::new([(x - 0.45, -f), (x + 0.45, f)], band.mix(0.6).filled())
            })
        }))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 0.0), (n - 0.5, 0.0)],
            BLACK.stroke_width(1),
        )))
        .map_err(err)?;
    chart
        .draw_series(a.ablations.iter().enumerate().map(|(i, r)| {
            let x = i as f64;
            let (y0, y1) = if r.effect >= 0.0 {
                (0.0, r.effect)
            } else {
                (r.effect, 0.0)
            };
            Rectangle::new([(x - 0.25, y0), (x + 0.25, y1)], colour(0).filled())
        }))
        .map_err(err)?;
    for (i, r) in a.ablations.iter().enumerate() {
        let x = i as f64;
        if let Some(c) = &r.ci {
            chart
                .draw_series([
                    PathElement::new(vec![(x, c.lo), (x, c.hi)], BLACK.stroke_width(2)),
                    PathElement::new(
                        vec![(x - 0.06, c.lo), (x + 0.06, c.lo)],
                        BLACK.stroke_width(2),
                    ),
                    PathElement::new(
                        vec![(x - 0.06, c.hi), (x + 0.06, c.hi)],
                        BLACK.stroke_width(2),
                    ),
                ])
                .map_err(err)?;
        }
        let k = r.per_repeat.len().max(1) as f64;
        chart
            .draw_series(r.per_repeat.iter().enumerate().map(|(j, d)| {
                let dx = 0.32 + 0.1 * (j as f64 - (k - 1.0) / 2.0) / k;
                Circle::new((x + dx, d.delta), 4, colour(1).filled())
            }))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
