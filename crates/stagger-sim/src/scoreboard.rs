//! The scoreboard: every catalog policy, the published strategies and the budgets on every
//! canonical workload, with each published finding beside ours.
//!
//! Every figure comes from running the models at one world seed. Independent runs are spread
//! over the machine's cores with rayon and collected in a fixed order, so the output does not
//! depend on the number of threads: the same seed gives the same bytes.

use std::time::Duration;

use rayon::prelude::*;
use serde::Serialize;
use stagger_core::budget::BudgetKind;
use stagger_core::engine::{Dispersal, Hedging};
use stagger_core::policy::{Immediate, NoRetry};
use stagger_core::{AnyConfig, PolicyKind};

use crate::error::SimError;
use crate::metrics::ResultRow;
use crate::model::RetryAfterForm;
use crate::strategy::Strategy;
use crate::workload::Workload;
use crate::workload::contention::{self, Contention};
use crate::workload::herd::Herd;
use crate::workload::open_loop::{self, OpenLoop};
use crate::workload::outage::Outage;
use crate::workload::partition::{self, BudgetPartition, Partition};
use crate::workload::serial::{self, Serial};
use crate::workload::spike::{self, Ramp, Spike};
use crate::workload::tail::Tail;
use crate::workload::throttle::{self, Throttle};

mod claims;

pub use claims::{Claim, Finding, constant_patience, margins};

/// A labelled result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Labelled {
    /// What was run.
    pub label: String,
    /// Its results.
    pub row: ResultRow,
}

impl Labelled {
    /// `row`, labelled `label`.
    #[must_use]
    pub fn new(label: impl Into<String>, row: ResultRow) -> Self {
        Self {
            label: label.into(),
            row,
        }
    }
}

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The swept parameter's value (clients, or a failure rate).
    pub x: f64,
    /// The results at that value.
    pub results: Vec<Labelled>,
}

/// A labelled series of numbers, for a plot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// What the series is.
    pub label: String,
    /// Its values, one per step.
    pub values: Vec<f64>,
}

/// Everything `stagger bench` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scoreboard {
    /// The world seed.
    pub seed: u64,
    /// Every catalog policy on the herd (1000 clients).
    pub herd: Vec<Labelled>,
    /// Retries per 10 ms over the first 2.5 s of the herd, per policy, for a plot.
    pub herd_arrivals: Vec<Series>,
    /// Every catalog policy on the 30-second outage.
    pub outage: Vec<Labelled>,
    /// The published contention strategies and the corrected decorrelated jitter, 100 clients.
    pub contention: Vec<Labelled>,
    /// The same, from 10 to 190 clients.
    pub contention_sweep: Vec<SweepPoint>,
    /// W2's strategies against the failure rate.
    pub open_loop: Vec<SweepPoint>,
    /// W2's client-count experiment as Brooker's `run_sims_clients` runs it: 100 requests a
    /// second in all, over 10, 100 and 1000 clients ([`W2_CLIENTS`]), at failure rates 0.05 and
    /// 0.5: labels such as "10 x 10/s, STRATEGY" and "1000 x 0.1/s, STRATEGY" ([`w2_shape`]).
    pub many_small: Vec<SweepPoint>,
    /// W3: open and serial clients, with and without backoff, at a 50 % failure rate.
    pub serial: Vec<Labelled>,
    /// W4's spike: no backoff, jittered backoff, and every budget with no backoff; then
    /// hedging by [`spike_hedging`], without a budget and with every budget.
    pub spike: Vec<Labelled>,
    /// Goodput per second on the spike, per strategy, for a plot.
    pub spike_goodput: Vec<Series>,
    /// W4's ramp, the same strategies.
    pub ramp: Vec<Labelled>,
    /// The spike's two published strategies over [`SPIKE_SEEDS`] seeds: how many recover.
    pub spike_recovery: Vec<RecoveryShare>,
    /// The 429 storm: every dispersal rule under every form of `Retry-After`, over
    /// [`THROTTLE_SEEDS`] seeds.
    pub throttle: Vec<ThrottlePoint>,
    /// The storm's variants: open arrivals against the rate limiter and the requests at once
    /// against a concurrency limiter, for two dispersal rules, without and with the gate, over
    /// [`THROTTLE_SEEDS`] seeds.
    pub throttle_variants: Vec<ThrottleVariantPoint>,
    /// One host's outage against a budget shared with a healthy host, and against a budget per
    /// host, and the no-budget ceiling, over [`PARTITION_SEEDS`] seeds.
    pub partition: Vec<PartitionPoint>,
    /// The `tail` workload at its defaults: without pauses, then with them without hedging,
    /// hedging at the 95th percentile, hedging at a fixed delay ([`Scoreboard::tail_delay`]) and
    /// retrying after an attempt timeout, each over [`TAIL_SEEDS`] seeds.
    pub tail: Vec<TailPoint>,
    /// The fixed hedge delay of the `tail` rows, measured on the pool without pauses.
    pub tail_delay: Option<TailDelay>,
    /// The `tail` workload at each of [`TAIL_LOADS`], without hedging and hedging at the 95th
    /// percentile, over [`TAIL_SWEEP_SEEDS`] seeds.
    pub tail_sweep: Vec<TailPoint>,
    /// The `tail` workload with each request fanning out to [`TAIL_FANOUT`] sub-requests,
    /// without hedging and hedging at the 95th percentile, over [`TAIL_SEEDS`] seeds.
    pub tail_fanout: Vec<TailPoint>,
    /// Each published result beside ours.
    pub fidelity: Vec<Finding>,
}

