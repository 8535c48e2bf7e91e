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
//!   [`Failure::Timeout`] and a later response is ignored. The engine then decides, with the
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
//! - **Goodput per second** ([`Timeline::goodput`]): successful requests whose success reached
//!   the client in second `k`, that is in `[k s, (k + 1) s)`, by completion time. [`Timeline`]
//!   also holds the offered rate, arrivals, attempts and work in progress per second, for
//!   plots.
//! - **Tail goodput ratio** ([`ResultRow::tail_goodput_ratio`]): successes reaching clients in
//!   the final 30 s of the run, per second, divided by the mean rate offered over those same
//!   30 s (40 for `spike`; 16.7 for the default `ramp`, whose rate falls to nothing at 75 s). About 1 means the system serves what
//!   it is offered.
//! - **Recovery time** ([`ResultRow::recovery_ms`], `spike` only): from the end of the trigger
//!   (25 s) to the start of the first whole second `k >= 25 s` such that the goodput of each of
//!   the five seconds `k .. k + 5` is at least 90 % of the offered rate in that second (36 per
//!   second after the spike), in ms. `null` if that never happens within the run. It does not
//!   apply to `ramp`, whose trigger lasts to the end. The criterion counts whole requests in
//!   one-second buckets, so Poisson noise can delay it by a few seconds: at 40 per second a
//!   single second falls below 36 about a quarter of the time, even with no collapse at all.
//! - The common metrics ([`ResultRow`]) cover every request that arrived before the end of the
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

use std::rc::Rc;
use std::time::Duration;

use serde::Serialize;
use stagger_core::budget::Budget;
use stagger_core::engine::{HedgeDelay, Settings};
use stagger_core::policy::{ExponentialFullJitter, Immediate};
use stagger_core::sketch::LatencySketch;
use stagger_core::{AnyConfig, Failure, Rng, SeededRng};

use super::call::{Call, HedgedCall, Next, Step};
use super::slots::Slots;
use super::{Overrides, Workload, WorkloadKind, check_events, check_window};
use crate::dist::{Delay, exponential};
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, grown, ns, peak, room_for};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::Strategy;

const SECOND: Nanos = 1_000_000_000;

/// The most requests a run may be offered at its peak rate: `peak rate * duration`.
pub const MAX_REQUESTS: f64 = 2e6;

/// The most attempts a run may make before it is stopped and refused.
pub const MAX_ATTEMPTS: u64 = 20_000_000;

/// How long after the end of the run the requests still in progress are followed.
pub const DRAIN: Duration = Duration::from_secs(300);

/// The tail over which the tail goodput ratio is measured: the final 30 s.
pub const TAIL: Duration = Duration::from_secs(30);

/// Recovered means goodput at least this share of the offered rate...
pub const RECOVERY_SHARE: f64 = 0.9;

/// ...for this many consecutive seconds.
pub const RECOVERY_HOLD: usize = 5;

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

impl Server {
    fn validate(&self) -> Result<(), SimError> {
        if self.timeout < Duration::from_millis(1) || self.timeout > Duration::from_secs(3_600) {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "between 1 ms and an hour",
            });
        }
        if self.base_service > Duration::from_secs(3_600)
            || self.per_in_flight > Duration::from_secs(3_600)
        {
            return Err(SimError::Invalid {
                param: "service_time",
                allowed: "at most an hour",
            });
        }
        Ok(())
    }
}

/// A load spike: `rate`, then `rate * spike_factor` for `[spike_at, spike_at + spike_for)`,
/// then `rate` again, until `duration`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spike {
    /// The base rate, in requests per second (40). The `rate` override sets it; the spike
    /// scales with it.
    pub rate: f64,
    /// The spike's rate as a multiple of the base rate (2: 80 requests per second).
    pub spike_factor: f64,
    /// When the spike starts (20 s).
    pub spike_at: Duration,
    /// How long it lasts (5 s).
    pub spike_for: Duration,
    /// The whole run (80 s).
    pub duration: Duration,
    /// The server, network and timeout.
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ramp {
    /// The rate at time zero, in requests per second (40). The `rate` override sets it; the
    /// peak scales with it.
    pub rate: f64,
    /// The peak rate as a multiple of `rate` (2: 80 per second).
    pub peak_factor: f64,
    /// When the rate peaks (25 s).
    pub peak_at: Duration,
    /// The whole run (80 s).
    pub duration: Duration,
    /// The server, network and timeout.
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

/// One run over time: the result row and the per-second series behind it. Entry `k` of each
/// series covers `[k s, (k + 1) s)`; the last may be a partial second.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timeline {
    /// The result row, with `tail_goodput_ratio` (and, for `spike`, `recovery_ms`) filled in.
    pub row: ResultRow,
    /// Successful requests whose success reached the client in each second.
    pub goodput: Vec<u64>,
    /// The offered rate averaged over each second, in requests per second.
    pub offered: Vec<f64>,
    /// Requests that arrived in each second.
    pub arrivals: Vec<u64>,
    /// Attempts sent in each second, first ones included.
    pub attempts: Vec<u64>,
    /// Attempts in progress at the server at the start of each second, abandoned ones
    /// included.
    pub in_flight: Vec<u64>,
}

