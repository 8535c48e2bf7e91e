//! Running a model: one set of options ([`RunOptions`]: the seed, the event limit and the
//! inner layers) and three outputs, the row, every retry's time, or the per-second series.
//! Each checks the model first, then runs the event loop, or the one-at-a-time runner when
//! the clients cannot affect one another.
//!
//! ## Metrics
//!
//! The common metrics are those of [`Metrics`]; the load counts the attempts sent to the
//! dependency (the innermost layer's). With an outage window the success rate is that of the
//! requests that met the outage (whose first attempt to get through a limiter, if there is one,
//! reached the dependency while it was down), [`ResultRow::met_outage`] counts them, and
//! [`ResultRow::recovery_load`] counts the attempts that reached the dependency (past the
//! limiter) in the second after the window ended. With a limiter,
//! [`ResultRow::served_share`] is the requests served, [`ResultRow::rejected_per_success`] the
//! refusals per request served, and [`ResultRow::early_retries`] the attempts that reached the
//! limiter before the time it told them (never more than 0 for the engine).

use std::time::Duration;

use crate::error::SimError;
use crate::metrics::ResultRow;
use crate::model::composed::{Composed, Layer};
use crate::model::event_loop::Loop;
use crate::model::parts::Clients;
use crate::per_second::{Load, PerSecond, Series};
use crate::queue::Nanos;
use crate::queue::nanos;
use crate::strategy::Strategy;

/// How to run a model: the seed every generator derives from, the events after which the run
/// is stopped, and the retry layers inside the strategy's.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions<'a> {
    /// The world seed.
    pub seed: u64,
    /// The most events the run may process before it stops with [`SimError::EventLimit`]
    /// (`u64::MAX`: no limit but the model's own, [`Composed::MAX_EVENTS`]).
    pub max_events: u64,
    /// Retry layers between the outermost one (the strategy's) and the dependency, outermost
    /// first: each attempt of a layer is a run of the layer below, and only the innermost
    /// layer's attempts reach the dependency (the load counts those). The request's success or
    /// give-up is the outermost layer's.
    pub layers: &'a [Layer],
}

impl RunOptions<'static> {
    /// A run from `seed`, with no limit but the model's own and no inner layers.
    #[must_use]
    pub const fn seed(seed: u64) -> Self {
        Self {
            seed,
            max_events: u64::MAX,
            layers: &[],
        }
    }
}

impl<'a> RunOptions<'a> {
    /// The same options, stopped past `max_events` events.
    #[must_use]
    pub const fn max_events(self, max_events: u64) -> Self {
        Self { max_events, ..self }
    }

    /// The same options, with `layers` inside the strategy's.
    #[must_use]
    pub const fn layers<'b>(self, layers: &'b [Layer]) -> RunOptions<'b> {
        RunOptions {
            seed: self.seed,
            max_events: self.max_events,
            layers,
        }
    }
}

impl Composed {
    /// Runs `strategy` as `options` say and returns its row.
    ///
    /// # Errors
    ///
    /// The parts' or the policy's [`SimError`], [`SimError::TooLarge`] past
    /// [`Composed::MAX_EVENTS`], [`SimError::EventLimit`] past `options.max_events`, or an
    /// inner layer's invalid policy. A strategy that hedges sends its hedges beside the
    /// attempts in flight; with inner layers it is refused ([`SimError::NotApplicable`]):
    /// hedged attempts go to the dependency.
    pub fn run(
        &self,
        strategy: &Strategy,
        options: &RunOptions<'_>,
    ) -> Result<ResultRow, SimError> {
        let RunOptions {
            seed,
            max_events,
            layers: inner,
        } = *options;
        self.check(strategy, inner)?;
        // A load that changes over the run has its per-second figures in the row.
        if self.load != Load::Steady {
            return self
                .per_second_checked(strategy, inner, seed, max_events)
                .map(|t| t.row);
        }
        if let Some(round_trip) = self.independent(strategy, inner) {
            let mut metrics = self.one_at_a_time(round_trip, strategy, seed, max_events)?;
            return Ok(metrics.row(
                strategy.policy.name(),
                strategy.budget.map(|b| b.to_string()),
            ));
        }
        let mut run = Loop::new(self, strategy, inner, seed, false)?;
        run.go(max_events)?;
        Ok(run.row())
    }

