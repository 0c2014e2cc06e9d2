//! PNG line plots with a min-max band, drawn with plotters' bitmap backend.
//!
//! Text is rendered with ab_glyph from a TrueType file found at run time: `RLVR_FONT`, else
//! DejaVu Sans in the usual Debian/Ubuntu places (package `fonts-dejavu-core`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::prelude::*;

use crate::stats::Spread;
use crate::ReportError;

/// One curve: a label, and per step the spread over seeds.
pub(crate) struct Curve {
    pub label: String,
    pub points: Vec<(usize, Spread)>,
}

const FONT_CANDIDATES: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Registers a sans-serif font once; the error says where fonts were looked for.
fn ensure_font() -> Result<(), String> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = std::env::var_os("RLVR_FONT").map(PathBuf::from).into_iter().collect();
        candidates.extend(FONT_CANDIDATES.iter().map(PathBuf::from));
        let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
            format!(
                "no TrueType font for plot labels: looked at {}; install fonts-dejavu-core or set RLVR_FONT=/path/to/font.ttf",
                candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            )
        })?;
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| format!("{}: not a usable TrueType font", path.display()))
    })
    .clone()
}

/// The colour of the i-th curve: fixed colours for the three main rules, then a palette.
fn colour(label: &str, i: usize) -> RGBColor {
    match label {
        "token-mean" => RGBColor(214, 39, 40),
        "seq-mean-token-mean" => RGBColor(31, 119, 180),
        "balanced" => RGBColor(44, 160, 44),
        _ => {
            let p = Palette99::pick(i + 3).to_rgba();
            RGBColor(p.0, p.1, p.2)
        }
    }
}

/// Registers the font, then runs `draw`; either failure becomes a [`ReportError::Plot`] naming
/// the PNG.
fn render_png(
    path: &Path,
    draw: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<(), ReportError> {
    let err = |reason: String| ReportError::Plot {
        path: path.to_path_buf(),
        reason,
    };
    ensure_font().map_err(err)?;
    draw().map_err(|e| err(e.to_string()))
}

/// Draws `curves` (mean line, min-max band) into a PNG at `path`.
pub(crate) fn line_band_plot(
    path: &Path,
    title: &str,
    y_label: &str,
    curves: &[Curve],
) -> Result<(), ReportError> {
    render_png(path, || draw(path, title, y_label, curves))
}

fn draw(
    path: &Path,
    title: &str,
    y_label: &str,
    curves: &[Curve],
) -> Result<(), Box<dyn std::error::Error>> {
    let all = curves.iter().flat_map(|c| c.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for (s, sp) in all {
        x0 = x0.min(*s as f64);
        x1 = x1.max(*s as f64);
        y0 = y0.min(sp.min);
        y1 = y1.max(sp.max);
    }
    if !x0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.08).max(1e-3);
    let (y0, y1) = (y0 - pad, y1 + pad);

    let root = BitMapBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc("training step")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .draw()?;
    for (i, c) in curves.iter().enumerate() {
        let col = colour(&c.label, i);
        if c.points.iter().any(|(_, s)| s.max > s.min) {
            let mut band: Vec<(f64, f64)> =
                c.points.iter().map(|(s, sp)| (*s as f64, sp.max)).collect();
            band.extend(c.points.iter().rev().map(|(s, sp)| (*s as f64, sp.min)));
            chart.draw_series(std::iter::once(Polygon::new(band, col.mix(0.18).filled())))?;
        }
        let n = c.points.first().map_or(0, |p| p.1.n);
        let label = if n > 1 {
            format!("{} (mean of {n}, band = min-max)", c.label)
        } else {
            c.label.clone()
        };
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|(s, sp)| (*s as f64, sp.mean)),
                col.stroke_width(3),
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], col.stroke_width(3)));
        if c.points.len() <= 40 {
            chart.draw_series(
                c.points
                    .iter()
                    .map(|(s, sp)| Circle::new((*s as f64, sp.mean), 3, col.filled())),
            )?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// One point of the regime map: a rule's paired difference against the reference in one
/// condition, placed at the condition's live length statistics.
pub(crate) struct MapPoint {
    /// The rule.
    pub rule: String,
    /// Live relative pos-neg gap `(L+ - L-) / mean length` of the condition.
    pub gap_rel: f64,
    /// Live response-length CV of the condition.
    pub length_cv: f64,
    /// The paired difference (mean, 95% interval).
    pub diff: crate::paired::Interval,
}

/// The regime map: two panels, the paired differences against the live relative gap (left)
/// and the live length CV (right), with their 95% intervals as error bars.
pub(crate) fn regime_map_plot(
    path: &Path,
    title: &str,
    y_label: &str,
    points: &[MapPoint],
) -> Result<(), ReportError> {
    render_png(path, || draw_map(path, title, y_label, points))
}

fn span(values: impl Iterator<Item = f64>, pad_min: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (-1.0, 1.0);
    }
    let pad = ((hi - lo) * 0.1).max(pad_min);
    (lo - pad, hi + pad)
}

fn draw_map(
    path: &Path,
    title: &str,
    y_label: &str,
    points: &[MapPoint],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, (1400, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 26))?;
    let panels = root.split_evenly((1, 2));
    let (y0, y1) = span(
        points
            .iter()
            .flat_map(|p| [p.diff.lo, p.diff.hi, 0.0].into_iter()),
        0.005,
    );
    let mut rules: Vec<&str> = points.iter().map(|p| p.rule.as_str()).collect();
    rules.sort();
    rules.dedup();
    type Axis = (&'static str, fn(&MapPoint) -> f64);
    let axes: [Axis; 2] = [
        ("live pos-neg gap (L+ - L-) / mean length", |p| p.gap_rel),
        ("live response-length CV", |p| p.length_cv),
    ];
    for (panel, (x_desc, x_of)) in panels.iter().zip(axes) {
        let (x0, x1) = span(points.iter().map(x_of), 0.02);
        let mut chart = ChartBuilder::on(panel)
            .margin(18)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_label)
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 18))
            .draw()?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x0, 0.0), (x1, 0.0)],
            BLACK.mix(0.5).stroke_width(1),
        )))?;
        for (i, rule) in rules.iter().enumerate() {
            let col = colour(rule, i);
            let mine: Vec<&MapPoint> = points.iter().filter(|p| p.rule == *rule).collect();
            // rules side by side around the condition's x, so that their bars do not overlap
            let shift = (i as f64 - (rules.len() as f64 - 1.0) / 2.0) * 0.015 * (x1 - x0);
            let x_at = |p: &MapPoint| x_of(p) + shift;
            chart.draw_series(mine.iter().map(|p| {
                ErrorBar::new_vertical(
                    x_at(p),
                    p.diff.lo,
                    p.diff.mean,
                    p.diff.hi,
                    col.stroke_width(2),
                    10,
                )
            }))?;
            chart
                .draw_series(
                    mine.iter()
                        .map(|p| Circle::new((x_at(p), p.diff.mean), 5, col.filled())),
                )?
                .label(format!("{rule} (95% interval over seeds)"))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, col.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
