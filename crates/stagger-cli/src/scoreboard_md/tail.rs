//! Hedged requests against replicas that pause: the `tail` workload's rows, its load sweep and
//! its fan-out.
//!
//! The sentences under the sweep and the fan-out are read from their points (which way the
//! cut and the extra load go), so they change with the figures rather than describe one run.

use std::fmt::Write as _;

use stagger_sim::scoreboard::Scoreboard;

use super::cells::{flag_duration, last_seed, ms1, num, pct, percentile_words, table};

/// The section: the model, the rows, the load sweep and the fan-out.
pub(super) fn section(board: &Scoreboard) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## `tail`: hedged requests against replicas that pause\n\n{}\n{}{}{}",
        tail_intro(board.seed, board.tail_delay.as_ref()),
        tail_table(&board.tail),
        tail_sweep(&board.tail_sweep, board.seed),
        tail_fanout(&board.tail_fanout, board.seed)
    );
    s
}

/// A service-time distribution as the workload pages write it.
fn delay_text(d: stagger_sim::dist::Delay) -> String {
    use stagger_core::duration::human;
    use stagger_sim::dist::Delay;
    let d_ns = |n: u64| human(std::time::Duration::from_nanos(n));
    match d {
        Delay::Exponential { mean } => format!("Exp(mean {})", d_ns(mean)),
        Delay::Constant { nanos } => d_ns(nanos),
        Delay::AbsNormal { mean, sd } => format!("|Normal({}, {})|", d_ns(mean), d_ns(sd)),
    }
}

/// What the tail rows are, and the commands behind them: every figure of the model and the
/// strategies is read from their definitions, the fixed delay from its runs.
pub(super) fn tail_intro(seed: u64, delay: Option<&stagger_sim::scoreboard::TailDelay>) -> String {
    use stagger_core::duration::human;
    use stagger_sim::scoreboard::{
        TAIL_ATTEMPT_TIMEOUT, TAIL_ATTEMPTS, TAIL_DELAY_DURATION, TAIL_DELAY_SHARE, TAIL_QUANTILE,
        TAIL_SEEDS,
    };
    use stagger_sim::workload::tail::Tail;
    let model = Tail::default();
    let paused =
        model.pause.as_secs_f64() / (model.pause.as_secs_f64() + model.pause_every.as_secs_f64());
    // The delay's share as a quantile, in hundredths of a percent.
    let share_quantile = (TAIL_DELAY_SHARE * 10_000.0).round() as u16;
    let fixed = delay.map_or_else(
        || "The fixed delay was not measured.".to_owned(),
        |d| {
            let below = d.share_below.map_or_else(String::new, |b| {
                format!(", {} within {} ms", pct(b), d.delay_ms - 1)
            });
            format!(
                "The fixed delay, {} ms, is the {} of the same pool without \
                 pauses: the smallest whole millisecond within which at least {} of its \
                 requests answered ({}{below}; world seed {seed}, over {}: `stagger simulate \
                 --workload tail --policy no-retry --pause 0s --duration {} --attempt-timeout \
                 {}ms --seed {seed}`, whose success rate is the share answered in time).",
                d.delay_ms,
                percentile_words(share_quantile),
                pct(TAIL_DELAY_SHARE),
                pct(d.share_within),
                human(TAIL_DELAY_DURATION),
                flag_duration(TAIL_DELAY_DURATION),
                d.delay_ms,
            )
        },
    );
    let fixed_flag = delay.map_or_else(String::new, |d| format!(",{}ms", d.delay_ms));
    let quantile = stagger_core::engine::HedgeDelay::Quantile(TAIL_QUANTILE);
    format!(
        "A pool of {} replicas, each serving {} requests at once ({} each) and queueing the \
         rest; each replica runs for Exp(mean {}) between pauses of {}, so it is paused {} of \
         the time, and what it holds waits. Requests arrive at random at {} of the pool's \
         capacity ({:.0} a second) for {}, each with a {} deadline; every attempt goes to a \
         replica picked at random, and a hedge to one the request has not tried. Every \
         strategy is `immediate` with {TAIL_ATTEMPTS} attempts in all. Hedged, the second \
         attempt goes out when the first has gone unanswered for the delay: the {} of the \
         fleet's attempt latencies as a `LatencySketch` measures them, or a fixed delay; the first answer wins and the other attempt is cancelled. With an \
         attempt timeout, an attempt still unanswered after {} is cut and retried at once. \
         {fixed} Latencies are of the requests that succeeded, from the first attempt to the \
         answer; load is attempts per request. Means over world seeds {seed} to {}, and the \
         p99.9 of each (`stagger simulate --workload tail --policy immediate --max-attempts \
         {TAIL_ATTEMPTS} --hedge none,{quantile}{fixed_flag} --seed N`; with `--pause 0s` for the \
         first row, `--hedge none --attempt-timeout {}` for the last).\n",
        model.replicas,
        model.concurrency,
        delay_text(model.service),
        human(model.pause_every),
        human(model.pause),
        pct(paused),
        pct(model.load),
        model.requests_per_second(),
        human(model.duration),
        human(model.timeout),
        percentile_words(TAIL_QUANTILE),
        human(TAIL_ATTEMPT_TIMEOUT),
        last_seed(seed, TAIL_SEEDS),
        flag_duration(TAIL_ATTEMPT_TIMEOUT),
    )
}

