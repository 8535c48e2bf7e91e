//! # `spike` and `ramp`: metastable collapse
//!
//! A server with no admission control, whose work slows down as it piles up, and clients that
//! time out and retry. Source: Marc Brooker's "simple collapse simulation"
//! (2023), the model behind the metastable failures of Bronson et al., "Metastable Failures in
//! Distributed Systems" (HotOS 2021). The setup is the published one:
//!
//! - **Arrivals.** Requests arrive as an open Poisson process: nobody waits for an answer
//!   before sending the next request. [`Spike`]: 40 requests per second, 80 for `t` in
//!   [20 s, 25 s), then 40 again, for 80 s. [`Ramp`]: up and down, `rate(t) = 80 - 1.6 *
//!   |t - 25 s|` requests per second (40 at 0 s, 80 at 25 s, none from 75 s), for 80 s, the
//!   source's `RampUpDownLoadGenerator(80, 1.6, 25)`. The time-varying rate is drawn exactly,
//!   by thinning a Poisson process at the peak rate (the source draws each gap at the rate of
//!   the arrival before it).
//! - **Server.** Every attempt that reaches it is worked on at once (no queue, no admission
//!   control, no limit on concurrency). Its service time is `1 s + 10 ms * n`, where `n` is
//!   the number of attempts in progress at the server once it has arrived, itself counted (the
//!   source increments its `concurrency` before computing the time). Work whose client has
//!   already timed out keeps running and keeps counting in `n` until it is done: the server
//!   never learns that nobody is waiting.
//! - **Network.** `Exp(mean 100 ms)` each way, drawn afresh for the request and the response.
//! - **Client.** Each attempt has its own 3-second timeout, counted from when it is sent (not
//!   the engine's end-to-end deadline). If it fires first the attempt fails with
//!   [`Failure::Timeout`](stagger_core::Failure::Timeout) and a later response is ignored. The engine then decides, with the
//!   policy and any budget, whether and when to retry; the policy's `max_attempts` bounds the
//!   tries (3 in the published setup).
//!
//! The published comparison is [`no_backoff`] (catalog `immediate`, 3 attempts; the source's
//! `Client`) against [`jittered_backoff`], the source's `ClientWithBackoffAndJitter`: its
//! `backoff_time` starts at 10 s and doubles before each draw of `random() * backoff_time`, so
//! the two retries wait `U(0, 20 s)` and `U(0, 40 s)`: the catalog's `exponential-full-jitter`
//! with a 20 s base and 3 attempts (cap an hour, never reached).
//!
//! **Budgets.** The published run has none. If the strategy names one, every request shares a
//! single budget: this models one client process, which is how a budget would sit in front of
//! such a server.
//!
//! **A composition.** Both workloads are compositions of the parts of
//! [`model`](crate::model) ([`Spike::composed`], [`Ramp::composed`]): one open source
//! whose rate follows a [`Load`], a one-way network, a dependency with a
//! [`Service`], each attempt's timeout
//! ([`Composed::attempt_timeout`]) and the drain after the run ([`DRAIN`]); their rows and
//! [`PerSecond`]s are the composed loop's ([`Composed::per_second`]), hedged runs included. The
//! same parts combine with the others in a scenario file: a spike against a flaky dependency
//! behind a rate limiter, say.
//!
//! ## Why it collapses
//!
//! At 40 requests per second the server settles at `n = 40 * (1 + 0.01 n)`, about 67 attempts
//! in progress and 1.67 s of service: every attempt answers well within its 3 s. But the
//! server's throughput is `n / (1 s + 10 ms * n)`, which never reaches 100 attempts per
//! second, however much work is in progress. During the spike the work piles up, service time
//! passes the timeout, every attempt times out and is tried three times: 120 attempts per
//! second against a server that cannot finish 100, so the pile only grows once the spike is
//! over. That is the metastable state: the trigger is gone, the overload sustains itself.
//!
//! ## Metrics
//!
//! - **Goodput per second** ([`PerSecond::goodput`]): successful requests whose success reached
//!   the client in second `k`, that is in `[k s, (k + 1) s)`, by completion time. [`PerSecond`]
//!   also holds the offered rate, arrivals, attempts and work in progress per second, for
//!   plots.
//! - **Tail goodput ratio** ([`ResultRow::tail_goodput_ratio`](crate::metrics::ResultRow::tail_goodput_ratio)): successes reaching clients in
//!   the final 30 s of the run, per second, divided by the mean rate offered over those same
//!   30 s (40 for `spike`; 16.7 for the default `ramp`, whose rate falls to nothing at 75 s). About 1 means the system serves what
//!   it is offered.
//! - **Recovery time** ([`ResultRow::recovery_ms`](crate::metrics::ResultRow::recovery_ms), `spike` only): from the end of the trigger
//!   (25 s) to the start of the first whole second `k >= 25 s` such that the goodput of each of
//!   the five seconds `k .. k + 5` is at least 90 % of the offered rate in that second (36 per
//!   second after the spike), in ms. `null` if that never happens within the run. It does not
//!   apply to `ramp`, whose trigger lasts to the end. The criterion counts whole requests in
//!   one-second buckets, so Poisson noise can delay it by a few seconds: at 40 per second a
//!   single second falls below 36 about a quarter of the time, even with no collapse at all.
//! - The common metrics ([`ResultRow`](crate::metrics::ResultRow)) cover every request that arrived before the end of the
//!   run, followed to its end (success or give-up) for up to 5 minutes after it. Requests still
//!   unfinished then are counted under the give-up reason `"unfinished"`.
//!
//! ## Fidelity
//!
//! The published findings (the source's own output, 10 runs averaged, successes a second over
//! the last 30 s): without backoff the spike leaves most runs collapsed, and the average well
//! below the 40 offered; with its backoff it recovers; under the ramp both collapse. The
//! source draws from an unseeded generator, and its runs fall either way near the tipping
//! point, so the scoreboard counts over 100 world seeds how many runs of each strategy recover
//! (a tail goodput ratio of at least 0.9), beside the seed-1 rows, and checks each finding on
//! those counts; `stagger bench` measures every figure (`docs/scoreboard.md`, the `spike` and
//! `ramp` sections and the findings), and `tests/spike_ramp.rs` asserts the behaviour at fixed
//! seeds. Which budgets turn "stuck" into "recovers" is in the same section.
//!
//! Ratios slightly above 1 mean that seed offered a little more than the mean rate. A run of
//! the default spike takes about 3 ms (release build).