impl Timeline {
    /// Goodput per second, as for plots: `(start of the second in s, successes)`.
    #[must_use]
    pub fn goodput_series(&self) -> Vec<(f64, u64)> {
        self.goodput
            .iter()
            .enumerate()
            .map(|(k, &g)| (k as f64, g))
            .collect()
    }
}

/// The offered load over time.
#[derive(Clone, Copy, Debug)]
enum Load {
    /// `base`, and `peak` in `[from, until)` (seconds).
    Spike {
        base: f64,
        peak: f64,
        from: f64,
        until: f64,
    },
    /// Up and down at `slope` requests a second per second, peaking at `peak` at time `at`
    /// (seconds), and nothing where that falls to zero: `max(0, peak - slope |t - at|)`.
    Ramp { peak: f64, slope: f64, at: f64 },
}

impl Load {
    /// The rate at `t` seconds.
    fn at(&self, t: f64) -> f64 {
        match *self {
            Self::Spike {
                base,
                peak,
                from,
                until,
            } => {
                if (from..until).contains(&t) {
                    peak
                } else {
                    base
                }
            }
            Self::Ramp { peak, slope, at } => (peak - slope * (t - at).abs()).max(0.0),
        }
    }

    /// The highest rate, which bounds the thinning.
    fn peak(&self) -> f64 {
        match *self {
            Self::Spike { base, peak, .. } => base.max(peak),
            Self::Ramp { peak, .. } => peak,
        }
    }

    /// The highest mean rate over any `span` seconds of a run of `duration` seconds: the span
    /// that ends with the trigger (a spike), or the one centred on the peak (a ramp, whose
    /// rate falls away on both sides of it).
    fn busiest(&self, span: f64, duration: f64) -> f64 {
        let span = span.clamp(1e-9, duration.max(1e-9));
        let over = |end: f64| {
            let start = (end - span).max(0.0);
            self.between(start, end) / (end - start).max(1e-9)
        };
        match *self {
            Self::Spike { until, .. } => over(until.min(duration).max(span)).max(over(duration)),
            Self::Ramp { at, .. } => {
                let end = (at + span / 2.0).clamp(span, duration.max(span));
                over(end)
            }
        }
    }

    /// The requests expected in `[a, b)` seconds: the integral of the rate.
    fn between(&self, a: f64, b: f64) -> f64 {
        match *self {
            Self::Spike {
                base,
                peak,
                from,
                until,
            } => {
                let overlap = (b.min(until) - a.max(from)).max(0.0);
                base * (b - a) + (peak - base) * overlap
            }
            Self::Ramp { peak, slope, at } => {
                // Linear between the peak and where the rate reaches zero on either side: add
                // the trapezoids between those points.
                let reach = if slope > 0.0 {
                    peak / slope
                } else {
                    f64::INFINITY
                };
                let mut points = vec![a, b];
                points.extend(
                    [at - reach, at, at + reach]
                        .into_iter()
                        .filter(|p| *p > a && *p < b),
                );
                points.sort_by(f64::total_cmp);
                points
                    .windows(2)
                    .map(|w| (w[1] - w[0]) * (self.at(w[0]) + self.at(w[1])) / 2.0)
                    .sum()
            }
        }
    }
}

/// The run's shape, as [`simulate`] needs it.
struct Shape {
    load: Load,
    duration: Duration,
    server: Server,
    window: Duration,
    /// When the trigger ends, for the recovery time; `None` if it lasts to the end.
    trigger_end: Option<Duration>,
}