/// The world seeds (from the board's seed on) each throttle figure is averaged over.
pub const THROTTLE_SEEDS: u64 = 20;

/// One dispersal rule under one form of `Retry-After` on the `throttle` workload's defaults
/// (20 requests at once, 5 requests/s, a 3 s deadline), over [`THROTTLE_SEEDS`] seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThrottlePoint {
    /// What the clients add above the server's wait.
    pub dispersal: &'static str,
    /// How the server states its wait.
    pub retry_after: &'static str,
    /// Whether the clients shared a gate for the destination.
    pub gate: bool,
    /// Requests served within the deadline, of 20: the mean over the seeds.
    pub served: f64,
    /// The fewest and the most served in any seed.
    pub served_range: (u64, u64),
    /// Refused attempts per request served, over all the seeds' runs.
    pub rejected_per_success: f64,
    /// The busiest 10 ms's share of all retries: the mean over the seeds.
    pub peak_window_share: f64,
    /// Retries that reached the server before the time it gave their client, in all runs.
    pub early_retries: u64,
}

/// The `throttle` figures: every dispersal rule under every `Retry-After` form.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn throttle_points(seed: u64) -> Result<Vec<ThrottlePoint>, SimError> {
    let jobs: Vec<(bool, RetryAfterForm, Dispersal)> = [false, true]
        .into_iter()
        .flat_map(|gate| {
            RetryAfterForm::ALL
                .into_iter()
                .flat_map(move |form| Dispersal::ALL.map(|d| (gate, form, d)))
        })
        .collect();
    let strategy = throttle::trial_strategy();
    parallel(jobs, |&(gate, form, dispersal)| {
        let model = Throttle {
            dispersal,
            retry_after_form: form,
            gate,
            ..Throttle::default()
        };
        let sums = ThrottleSums::of(&model, &strategy, seed)?;
        Ok(ThrottlePoint {
            dispersal: dispersal.name(),
            retry_after: form.name(),
            gate,
            served: sums.served as f64 / sums.runs,
            served_range: sums.served_range,
            rejected_per_success: sums.rejected_per_success(),
            peak_window_share: sums.peak / sums.runs,
            early_retries: sums.early,
        })
    })
}

/// What a throttle figure adds up over [`THROTTLE_SEEDS`] runs.
struct ThrottleSums {
    /// The runs.
    runs: f64,
    /// Requests, in all runs.
    requests: u64,
    /// Requests served, in all runs.
    served: u64,
    /// The fewest and the most served in any run.
    served_range: (u64, u64),
    /// The lowest and the highest served share in any run.
    share_range: (f64, f64),
    /// Attempts sent, in all runs.
    attempts: u64,
    /// Refused attempts, in all runs.
    rejected: f64,
    /// The peak window shares, added up.
    peak: f64,
    /// Early retries, in all runs.
    early: u64,
}

impl ThrottleSums {
    /// Runs `model` with `strategy` at each of the [`THROTTLE_SEEDS`] seeds from `seed` on.
    fn of(model: &Throttle, strategy: &Strategy, seed: u64) -> Result<Self, SimError> {
        let mut sums = Self {
            runs: THROTTLE_SEEDS as f64,
            requests: 0,
            served: 0,
            served_range: (u64::MAX, 0),
            share_range: (f64::INFINITY, f64::NEG_INFINITY),
            attempts: 0,
            rejected: 0.0,
            peak: 0.0,
            early: 0,
        };
        for s in seed..seed.saturating_add(THROTTLE_SEEDS) {
            let row = model.run(strategy, s)?;
            sums.requests += row.first_tries;
            sums.served += row.successes;
            sums.served_range = (
                sums.served_range.0.min(row.successes),
                sums.served_range.1.max(row.successes),
            );
            let share = row.served_share.unwrap_or(0.0);
            sums.share_range = (sums.share_range.0.min(share), sums.share_range.1.max(share));
            sums.attempts += row.attempts;
            sums.rejected += row.rejected_per_success.unwrap_or(0.0) * row.successes as f64;
            sums.peak += row.peak_window_share;
            sums.early += row.early_retries.unwrap_or(0);
        }
        Ok(sums)
    }