use std::time::Duration;

use serde::Deserialize;
use stagger_core::AnyConfig;
use stagger_core::policy::{ExponentialFullJitter, Immediate};

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::limits;
use crate::model::{Clients, Composed, Network, RunOptions, Service};
pub use crate::per_second::{Load, PerSecond, RECOVERY_HOLD, RECOVERY_SHARE, TAIL};
use crate::per_second::{RampShape, SpikeShape};
use crate::strategy::Strategy;

/// The most requests a run may be offered at its peak rate: `peak rate * duration`, an alias
/// of [`limits::MAX_PEAK_REQUESTS`] (the composed model's bound for a slowing service).
pub const MAX_REQUESTS: f64 = limits::MAX_PEAK_REQUESTS;

/// How long after the end of the run the requests still in progress are followed.
pub const DRAIN: Duration = Duration::from_secs(300);

/// The catalog's `immediate` with 3 attempts: the published "no backoff".
#[must_use]
pub fn no_backoff() -> Strategy {
    Strategy::policy(AnyConfig::from(Immediate::new().with_max_attempts(3)))
}

/// The published "backoff and jitter" client as the catalog's `exponential-full-jitter`: 3
/// attempts, base 20 s, cap an hour (never reached). The source's `ClientWithBackoffAndJitter`
/// starts its `backoff_time` at 10 s and doubles it before each draw of `random() *
/// backoff_time`: `U(0, 20 s)` before the first retry and `U(0, 40 s)` before the second, which
/// is full jitter from a 20 s base.
#[must_use]
pub fn jittered_backoff() -> Strategy {
    let config = ExponentialFullJitter::new()
        .with_base(Duration::from_secs(20))
        .with_cap(Duration::from_secs(3_600))
        .with_max_attempts(3);
    Strategy::policy(AnyConfig::from(config))
}

