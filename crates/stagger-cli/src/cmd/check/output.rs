//! The reports as the user reads them: text, one report after another, or JSON, the
//! [`Report`]s as they are.

use std::fmt::Write as _;
use std::io::Write;
use std::time::Duration;

use stagger_core::duration::human;

use super::args::Format;
use super::report::{Report, recovers};
use crate::flags::CommandError;

/// The delays the text lists; the JSON lists up to a hundred.
const SHOWN_DELAYS: usize = 8;

/// Writes `reports` to `out` in `format`: JSON as one array, or each report's text, a blank
/// line between two.
pub(super) fn write(
    reports: &[Report],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, reports).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Format::Text => {
            for (i, r) in reports.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                out.write_all(text(r).as_bytes())?;
            }
        }
    }
    Ok(())
}

/// One report as text: the configuration, then each section that has figures, then the
/// warnings.
fn text(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", r.source);
    let policy = if r.hedging.is_some() {
        "none, hedged"
    } else {
        r.policy
    };
    let _ = writeln!(
        s,
        "  policy: {policy}, {} attempts in all{}",
        r.max_attempts,
        if r.idempotent {
            ""
        } else {
            "; not idempotent: an uncertain failure is never retried"
        }
    );
    if let Some(h) = &r.hedging {
        let _ = writeln!(s, "  hedging: {h}");
    }
    if !r.delays_ms.is_empty() && r.hedging.is_none() {
        let mut bands: Vec<String> = r
            .delays_ms
            .iter()
            .take(SHOWN_DELAYS)
            .map(|&(a, b)| band(a, b))
            .collect();
        let retries = r.max_attempts.saturating_sub(1) as usize;
        if retries > SHOWN_DELAYS {
            bands.push(format!("and {} more", retries - SHOWN_DELAYS));
        }
        let _ = writeln!(s, "  delays before each retry: {}", bands.join(", "));
        let _ = writeln!(
            s,
            "  retry window (the delays' sum): {}",
            band(r.window_ms.0, r.window_ms.1)
        );
    }
    let _ = writeln!(s, "  deadline: {}", r.deadline.as_deref().unwrap_or("none"));
    let _ = writeln!(s, "  budget: {}", r.budget.as_deref().unwrap_or("none"));

    let l = &r.layers;
    let _ = writeln!(
        s,
        "\nAttempts per request through {} layer{}:",
        l.layers,
        if l.layers == 1 { "" } else { "s" }
    );
    let worst = l.worst();
    if l.layers == 1 {
        let _ = writeln!(s, "  at most {}", l.owned);
    } else {
        let _ = writeln!(
            s,
            "  worst case, layers that do not coordinate (other libraries, or nested = \"retry\"): {} ^ {} = {worst}",
            l.owned, l.layers
        );
        let _ = writeln!(
            s,
            "  with stagger's default ownership of recovery (nested = \"single-attempt\"): {}",
            l.owned
        );
        if let Some(nested) = l.nested {
            let _ = writeln!(s, "  this configuration sets nested = \"{nested}\"");
        }
        if let Some(m) = &l.simulated {
            let _ = writeln!(
                s,
                "  simulated in the total outage below, no budget, the deadline at every layer: {:.2} attempts per request when every layer retries, {:.2} with stagger's default",
                m.uncoordinated, m.owned
            );
        }
    }

    if let Some(o) = &r.outage {
        let _ = writeln!(
            s,
            "\nA total outage of {}, {} requests a second from {} (simulated):",
            o.duration,
            rate(o.rate),
            clients(o.clients)
        );
        let _ = writeln!(
            s,
            "  without a budget: {:.2} attempts per request",
            o.without_budget
        );
        if let Some(with) = o.with_budget {
            let _ = writeln!(
                s,
                "  with its budget, one per client: {with:.2} attempts per request"
            );
        }
    }
    if let Some(t) = &r.throttle {
        let _ = writeln!(
            s,
            "\nA 429 storm (the trial against nginx's limit_req: 20 requests at once against 5 a second, Retry-After: 1, a 3 s deadline unless the configuration sets one), simulated:"
        );
        let default = |is: bool| if is { " (stagger's default)" } else { "" };
        let _ = writeln!(
            s,
            "  each 429's wait is a floor, spread above by {}{}; a wait past {}{} is not waited for",
            t.dispersal,
            default(t.default_dispersal),
            t.max_server_wait,
            default(t.default_max_server_wait)
        );
        let whose = if t.own_deadline {
            "its deadline"
        } else {
            "the trial's deadline (the configuration sets none)"
        };
        let _ = writeln!(
            s,
            "  served {:.1} of 20 within {whose}, {} (mean over {} seeds); {} retries before the server's time",
            t.served, t.deadline, t.seeds, t.early_retries
        );
    }
    if !r.workloads.is_empty() {
        let _ = writeln!(
            s,
            "\nOn the canonical workloads (simulated, world seed {}):",
            r.seed
        );
        let mut table = crate::render::Table::new([
            "",
            "herd peak share",
            "outage success",
            "spike tail goodput",
        ]);
        for row in &r.workloads {
            table.row([
                row.label.clone(),
                format!("{:.1}%", 100.0 * row.herd_peak_share),
                format!("{:.1}%", 100.0 * row.outage_success),
                row.spike_tail_goodput
                    .map_or_else(|| "-".to_owned(), |g| format!("{g:.3} ({})", verdict(g))),
            ]);
        }
        for line in table.markdown().lines() {
            let _ = writeln!(s, "  {line}");
        }
        let defaults: Vec<String> = r
            .workloads
            .iter()
            .filter_map(|row| {
                let kind = row.label.strip_suffix(" at its defaults")?;
                Some(format!("{kind} has {}", row.parameters))
            })
            .collect();
        if !defaults.is_empty() {
            let _ = writeln!(s, "  At the catalog's defaults, {}.", defaults.join("; "));
        }
        let reference = &r.spike_reference;
        let measured = reference.tail_goodput.map_or_else(
            || "no figure".to_owned(),
            |g| format!("{g:.3} ({})", verdict(g)),
        );
        let _ = writeln!(
            s,
            "  Each spike figure is one run, with its row's own parameters. The scoreboard's spike runs its {} with other parameters, {} with {}; run here, it gets {measured}.",
            reference.label, reference.policy, reference.parameters
        );
        for reason in &reference.reasons {
            let _ = writeln!(s, "  {reason}.");
        }
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "\nNot simulated as configured:");
        for n in &r.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    if r.warnings.is_empty() {
        let _ = writeln!(s, "\nNo warnings.");
    } else {
        let _ = writeln!(s, "\nWarnings:");
        for w in &r.warnings {
            let _ = writeln!(s, "  - {}\n    Fix: {}", w.what, w.fix);
        }
    }
    s
}