    /// The time of every retry that reaches the dependency in a run of `strategy` (in no
    /// particular order), for a plot of their spread.
    ///
    /// # Errors
    ///
    /// As [`Composed::run`].
    pub fn retry_times(
        &self,
        strategy: &Strategy,
        options: &RunOptions<'_>,
    ) -> Result<Vec<Nanos>, SimError> {
        let RunOptions {
            seed,
            max_events,
            layers: inner,
        } = *options;
        self.check(strategy, inner)?;
        let metrics = match self.independent(strategy, inner) {
            Some(round_trip) => self.one_at_a_time(round_trip, strategy, seed, max_events)?,
            None => {
                let mut run = Loop::new(self, strategy, inner, seed, true)?;
                run.go(max_events)?;
                run.into_metrics()
            }
        };
        Ok(metrics.into_retry_times())
    }

    /// The retries of [`Composed::retry_times`] counted in buckets of `bucket` from time zero
    /// until `until` (at most 2^20 buckets), for a plot of how they bunch.
    ///
    /// # Errors
    ///
    /// As [`Composed::run`].
    pub fn retry_histogram(
        &self,
        strategy: &Strategy,
        options: &RunOptions<'_>,
        bucket: Duration,
        until: Duration,
    ) -> Result<Vec<u64>, SimError> {
        let times = self.retry_times(strategy, options)?;
        let bucket = nanos(bucket).max(1);
        let len = usize::try_from(until.as_nanos() / u128::from(bucket))
            .unwrap_or(0)
            .min(1 << 20);
        let mut counts = vec![0u64; len];
        for &t in &times {
            if let Some(count) = usize::try_from(t / bucket)
                .ok()
                .and_then(|i| counts.get_mut(i))
            {
                *count += 1;
            }
        }
        Ok(counts)
    }

    /// Runs `strategy` as `options` say and returns its row with the per-second series behind
    /// it ([`PerSecond`]): goodput, offered rate, arrivals, attempts and work in progress, the
    /// tail goodput ratio over the final 30 s and, with a spike, the recovery time after it.
    ///
    /// # Errors
    ///
    /// As [`Composed::run`].
    pub fn per_second(
        &self,
        strategy: &Strategy,
        options: &RunOptions<'_>,
    ) -> Result<PerSecond, SimError> {
        self.check(strategy, options.layers)?;
        self.per_second_checked(strategy, options.layers, options.seed, options.max_events)
    }

    /// [`Composed::per_second`] of parts already checked.
    pub(crate) fn per_second_checked(
        &self,
        strategy: &Strategy,
        inner: &[Layer],
        seed: u64,
        max_events: u64,
    ) -> Result<PerSecond, SimError> {
        let mut run = Loop::new(self, strategy, inner, seed, false)?;
        run.keep_series();
        run.go(max_events)?;
        let series = run.take_series();
        let row = run.row();
        let sources = self.clients.count() as f64;
        let between = |a: f64, b: f64| match self.clients {
            Clients::Open { rate, .. } | Clients::Serial { rate, .. } => {
                sources * self.profile(rate).between(a, b)
            }
            // A fleet that calls at once offers all of it in the first second.
            Clients::Fixed { count } => {
                if a <= 0.0 && b > 0.0 {
                    count as f64 * (b - a)
                } else {
                    0.0
                }
            }
        };
        Ok(series
            .unwrap_or_else(|| Series::new(self.duration))
            .into_per_second(row, self.duration, between, self.load.trigger_end()))
    }
}