    /// Refused attempts per request served, over all the runs.
    fn rejected_per_success(&self) -> f64 {
        if self.served == 0 {
            0.0
        } else {
            self.rejected / self.served as f64
        }
    }
}

/// A variant of the `throttle` workload beside the 429 storm of [`throttle_points`]: the same
/// policy, deadline and `Retry-After`, with the clients or the server changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThrottleVariant {
    /// `open-arrivals`: requests arriving at random at [`ThrottleVariant::OPEN_RATE`] per
    /// second for the workload's default duration, against the default rate limiter.
    OpenArrivals,
    /// `concurrency-limiter`: the default requests at once against a concurrency limiter of
    /// [`ThrottleVariant::CONCURRENCY`] request in service at a time.
    ConcurrencyLimiter,
}

impl ThrottleVariant {
    /// Every variant, in the table's order.
    pub const ALL: [Self; 2] = [Self::OpenArrivals, Self::ConcurrencyLimiter];

    /// The open arrivals' rate, per second: above the default rate limiter's, so that the
    /// limit binds even before any request retries.
    pub const OPEN_RATE: f64 = 8.0;

    /// The concurrency limiter's limit: one request in service at a time, so that all but one
    /// of the requests that start together are refused, and the server's room between the
    /// first retry and the deadline is about the number refused.
    pub const CONCURRENCY: u32 = 1;

    /// The dispersal rules measured for each variant.
    pub const DISPERSALS: [Dispersal; 2] = [Dispersal::Floor, Dispersal::UniformAsked];

    /// The variant's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::OpenArrivals => "open-arrivals",
            Self::ConcurrencyLimiter => "concurrency-limiter",
        }
    }

    /// The variant's model, with the workload's default dispersal and no gate.
    #[must_use]
    pub fn model(self) -> Throttle {
        match self {
            Self::OpenArrivals => Throttle {
                rate: Some(Self::OPEN_RATE),
                ..Throttle::default()
            },
            Self::ConcurrencyLimiter => Throttle {
                limit_concurrency: Some(Self::CONCURRENCY),
                ..Throttle::default()
            },
        }
    }
}

/// One dispersal rule, with or without the gate, on one [`ThrottleVariant`], over
/// [`THROTTLE_SEEDS`] seeds, with [`throttle::trial_strategy`] and a fixed `Retry-After`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThrottleVariantPoint {
    /// The variant's name ([`ThrottleVariant::name`]).
    pub variant: &'static str,
    /// What the clients add above the server's wait.
    pub dispersal: &'static str,
    /// Whether the clients shared a gate for the destination.
    pub gate: bool,
    /// Requests per run: the mean over the seeds.
    pub requests: f64,
    /// Requests served within their deadline, as a share of the requests, over all the
    /// seeds' runs.
    pub served_share: f64,
    /// The lowest and the highest served share in any seed.
    pub served_share_range: (f64, f64),
    /// Attempts that reached the server per request, over all the seeds' runs: below 1 when
    /// requests give up before their first attempt (a gate's slot past the deadline).
    pub attempts_per_request: f64,
    /// Refused attempts per request served, over all the seeds' runs.
    pub rejected_per_success: f64,
    /// The busiest 10 ms's share of all retries: the mean over the seeds.
    pub peak_window_share: f64,
    /// Retries that reached the server before the time it gave their client, in all runs.
    pub early_retries: u64,
}

/// The `throttle` variants' figures: each [`ThrottleVariant`] under each of
/// [`ThrottleVariant::DISPERSALS`], without and with the gate.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the variants.
pub fn throttle_variant_points(seed: u64) -> Result<Vec<ThrottleVariantPoint>, SimError> {
    let jobs: Vec<(ThrottleVariant, bool, Dispersal)> = ThrottleVariant::ALL
        .into_iter()
        .flat_map(|variant| {
            [false, true].into_iter().flat_map(move |gate| {
                ThrottleVariant::DISPERSALS.map(|dispersal| (variant, gate, dispersal))
            })
        })
        .collect();
    let strategy = throttle::trial_strategy();
    parallel(jobs, |&(variant, gate, dispersal)| {
        let model = Throttle {
            dispersal,
            gate,
            ..variant.model()
        };
        let sums = ThrottleSums::of(&model, &strategy, seed)?;
        let per_request = |x: f64| {
            if sums.requests == 0 {
                0.0
            } else {
                x / sums.requests as f64
            }
        };
        Ok(ThrottleVariantPoint {
            variant: variant.name(),
            dispersal: dispersal.name(),
            gate,
            requests: sums.requests as f64 / sums.runs,
            served_share: per_request(sums.served as f64),
            served_share_range: sums.share_range,
            attempts_per_request: per_request(sums.attempts as f64),
            rejected_per_success: sums.rejected_per_success(),
            peak_window_share: sums.peak / sums.runs,
            early_retries: sums.early,
        })
    })
}

