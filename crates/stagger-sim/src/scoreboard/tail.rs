//! The tail's figures: hedging against a pool of replicas that pause, across loads, with a
//! fan-out, and with a delay at a quantile; the constants name each setup once, so the text
//! that quotes them and the runs agree.

use super::*;
use crate::error::SimError;
use crate::metrics::ResultRow;
use crate::strategy::Strategy;
use crate::workload::Workload;
use crate::workload::tail::Tail;
use serde::Serialize;
use stagger_core::AnyConfig;
use stagger_core::engine::Hedging;
use stagger_core::policy::{Immediate, NoRetry};
use std::time::Duration;

/// The world seeds (from the board's seed on) each `tail` figure is taken over.
pub const TAIL_SEEDS: u64 = 3;

/// The world seeds (from the board's seed on) each point of the `tail` load sweep is taken
/// over: fewer than [`TAIL_SEEDS`], as the sweep's runs are most of the section's cost.
pub const TAIL_SWEEP_SEEDS: u64 = 2;

/// The offered loads of the `tail` sweep, as shares of the pool's capacity.
pub const TAIL_LOADS: [f64; 6] = [0.3, 0.5, 0.6, 0.7, 0.8, 0.9];

/// The attempts in all of every `tail` strategy, hedged or retried: one copy of the request
/// beside the first, as in Dean and Barroso's deferred hedge.
pub const TAIL_ATTEMPTS: u32 = 2;

/// The quantile of the hedged `tail` rows, in hundredths of a percent: the 95th percentile,
/// Dean and Barroso's "95th-percentile expected latency".
pub const TAIL_QUANTILE: u16 = 9_500;

/// The attempt timeout of the `tail` row that retries instead of hedging.
pub const TAIL_ATTEMPT_TIMEOUT: Duration = Duration::from_millis(50);

/// The share of requests the fixed hedge delay must see answered on the pool without pauses:
/// the delay is that pool's 95th percentile.
pub const TAIL_DELAY_SHARE: f64 = 0.95;

/// How long the runs that measure the fixed hedge delay last: long enough for about 50 000
/// requests, a fifth of a default run's, so that the bisection costs about one default run.
pub const TAIL_DELAY_DURATION: Duration = Duration::from_secs(20);

/// The least cut of p99.9 (without hedging over hedged) the hedging claim asks for.
pub const TAIL_CLAIM_CUT: f64 = 10.0;

/// The most extra load (hedged over not, less 1) the hedging claim allows.
pub const TAIL_CLAIM_EXTRA_LOAD: f64 = 0.10;

/// The labels of the `tail` rows; the fixed delay's row is labelled
/// [`TailPoint::fixed_label`], the attempt timeout's [`TailPoint::timeout_label`].
pub mod tail_labels {
    /// The pool without pauses, not hedged: its body, without a tail.
    pub const NO_PAUSES: &str = "no pauses, no hedging";
    /// The default pool, not hedged.
    pub const NO_HEDGING: &str = "no hedging";
    /// Hedged at the measured 95th percentile.
    pub const HEDGE_P95: &str = "hedge at p95";
    /// Fanning out, not hedged.
    pub const FANOUT_NO_HEDGING: &str = "fan-out, no hedging";
    /// Fanning out, each sub-request hedged at the measured 95th percentile.
    pub const FANOUT_HEDGE_P95: &str = "fan-out, hedge at p95";
}

/// The sub-requests each request of the `tail` fan-out rows needs.
pub const TAIL_FANOUT: u32 = 10;