/// The server, network and client timeout shared by [`Spike`] and [`Ramp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Server {
    /// Service time with nothing else in progress (1 s).
    pub base_service: Duration,
    /// Service time added per attempt in progress when an attempt arrives (10 ms).
    pub per_in_flight: Duration,
    /// The one-way network delay, drawn each way (`Exp(mean 100 ms)`).
    pub network: Delay,
    /// The client's per-attempt timeout (3 s).
    pub timeout: Duration,
}

impl Default for Server {
    fn default() -> Self {
        Self {
            base_service: Duration::from_secs(1),
            per_in_flight: Duration::from_millis(10),
            network: Delay::Exponential { mean: 100_000_000 },
            timeout: Duration::from_secs(3),
        }
    }
}

/// A load spike: `rate`, then `rate * spike_factor` for `[spike_at, spike_at + spike_for)`,
/// then `rate` again, until `duration`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Spike {
    /// The base rate, in requests per second (40). The `rate` override sets it; the spike
    /// scales with it.
    pub rate: f64,
    /// The spike's rate as a multiple of the base rate (2: 80 requests per second).
    #[serde(skip)]
    pub spike_factor: f64,
    /// When the spike starts (20 s).
    #[serde(skip)]
    pub spike_at: Duration,
    /// How long it lasts (5 s).
    #[serde(skip)]
    pub spike_for: Duration,
    /// The whole run (80 s).
    pub duration: Duration,
    /// The server, network and timeout.
    #[serde(skip)]
    pub server: Server,
    /// The window of the peak retry share.
    pub window: Duration,
}

impl Default for Spike {
    fn default() -> Self {
        Self {
            rate: 40.0,
            spike_factor: 2.0,
            spike_at: Duration::from_secs(20),
            spike_for: Duration::from_secs(5),
            duration: Duration::from_secs(80),
            server: Server::default(),
            window: Duration::from_millis(10),
        }
    }
}

/// A ramp up and down, as Brooker's simulation has it: the rate rises linearly from `rate` at
/// time zero to `rate * peak_factor` at `peak_at`, and falls at the same slope after it, to
/// nothing (`80 - 1.6 |t - 25|` requests a second at the defaults: 40 at 0 s, 80 at 25 s, none
/// from 75 s).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ramp {
    /// The rate at time zero, in requests per second (40). The `rate` override sets it; the
    /// peak scales with it.
    pub rate: f64,
    /// The peak rate as a multiple of `rate` (2: 80 per second).
    #[serde(skip)]
    pub peak_factor: f64,
    /// When the rate peaks (25 s).
    #[serde(skip)]
    pub peak_at: Duration,
    /// The whole run (80 s).
    pub duration: Duration,
    /// The server, network and timeout.
    #[serde(skip)]
    pub server: Server,
    /// The window of the peak retry share.
    pub window: Duration,
}

impl Default for Ramp {
    fn default() -> Self {
        Self {
            rate: 40.0,
            peak_factor: 2.0,
            peak_at: Duration::from_secs(25),
            duration: Duration::from_secs(80),
            server: Server::default(),
            window: Duration::from_millis(10),
        }
    }
}

/// The checks both workloads add to the composed model's: a run at least `min` long (the tail
/// window after the trigger), the client's timeout, and no more than [`MAX_REQUESTS`] offered
/// at the peak rate.
fn check_shape(model: &Composed, min: Duration, min_text: &'static str) -> Result<(), SimError> {
    // The run's own length first, where the trigger is a day or less (the model names a
    // longer one).
    if model.duration < min && min <= limits::MAX_DURATION + TAIL {
        return Err(SimError::Invalid {
            param: "duration",
            allowed: min_text,
        });
    }
    // The rest as the composed model checks it: the client's timeout (from
    // [`limits::MIN_ATTEMPT_TIMEOUT`] to a day), the service, and the requests at the peak
    // rate (up to [`MAX_REQUESTS`]).
    model.validate()
}