fn check_rate(rate: f64, factor: f64, factor_name: &'static str) -> Result<(), SimError> {
    if !(rate.is_finite() && rate > 0.0 && rate <= 1e6) {
        return Err(SimError::Invalid {
            param: "rate",
            allowed: "a number of requests per second in (0, 1e6]",
        });
    }
    if !(factor.is_finite() && factor > 0.0 && factor <= 1e3) {
        return Err(SimError::Invalid {
            param: factor_name,
            allowed: "a multiple of the rate in (0, 1000]",
        });
    }
    Ok(())
}

fn check_common(
    duration: Duration,
    min: Duration,
    min_text: &'static str,
    window: Duration,
) -> Result<(), SimError> {
    if duration < min || duration > Duration::from_secs(86_400) {
        return Err(SimError::Invalid {
            param: "duration",
            allowed: min_text,
        });
    }
    check_window(window)
}

fn check_size(load: &Load, duration: Duration) -> Result<(), SimError> {
    if load.peak() * duration.as_secs_f64() > MAX_REQUESTS {
        return Err(SimError::TooLarge {
            what: "peak rate x duration",
            limit: format!("{MAX_REQUESTS:e} requests"),
        });
    }
    Ok(())
}

impl Spike {
    fn load(&self) -> Load {
        let from = self.spike_at.as_secs_f64();
        Load::Spike {
            base: self.rate,
            peak: self.rate * self.spike_factor,
            from,
            until: from + self.spike_for.as_secs_f64(),
        }
    }

    /// Runs `strategy`, every generator derived from `seed`, and returns the row with the
    /// per-second series.
    ///
    /// # Errors
    ///
    /// The parameters' or the policy's [`SimError`], or [`SimError::TooLarge`] if the run
    /// would make more than [`MAX_ATTEMPTS`] attempts.
    pub fn simulate(&self, strategy: &Strategy, seed: u64) -> Result<Timeline, SimError> {
        self.simulate_within(strategy, seed, u64::MAX)
    }

    /// [`Spike::simulate`], stopped with [`SimError::EventLimit`] past `max_events` events.
    ///
    /// # Errors
    ///
    /// Those of [`Spike::simulate`], or [`SimError::EventLimit`].
    pub fn simulate_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<Timeline, SimError> {
        self.validate()?;
        simulate(&self.shape(), strategy, seed, max_events)
    }

    fn shape(&self) -> Shape {
        Shape {
            load: self.load(),
            duration: self.duration,
            server: self.server,
            window: self.window,
            trigger_end: Some(self.spike_at + self.spike_for),
        }
    }
}

impl Ramp {
    fn load(&self) -> Load {
        let peak = self.rate * self.peak_factor;
        let at = self.peak_at.as_secs_f64();
        Load::Ramp {
            peak,
            slope: if at > 0.0 {
                (peak - self.rate) / at
            } else {
                0.0
            },
            at,
        }
    }

    /// Runs `strategy`, every generator derived from `seed`, and returns the row with the
    /// per-second series.
    ///
    /// # Errors
    ///
    /// The parameters' or the policy's [`SimError`], or [`SimError::TooLarge`] if the run
    /// would make more than [`MAX_ATTEMPTS`] attempts.
    pub fn simulate(&self, strategy: &Strategy, seed: u64) -> Result<Timeline, SimError> {
        self.simulate_within(strategy, seed, u64::MAX)
    }

    /// [`Ramp::simulate`], stopped with [`SimError::EventLimit`] past `max_events` events.
    ///
    /// # Errors
    ///
    /// Those of [`Ramp::simulate`], or [`SimError::EventLimit`].
    pub fn simulate_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<Timeline, SimError> {
        self.validate()?;
        simulate(&self.shape(), strategy, seed, max_events)
    }

    fn shape(&self) -> Shape {
        Shape {
            load: self.load(),
            duration: self.duration,
            server: self.server,
            window: self.window,
            trigger_end: None,
        }
    }
}

impl Workload for Spike {
    const KIND: WorkloadKind = WorkloadKind::Spike;

