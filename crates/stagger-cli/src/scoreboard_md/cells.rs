//! The cells and tables every section writes: how a share, a ratio, a time and a missing
//! figure read, and the lookups of a row by its label.
//!
//! One place for them keeps every table of the scoreboard and the pages in the same format,
//! so a figure reads the same wherever it appears.

use stagger_sim::ResultRow;
use stagger_sim::scoreboard::{Labelled, SweepPoint};

use crate::render::Table;

/// A share as a percentage with one decimal: 0.218 is "21.8%".
pub(super) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// A share and the range it spans over seeds: "45.0% (40.0%-50.0%)".
pub(super) fn pct_range(x: f64, (low, high): (f64, f64)) -> String {
    format!("{} ({}-{})", pct(x), pct(low), pct(high))
}

/// A ratio or a mean with three decimals.
pub(super) fn num(x: f64) -> String {
    format!("{x:.3}")
}

/// A milliseconds figure, whole, or `-`.
pub(super) fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

/// A Markdown table of `header` and `rows`.
pub(super) fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut t = Table::new(header.iter().copied());
    for r in rows {
        t.row(r);
    }
    t.markdown()
}

/// One table row per labelled result: the label as code, then `f`'s cells.
pub(super) fn label_rows(
    rows: &[Labelled],
    f: impl Fn(&ResultRow) -> Vec<String>,
) -> Vec<Vec<String>> {
    rows.iter()
        .map(|l| {
            let mut cells = vec![format!("`{}`", l.label)];
            cells.extend(f(&l.row));
            cells
        })
        .collect()
}

/// The row labelled `label`, if the board has it.
pub(super) fn row<'a>(rows: &'a [Labelled], label: &str) -> Option<&'a ResultRow> {
    rows.iter().find(|l| l.label == label).map(|l| &l.row)
}

/// The row labelled `label` at failure rate `x` of a sweep.
pub(super) fn at<'a>(points: &'a [SweepPoint], x: f64, label: &str) -> Option<&'a ResultRow> {
    let point = points.iter().find(|p| (p.x - x).abs() < 1e-9)?;
    row(&point.results, label)
}

/// A sweep as a table: a row per point, its `x` under `x_name`, then `cell` of each result,
/// under the labels of the first point's results.
pub(super) fn sweep(
    points: &[SweepPoint],
    x_name: &str,
    cell: impl Fn(&ResultRow) -> String,
) -> String {
    let Some(first) = points.first() else {
        return String::new();
    };
    let mut header = vec![x_name.to_owned()];
    header.extend(first.results.iter().map(|l| l.label.clone()));
    let rows = points
        .iter()
        .map(|p| {
            let mut cells = vec![format!("{}", p.x)];
            cells.extend(p.results.iter().map(|l| cell(&l.row)));
            cells
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(&header, rows)
}

/// A duration as the CLI's flags take it: whole seconds, or milliseconds.
pub(super) fn flag_duration(d: std::time::Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// A quantile in hundredths of a percent as words: `9500` is "95th percentile".
pub(super) fn percentile_words(q: u16) -> String {
    let whole = q / 100;
    let suffix = match (whole % 10, whole % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    if q.is_multiple_of(100) {
        format!("{whole}{suffix} percentile")
    } else {
        let text = stagger_core::engine::HedgeDelay::Quantile(q).to_string();
        format!("{}th percentile", text.trim_start_matches('p'))
    }
}

/// A milliseconds figure with one decimal, or `-`.
pub(super) fn ms1(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

/// The last seed of a run of `count` seeds from `seed` on.
pub(super) fn last_seed(seed: u64, count: u64) -> u64 {
    seed + count.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_read_as_words() {
        assert_eq!(percentile_words(9500), "95th percentile");
        assert_eq!(percentile_words(9900), "99th percentile");
        assert_eq!(percentile_words(5100), "51st percentile");
        assert_eq!(percentile_words(1100), "11th percentile");
        assert_eq!(percentile_words(9990), "99.9th percentile");
    }
}
