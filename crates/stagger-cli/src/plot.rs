//! SVG plots of the scoreboard. Presentation only.

use std::path::Path;

use plotters::prelude::*;
use stagger_sim::scoreboard::{Scoreboard, Series, SweepPoint};

use crate::flags::Failure;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Labelled lines of `(x, y)` points.
pub(crate) type Lines = Vec<(String, Vec<(f64, f64)>)>;

fn failed(e: impl std::fmt::Display) -> Failure {
    Failure::Io(std::io::Error::other(e.to_string()))
}

/// Lines `(x, y)` labelled, on one chart, written to `path`.
pub(crate) fn chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Failure> {
    std::fs::write(path, chart_svg(title, x_label, y_label, lines)?)?;
    Ok(())
}

/// Lines `(x, y)` labelled, on one chart, as an SVG document.
pub(crate) fn chart_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<String, Failure> {
    let mut svg = String::new();
    draw(&mut svg, title, x_label, y_label, lines)?;
    Ok(svg)
}

fn draw(
    svg: &mut String,
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Failure> {
    let root = SVGBackend::with_string(svg, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(failed)?;
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let ys = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.1));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let y1 = ys.fold(0.0f64, f64::max).max(1e-9) * 1.05;
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
    let mut c = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(failed)?;
    c.configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(failed)?;
    for (i, (label, points)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        c.draw_series(LineSeries::new(
            points.iter().copied(),
            color.stroke_width(2),
        ))
        .map_err(failed)?
        .label(label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(failed)?;
    root.present().map_err(failed)
}

fn series_lines(series: &[Series], step: f64) -> Lines {
    series
        .iter()
        .map(|s| {
            (
                s.label.clone(),
                s.values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64 * step, *v))
                    .collect(),
            )
        })
        .collect()
}

fn sweep_lines(
    points: &[SweepPoint],
    y: impl Fn(&stagger_sim::ResultRow) -> Option<f64>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let Some(first) = points.first() else {
        return Vec::new();
    };
    (0..first.results.len())
        .map(|i| {
            let label = first.results[i].label.clone();
            let line = points
                .iter()
                .filter_map(|p| Some((p.x, y(&p.results.get(i)?.row)?)))
                .collect();
            (label, line)
        })
        .collect()
}

/// Writes every plot into `dir`, each under its file name.
pub(crate) fn all(board: &Scoreboard, dir: &Path) -> Result<(), Failure> {
    for (name, svg) in all_svgs(board)? {
        std::fs::write(dir.join(name), svg)?;
    }
    Ok(())
}

/// Every plot of the scoreboard, as (file name, SVG document), the names the Markdown's
/// images use.
pub(crate) fn all_svgs(board: &Scoreboard) -> Result<Vec<(&'static str, String)>, Failure> {
    let mut open = sweep_lines(&board.open_loop, |r| Some(r.success_rate));
    for (label, _) in &mut open {
        *label = format!("success, {label}");
    }
    let mut load = sweep_lines(&board.open_loop, |r| Some(r.load));
    for (label, _) in &mut load {
        *label = format!("load, {label}");
    }
    open.extend(load);
    Ok(vec![
        (
            "herd.svg",
            chart_svg(
                "herd: retries per 10 ms",
                "time (s)",
                "retries",
                &series_lines(&board.herd_arrivals, 0.01),
            )?,
        ),
        (
            "contention_work.svg",
            chart_svg(
                "contention: writes per round",
                "clients",
                "writes",
                &sweep_lines(&board.contention_sweep, |r| r.writes_per_round),
            )?,
        ),
        (
            "contention_time.svg",
            chart_svg(
                "contention: completion",
                "clients",
                "ms",
                &sweep_lines(&board.contention_sweep, |r| r.completion_ms),
            )?,
        ),
        (
            "open_loop.svg",
            chart_svg("open-loop: success and load", "failure rate", "", &open)?,
        ),
        (
            "spike.svg",
            chart_svg(
                "spike: goodput per second",
                "time (s)",
                "successes/s",
                &series_lines(&board.spike_goodput, 1.0),
            )?,
        ),
    ])
}