    const ACCEPTS: &'static [&'static str] = &["rate", "duration", "window"];

    fn set(&mut self, o: &Overrides) {
        self.rate = o.rate.unwrap_or(self.rate);
        self.duration = o.duration.unwrap_or(self.duration);
        self.window = o.window.unwrap_or(self.window);
    }

    fn validate(&self) -> Result<(), SimError> {
        check_rate(self.rate, self.spike_factor, "spike_factor")?;
        if self.spike_at > Duration::from_secs(86_400)
            || self.spike_for.is_zero()
            || self.spike_for > Duration::from_secs(86_400)
        {
            return Err(SimError::Invalid {
                param: "spike",
                allowed: "a spike longer than 0 that starts and lasts at most a day",
            });
        }
        // The tail window must start after the spike ends.
        let min = self.spike_at + self.spike_for + TAIL;
        check_common(
            self.duration,
            min,
            "at most a day and at least 30 s longer than the spike's end (55 s by default)",
            self.window,
        )?;
        self.server.validate()?;
        check_size(&self.load(), self.duration)
    }

    fn estimate(&self, strategy: &Strategy) -> Estimate {
        estimate(&self.shape(), strategy)
    }

    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        self.simulate_within(strategy, seed, max_events)
            .map(|t| t.row)
    }
}

impl Workload for Ramp {
    const KIND: WorkloadKind = WorkloadKind::Ramp;

    const ACCEPTS: &'static [&'static str] = &["rate", "duration", "window"];

    fn set(&mut self, o: &Overrides) {
        self.rate = o.rate.unwrap_or(self.rate);
        self.duration = o.duration.unwrap_or(self.duration);
        self.window = o.window.unwrap_or(self.window);
    }

    fn validate(&self) -> Result<(), SimError> {
        check_rate(self.rate, self.peak_factor, "peak_factor")?;
        if self.peak_at.is_zero() || self.peak_at > Duration::from_secs(86_400) {
            return Err(SimError::Invalid {
                param: "peak_at",
                allowed: "longer than 0 and at most a day",
            });
        }
        check_common(
            self.duration,
            TAIL,
            "at least 30 s (the tail window) and at most a day",
            self.window,
        )?;
        self.server.validate()?;
        check_size(&self.load(), self.duration)
    }

    fn estimate(&self, strategy: &Strategy) -> Estimate {
        estimate(&self.shape(), strategy)
    }

    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        self.simulate_within(strategy, seed, max_events)
            .map(|t| t.row)
    }
}

enum Event {
    /// A candidate arrival of the thinned Poisson process.
    Arrival,
    /// The request in this slot sends an attempt.
    Send(u32),
    /// Attempt `id` of the request in this slot reaches the server.
    Reach(u32, u64),
    /// The server finishes attempt `id`.
    Finish(u32, u64),
    /// The answer to attempt `id` reaches its client.
    Answer(u32, u64),
    /// Attempt `id`'s timeout fires.
    Timeout(u32, u64),
    /// The hedged request in this slot asked to be woken now.
    Wake(u32),
}

/// A request in progress.
struct Live {
    call: Call,
    /// The attempt awaiting an answer or a timeout, by id.
    pending: Option<u64>,
}

/// A hedged request in progress.
struct HedgedLive {
    call: HedgedCall,
    /// The attempts awaiting an answer or a timeout: their ids, numbers and when each was
    /// sent.
    flying: Vec<(u64, u32, Nanos)>,
    /// When it asked to be woken, if it did.
    wake: Option<Nanos>,
}

/// A request in progress, retried or hedged.
enum Request {
    Retried(Live),
    Hedged(HedgedLive),
}

impl Request {
    /// Whether the request awaits attempt `id`.
    fn awaits(&self, id: u64) -> bool {
        match self {
            Self::Retried(live) => live.pending == Some(id),
            Self::Hedged(h) => h.flying.iter().any(|f| f.0 == id),
        }
    }
}

/// The request in `slot`, if it awaits attempt `id`. Slots are reused once a request is
/// over, so that memory follows the requests in progress rather than all requests; attempt
/// ids are unique over the run, so a late event for a reused slot is recognised and ignored.
fn awaiting(slots: &mut Slots<Request>, slot: u32, id: u64) -> Option<&mut Request> {
    slots.get(slot).filter(|r| r.awaits(id))
}

/// Per-second counters.
struct Series {
    goodput: Vec<u64>,
    arrivals: Vec<u64>,
    attempts: Vec<u64>,
    in_flight: Vec<u64>,
}

impl Series {
    fn new(seconds: usize) -> Self {
        Self {
            goodput: vec![0; seconds],
            arrivals: vec![0; seconds],
            attempts: vec![0; seconds],
            in_flight: vec![0; seconds],
        }
    }

