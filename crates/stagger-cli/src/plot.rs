//! SVG plots, the scoreboard's and `stagger simulate`'s, with the captions a page shows under
//! them. Presentation only: each line is a run's series or a sweep's points as they are.

use std::path::Path;

use plotters::prelude::*;
use stagger_sim::scoreboard::{Scoreboard, Series, SweepPoint};

use crate::flags::CommandError;

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

/// A plot as a page shows it: the file name the Markdown's image names (`herd.svg`), the
/// SVG document, and a caption that says what to look for in it.
pub(crate) struct Figure {
    /// The image's address in the Markdown.
    pub(crate) name: &'static str,
    /// The SVG document.
    pub(crate) svg: String,
    /// What to see in it, in a sentence or two.
    pub(crate) caption: &'static str,
}

fn failed(e: impl std::fmt::Display) -> CommandError {
    CommandError::Io(std::io::Error::other(e.to_string()))
}

/// Lines `(x, y)` labelled, on one chart, written to `path`.
pub(crate) fn chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<(), CommandError> {
    std::fs::write(path, chart_svg(title, x_label, y_label, lines)?)?;
    Ok(())
}

/// Lines `(x, y)` labelled, on one chart, as an SVG document.
pub(crate) fn chart_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<String, CommandError> {
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
) -> Result<(), CommandError> {
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
pub(crate) fn all(board: &Scoreboard, dir: &Path) -> Result<(), CommandError> {
    for figure in all_svgs(board)? {
        std::fs::write(dir.join(figure.name), figure.svg)?;
    }
    Ok(())
}

/// The captions of the plots `stagger simulate` draws, by what they show.
pub(crate) mod captions {
    /// Retries per 10 ms of clients that fail together (the herd, or a scenario's fixed
    /// clients).
    pub(crate) const RETRIES: &str = "Retries sent in each 10 ms after the clients fail \
        together, one line per policy. Tall, thin spikes are clients retrying in step; a low, \
        wide band is the same retries spread out. The table's peak_window_share is the busiest \
        window's share of all retries.";
    /// Goodput per second on the spike.
    pub(crate) const SPIKE: &str = "Successful requests per second, one line per policy. \
        After the spike, a line that climbs back to the rate offered has recovered; one that \
        stays low has collapsed: its retries keep the server overloaded once the trigger is \
        gone.";
    /// Goodput per second on the ramp.
    pub(crate) const RAMP: &str = "Successful requests per second as the rate offered ramps \
        up and down again, one line per policy. A line that falls away as the rate climbs and \
        stays low after it has collapsed under its own retries.";
    /// Goodput per second of a scenario's open or serial clients.
    pub(crate) const GOODPUT: &str = "Successful requests per second against the rate \
        offered. Where the successes fall below the offered line, requests fail; if they \
        stay below once the load eases, retries are keeping the dependency overloaded.";
}

/// Every plot of the scoreboard, with the names the Markdown's images use.
pub(crate) fn all_svgs(board: &Scoreboard) -> Result<Vec<Figure>, CommandError> {
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
        Figure {
            name: "herd.svg",
            svg: chart_svg(
                "herd: retries per 10 ms",
                "time (s)",
                "retries",
                &series_lines(&board.herd_arrivals, 0.01),
            )?,
            caption: "Retries sent in each 10 ms after 1000 clients fail at once, one line per \
                policy. Tall, thin spikes are clients retrying in step, each wave a share of \
                all retries in one window; jittered policies spread the same retries into a \
                low, wide band.",
        },
        Figure {
            name: "contention_work.svg",
            svg: chart_svg(
                "contention: writes per round",
                "clients",
                "writes",
                &sweep_lines(&board.contention_sweep, |r| r.writes_per_round),
            )?,
            caption: "Conditional writes per round as the clients contending for one item grow, \
                one line per strategy. The lower a line, the less work is wasted on conflicts: \
                compare the jittered strategies with un-jittered exponential and with no \
                backoff.",
        },
        Figure {
            name: "contention_time.svg",
            svg: chart_svg(
                "contention: completion",
                "clients",
                "ms",
                &sweep_lines(&board.contention_sweep, |r| r.completion_ms),
            )?,
            caption: "When the last client finishes, as the clients grow. The lower a line, the \
                sooner all are done; read it beside the writes above, since finishing sooner \
                can cost more work.",
        },
        Figure {
            name: "open_loop.svg",
            svg: chart_svg("open-loop: success and load", "failure rate", "", &open)?,
            caption: "Success and load as the failure rate rises, for each strategy. A success \
                line near 1 means retries hide the failures; a load line above 1 is the extra \
                attempts those retries send a dependency that is already failing, which a \
                budget or a breaker holds down at some cost in success.",
        },
        Figure {
            name: "spike.svg",
            svg: chart_svg(
                "spike: goodput per second",
                "time (s)",
                "successes/s",
                &series_lines(&board.spike_goodput, 1.0),
            )?,
            caption: "Successful requests per second through the spike (the rate offered \
                doubles from 20 s to 25 s). A line that climbs back to the rate offered after \
                25 s has recovered; one that stays low has collapsed: its retries keep the \
                server overloaded once the trigger is gone.",
        },
    ])
}
