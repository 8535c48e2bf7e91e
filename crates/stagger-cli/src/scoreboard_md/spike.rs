//! The spike and the ramp, one server with no admission control: their tables, the seeds over
//! which the spike recovers, and what the hedged rows show beside the retrying ones.
//!
//! The hedged rows' text works out the server's steady state at the base rate from the
//! model's definition, to say whether hedges go out before a timeout would.

use std::fmt::Write as _;

use stagger_sim::ResultRow;
use stagger_sim::scoreboard::{Labelled, Scoreboard};

use super::cells::{label_rows, last_seed, num, percentile_words, row, table};

/// The spike's section and the ramp's.
pub(super) fn sections(board: &Scoreboard) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## `spike`: 40 requests/s, 80 for 5 s, no admission control (W4)\n\n![Goodput](spike.svg)\n"
    );
    s.push_str(&spike_table(&board.spike));
    s.push_str(&spike_hedging_text(&board.spike));
    if !board.spike_recovery.is_empty() {
        let seeds = stagger_sim::scoreboard::SPIKE_SEEDS;
        let _ = write!(
            s,
            "\nOver world seeds {} to {} (the source averages 10 unseeded runs, which go one \
             way or the other near the tipping point), the runs that recover, with a tail \
             goodput ratio of at least {}: ",
            board.seed,
            last_seed(board.seed, seeds),
            stagger_sim::scoreboard::RECOVERED
        );
        let parts: Vec<String> = board
            .spike_recovery
            .iter()
            .map(|r| {
                format!(
                    "`{}` {} of {} (mean tail goodput ratio {})",
                    r.label,
                    r.recovered,
                    r.runs,
                    num(r.mean_ratio)
                )
            })
            .collect();
        let _ = writeln!(s, "{}.", parts.join("; "));
    }
    let ramp = stagger_sim::workload::spike::Ramp::default();
    let peak = ramp.rate * ramp.peak_factor;
    let at = ramp.peak_at.as_secs_f64();
    let _ = writeln!(
        s,
        "\n## `ramp`: {} requests/s rising to {} at {}, then falling to none at {}\n",
        ramp.rate,
        peak,
        stagger_core::duration::human(ramp.peak_at),
        std::time::Duration::try_from_secs_f64(at + at * peak / (peak - ramp.rate))
            .map_or_else(|_| "never".to_owned(), stagger_core::duration::human),
    );
    s.push_str(&table(
        &["Strategy", "Tail goodput / offered", "Attempts"],
        label_rows(&board.ramp, |r| {
            vec![tail_goodput(r), r.attempts.to_string()]
        }),
    ));
    s.push_str(&ramp_hedging_text(&board.ramp));
    s
}