    fn bump(series: &mut [u64], now: Nanos) {
        if let Some(count) = usize::try_from(now / SECOND)
            .ok()
            .and_then(|k| series.get_mut(k))
        {
            *count += 1;
        }
    }
}

/// Whether the server keeps up cannot be known without running it, so the estimate takes the
/// collapse: every request makes every attempt its policy allows (at most one per timeout,
/// until the drain ends), each attempt is four events (sent, reaching the server, finished,
/// and answered or timed out; a request that succeeds also sees its timeout, a fifth), and
/// each candidate arrival of the thinning one. Memory is the requests in progress, which in a collapse live through all
/// their attempts, and the server's work in progress, which a collapse piles up without end:
/// every attempt made but those the server can finish, fewer than one per `per_in_flight`.
/// The requests in progress at the peak, in a collapse: a request that times out every
/// attempt lives its timeouts and its delays, at the busiest rate over such a lifetime.
fn live(shape: &Shape, plan: &Plan) -> f64 {
    let duration = shape.duration.as_secs_f64();
    let timeout = ns(shape.server.timeout);
    let horizon = ns(shape.duration) + ns(DRAIN);
    let (_, last) = plan.attempts_within(timeout, horizon);
    let lifetime = last + timeout;
    let requests = shape.load.between(0.0, duration);
    peak(shape.load.busiest(lifetime / 1e9, duration) / 1e9 * lifetime).min(requests + 1.0)
}

fn estimate(shape: &Shape, strategy: &Strategy) -> Estimate {
    let plan = Plan::new(strategy);
    let duration = shape.duration.as_secs_f64();
    let candidates = shape.load.peak() * duration;
    let requests = shape.load.between(0.0, duration);
    let server = shape.server;
    let timeout = ns(server.timeout);
    let horizon = ns(shape.duration) + ns(DRAIN);
    let per_request = (plan.max_attempts as f64).min(horizon / timeout + 1.0);
    let attempts = (requests * per_request).min(MAX_ATTEMPTS as f64 + 1.0);
    let events = candidates + 1.0 + 4.0 * attempts;
    let live = live(shape, &plan);
    let retries_per_ns = attempts * (1.0 - 1.0 / per_request) / horizon;
    let window = peak(retries_per_ns * ns(shape.window)).min(attempts);
    let seconds = duration.ceil();
    // The server finishes fewer than one attempt per `per_in_flight` however much it holds;
    // the attempts it has not finished wait in the queue.
    let per = ns(server.per_in_flight);
    let finished = if per > 0.0 { horizon / per } else { attempts };
    let unfinished = (attempts - finished).max(live);
    let bytes = Slots::<Request>::bytes(live, room_for(live) as f64)
        // Each live request awaits a timeout and an answer.
        + 2.0 * live * EventQueue::<Event>::bytes_per_pending()
        + unfinished * EventQueue::<Event>::bytes_per_parked()
        + grown(window) * Metrics::STORED_RETRY_BYTES as f64
        + seconds * (4 * size_of::<u64>() + size_of::<f64>()) as f64
        + strategy.budget_bytes() as f64
        + Metrics::fixed_bytes() as f64;
    Estimate::of(events, bytes)
}