/// A rate as people write one: `1000`, `0.5`, `12.25`, with no digits it does not have.
pub(super) fn rate(r: f64) -> String {
    // `Display` writes the shortest decimal that reads back as the same number, and never
    // an exponent.
    r.to_string()
}

/// `1 client`, `100 clients`.
pub(super) fn clients(n: u64) -> String {
    if n == 1 {
        "1 client".to_owned()
    } else {
        format!("{n} clients")
    }
}

/// The spike's verdict on a tail goodput ratio, as the scoreboard words it.
fn verdict(tail_goodput: f64) -> &'static str {
    if recovers(Some(tail_goodput)) {
        "recovers"
    } else {
        "stays collapsed"
    }
}

/// A band of milliseconds in a reader's units: "100 ms" or "0 ms to 2 s".
fn band(min_ms: f64, max_ms: f64) -> String {
    let d = |v: f64| human(Duration::from_secs_f64((v / 1e3).clamp(0.0, 1e12)));
    if (max_ms - min_ms).abs() < 1e-9 {
        d(min_ms)
    } else {
        format!("{} to {}", d(min_ms), d(max_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_has_only_the_digits_it_needs() {
        assert_eq!(rate(1_000.0), "1000");
        assert_eq!(rate(0.5), "0.5");
        assert_eq!(rate(12.25), "12.25");
    }

    #[test]
    fn a_band_reads_as_one_value_or_two() {
        assert_eq!(band(100.0, 100.0), "100 ms");
        assert_eq!(band(0.0, 2_000.0), "0 ms to 2 s");
    }
}