/// The `tail` fan-out rows: each request needs [`TAIL_FANOUT`] sub-requests, without hedging
/// and with each sub-request hedged at the 95th percentile, at the defaults otherwise, over
/// [`TAIL_SEEDS`] seeds.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn tail_fanout_points(seed: u64) -> Result<Vec<TailPoint>, SimError> {
    use tail_labels::{FANOUT_HEDGE_P95, FANOUT_NO_HEDGING};
    let plain = tail_strategy();
    let p95 = plain.with_hedging(Some(Hedging::quantile(TAIL_QUANTILE, TAIL_ATTEMPTS)));
    let model = Tail {
        fanout: TAIL_FANOUT,
        ..Tail::default()
    };
    tail_points(
        vec![
            (FANOUT_NO_HEDGING.to_owned(), model, plain, TAIL_SEEDS),
            (FANOUT_HEDGE_P95.to_owned(), model, p95, TAIL_SEEDS),
        ],
        seed,
    )
}

/// One strategy on the `tail` workload at one offered load, over [`TAIL_SEEDS`] seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TailPoint {
    /// What was run.
    pub label: String,
    /// The offered load, as a share of the pool's capacity.
    pub offered: f64,
    /// Its results, one per seed from the board's seed on.
    pub runs: Vec<ResultRow>,
}

impl TailPoint {
    /// The label of the row hedged at the fixed delay `delay_ms`.
    #[must_use]
    pub fn fixed_label(delay_ms: u64) -> String {
        format!("hedge at {delay_ms} ms, the pause-free p95")
    }

    /// The label of the row that retries after [`TAIL_ATTEMPT_TIMEOUT`].
    #[must_use]
    pub fn timeout_label() -> String {
        format!(
            "retry after a {} attempt timeout",
            stagger_core::duration::human(TAIL_ATTEMPT_TIMEOUT)
        )
    }

    /// The mean of `f` over the runs, or `None` if a run lacks it (or there is none).
    pub fn mean(&self, f: impl Fn(&ResultRow) -> Option<f64>) -> Option<f64> {
        if self.runs.is_empty() {
            return None;
        }
        let mut sum = 0.0;
        for row in &self.runs {
            sum += f(row)?;
        }
        Some(sum / self.runs.len() as f64)
    }

    /// The mean 99.9th percentile, in ms.
    #[must_use]
    pub fn p999(&self) -> Option<f64> {
        self.mean(p999)
    }

    /// The mean load (attempts per request).
    #[must_use]
    pub fn load(&self) -> Option<f64> {
        self.mean(|r| Some(r.load))
    }
}

/// A row's 99.9th percentile, in ms, if it has one.
#[must_use]
pub fn p999(row: &ResultRow) -> Option<f64> {
    row.p999_ms.flatten()
}

/// The fixed hedge delay of the `tail` rows: the smallest whole millisecond within which at
/// least [`TAIL_DELAY_SHARE`] of the requests answer, on the pool without pauses, at the
/// board's seed, over [`TAIL_DELAY_DURATION`]. Read from runs that cut each request at the
/// delay (`no-retry`, an attempt timeout of that long): the share that succeeds is the share
/// that answered in time. (A cut attempt still queued is dropped, sparing the pool a little
/// work, so the share is read from a pool a little less loaded than the one it describes.)
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TailDelay {
    /// The delay, in whole milliseconds.
    pub delay_ms: u64,
    /// The share of requests answered within it.
    pub share_within: f64,
    /// The share answered within a millisecond less, below [`TAIL_DELAY_SHARE`]; `None` at
    /// 1 ms.
    pub share_below: Option<f64>,
}

/// The `tail` pool without pauses.
#[must_use]
pub fn tail_without_pauses() -> Tail {
    Tail {
        pause: Duration::ZERO,
        ..Tail::default()
    }
}

/// The `tail` strategy that retries (and hedges, with hedging): `immediate`, with
/// [`TAIL_ATTEMPTS`] attempts.
#[must_use]
pub fn tail_strategy() -> Strategy {
    Strategy::policy(AnyConfig::from(
        Immediate::new().with_max_attempts(TAIL_ATTEMPTS),
    ))
}