fn simulate(
    shape: &Shape,
    strategy: &Strategy,
    seed: u64,
    max_events: u64,
) -> Result<Timeline, SimError> {
    // Refuse an invalid policy up front, even if no request arrives.
    strategy.policy.build(SeededRng::new(seed))?;
    let mut world = SeededRng::new(seed);
    let mut arrivals = world.fork();
    let mut net = world.fork();
    // One budget for all requests: one client process.
    let budget: Rc<dyn Budget> = strategy.client_budget(world.fork());
    let server = shape.server;
    let end = nanos(shape.duration);
    let horizon = end.saturating_add(nanos(DRAIN));
    let tail_start = end.saturating_sub(nanos(TAIL));
    let (base_service, per_in_flight, timeout) = (
        nanos(server.base_service),
        nanos(server.per_in_flight),
        nanos(server.timeout),
    );
    let seconds = usize::try_from(end.div_ceil(SECOND)).unwrap_or(usize::MAX);
    let peak = shape.load.peak();
    let mean_gap = SECOND as f64 / peak;

    let mut metrics = Metrics::new(nanos(shape.window));
    let mut series = Series::new(seconds);
    let mut slots: Slots<Request> =
        Slots::with_capacity(room_for(live(shape, &Plan::new(strategy))));
    let mut queue = EventQueue::new();
    let mut in_flight: u64 = 0;
    let mut next_id: u64 = 0;
    let mut tail_successes: u64 = 0;
    let mut arriving = true;
    let mut next_sample: usize = 0;
    // The fleet's attempt latencies, for a hedge delay at a quantile.
    let sketch = LatencySketch::new();
    // What a hedged request's steps need of the run, borrowed afresh at each use.
    macro_rules! ctx {
        () => {
            Ctx {
                slots: &mut slots,
                queue: &mut queue,
                metrics: &mut metrics,
                series: &mut series,
                net: &mut net,
                next_id: &mut next_id,
                sketch: &sketch,
                server,
                timeout,
            }
        };
    }

    queue.push(
        exponential(&mut arrivals, mean_gap) as Nanos,
        Event::Arrival,
    );
    while let Some((now, event)) = queue.pop() {
        metrics.events += 1;
        check_events(metrics.events, max_events)?;
        while next_sample < seconds && (next_sample as u64).saturating_mul(SECOND) <= now {
            series.in_flight[next_sample] = in_flight;
            next_sample += 1;
        }
        if now >= horizon || (!arriving && slots.live() == 0) {
            break;
        }
        match event {
            Event::Arrival => {
                if now >= end {
                    arriving = false;
                    continue;
                }
                let t = now as f64 / SECOND as f64;
                if arrivals.next_f64() * peak < shape.load.at(t) {
                    metrics.first_try();
                    Series::bump(&mut series.arrivals, now);
                    if let Some(hedging) = strategy.hedging {
                        let measured = match hedging.delay() {
                            HedgeDelay::Quantile(q) => sketch.quantile(q),
                            _ => None,
                        };
                        let call = HedgedCall::start(
                            strategy,
                            hedging,
                            measured,
                            world.fork(),
                            budget.clone(),
                            Settings::new(),
                            now,
                        )?;
                        let slot = slots.insert(Request::Hedged(HedgedLive {
                            call,
                            flying: Vec::new(),
                            wake: None,
                        }));
                        queue.push(now, Event::Wake(slot));
                        if let Some(Request::Hedged(h)) = slots.get(slot) {
                            h.wake = Some(now);
                        }
                    } else {
                        let call = Call::start(
                            strategy,
                            world.fork(),
                            budget.clone(),
                            Settings::new(),
                            now,
                        )?;
                        let slot = slots.insert(Request::Retried(Live {
                            call,
                            pending: None,
                        }));
                        queue.push(now, Event::Send(slot));
                    }
                }
                let gap = exponential(&mut arrivals, mean_gap) as Nanos;
                queue.push(now.saturating_add(gap), Event::Arrival);
            }
            Event::Wake(slot) => {
                let Some(Request::Hedged(h)) = slots.get(slot) else {
                    continue;
                };
                if h.wake != Some(now) {
                    continue;
                }
                h.wake = None;
                hedge_step(&mut ctx!(), slot, now)?;
            }
            Event::Send(slot) => {
                let Some(Request::Retried(live)) = slots.get(slot) else {
                    continue;
                };
                if live.call.begin(now, &mut metrics).is_some() {
                    if metrics.attempts > MAX_ATTEMPTS {
                        return Err(SimError::TooLarge {
                            what: "attempts",
                            limit: MAX_ATTEMPTS.to_string(),
                        });
                    }
                    let id = next_id;
                    next_id += 1;
                    live.pending = Some(id);
                    Series::bump(&mut series.attempts, now);
                    queue.push(
                        now.saturating_add(server.network.sample(&mut net)),
                        Event::Reach(slot, id),
                    );
                    queue.push(now.saturating_add(timeout), Event::Timeout(slot, id));
                } else {
                    slots.remove(slot);
                }
            }
            Event::Reach(slot, id) => {
                // The arriving attempt is in progress too, and slows itself (the source's
                // `concurrency += 1` before the service time).
                in_flight += 1;
                let service = base_service.saturating_add(per_in_flight.saturating_mul(in_flight));
                queue.push(now.saturating_add(service), Event::Finish(slot, id));
            }
            Event::Finish(slot, id) => {
                in_flight -= 1;
                // Nobody waits for abandoned work: its answer would be ignored.
                if awaiting(&mut slots, slot, id).is_some() {
                    queue.push(
                        now.saturating_add(server.network.sample(&mut net)),
                        Event::Answer(slot, id),
                    );
                }
            }
            Event::Answer(slot, id) => {
                let before = metrics.successes;
                match awaiting(&mut slots, slot, id) {
                    None => continue,
                    Some(Request::Retried(live)) => {
                        live.pending = None;
                        // With no deadline, a success is always a success.
                        let _ = live.call.end(now, Ok(()), &mut metrics);
                        slots.remove(slot);
                    }
                    Some(Request::Hedged(_)) => {
                        hedge_answer(&mut ctx!(), slot, id, now, Ok(()))?;
                    }
                }
                if metrics.successes > before && now < end {
                    Series::bump(&mut series.goodput, now);
                    if now >= tail_start {
                        tail_successes += 1;
                    }
                }
            }
            Event::Timeout(slot, id) => match awaiting(&mut slots, slot, id) {
                None => {}
                Some(Request::Retried(live)) => {
                    live.pending = None;
                    match live.call.end(now, Err(Failure::Timeout), &mut metrics) {
                        Next::RetryAt(at) => queue.push(at, Event::Send(slot)),
                        Next::Done => slots.remove(slot),
                    }
                }
                Some(Request::Hedged(_)) => {
                    hedge_answer(&mut ctx!(), slot, id, now, Err(Failure::Timeout))?;
                }
            },
        }
    }
    let unfinished = slots.live() as u64;
    if unfinished > 0 {
        *metrics.give_ups.entry("unfinished").or_default() += unfinished;
    }

    let offered: Vec<f64> = (0..seconds)
        .map(|k| {
            let a = k as f64;
            let b = (a + 1.0).min(shape.duration.as_secs_f64());
            shape.load.between(a, b) / (b - a)
        })
        .collect();
    let duration = shape.duration.as_secs_f64();
    let tail = TAIL.as_secs_f64().min(duration);
    let mut row = metrics.row(strategy.name(), strategy.budget.map(|b| b.to_string()));
    // Divided by the mean offered rate over the same final window (for the ramp, not its end
    // rate, which would read a healthy system as 0.9).
    let offered_tail = shape.load.between(duration - tail, duration) / tail;
    row.tail_goodput_ratio = Some(tail_successes as f64 / tail / offered_tail);
    row.recovery_ms = shape.trigger_end.map(|trigger_end| {
        recovery_ms(
            &series.goodput,
            &offered,
            trigger_end,
            seconds_complete(shape.duration),
        )
    });
    Ok(Timeline {
        row,
        goodput: series.goodput,
        offered,
        arrivals: series.arrivals,
        attempts: series.attempts,
        in_flight: series.in_flight,
    })
}