/// The world seeds (from the board's seed on) each partition figure is averaged over.
pub const PARTITION_SEEDS: u64 = 10;

/// One budget mode on the `partition` workload's defaults (one client, host A down, host B
/// failing 20 % of attempts), with [`partition::trial_strategy`], over [`PARTITION_SEEDS`]
/// seeds. Counts are means per run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionPoint {
    /// The budget, if any.
    pub budget: Option<&'static str>,
    /// One budget for both hosts (`shared`) or one per host (`partitioned`); `None` without a
    /// budget, where the two are the same.
    pub budget_partition: Option<&'static str>,
    /// Host B's requests that succeeded, as a share of its requests: the mean over the seeds.
    pub b_success_share: f64,
    /// The lowest and the highest of that share in any seed.
    pub b_success_range: (f64, f64),
    /// Retries sent to host B.
    pub b_retries: f64,
    /// Attempts to host B that the budget refused.
    pub b_refused: f64,
    /// Retries sent to host A.
    pub a_retries: f64,
    /// Attempts to host A that the budget refused.
    pub a_refused: f64,
}

/// The `partition` figures: the trial's budget shared by both hosts, partitioned by host, and
/// no budget.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn partition_points(seed: u64) -> Result<Vec<PartitionPoint>, SimError> {
    let strategy = partition::trial_strategy();
    let jobs = vec![
        (strategy, BudgetPartition::Shared),
        (strategy, BudgetPartition::Partitioned),
        (strategy.with_budget(None), BudgetPartition::Shared),
    ];
    parallel(jobs, |&(strategy, budget_partition)| {
        let model = Partition {
            budget_partition,
            ..Partition::default()
        };
        let mut share = 0.0f64;
        let mut range = (f64::INFINITY, f64::NEG_INFINITY);
        let mut counts = [0u64; 4];
        for s in seed..seed.saturating_add(PARTITION_SEEDS) {
            let row = model.run(&strategy, s)?;
            let (a, b) = (
                row.host_a.unwrap_or_default(),
                row.host_b.unwrap_or_default(),
            );
            share += b.success_share;
            range = (range.0.min(b.success_share), range.1.max(b.success_share));
            for (sum, x) in counts
                .iter_mut()
                .zip([b.retries, b.refused, a.retries, a.refused])
            {
                *sum += x;
            }
        }
        let n = PARTITION_SEEDS as f64;
        let mean = |sum: u64| sum as f64 / n;
        Ok(PartitionPoint {
            budget: strategy.budget.map(|b| b.name()),
            budget_partition: strategy.budget.map(|_| budget_partition.name()),
            b_success_share: share / n,
            b_success_range: range,
            b_retries: mean(counts[0]),
            b_refused: mean(counts[1]),
            a_retries: mean(counts[2]),
            a_refused: mean(counts[3]),
        })
    })
}

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

/// The client counts of W2's client-count experiment (Brooker's `run_sims_clients`).
pub const W2_CLIENTS: [u64; 3] = [10, 100, 1_000];

/// The requests a second all clients of that experiment send together.
pub const W2_TOTAL_RATE: f64 = 100.0;

/// The label of `clients` clients sharing [`W2_TOTAL_RATE`]: "10 x 10/s", "1000 x 0.1/s".
#[must_use]
pub fn w2_shape(clients: u64) -> String {
    format!("{clients} x {}/s", W2_TOTAL_RATE / clients as f64)
}

/// The world seeds, from the board's on, over which the spike's published strategies are run
/// to count how many recover: the published figures average 10 runs of a random process whose
/// runs go one way or the other.
pub const SPIKE_SEEDS: u64 = 100;

/// The tail goodput ratio at or above which a spike run has recovered: it serves at least 90 %
/// of what it is offered over the last 30 s.
pub const RECOVERED: f64 = 0.9;

/// The share of spike runs without backoff that may recover for "without backoff it stays
/// collapsed" to hold: fewer than half.
pub const STAYS_COLLAPSED_BELOW: f64 = 0.5;

/// The share of spike runs with jittered backoff that must recover for "with jittered backoff
/// it recovers" to hold.
pub const RECOVERS_AT_LEAST: f64 = 0.9;

/// One of the spike's published strategies over [`SPIKE_SEEDS`] seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecoveryShare {
    /// The strategy: `no backoff` or `jittered backoff`.
    pub label: String,
    /// The runs whose tail goodput ratio reached [`RECOVERED`].
    pub recovered: u64,
    /// The runs.
    pub runs: u64,
    /// The mean tail goodput ratio over the runs: the published figure's form (successes a
    /// second over the last 30 s, averaged over runs, over the rate offered).
    pub mean_ratio: f64,
}

impl RecoveryShare {
    /// The share of runs that recovered.
    #[must_use]
    pub fn share(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.recovered as f64 / self.runs as f64
        }
    }
}