/// What the spike's hedged rows are, and what they show beside the retrying ones with the same
/// budget: read from the rows and the model's definition.
pub(super) fn spike_hedging_text(rows: &[Labelled]) -> String {
    use stagger_core::duration::human;
    use stagger_sim::scoreboard::spike_hedging;
    use stagger_sim::workload::spike::Spike;
    let name = hedged_label();
    let model = Spike::default();
    let server = model.server;
    // The steady work in progress at the base rate: n = rate x (base + per x n).
    let (base, per) = (
        server.base_service.as_secs_f64(),
        server.per_in_flight.as_secs_f64(),
    );
    let n = model.rate * base / (1.0 - model.rate * per);
    let service = base + per * n;
    let network = std::time::Duration::from_nanos(server.network.mean() as u64);
    let mut s = format!(
        "\nThe `{name}` rows hedge instead of retrying: a request sends another attempt each \
         time its latest has gone unanswered past the {} of the fleet's attempt latencies, up \
         to {} in all (as many as `no backoff`), and a timed-out attempt sends \
         the next at once; every hedge is a retry to the budget, the same budgets as the \
         retrying rows. At {} requests a second the server settles at about {n:.0} attempts in \
         progress and {service:.2} s of service each, and the network adds two draws of mean \
         {}{}. But there is one server, and its service time grows with every attempt in \
         progress: a hedge adds work where the slowness is.",
        percentile_words(match spike_hedging().delay() {
            stagger_core::engine::HedgeDelay::Quantile(q) => q,
            _ => 0,
        }),
        spike_hedging().max_attempts(),
        model.rate,
        human(network),
        if service + 2.0 * network.as_secs_f64() < server.timeout.as_secs_f64() {
            format!(
                ", well within the {} timeout: while the server is healthy, the hedges go out \
                 before a timeout would",
                human(server.timeout)
            )
        } else {
            format!(", near or past the {} timeout", human(server.timeout))
        },
    );
    if let (Some(h), Some(nb)) = (row(rows, &name), row(rows, "no backoff")) {
        let _ = write!(
            s,
            " Without a budget: tail goodput {}, recovery {}, {} attempts; no backoff: {}, \
             {}, {} attempts.",
            tail_goodput(h),
            recovery(h),
            h.attempts,
            tail_goodput(nb),
            recovery(nb),
            nb.attempts
        );
    }
    let pairs: Vec<String> = stagger_core::budget::BudgetKind::ALL
        .into_iter()
        .filter_map(|b| {
            let (h, nb) = (
                row(rows, &format!("{name} + {b}"))?,
                row(rows, &format!("no backoff + {b}"))?,
            );
            Some(format!(
                "`{b}` {} and {} ({}, {})",
                tail_goodput(h),
                recovery(h),
                tail_goodput(nb),
                recovery(nb)
            ))
        })
        .collect();
    if !pairs.is_empty() {
        let _ = write!(
            s,
            " With each budget, tail goodput and recovery hedged (and with no backoff): {}.",
            pairs.join("; ")
        );
    }
    // Recovery hedged against no backoff, budget by budget: later, the same, or sooner.
    let mut counts = [0usize; 3];
    let mut budgets = 0;
    for b in stagger_core::budget::BudgetKind::ALL {
        let (Some(h), Some(nb)) = (
            row(rows, &format!("{name} + {b}")),
            row(rows, &format!("no backoff + {b}")),
        ) else {
            continue;
        };
        budgets += 1;
        let at = |r: &ResultRow| match r.recovery_ms {
            Some(Some(v)) => v,
            _ => f64::INFINITY,
        };
        let (x, y) = (at(h), at(nb));
        counts[if x > y {
            0
        } else if x < y {
            2
        } else {
            1
        }] += 1;
    }
    if budgets > 0 {
        let _ = write!(
            s,
            " Hedged, the recovery came later than with no backoff under {} of the {budgets} budgets, at the same time under {} and sooner under {}.",
            counts[0], counts[1], counts[2]
        );
    }
    s.push('\n');
    s
}

/// The ramp's hedged rows beside the retrying ones without backoff: the range of their tail
/// goodput, with or without a budget.
fn ramp_hedging_text(rows: &[Labelled]) -> String {
    let hedged = hedged_label();
    let range = |prefix: &str| {
        let ratios: Vec<f64> = rows
            .iter()
            .filter(|l| l.label.starts_with(prefix))
            .filter_map(|l| l.row.tail_goodput_ratio)
            .collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (!ratios.is_empty()).then(|| format!("{} to {}", num(lo), num(hi)))
    };
    match (range(&hedged), range("no backoff")) {
        (Some(h), Some(nb)) => format!(
            "\nThe `{hedged}` rows (the spike's hedging, above), without a budget and with \
             each: tail goodput {h}, against {nb} for `no backoff` and its budgets.\n"
        ),
        _ => String::new(),
    }
}

/// The label of the spike's hedged rows: no backoff, hedged as the scoreboard hedges it.
fn hedged_label() -> String {
    stagger_sim::workload::spike::no_backoff()
        .with_hedging(Some(stagger_sim::scoreboard::spike_hedging()))
        .name()
}

/// A spike row's tail goodput ratio, `0.000` if it has none.
fn tail_goodput(r: &ResultRow) -> String {
    num(r.tail_goodput_ratio.unwrap_or(0.0))
}

/// A spike row's recovery after the spike, in seconds, `never`, or `-` if not measured.
fn recovery(r: &ResultRow) -> String {
    match r.recovery_ms {
        Some(Some(v)) => format!("{:.0} s", v / 1000.0),
        Some(None) => "never".to_owned(),
        None => "-".to_owned(),
    }
}

/// The spike's rows as a table: each strategy's tail goodput, recovery and attempts.
fn spike_table(rows: &[Labelled]) -> String {
    table(
        &[
            "Strategy",
            "Tail goodput / offered",
            "Recovery after the spike",
            "Attempts",
        ],
        label_rows(rows, |r| {
            vec![tail_goodput(r), recovery(r), r.attempts.to_string()]
        }),
    )
}

/// The spike rows of the hedging page: no backoff and the hedged ones, each without a budget
/// and with each.
pub(super) fn spike_hedging_table(rows: &[Labelled]) -> String {
    let hedged = hedged_label();
    let kept: Vec<Labelled> = rows
        .iter()
        .filter(|l| l.label.starts_with("no backoff") || l.label.starts_with(&hedged))
        .cloned()
        .collect();
    spike_table(&kept)
}