/// What a hedged request's steps need of the run.
struct Ctx<'a> {
    slots: &'a mut Slots<Request>,
    queue: &'a mut EventQueue<Event>,
    metrics: &'a mut Metrics,
    series: &'a mut Series,
    net: &'a mut SeededRng,
    next_id: &'a mut u64,
    sketch: &'a LatencySketch,
    server: Server,
    timeout: Nanos,
}

/// Asks the hedged request in `slot` what to do at `now`, and does it: sends the attempts it
/// sends (each with the client's own timeout), sets the wake-up it asks for, or ends it.
fn hedge_step(c: &mut Ctx<'_>, slot: u32, now: Nanos) -> Result<(), SimError> {
    loop {
        let Some(Request::Hedged(h)) = c.slots.get(slot) else {
            return Ok(());
        };
        match h.call.next(now, c.metrics) {
            Step::Send(number, _) => {
                if c.metrics.attempts > MAX_ATTEMPTS {
                    return Err(SimError::TooLarge {
                        what: "attempts",
                        limit: MAX_ATTEMPTS.to_string(),
                    });
                }
                let id = *c.next_id;
                *c.next_id += 1;
                h.flying.push((id, number, now));
                Series::bump(&mut c.series.attempts, now);
                c.queue.push(
                    now.saturating_add(c.server.network.sample(c.net)),
                    Event::Reach(slot, id),
                );
                c.queue
                    .push(now.saturating_add(c.timeout), Event::Timeout(slot, id));
            }
            Step::WakeAt(at) => {
                if h.wake.is_none_or(|w| at < w) {
                    h.wake = Some(at);
                    c.queue.push(at, Event::Wake(slot));
                }
                return Ok(());
            }
            Step::Idle => return Ok(()),
            Step::Done => {
                finish_hedged(c, slot, now);
                return Ok(());
            }
        }
    }
}