/// The fixed hedge delay: [`TailDelay`], found by bisection over whole milliseconds.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn tail_delay(seed: u64) -> Result<TailDelay, SimError> {
    let strategy = Strategy::policy(AnyConfig::from(NoRetry::new()));
    let share = |ms: u64| -> Result<f64, SimError> {
        let model = Tail {
            attempt_timeout: Some(Duration::from_millis(ms)),
            duration: TAIL_DELAY_DURATION,
            ..tail_without_pauses()
        };
        Ok(model.run(&strategy, seed)?.success_rate)
    };
    let limit = u64::try_from(Tail::default().timeout.as_millis()).unwrap_or(u64::MAX);
    // The smallest `ms` in (lo, hi] whose share reaches the target, with `hi`'s known.
    let (mut lo, mut hi) = (0u64, 64u64);
    let mut at_hi = share(hi)?;
    while at_hi < TAIL_DELAY_SHARE && hi < limit {
        lo = hi;
        hi = (hi * 2).min(limit);
        at_hi = share(hi)?;
    }
    let mut below = None;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let at = share(mid)?;
        if at >= TAIL_DELAY_SHARE {
            (hi, at_hi) = (mid, at);
        } else {
            (lo, below) = (mid, Some(at));
        }
    }
    let share_below = match (lo, below) {
        (0, _) => None,
        (_, Some(at)) => Some(at),
        (lo, None) => Some(share(lo)?),
    };
    Ok(TailDelay {
        delay_ms: hi,
        share_within: at_hi,
        share_below,
    })
}

/// One `tail` job: a label, a model, a strategy, and the seeds it runs at.
pub(crate) type TailJob = (String, Tail, Strategy, u64);

/// Runs each job at its seeds from `seed` on, every run in parallel.
pub(crate) fn tail_points(jobs: Vec<TailJob>, seed: u64) -> Result<Vec<TailPoint>, SimError> {
    let runs: Vec<(usize, u64)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(j, job)| (seed..seed.saturating_add(job.3)).map(move |s| (j, s)))
        .collect();
    let rows = parallel(runs, |&(j, s)| jobs[j].1.run(&jobs[j].2, s))?;
    let mut rows = rows.into_iter();
    Ok(jobs
        .into_iter()
        .map(|(label, model, _, seeds)| TailPoint {
            label,
            offered: model.load,
            runs: rows
                .by_ref()
                .take(usize::try_from(seeds).unwrap_or(usize::MAX))
                .collect(),
        })
        .collect())
}