/// The tail rows as a table.
pub(super) fn tail_table(points: &[stagger_sim::scoreboard::TailPoint]) -> String {
    use stagger_sim::scoreboard::p999;
    table(
        &[
            "Strategy",
            "p50 (ms)",
            "p99 (ms)",
            "p99.9 (ms)",
            "p99.9 per seed (ms)",
            "Load",
            "Success",
        ],
        points
            .iter()
            .map(|p| {
                vec![
                    format!("`{}`", p.label),
                    ms1(p.mean(|r| r.p50_ms)),
                    ms1(p.mean(|r| r.p99_ms)),
                    ms1(p.p999()),
                    p.runs
                        .iter()
                        .map(|r| ms1(p999(r)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.load().map_or_else(|| "-".to_owned(), num),
                    p.mean(|r| Some(r.success_rate))
                        .map_or_else(|| "-".to_owned(), |s| format!("{:.2}%", 100.0 * s)),
                ]
            })
            .collect(),
    )
}

/// Whether `to` is above, below or about `from`, as a verb.
fn trend(from: f64, to: f64) -> &'static str {
    if to > from * 1.02 {
        "rises"
    } else if to < from * 0.98 {
        "falls"
    } else {
        "stays about the same"
    }
}

/// The tail load sweep: a heading, what it shows, the table, and what it says, read from its
/// points.
pub(super) fn tail_sweep(points: &[stagger_sim::scoreboard::TailPoint], seed: u64) -> String {
    use stagger_sim::scoreboard::{TAIL_SWEEP_SEEDS, tail_labels};
    let mut loads: Vec<f64> = Vec::new();
    for p in points {
        if !loads.iter().any(|l| (l - p.offered).abs() < 1e-9) {
            loads.push(p.offered);
        }
    }
    let at = |label: &str, load: f64| {
        points
            .iter()
            .find(|p| p.label == label && (p.offered - load).abs() < 1e-9)
    };
    let rows: Vec<_> = loads
        .iter()
        .filter_map(|&l| {
            let (plain, hedged) = (
                at(tail_labels::NO_HEDGING, l)?,
                at(tail_labels::HEDGE_P95, l)?,
            );
            Some((
                l,
                plain.p999()?,
                hedged.p999()?,
                plain.load()?,
                hedged.load()?,
            ))
        })
        .collect();
    let mut s = format!(
        "\n### Load sweep: hedging as the pool fills\n\nThe same pool and strategies at \
         other offered loads, without hedging and hedged at the {} (`--load L`), \
         means over world seeds {seed} to {} (the rows above at {} are over more seeds). \
         Dean and Barroso warn that hedges add load, and under load queueing; the cut is the \
         p99.9 without hedging over the p99.9 hedged, the extra load the hedged load over \
         the load without hedging, less 1.\n\n",
        percentile_words(stagger_sim::scoreboard::TAIL_QUANTILE),
        last_seed(seed, TAIL_SWEEP_SEEDS),
        pct(stagger_sim::workload::tail::Tail::default().load)
    );
    s.push_str(&table(
        &[
            "Offered load",
            "p99.9, no hedging (ms)",
            &format!(
                "p99.9, {} (ms)",
                stagger_sim::scoreboard::tail_labels::HEDGE_P95
            ),
            "Cut",
            "Load, no hedging",
            &format!("Load, {}", stagger_sim::scoreboard::tail_labels::HEDGE_P95),
            "Extra load",
        ],
        rows.iter()
            .map(|&(l, a, b, la, lb)| {
                vec![
                    pct(l),
                    ms1(Some(a)),
                    ms1(Some(b)),
                    format!("{:.1}x", a / b),
                    num(la),
                    num(lb),
                    format!("+{:.1}%", 100.0 * (lb / la - 1.0)),
                ]
            })
            .collect(),
    ));
    if let (Some(&(l0, a0, b0, la0, lb0)), Some(&(l1, a1, b1, la1, lb1))) =
        (rows.first(), rows.last())
    {
        let (c0, c1) = (a0 / b0, a1 / b1);
        let (x0, x1) = (lb0 / la0 - 1.0, lb1 / la1 - 1.0);
        let _ = writeln!(
            s,
            "\nFrom {} to {} of capacity, the hedged p99.9 {} from {b0:.1} ms to {b1:.1} ms \
             and the cut {} from {c0:.1}x to {c1:.1}x, while the extra load {} from +{:.1}% \
             to +{:.1}%. The p99.9 without hedging {} from {a0:.1} ms to {a1:.1} ms.",
            pct(l0),
            pct(l1),
            trend(b0, b1),
            trend(c0, c1),
            trend(x0, x1),
            100.0 * x0,
            100.0 * x1,
            trend(a0, a1),
        );
    }
    s
}

/// The fan-out rows: a heading, what they are, the table, and what it says, read from them.
pub(super) fn tail_fanout(points: &[stagger_sim::scoreboard::TailPoint], seed: u64) -> String {
    use stagger_sim::scoreboard::{
        TAIL_ATTEMPTS, TAIL_FANOUT, TAIL_QUANTILE, TAIL_SEEDS, tail_labels,
    };
    let find = |label: &str| points.iter().find(|p| p.label == label);
    let said = match (
        find(tail_labels::FANOUT_NO_HEDGING),
        find(tail_labels::FANOUT_HEDGE_P95),
    ) {
        (Some(plain), Some(hedged)) => match (
            plain.mean(|r| r.p99_ms),
            hedged.mean(|r| r.p99_ms),
            plain.p999(),
            hedged.p999(),
            hedged.load(),
        ) {
            (Some(p99), Some(h99), Some(p999), Some(h999), Some(load)) => format!(
                " Hedged, the p99 falls from {} ms to {} ms ({:.1}x) and the p99.9 from {} ms \
                 to {} ms ({:.1}x), for {} attempts per sub-request: a request that needs \
                 {TAIL_FANOUT} answers has {TAIL_FANOUT} chances to meet the tail, so the \
                 cut reaches fewer of its percentiles than a single call's.",
                ms1(Some(p99)),
                ms1(Some(h99)),
                p99 / h99,
                ms1(Some(p999)),
                ms1(Some(h999)),
                p999 / h999,
                num(load),
            ),
            _ => " A row lacks a figure.".to_owned(),
        },
        _ => " The rows were not measured.".to_owned(),
    };
    format!(
        "\n### Fan-out: a request that needs {TAIL_FANOUT} answers\n\nDean and Barroso's \
         setting: each request fans out to {TAIL_FANOUT} sub-requests, each to a replica \
         picked at random and each a run of its own ({TAIL_ATTEMPTS} attempts in all, hedged \
         at the {} when hedged), and succeeds when all of them have, as slow as the slowest. \
         The offered load counts sub-requests, as above; latency and success are the \
         requests', load is attempts per sub-request. Means over world seeds {seed} to {} \
         (`stagger simulate --workload tail --fanout {TAIL_FANOUT} --policy immediate \
         --max-attempts {TAIL_ATTEMPTS} --hedge none,{} --seed N`).{said}\n\n{}",
        percentile_words(TAIL_QUANTILE),
        last_seed(seed, TAIL_SEEDS),
        stagger_core::engine::HedgeDelay::Quantile(TAIL_QUANTILE),
        tail_table(points),
    )
}

#[cfg(test)]
mod tests {
    use stagger_sim::Metrics;
    use stagger_sim::scoreboard::{TailPoint, tail_labels};

    use super::*;

    fn point(label: &str, offered: f64, runs: &[(f64, f64)]) -> TailPoint {
        TailPoint {
            label: label.to_owned(),
            offered,
            runs: runs
                .iter()
                .map(|&(p999, load)| {
                    let mut row = Metrics::new(10_000_000).row("immediate".to_owned(), None);
                    row.p999_ms = Some(Some(p999));
                    row.load = load;
                    row
                })
                .collect(),
        }
    }

    #[test]
    fn the_tail_sweep_is_read_from_its_points() {
        let sweep = vec![
            point(
                tail_labels::NO_HEDGING,
                0.3,
                &[(900.0, 1.0), (1_000.0, 1.0)],
            ),
            point(tail_labels::HEDGE_P95, 0.3, &[(60.0, 1.05), (40.0, 1.05)]),
            point(tail_labels::NO_HEDGING, 0.9, &[(1_200.0, 1.0)]),
            point(tail_labels::HEDGE_P95, 0.9, &[(300.0, 1.08)]),
        ];
        let text = tail_sweep(&sweep, 1);
        // 950 / 50 = 19x at 30 %, 1200 / 300 = 4x at 90 %.
        assert!(text.contains("| 19.0x"), "{text}");
        assert!(text.contains("| 4.0x"), "{text}");
        assert!(
            text.contains("the hedged p99.9 rises from 50.0 ms to 300.0 ms"),
            "{text}"
        );
        assert!(text.contains("the cut falls from 19.0x to 4.0x"), "{text}");
        assert!(
            text.contains("the extra load rises from +5.0% to +8.0%"),
            "{text}"
        );
        // A changed point changes the sentence.
        let mut flat = sweep.clone();
        flat[3].runs[0].p999_ms = Some(Some(50.0));
        let text = tail_sweep(&flat, 1);
        assert!(
            text.contains("the hedged p99.9 stays about the same from 50.0 ms to 50.0 ms"),
            "{text}"
        );
    }

    #[test]
    fn the_fanout_text_is_read_from_its_rows() {
        let mut rows = vec![
            point(tail_labels::FANOUT_NO_HEDGING, 0.6, &[(1_000.0, 1.0)]),
            point(tail_labels::FANOUT_HEDGE_P95, 0.6, &[(250.0, 1.06)]),
        ];
        for (p, p99) in rows.iter_mut().zip([900.0, 90.0]) {
            p.runs[0].p99_ms = Some(p99);
        }
        let text = tail_fanout(&rows, 1);
        assert!(
            text.contains("the p99 falls from 900.0 ms to 90.0 ms (10.0x)"),
            "{text}"
        );
        assert!(
            text.contains("the p99.9 from 1000.0 ms to 250.0 ms (4.0x)"),
            "{text}"
        );
        rows.pop();
        assert!(tail_fanout(&rows, 1).contains("not measured"));
    }

    #[test]
    fn the_tail_table_lists_each_seed() {
        let rows = [point(
            tail_labels::HEDGE_P95,
            0.6,
            &[(104.4, 1.06), (75.3, 1.06)],
        )];
        let text = tail_table(&rows);
        assert!(text.contains("| 89.8 "), "{text}");
        assert!(text.contains("| 104.4, 75.3 "), "{text}");
    }
}