impl Server {
    /// Puts this server, its network and the client's timeout into `model`: the one-way
    /// network, the service, each attempt's timeout, and the drain after the run.
    fn apply(&self, model: &mut Composed) {
        model.network = Network::OneWay(self.network);
        model.dependency.service = Some(Service {
            base: self.base_service,
            per_in_flight: self.per_in_flight,
        });
        model.attempt_timeout = Some(self.timeout);
        model.drain = Some(DRAIN);
    }
}

impl Spike {
    /// Its load: the base rate, multiplied in the spike's window.
    fn load(&self) -> Load {
        Load::Spike(SpikeShape {
            factor: self.spike_factor,
            at: self.spike_at,
            lasts: self.spike_for,
        })
    }
}

impl Ramp {
    /// Its load: up to the peak and down at the same slope.
    fn load(&self) -> Load {
        Load::Ramp(RampShape {
            peak_factor: self.peak_factor,
            peak_at: self.peak_at,
        })
    }
}

/// The composed model and the runs of a workload whose load has a shape ([`Spike`] and
/// [`Ramp`]): one open source at its `rate` with its `load()`, against its `server`, for its
/// `duration`; `$how` says how the rate moves.
macro_rules! shaped_load {
    ($workload:ident, $how:literal) => {
        impl $workload {
            #[doc = concat!(
                "The composed model this workload runs: one open source whose rate ", $how,
                ", against a service that slows with its work in progress, through a one-way \
                network, with each attempt's timeout and the drain after the run."
            )]
            #[must_use]
            pub fn composed(&self) -> Composed {
                let mut model = Composed::new(
                    Clients::one_source(self.rate),
                    self.duration,
                    Network::OneWay(self.server.network),
                );
                model.load = self.load();
                model.window = self.window;
                self.server.apply(&mut model);
                model
            }

            /// Runs `strategy`, every generator derived from `seed`, and returns the row with
            /// the per-second series.
            ///
            /// # Errors
            ///
            /// The parameters' or the policy's [`SimError`], or [`SimError::TooLarge`] past
            /// [`Composed::MAX_EVENTS`].
            pub fn simulate(&self, strategy: &Strategy, seed: u64) -> Result<PerSecond, SimError> {
                self.simulate_within(strategy, seed, u64::MAX)
            }

            /// The run of `simulate`, stopped with [`SimError::EventLimit`] past `max_events`
            /// events.
            ///
            /// # Errors
            ///
            /// Those of `simulate`, or [`SimError::EventLimit`].
            pub fn simulate_within(
                &self,
                strategy: &Strategy,
                seed: u64,
                max_events: u64,
            ) -> Result<PerSecond, SimError> {
                self.validate()?;
                self.composed()
                    .per_second(strategy, &RunOptions::seed(seed).max_events(max_events))
            }
        }
    };
}

shaped_load!(Spike, "spikes");
shaped_load!(Ramp, "ramps up and down");

impl Workload for Spike {
    const KIND: WorkloadKind = WorkloadKind::Spike;

    fn validate(&self) -> Result<(), SimError> {
        let model = self.composed();
        // The tail window must start after the spike ends.
        let end = self.spike_at.saturating_add(self.spike_for);
        check_shape(
            &model,
            end.saturating_add(TAIL),
            "at most a day and at least 30 s longer than the spike's end (55 s by default)",
        )
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

impl Workload for Ramp {
    const KIND: WorkloadKind = WorkloadKind::Ramp;

    fn validate(&self) -> Result<(), SimError> {
        check_shape(
            &self.composed(),
            TAIL,
            "at least 30 s (the tail window) and at most a day",
        )
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}