/// The `tail` figures: the rows at the defaults over [`TAIL_SEEDS`] seeds, the fixed delay,
/// and the load sweep over [`TAIL_SWEEP_SEEDS`], whose point at the default load is the
/// rows' first [`TAIL_SWEEP_SEEDS`] runs.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn tail_section(seed: u64) -> Result<(Vec<TailPoint>, TailDelay, Vec<TailPoint>), SimError> {
    use tail_labels::{HEDGE_P95, NO_HEDGING, NO_PAUSES};
    let timeout_label = TailPoint::timeout_label();
    let plain = tail_strategy();
    let p95 = plain.with_hedging(Some(Hedging::quantile(TAIL_QUANTILE, TAIL_ATTEMPTS)));
    let default_load = Tail::default().load;
    let at = |load: f64| Tail {
        load,
        ..Tail::default()
    };
    let mut jobs: Vec<TailJob> = vec![
        (
            NO_PAUSES.to_owned(),
            tail_without_pauses(),
            plain,
            TAIL_SEEDS,
        ),
        (NO_HEDGING.to_owned(), Tail::default(), plain, TAIL_SEEDS),
        (HEDGE_P95.to_owned(), Tail::default(), p95, TAIL_SEEDS),
        (
            timeout_label,
            Tail {
                attempt_timeout: Some(TAIL_ATTEMPT_TIMEOUT),
                ..Tail::default()
            },
            plain,
            TAIL_SEEDS,
        ),
    ];
    let rows_count = jobs.len();
    for load in TAIL_LOADS {
        if (load - default_load).abs() > 1e-9 {
            jobs.push((NO_HEDGING.to_owned(), at(load), plain, TAIL_SWEEP_SEEDS));
            jobs.push((HEDGE_P95.to_owned(), at(load), p95, TAIL_SWEEP_SEEDS));
        }
    }
    let (delay, points) = rayon::join(
        || -> Result<_, SimError> {
            let delay = tail_delay(seed)?;
            let hedging = Hedging::fixed(Duration::from_millis(delay.delay_ms), TAIL_ATTEMPTS);
            let fixed = tail_points(
                vec![(
                    TailPoint::fixed_label(delay.delay_ms),
                    Tail::default(),
                    plain.with_hedging(Some(hedging)),
                    TAIL_SEEDS,
                )],
                seed,
            )?;
            Ok((delay, fixed))
        },
        || tail_points(jobs, seed),
    );
    let (delay, fixed) = delay?;
    let mut points = points?;
    let swept = points.split_off(rows_count);
    let mut rows = points;
    rows.splice(3..3, fixed);
    let mut sweep = Vec::new();
    for load in TAIL_LOADS {
        for label in [NO_HEDGING, HEDGE_P95] {
            let same = |p: &&TailPoint| p.label == label && (p.offered - load).abs() < 1e-9;
            if let Some(p) = swept.iter().find(same) {
                sweep.push(p.clone());
            } else if let Some(p) = rows.iter().find(same) {
                let mut p = p.clone();
                p.runs
                    .truncate(usize::try_from(TAIL_SWEEP_SEEDS).unwrap_or(usize::MAX));
                sweep.push(p);
            }
        }
    }
    Ok((rows, delay, sweep))
}

/// The hedging claim, read on the means over the seeds of the `tail` rows without hedging
/// and hedged as the row labelled `hedged` is (`tail`, from world seed `seed` on): the text of
/// our figures, and whether it holds. Each seed's ratios are listed, and the seeds that fall
/// short are named. `None` if a row is missing.
#[must_use]
pub fn tail_claim(tail: &[TailPoint], hedged: &str, seed: u64) -> Option<(String, bool)> {
    let point = |label: &str| tail.iter().find(|p| p.label == label);
    let (plain, hedged) = (point(tail_labels::NO_HEDGING)?, point(hedged)?);
    if plain.runs.len() != hedged.runs.len() {
        return None;
    }
    let holds = |cut: f64, extra: f64| cut >= TAIL_CLAIM_CUT && extra <= TAIL_CLAIM_EXTRA_LOAD;
    let (a, b) = (plain.p999()?, hedged.p999()?);
    let (la, lb) = (plain.load()?, hedged.load()?);
    let (cut, extra) = (a / b, lb / la - 1.0);
    let last = seed + plain.runs.len() as u64 - 1;
    let mut per_seed = Vec::new();
    let mut short = Vec::new();
    for (i, (p, h)) in plain.runs.iter().zip(&hedged.runs).enumerate() {
        let this = seed + i as u64;
        let (c, x) = (p999(p)? / p999(h)?, h.load / p.load - 1.0);
        per_seed.push(format!("{c:.1}x for +{:.1}%", 100.0 * x));
        if !holds(c, x) {
            short.push(this.to_string());
        }
    }
    let verdict = match short.len() {
        0 => "every seed meets it on its own".to_owned(),
        1 => format!("seed {} falls short on its own", short[0]),
        _ => format!("seeds {} fall short on their own", short.join(", ")),
    };
    Some((
        format!(
            "p99.9 {a:.0} ms -> {b:.0} ms ({cut:.1}x), load {la:.3} -> {lb:.3} (+{:.1}%): means over seeds {seed} to {last}, the claim read on the means; per seed ({}): {}; {verdict}",
            100.0 * extra,
            (seed..=last)
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            per_seed.join(", ")
        ),
        holds(cut, extra),
    ))
}