/// Attempt `id` of the hedged request in `slot` answered at `now` with `result` (its answer,
/// or its timeout).
fn hedge_answer(
    c: &mut Ctx<'_>,
    slot: u32,
    id: u64,
    now: Nanos,
    result: Result<(), Failure>,
) -> Result<(), SimError> {
    let Some(Request::Hedged(h)) = c.slots.get(slot) else {
        return Ok(());
    };
    let Some(i) = h.flying.iter().position(|f| f.0 == id) else {
        return Ok(());
    };
    let (_, number, sent) = h.flying.swap_remove(i);
    c.sketch.record(Duration::from_nanos(now - sent));
    if h.call.answered(number, now, result, c.metrics) {
        finish_hedged(c, slot, now);
        Ok(())
    } else {
        hedge_step(c, slot, now)
    }
}

/// The hedged request in `slot` is over at `now`: its attempts still awaited are abandoned
/// (the server works on, as for any attempt that timed out), each measured for as long as it
/// ran.
fn finish_hedged(c: &mut Ctx<'_>, slot: u32, now: Nanos) {
    if let Some(Request::Hedged(h)) = c.slots.get(slot) {
        for &(_, _, sent) in &h.flying {
            c.sketch.record(Duration::from_nanos(now - sent));
        }
    }
    c.slots.remove(slot);
}

/// Whole seconds in `duration`: a partial last second does not count towards a recovery.
fn seconds_complete(duration: Duration) -> usize {
    usize::try_from(duration.as_secs()).unwrap_or(usize::MAX)
}

/// From `trigger_end` to the first whole second `k >= trigger_end` whose goodput, and that of
/// the [`RECOVERY_HOLD`] - 1 seconds after it, is at least [`RECOVERY_SHARE`] of the offered
/// rate, in ms; `None` if there is no such second among the first `complete` seconds.
fn recovery_ms(
    goodput: &[u64],
    offered: &[f64],
    trigger_end: Duration,
    complete: usize,
) -> Option<f64> {
    let first = usize::try_from(trigger_end.as_nanos().div_ceil(u128::from(SECOND))).ok()?;
    let last = complete.min(goodput.len()).min(offered.len());
    let good = |k: usize| goodput[k] as f64 >= RECOVERY_SHARE * offered[k];
    let mut run = 0;
    for k in first..last {
        if good(k) {
            run += 1;
            if run == RECOVERY_HOLD {
                let start = k + 1 - RECOVERY_HOLD;
                return Some((start as f64 - trigger_end.as_secs_f64()) * 1_000.0);
            }
        } else {
            run = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_integrates_exactly() {
        let spike = Spike::default().load();
        assert_eq!(spike.between(0.0, 80.0), 40.0 * 80.0 + 40.0 * 5.0);
        assert_eq!(spike.between(19.5, 20.5), 60.0);
        let ramp = Ramp::default().load();
        // 80 - 1.6 |t - 25|: up from 40 over 25 s (1 500), down to 0 over 50 s (2 000).
        assert_eq!(ramp.between(0.0, 80.0), 3_500.0);
        assert_eq!(ramp.between(50.0, 80.0), 500.0);
        assert_eq!(ramp.at(0.0), 40.0);
        assert_eq!(ramp.at(25.0), 80.0);
        assert_eq!(ramp.at(75.0), 0.0);
        assert_eq!(ramp.at(79.0), 0.0);
        assert_eq!(ramp.peak(), 80.0);
        // The busiest 10 s: the spike's 5 s and the 5 s before; the ramp's 10 s about its peak.
        assert_eq!(spike.busiest(10.0, 80.0), 60.0);
        assert_eq!(spike.busiest(1.0, 80.0), 80.0);
        assert_eq!(ramp.busiest(10.0, 80.0), 76.0);
        assert_eq!(ramp.busiest(1_000.0, 80.0), 3_500.0 / 80.0);
    }

    #[test]
    fn recovery_needs_five_good_seconds_in_a_row() {
        let offered = vec![40.0; 12];
        let goodput = [0, 0, 36, 36, 36, 36, 35, 40, 40, 40, 40, 40];
        let end = Duration::from_millis(1_500);
        assert_eq!(recovery_ms(&goodput, &offered, end, 12), Some(5_500.0));
        assert_eq!(recovery_ms(&goodput, &offered, end, 11), None);
    }
}
