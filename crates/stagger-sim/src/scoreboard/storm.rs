//! The 429 storm's figures: every dispersal, `Retry-After` form and gate against the rate
//! limiter, over [`THROTTLE_SEEDS`] seeds, and the variants (open arrivals, a concurrency
//! limiter) that test whether the ranking holds.

use super::*;
use crate::error::SimError;
use crate::model::RetryAfterForm;
use crate::strategy::Strategy;
use crate::workload::Workload;
use crate::workload::throttle::{self, Throttle};
use serde::Serialize;
use stagger_core::engine::Dispersal;

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
pub(crate) struct ThrottleSums {
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
