//! `shootdown cost --svg FILE`: the cost table as a plot (plotters, SVG
//! backend only). Log-scale request size on x (log2, labelled at powers of
//! two), log-scale modelled cost on
//! y (the loop grows linearly while a flush-all stays flat, so a linear y
//! axis hides one or the other), one line per strategy, a legend, and a
//! vertical marker at the threshold. No timestamps, no system fonts (the
//! naive text layout): the same table gives the same bytes.

use super::cost::{human, Strategy, Table};
use plotters::prelude::*;

fn color(s: Strategy) -> RGBColor {
    match s {
        Strategy::Exact => RGBColor(31, 119, 180),
        Strategy::Single => RGBColor(44, 160, 44),
        Strategy::All => RGBColor(214, 39, 40),
        Strategy::Auto => RGBColor(40, 40, 40),
    }
}

/// Render the table as SVG text.
pub fn svg(t: &Table) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (960, 600)).into_drawing_area();
        draw(t, &root).map_err(|e| format!("plot: {e}"))?;
        root.present().map_err(|e| format!("plot: {e}"))?;
    }
    Ok(out)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw(t: &Table, root: &Area<'_>) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    // x is log2(size) on a linear axis, labelled at powers of two (a
    // log-scale axis would put its labels at powers of ten).
    let lg = |b: u64| (b.max(1) as f64).log2();
    let xs: Vec<f64> = t.rows.iter().map(|r| lg(r.size)).collect();
    let (x0, x1) = match (xs.first(), xs.last()) {
        (Some(a), Some(b)) if b > a => (*a, *b),
        (Some(a), _) => (*a - 1.0, *a + 1.0),
        _ => (1.0, 2.0),
    };
    let ys: Vec<f64> = t
        .rows
        .iter()
        .flat_map(|r| r.cost.values().flatten().chain(r.with.values()))
        .map(|v| (*v).max(1) as f64)
        .collect();
    let y0 = ys.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let y1 = ys.iter().copied().fold(1.0, f64::max);
    let (y0, y1) = (y0 / 2.0, y1 * 2.0);
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{}: modelled cost per request size ({})", t.seq, t.target),
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, (y0..y1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("request size (bytes, log scale)")
        .y_desc("modelled cost (ns, log scale)")
        .x_labels(((x1 - x0) as usize + 1).min(24))
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-9 && *v >= 0.0 && *v < 64.0 {
                human(1u64 << (v.round() as u32))
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| format!("{}", v.round() as u64))
        .draw()?;
    for s in &t.strategies {
        let pts: Vec<(f64, f64)> = t
            .rows
            .iter()
            .filter_map(|r| {
                r.cost
                    .get(s)
                    .copied()
                    .flatten()
                    .map(|c| (lg(r.size), c.max(1) as f64))
            })
            .collect();
        let col = color(*s);
        let width = if *s == Strategy::Auto { 1 } else { 2 };
        chart
            .draw_series(LineSeries::new(pts, col.stroke_width(width)))?
            .label(s.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2)));
    }
    // `--with` sequences, in order.
    const WITH: [RGBColor; 4] = [
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
    ];
    for (i, w) in t.with.iter().enumerate() {
        let pts: Vec<(f64, f64)> = t
            .rows
            .iter()
            .filter_map(|r| r.with.get(w).map(|c| (lg(r.size), (*c).max(1) as f64)))
            .collect();
        let col = WITH[i % WITH.len()];
        chart
            .draw_series(LineSeries::new(pts, col.stroke_width(2)))?
            .label(w.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2)));
    }
    if let Some(th) = &t.threshold {
        let x = lg(th.bytes);
        if x >= x0 && x <= x1 {
            let grey = RGBColor(120, 120, 120);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, y0), (x, y1)],
                    grey.stroke_width(1),
                )))?
                .label(format!(
                    "threshold {} = {} ({})",
                    th.name,
                    th.value,
                    human(th.bytes)
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1))
                });
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