/// The spike's two published strategies, [`spike::no_backoff`] and
/// [`spike::jittered_backoff`], each over [`SPIKE_SEEDS`] world seeds from `seed` on.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn spike_recovery(seed: u64) -> Result<Vec<RecoveryShare>, SimError> {
    let strategies = [
        ("no backoff", spike::no_backoff()),
        ("jittered backoff", spike::jittered_backoff()),
    ];
    let runs: Vec<(usize, u64)> = (0..strategies.len())
        .flat_map(|i| (seed..seed.saturating_add(SPIKE_SEEDS)).map(move |s| (i, s)))
        .collect();
    let ratios = parallel(runs, |&(i, s)| {
        Ok(Spike::default()
            .run(&strategies[i].1, s)?
            .tail_goodput_ratio
            .unwrap_or(0.0))
    })?;
    Ok(strategies
        .iter()
        .zip(ratios.chunks(usize::try_from(SPIKE_SEEDS).unwrap_or(usize::MAX)))
        .map(|((label, _), ratios)| RecoveryShare {
            label: (*label).to_owned(),
            recovered: ratios.iter().filter(|r| **r >= RECOVERED).count() as u64,
            runs: ratios.len() as u64,
            mean_ratio: ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
        })
        .collect())
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
type TailJob = (String, Tail, Strategy, u64);

/// Runs each job at its seeds from `seed` on, every run in parallel.
fn tail_points(jobs: Vec<TailJob>, seed: u64) -> Result<Vec<TailPoint>, SimError> {
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

/// The hedging of the `spike` rows: at the 95th percentile of the fleet's attempt latencies,
/// with as many attempts in all as [`spike::no_backoff`]'s policy allows (3).
#[must_use]
pub fn spike_hedging() -> Hedging {
    use stagger_core::PolicyConfig;
    let attempts = match spike::no_backoff().policy {
        crate::SimPolicy::Catalog(config) => config.max_attempts(),
        _ => 3,
    };
    Hedging::quantile(TAIL_QUANTILE, attempts)
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

/// The `spike` and `ramp` strategies, labelled, in the tables' order: no backoff, jittered
/// backoff, no backoff with each budget, then hedging by [`spike_hedging`] without a budget and
/// with each.
#[must_use]
pub fn spike_strategies() -> Vec<(String, Strategy)> {
    let mut strategies = vec![
        ("no backoff".to_owned(), spike::no_backoff()),
        ("jittered backoff".to_owned(), spike::jittered_backoff()),
    ];
    for budget in BudgetKind::ALL {
        strategies.push((
            format!("no backoff + {budget}"),
            spike::no_backoff().with_budget(Some(budget)),
        ));
    }
    let hedged = spike::no_backoff().with_hedging(Some(spike_hedging()));
    let hedge_label = hedged.name();
    strategies.push((hedge_label.clone(), hedged));
    for budget in BudgetKind::ALL {
        strategies.push((
            format!("{hedge_label} + {budget}"),
            hedged.with_budget(Some(budget)),
        ));
    }
    strategies
}

/// The figures of the hedging page, as the board has them: [`tail_section`]'s, and the
/// `spike` rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HedgingFigures {
    /// [`Scoreboard::tail`].
    pub tail: Vec<TailPoint>,
    /// [`Scoreboard::tail_delay`].
    pub tail_delay: TailDelay,
    /// [`Scoreboard::tail_sweep`].
    pub tail_sweep: Vec<TailPoint>,
    /// [`Scoreboard::tail_fanout`].
    pub tail_fanout: Vec<TailPoint>,
    /// [`Scoreboard::spike`].
    pub spike: Vec<Labelled>,
}

/// Runs what the hedging page measures at world seed `seed`, without the rest of the board.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn hedging_figures(seed: u64) -> Result<HedgingFigures, SimError> {
    let (tail, spike) = rayon::join(
        || tail_section(seed),
        || {
            parallel(spike_strategies(), |(label, s)| {
                Ok(labelled(
                    label.clone(),
                    Spike::default().simulate(s, seed)?.row,
                ))
            })
        },
    );
    let (tail, tail_delay, tail_sweep) = tail?;
    Ok(HedgingFigures {
        tail,
        tail_delay,
        tail_sweep,
        tail_fanout: tail_fanout_points(seed)?,
        spike: spike?,
    })
}

/// A progress callback: told the name of each part as it starts.
pub type Progress<'a> = &'a (dyn Fn(&str) + Sync);

fn labelled(label: impl Into<String>, row: ResultRow) -> Labelled {
    Labelled::new(label, row)
}

/// Runs `jobs` in parallel, keeping their order.
fn parallel<J, T>(
    jobs: Vec<J>,
    f: impl Fn(&J) -> Result<T, SimError> + Sync + Send,
) -> Result<Vec<T>, SimError>
where
    J: Sync,
    T: Send,
{
    jobs.par_iter().map(f).collect()
}

