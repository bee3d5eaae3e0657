//! `shootdown cost --svg FILE`: the cost table as a plot (plotters, SVG
//! backend only). Log-scale request size on x (log2, labelled at powers of
//! two), log-scale modelled cost on
//! y (the loop grows linearly while a flush-all stays flat, so a linear y
//! axis hides one or the other), one line per strategy, a legend, and a
//! vertical marker at the threshold. No timestamps, no system fonts (the
//! naive text layout): the same table gives the same bytes.
//!
//! `auto`, what the generated code does, is drawn as the step it is
//! ([`auto_points`]): it follows one strategy up to the threshold and
//! jumps to the other there, instead of a straight line between the two
//! samples around the threshold (which sat below both strategies). It is a
//! wide translucent band under the others, so a strategy it follows stays
//! visible on top of it; the strategies carry point markers of their own
//! shapes.

use super::{human, Strategy, Table};
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

fn lg(b: u64) -> f64 {
    (b.max(1) as f64).log2()
}

/// The cost of strategy `s` at row `i`, if it can be used there.
fn cost_at(t: &Table, s: Strategy, i: usize) -> Option<f64> {
    t.rows[i]
        .cost
        .get(&s)
        .copied()
        .flatten()
        .map(|c| c.max(1) as f64)
}

/// The strategy `auto` costs the same as at row `i`.
fn follows(t: &Table, i: usize) -> Option<Strategy> {
    let a = cost_at(t, Strategy::Auto, i)?;
    t.strategies
        .iter()
        .copied()
        .filter(|s| *s != Strategy::Auto)
        .find(|s| cost_at(t, *s, i) == Some(a))
}

/// `s`'s line between rows `i` and `i + 1` at `x`, as drawn: straight on
/// the log-log axes.
fn on_line(t: &Table, s: Strategy, i: usize, x: f64) -> Option<f64> {
    let (y0, y1) = (cost_at(t, s, i)?, cost_at(t, s, i + 1)?);
    let (x0, x1) = (lg(t.rows[i].size), lg(t.rows[i + 1].size));
    if x1 <= x0 {
        return Some(y0);
    }
    let f = (x - x0) / (x1 - x0);
    Some((y0.ln() + (y1.ln() - y0.ln()) * f).exp())
}

/// The points of the `auto` line: the samples, and where the strategy it
/// follows changes between two samples, a vertical step at the threshold
/// (the last size the loop handles) from one strategy's line to the
/// other's; with no threshold in between, at the later sample.
pub fn auto_points(t: &Table) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    for i in 0..t.rows.len() {
        let Some(a) = cost_at(t, Strategy::Auto, i) else {
            continue;
        };
        if i > 0 {
            if let (Some(p), Some(q)) = (follows(t, i - 1), follows(t, i)) {
                let (xa, xb) = (lg(t.rows[i - 1].size), lg(t.rows[i].size));
                let x = t
                    .threshold
                    .as_ref()
                    .map(|th| lg(th.bytes))
                    .filter(|x| *x >= xa && *x < xb)
                    .unwrap_or(xb);
                if p != q {
                    if let (Some(y0), Some(y1)) = (on_line(t, p, i - 1, x), on_line(t, q, i - 1, x))
                    {
                        pts.push((x, y0));
                        pts.push((x, y1));
                    }
                }
            }
        }
        pts.push((lg(t.rows[i].size), a));
    }
    pts
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
/// log2(size) on x, a log-scale cost on y.
type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::LogCoord<f64>,
    >,
>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

fn draw(t: &Table, root: &Area<'_>) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    // x is log2(size) on a linear axis, labelled at powers of two (a
    // log-scale axis would put its labels at powers of ten).
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
    strategies(t, &mut chart)?;
    with_lines(t, &mut chart)?;
    threshold(t, &mut chart, (x0, x1), (y0, y1))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// One line per strategy, `auto` under them as the step it is.
fn strategies(t: &Table, chart: &mut Chart<'_, '_>) -> Drawn {
    // `auto` first, as a wide translucent band: the strategy it follows
    // is drawn over it and stays visible.
    if t.strategies.contains(&Strategy::Auto) {
        let col = color(Strategy::Auto);
        chart
            .draw_series(LineSeries::new(
                auto_points(t),
                col.mix(0.35).stroke_width(7),
            ))?
            .label("auto (the generated code)")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], col.mix(0.35).stroke_width(7))
            });
    }
    for s in t.strategies.iter().filter(|s| **s != Strategy::Auto) {
        let pts: Vec<(f64, f64)> = t
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| cost_at(t, *s, i).map(|c| (lg(r.size), c)))
            .collect();
        let col = color(*s);
        chart
            .draw_series(LineSeries::new(pts.clone(), col.stroke_width(2)))?
            .label(s.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2)));
        // Markers of one shape per strategy: lines that coincide are
        // still told apart.
        match s {
            Strategy::Exact => {
                chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, col.filled())))?;
            }
            Strategy::Single => {
                chart.draw_series(pts.iter().map(|p| TriangleMarker::new(*p, 5, col.filled())))?;
            }
            _ => {
                chart.draw_series(pts.iter().map(|p| Cross::new(*p, 5, col.stroke_width(2))))?;
            }
        }
    }
    Ok(())
}

/// The `--with` sequences, in order.
fn with_lines(t: &Table, chart: &mut Chart<'_, '_>) -> Drawn {
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
    Ok(())
}

/// The derived (or pinned) threshold as a vertical marker, when it is
/// inside the plotted sizes.
fn threshold(
    t: &Table,
    chart: &mut Chart<'_, '_>,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Drawn {
    if let Some(th) = &t.threshold {
        let x = lg(th.bytes);
        if x >= x0 && x <= x1 {
            // Orange and dashed, off the grey grid it may sit on, with its
            // value written beside it.
            let mark = RGBColor(255, 127, 14);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, y0), (x, y1)],
                    8,
                    5,
                    mark.stroke_width(2),
                ))?
                .label(format!(
                    "threshold {} = {} ({})",
                    th.name,
                    th.value,
                    human(th.bytes)
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], mark.stroke_width(2))
                });
            chart.draw_series(std::iter::once(Text::new(
                format!(" threshold {} ({})", th.value, human(th.bytes)),
                (x, y1 / 1.6),
                ("sans-serif", 14).into_font().color(&mark),
            )))?;
        }
    }
    Ok(())
}