/// The catalog at its defaults, as strategies.
fn catalog() -> Vec<Strategy> {
    PolicyKind::ALL
        .into_iter()
        .map(|k| Strategy::policy(AnyConfig::from(k)))
        .collect()
}

impl Scoreboard {
    /// Runs everything at world seed `seed`.
    ///
    /// # Errors
    ///
    /// A [`SimError`] if a run fails, which would be a bug in the defaults.
    pub fn run(seed: u64, progress: Progress<'_>) -> Result<Self, SimError> {
        progress("herd");
        let herd_model = Herd::default();
        let herd = parallel(catalog(), |s| {
            Ok(labelled(s.policy.name(), herd_model.run(s, seed)?))
        })?;
        let herd_arrivals = parallel(
            [
                PolicyKind::Constant,
                PolicyKind::Exponential,
                PolicyKind::ExponentialFullJitter,
                PolicyKind::DecorrelatedJitter,
            ]
            .to_vec(),
            |k| {
                let s = Strategy::policy(AnyConfig::from(*k));
                let counts = herd_model.retry_histogram(
                    &s,
                    seed,
                    Duration::from_millis(10),
                    Duration::from_millis(2_500),
                )?;
                Ok(Series {
                    label: k.name().to_owned(),
                    values: counts.into_iter().map(|c| c as f64).collect(),
                })
            },
        )?;

        progress("outage");
        let outage_model = Outage::default();
        let outage = parallel(catalog(), |s| {
            Ok(labelled(s.policy.name(), outage_model.run(s, seed)?))
        })?;

        progress("contention");
        let mut strategies = contention::published_strategies();
        strategies.push((
            "decorrelated-jitter (corrected)",
            contention::corrected_decorrelated(),
        ));
        let contention_model = Contention::default();
        let contention = parallel(strategies.clone(), |(label, s)| {
            Ok(labelled(*label, contention_model.run(s, seed)?))
        })?;
        let sweep_jobs: Vec<(u64, &'static str, Strategy)> = (1..=10)
            .map(|i| 10 + 20 * (i - 1))
            .flat_map(|clients| {
                strategies
                    .iter()
                    .map(move |(label, s)| (clients, *label, *s))
            })
            .collect();
        let sweep_rows = parallel(sweep_jobs.clone(), |(clients, label, s)| {
            let model = Contention {
                clients: *clients,
                ..Contention::default()
            };
            Ok((*clients as f64, labelled(*label, model.run(s, seed)?)))
        })?;
        let contention_sweep = group(sweep_rows);

        progress("open-loop");
        let open_jobs: Vec<(f64, &'static str, Strategy)> = [0.1, 0.3, 0.5, 0.7, 0.9]
            .into_iter()
            .flat_map(|x| {
                open_loop::published_strategies()
                    .into_iter()
                    .map(move |(l, s)| (x, l, s))
            })
            .collect();
        let open_rows = parallel(open_jobs, |(x, label, s)| {
            let model = OpenLoop {
                failure_rate: *x,
                ..OpenLoop::default()
            };
            Ok((*x, labelled(*label, model.run(s, seed)?)))
        })?;
        let open_loop = group(open_rows);
        let small_jobs: Vec<(f64, u64, &'static str, Strategy)> = [0.05, 0.5]
            .into_iter()
            .flat_map(|x| {
                W2_CLIENTS.into_iter().flat_map(move |clients| {
                    open_loop::published_strategies()
                        .into_iter()
                        .map(move |(l, s)| (x, clients, l, s))
                })
            })
            .collect();
        let small_rows = parallel(small_jobs, |(x, clients, label, s)| {
            let model = OpenLoop {
                failure_rate: *x,
                clients: *clients,
                rate: W2_TOTAL_RATE / *clients as f64,
                ..OpenLoop::default()
            };
            let shape = w2_shape(*clients);
            Ok((
                *x,
                labelled(format!("{shape}, {label}"), model.run(s, seed)?),
            ))
        })?;
        let many_small = group(small_rows);

        progress("serial");
        let serial_jobs: Vec<(bool, &'static str, Strategy)> = serial::published_strategies()
            .into_iter()
            .flat_map(|(l, s)| [(false, l, s), (true, l, s)])
            .collect();
        let serial = parallel(serial_jobs, |(closed, label, s)| {
            let row = if *closed {
                Serial {
                    failure_rate: 0.5,
                    ..Serial::default()
                }
                .run(s, seed)?
            } else {
                OpenLoop {
                    failure_rate: 0.5,
                    ..OpenLoop::default()
                }
                .run(s, seed)?
            };
            let clients = if *closed { "serial" } else { "open" };
            Ok(labelled(format!("{clients}, {label}"), row))
        })?;

        progress("spike and ramp");
        let spike_strategies = spike_strategies();
        let timelines = parallel(spike_strategies.clone(), |(label, s)| {
            Ok((label.clone(), Spike::default().simulate(s, seed)?))
        })?;
        let spike_goodput = timelines
            .iter()
            .take(2)
            .map(|(label, t)| Series {
                label: label.clone(),
                values: t.goodput.iter().map(|&g| g as f64).collect(),
            })
            .collect();
        let spike = timelines
            .into_iter()
            .map(|(label, t)| labelled(label, t.row))
            .collect();
        let ramp = parallel(spike_strategies, |(label, s)| {
            Ok(labelled(label.clone(), Ramp::default().run(s, seed)?))
        })?;

        let mut board = Self {
            seed,
            herd,
            herd_arrivals,
            outage,
            contention,
            contention_sweep,
            open_loop,
            many_small,
            serial,
            spike,
            spike_goodput,
            ramp,
            spike_recovery: spike_recovery(seed)?,
            ..Self::empty(seed)
        };
        progress("throttle");
        let (throttle, variants) =
            rayon::join(|| throttle_points(seed), || throttle_variant_points(seed));
        board.throttle = throttle?;
        board.throttle_variants = variants?;
        progress("partition");
        board.partition = partition_points(seed)?;
        progress("tail");
        let (tail, fanout) = rayon::join(|| tail_section(seed), || tail_fanout_points(seed));
        let (tail, delay, sweep) = tail?;
        board.tail = tail;
        board.tail_delay = Some(delay);
        board.tail_sweep = sweep;
        board.tail_fanout = fanout?;
        board.fidelity = board.findings();
        Ok(board)
    }

    /// A board with no rows at world seed `seed`: fill the sections a [`Claim`] reads with
    /// runs of your own and [`Claim::check`] it. Every claim of an empty board is not
    /// reproduced.
    #[must_use]
    pub fn empty(seed: u64) -> Self {
        Self {
            seed,
            herd: Vec::new(),
            herd_arrivals: Vec::new(),
            outage: Vec::new(),
            contention: Vec::new(),
            contention_sweep: Vec::new(),
            open_loop: Vec::new(),
            many_small: Vec::new(),
            serial: Vec::new(),
            spike: Vec::new(),
            spike_goodput: Vec::new(),
            ramp: Vec::new(),
            spike_recovery: Vec::new(),
            throttle: Vec::new(),
            throttle_variants: Vec::new(),
            partition: Vec::new(),
            tail: Vec::new(),
            tail_delay: None,
            tail_sweep: Vec::new(),
            tail_fanout: Vec::new(),
            fidelity: Vec::new(),
        }
    }

    /// Each published claim ([`Claim::ALL`]) checked on this board's rows. A claim whose rows
    /// are missing is listed as not reproduced, never dropped.
    #[must_use]
    pub fn findings(&self) -> Vec<Finding> {
        Claim::ALL.iter().map(|c| c.check(self)).collect()
    }
}

/// Groups `(x, result)` pairs into sweep points, keeping the order of first appearance.
fn group(rows: Vec<(f64, Labelled)>) -> Vec<SweepPoint> {
    let mut points: Vec<SweepPoint> = Vec::new();
    for (x, row) in rows {
        match points.last_mut() {
            Some(p) if p.x == x => p.results.push(row),
            _ => points.push(SweepPoint {
                x,
                results: vec![row],
            }),
        }
    }
    points
}

/// A policy's measured figures at its defaults: the herd and the outage, as its page shows them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyFigures {
    /// The herd (1000 clients).
    pub herd: ResultRow,
    /// The 30-second outage.
    pub outage: ResultRow,
}

/// Runs `kind` at its defaults on the herd and the outage at world seed `seed`: the figures of
/// its page, the same ones as the scoreboard's.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn policy_figures(kind: PolicyKind, seed: u64) -> Result<PolicyFigures, SimError> {
    let strategy = Strategy::policy(AnyConfig::from(kind));
    Ok(PolicyFigures {
        herd: Herd::default().run(&strategy, seed)?,
        outage: Outage::default().run(&strategy, seed)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    fn empty() -> Scoreboard {
        Scoreboard::empty(1)
    }

    #[test]
    fn a_finding_without_its_rows_is_listed_and_not_reproduced() {
        let findings = empty().findings();
        assert_eq!(findings.len(), Claim::ALL.len());
        for (f, claim) in findings.iter().zip(Claim::ALL) {
            assert_eq!(f.claim, claim);
            assert_eq!(
                (f.workload, f.published),
                (claim.workload(), claim.published())
            );
            assert!(!f.reproduced, "{}", f.published);
            assert!(f.ours.starts_with("not measured"), "{}", f.ours);
        }
    }

    #[test]
    fn every_claim_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for claim in Claim::ALL {
            assert!(seen.insert(claim), "{claim:?} twice");
        }
        let published: std::collections::HashSet<_> =
            Claim::ALL.iter().map(|c| c.published()).collect();
        assert_eq!(
            published.len(),
            Claim::ALL.len(),
            "each claim has its own words"
        );
    }

    /// A `tail` point whose runs have these p99.9s (ms) and loads.
    fn tail_point(label: &str, runs: &[(f64, f64)]) -> TailPoint {
        TailPoint {
            label: label.to_owned(),
            offered: 0.6,
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

    fn tail_finding(board: &Scoreboard) -> Finding {
        board
            .findings()
            .into_iter()
            .find(|f| f.workload == "tail")
            .expect("the tail claim")
    }

    #[test]
    fn the_tail_claim_is_read_on_the_rows() {
        let mut board = empty();
        board.tail_delay = Some(TailDelay {
            delay_ms: 34,
            share_within: 0.953,
            share_below: Some(0.948),
        });
        board.tail = vec![
            tail_point(tail_labels::NO_HEDGING, &[(1_000.0, 1.0), (960.0, 1.0)]),
            tail_point(&TailPoint::fixed_label(34), &[(80.0, 1.06), (90.0, 1.06)]),
        ];
        // 980 / 85 = 11.5x for +6 %: it holds, on the means and at each seed.
        let held = tail_finding(&board);
        assert!(held.reproduced, "{}", held.ours);
        assert!(held.ours.contains("(11.5x)"), "{}", held.ours);
        assert!(held.ours.contains("every seed meets it"), "{}", held.ours);

        // One seed's hedged p99.9 up to 110 ms: the mean still holds (980 / 95 = 10.3x), and
        // the board names the seed that does not (960 / 110 = 8.7x).
        board.tail[1].runs[1].p999_ms = Some(Some(110.0));
        let short = tail_finding(&board);
        assert!(short.reproduced, "{}", short.ours);
        assert!(short.ours.contains("8.7x for +6.0%"), "{}", short.ours);
        assert!(short.ours.contains("seed 2 falls short"), "{}", short.ours);

        // Up to 120 ms: the mean falls short (980 / 100 = 9.8x), and the claim with it.
        board.tail[1].runs[1].p999_ms = Some(Some(120.0));
        assert!(!tail_finding(&board).reproduced);

        // A cut of 11.5x again, but for 12 % more load: it does not hold.
        board.tail[1].runs[1].p999_ms = Some(Some(90.0));
        for run in &mut board.tail[1].runs {
            run.load = 1.12;
        }
        let loaded = tail_finding(&board);
        assert!(!loaded.reproduced, "{}", loaded.ours);
        assert!(loaded.ours.contains("(+12.0%)"), "{}", loaded.ours);

        // A run without a p99.9 is a missing figure, not a pass.
        board.tail[1].runs[0].p999_ms = Some(None);
        let missing = tail_finding(&board);
        assert!(!missing.reproduced);
        assert!(missing.ours.starts_with("not measured"), "{}", missing.ours);

        // And so is a fast-path delay that was not measured.
        board.tail[1].runs[0].p999_ms = Some(Some(80.0));
        for run in &mut board.tail[1].runs {
            run.load = 1.06;
        }
        assert!(tail_finding(&board).reproduced);
        board.tail_delay = None;
        assert!(!tail_finding(&board).reproduced);
    }

    #[test]
    #[ignore = "runs the whole board: cargo test --release -p stagger-sim -- --ignored"]
    fn the_hedging_figures_are_the_boards() {
        let board = Scoreboard::run(1, &|_| {}).unwrap();
        let figures = hedging_figures(1).unwrap();
        assert_eq!(figures.tail, board.tail);
        assert_eq!(Some(figures.tail_delay), board.tail_delay);
        assert_eq!(figures.tail_sweep, board.tail_sweep);
        assert_eq!(figures.tail_fanout, board.tail_fanout);
        assert_eq!(figures.spike, board.spike);
    }

    #[test]
    fn a_tail_point_averages_its_runs() {
        let p = tail_point("x", &[(100.0, 1.0), (50.0, 1.2)]);
        assert_eq!(p.p999(), Some(75.0));
        assert!((p.load().unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(tail_point("x", &[]).p999(), None);
    }

    #[test]
    fn a_row_missing_its_metric_does_not_pass() {
        // The spike's rows exist but carry no tail goodput: "stays collapsed" must not read
        // the absence as a collapse.
        let mut board = empty();
        let row = Metrics::new(10_000_000).row("immediate".to_owned(), None);
        for label in ["no backoff", "jittered backoff"] {
            board.spike.push(labelled(label, row.clone()));
            board.ramp.push(labelled(label, row.clone()));
        }
        let findings = board.findings();
        let spike: Vec<_> = findings
            .iter()
            .filter(|f| matches!(f.workload, "spike" | "ramp"))
            .collect();
        assert_eq!(spike.len(), 3);
        assert!(spike.iter().all(|f| !f.reproduced));
    }
}
