//! # `throttle`: a 429 storm against a rate limiter
//!
//! A dependency behind a rate limiter tells every client it refuses the same thing: "retry in
//! 1 second". Each client's retry must never come earlier than that (the wait is a floor), and
//! must fit its deadline. What it adds above the floor ([`Dispersal`]) decides whether the
//! fleet comes back in step: a wave of retries at one instant wins one of the limiter's slots.
//!
//! Model, after a trial against nginx's `limit_req` at 5 requests/s, `burst=0`,
//! `limit_req_status 429` and `Retry-After: 1`, with 20 concurrent GETs and a 3 s deadline:
//!
//! - **Clients:** `clients` requests (default 20) that start together at time zero, or, with
//!   `rate` (and `duration`), requests arriving as a Poisson process at that rate. Each runs
//!   the strategy's policy with one end-to-end deadline (`timeout`, default 3 s) and the
//!   workload's dispersal (default [`Dispersal::default`]).
//! - **Network:** a constant one-way delay of 1 ms, the same for everyone, so any spread comes
//!   from the clients.
//! - **Server:** a rate limiter ([`RateLimiter`]): a token bucket of `limit_burst` tokens
//!   (default 1, nginx's `burst=0`: one request per `1 / limit_rate`) refilled at
//!   `limit_rate` per second (default 5). An admitted request is answered at once; a refused
//!   one gets a 429 whose `Retry-After` is `retry_after` (default 1 s), or the exact time until
//!   a token frees, either of them rounded up to whole seconds as the header's wire format
//!   forces ([`RetryAfterForm`]). With `limit_concurrency`, the server is a concurrency
//!   limiter instead ([`ConcurrencyLimiter`]): at most that many requests in service at once,
//!   100 ms each, and a 503 with the `Retry-After` beyond.
//!
//! A 429 had no effect, so every client may retry it ([`Failure::Throttled`]); a 503 with a
//! wait is [`Failure::RetryAfter`]. The server remembers the time it gave each client and
//! counts every retry that arrives before it (`early_retries`): it must be 0 for every
//! strategy. The other figures: `served_share`, the requests served within their deadline;
//! `rejected_per_success`, the refused attempts per request served; and `peak_window_share`,
//! the busiest 10 ms's share of all retries. The ceiling for the defaults is 11 of 20 for any
//! client that never retries early: one request at time zero, then one per 200 ms slot from
//! 1 s until the deadline.

use std::fmt;
use std::rc::Rc;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use stagger_core::engine::{Budget, Dispersal, Settings};
use stagger_core::gate::{Gate, Gated};
use stagger_core::{Failure, SeededRng};

use super::call::{Call, Next, Pace};
use super::{
    Overrides, Workload, WorkloadKind, check_clients, check_events, check_window, refuse_hedging,
};
use crate::dist::exponential;
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, count};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{Strategy, client_budget_bytes};

const SECOND: Nanos = 1_000_000_000;

/// How the server states its wait in a refusal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RetryAfterForm {
    /// `fixed`: the same wait for everyone (nginx's `Retry-After: 1`).
    #[default]
    Fixed,
    /// `exact`: the time until the limiter can admit the next request (governor's
    /// `NotUntil`).
    Exact,
    /// `fixed-rounded`: the fixed wait, rounded up to whole seconds.
    FixedRounded,
    /// `exact-rounded`: the exact wait, rounded up to whole seconds, as a `Retry-After` in
    /// delay-seconds must be.
    ExactRounded,
}

impl RetryAfterForm {
    /// Every form.
    pub const ALL: [Self; 4] = [
        Self::Fixed,
        Self::Exact,
        Self::FixedRounded,
        Self::ExactRounded,
    ];

    /// The name the CLI uses.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Exact => "exact",
            Self::FixedRounded => "fixed-rounded",
            Self::ExactRounded => "exact-rounded",
        }
    }

    /// The wait told to a refused request: `fixed`, or `exact` (the time until a slot frees),
    /// rounded up to whole seconds for the rounded forms.
    #[must_use]
    pub fn wait(self, fixed: Nanos, exact: Nanos) -> Nanos {
        let round = |ns: Nanos| ns.div_ceil(SECOND).saturating_mul(SECOND);
        match self {
            Self::Fixed => fixed,
            Self::Exact => exact,
            Self::FixedRounded => round(fixed),
            Self::ExactRounded => round(exact),
        }
    }
}

impl fmt::Display for RetryAfterForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RetryAfterForm {
    type Err = SimError;

    fn from_str(name: &str) -> Result<Self, SimError> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or(SimError::Invalid {
                param: "retry_after_form",
                allowed: "fixed, exact, fixed-rounded or exact-rounded",
            })
    }
}

/// A token bucket of `burst` tokens refilled at one per `interval`, as a generic cell rate
/// algorithm: exact in integer nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimiter {
    interval: Nanos,
    /// How far ahead of `theoretical` a request may come: `(burst - 1) × interval`.
    tolerance: Nanos,
    /// When the bucket would be full again if nothing more came.
    theoretical: Nanos,
}

impl RateLimiter {
    /// A full bucket of `burst` tokens (at least 1), refilled at `rate` per second.
    #[must_use]
    pub fn new(rate: f64, burst: u32) -> Self {
        let interval = ((SECOND as f64) / rate).round().max(1.0) as Nanos;
        Self {
            interval,
            tolerance: interval.saturating_mul(Nanos::from(burst.max(1) - 1)),
            theoretical: 0,
        }
    }

    /// A request at `now`: `Ok` admits it, `Err` refuses it with the time until the next
    /// request could be admitted.
    pub fn admit(&mut self, now: Nanos) -> Result<(), Nanos> {
        let earliest = self.theoretical.saturating_sub(self.tolerance);
        if now < earliest {
            return Err(earliest - now);
        }
        self.theoretical = self.theoretical.max(now).saturating_add(self.interval);
        Ok(())
    }
}

/// At most `limit` requests in service at once, each for `service`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcurrencyLimiter {
    /// The most requests in service.
    pub limit: u32,
    /// How long each takes.
    pub service: Nanos,
    in_service: u32,
}

impl ConcurrencyLimiter {
    /// An idle server.
    #[must_use]
    pub const fn new(limit: u32, service: Nanos) -> Self {
        Self {
            limit,
            service,
            in_service: 0,
        }
    }
}

/// The throttle's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throttle {
    /// Requests that start together (without `rate`), at least 1.
    pub clients: u64,
    /// Open arrivals: requests per second, over `duration`. `None` starts `clients` together.
    pub rate: Option<f64>,
    /// How long open arrivals go on.
    pub duration: Duration,
    /// Each request's end-to-end deadline.
    pub timeout: Duration,
    /// The rate limiter's rate, per second.
    pub limit_rate: f64,
    /// The rate limiter's tokens.
    pub limit_burst: u32,
    /// A concurrency limiter instead of the rate limiter, with this many requests in service.
    pub limit_concurrency: Option<u32>,
    /// The fixed wait a refusal tells.
    pub retry_after: Duration,
    /// How the wait is stated.
    pub retry_after_form: RetryAfterForm,
    /// What the clients add above the server's wait.
    pub dispersal: Dispersal,
    /// The window of the peak retry share.
    pub window: Duration,
    /// Whether the clients share one [`Gate`] for the destination.
    pub gate: bool,
}

impl Default for Throttle {
    fn default() -> Self {
        Self {
            clients: 20,
            rate: None,
            duration: Duration::from_secs(10),
            timeout: Duration::from_secs(3),
            limit_rate: 5.0,
            limit_burst: 1,
            limit_concurrency: None,
            retry_after: Duration::from_secs(1),
            retry_after_form: RetryAfterForm::Fixed,
            dispersal: Dispersal::default(),
            window: Duration::from_millis(10),
            gate: false,
        }
    }
}

/// The one destination's key in the gate.
const DESTINATION: &str = "limiter";

/// The policy of the nginx trial: full jitter, base 100 ms, cap 2 s, 4 attempts.
#[must_use]
pub fn trial_strategy() -> Strategy {
    use stagger_core::policy::ExponentialFullJitter;
    Strategy::policy(stagger_core::AnyConfig::from(
        ExponentialFullJitter::new()
            .with_base(Duration::from_millis(100))
            .with_cap(Duration::from_secs(2))
            .with_max_attempts(4),
    ))
}

/// The one-way network delay.
const ONE_WAY: Nanos = 1_000_000;
/// A concurrency limiter's service time, in nanoseconds.
const SERVICE: Nanos = Throttle::SERVICE.as_nanos() as Nanos;

/// What happens next in the simulation.
enum Event {
    /// A new request arrives from open arrivals.
    New,
    /// Request `c` sends its next attempt, when its run is ready (a gate may hold it to a
    /// slot).
    Send(u32),
    /// Request `c`'s attempt reaches the server.
    Arrive(u32),
    /// Request `c`'s attempt leaves a concurrency-limited server, served.
    Served(u32),
}

/// What the server counted.
#[derive(Default)]
struct Counts {
    rejected: u64,
    early: u64,
}

impl Throttle {
    /// The most requests a run may hold.
    pub const MAX_CLIENTS: u64 = 100_000;

    /// How long a concurrency limiter (`limit_concurrency`) takes over each request it admits.
    pub const SERVICE: Duration = Duration::from_millis(100);

    fn settings(&self) -> Settings {
        Settings::new()
            .with_timeout(self.timeout)
            .with_dispersal(self.dispersal)
    }

    fn requests(&self) -> u64 {
        match self.rate {
            Some(rate) => (rate * self.duration.as_secs_f64()).ceil() as u64,
            None => self.clients,
        }
    }

    fn simulate(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<(Metrics, Counts), SimError> {
        self.validate()?;
        let mut world = SeededRng::new(seed);
        let mut arrivals = world.fork();
        let mut metrics = Metrics::new(nanos(self.window));
        let mut counts = Counts::default();
        let mut queue = EventQueue::new();
        let mut calls: Vec<Call> = Vec::new();
        let mut not_before: Vec<Nanos> = Vec::new();
        let mut limiter = RateLimiter::new(self.limit_rate, self.limit_burst);
        let mut concurrency = self
            .limit_concurrency
            .map(|limit| ConcurrencyLimiter::new(limit, SERVICE));
        // One gate for the one destination, in front of each request's budget, as the
        // executors put it: the engine asks it for every attempt's slot.
        let gate = if self.gate {
            Some(Arc::new(Gate::new(1)?))
        } else {
            None
        };
        let fixed = nanos(self.retry_after);
        let end = nanos(self.duration);
        let shared = strategy.shared_unlimited();
        let mut start = |now: Nanos,
                         calls: &mut Vec<Call>,
                         not_before: &mut Vec<Nanos>,
                         metrics: &mut Metrics,
                         queue: &mut EventQueue<Event>|
         -> Result<(), SimError> {
            let budget = match &shared {
                Some(unlimited) => unlimited.clone(),
                None => strategy.client_budget(world.fork()),
            };
            let budget: Rc<dyn Budget> = match &gate {
                Some(gate) => Rc::new(Gated::new(budget, Arc::clone(gate), DESTINATION)),
                None => budget,
            };
            let policy = world.fork();
            let call =
                Call::start(strategy, policy, budget, self.settings(), now)?.spread(world.fork());
            let c = calls.len() as u32;
            metrics.first_try();
            queue.push(now, Event::Send(c));
            calls.push(call);
            not_before.push(0);
            Ok(())
        };
        match self.rate {
            None => {
                for _ in 0..self.clients {
                    start(0, &mut calls, &mut not_before, &mut metrics, &mut queue)?;
                }
            }
            Some(_) => queue.push(0, Event::New),
        }
        while let Some((now, event)) = queue.pop() {
            metrics.events += 1;
            check_events(metrics.events, max_events)?;
            let (c, answer) = match event {
                Event::Send(c) => {
                    let call = &mut calls[c as usize];
                    match call.ready(now, &mut metrics) {
                        Pace::Go => {
                            if call.begin(now, &mut metrics).is_some() {
                                queue.push(now + ONE_WAY, Event::Arrive(c));
                            }
                        }
                        Pace::At(slot) => queue.push(slot, Event::Send(c)),
                        Pace::GaveUp => {}
                    }
                    continue;
                }
                Event::New => {
                    start(now, &mut calls, &mut not_before, &mut metrics, &mut queue)?;
                    let gap = exponential(&mut arrivals, SECOND as f64 / self.rate.unwrap_or(1.0));
                    let next = now.saturating_add(gap as Nanos);
                    if next < end {
                        queue.push(next, Event::New);
                    }
                    continue;
                }
                Event::Served(c) => {
                    if let Some(server) = concurrency.as_mut() {
                        server.in_service -= 1;
                    }
                    (c, Ok(()))
                }
                Event::Arrive(c) => {
                    if now < not_before[c as usize] {
                        counts.early += 1;
                    }
                    let refusal = match concurrency.as_mut() {
                        Some(server) if server.in_service < server.limit => {
                            server.in_service += 1;
                            queue.push(now + server.service, Event::Served(c));
                            continue;
                        }
                        // Full: the next slot frees when the oldest request leaves, at most
                        // one service time from now.
                        Some(server) => Some(server.service),
                        None => limiter.admit(now).err(),
                    };
                    match refusal {
                        None => (c, Ok(())),
                        Some(exact) => {
                            counts.rejected += 1;
                            let wait = self.retry_after_form.wait(fixed, exact);
                            // The client gets the answer one network delay from now and
                            // must not send before the wait has passed from then: its retry
                            // cannot reach the server before this.
                            not_before[c as usize] =
                                now.saturating_add(2 * ONE_WAY).saturating_add(wait);
                            let wait = Duration::from_nanos(wait);
                            let failure = if concurrency.is_some() {
                                Failure::RetryAfter(wait)
                            } else {
                                Failure::Throttled(Some(wait))
                            };
                            (c, Err(failure))
                        }
                    }
                }
            };
            // The answer reaches the client one network delay later.
            let at = now + ONE_WAY;
            if let Next::RetryAt(retry) = calls[c as usize].end(at, answer, &mut metrics) {
                queue.push(retry, Event::Send(c));
            }
        }
        Ok((metrics, counts))
    }
}

impl Workload for Throttle {
    const KIND: WorkloadKind = WorkloadKind::Throttle;

    const ACCEPTS: &'static [&'static str] = &[
        "clients",
        "rate",
        "duration",
        "timeout",
        "retry_after",
        "window",
        "limit_rate",
        "limit_burst",
        "limit_concurrency",
        "retry_after_form",
        "dispersal",
        "gate",
    ];

    fn set(&mut self, o: &Overrides) {
        self.clients = o.clients.unwrap_or(self.clients);
        self.rate = o.rate.or(self.rate);
        self.duration = o.duration.unwrap_or(self.duration);
        self.timeout = o.timeout.unwrap_or(self.timeout);
        self.retry_after = o.retry_after.unwrap_or(self.retry_after);
        self.window = o.window.unwrap_or(self.window);
        self.limit_rate = o.limit_rate.unwrap_or(self.limit_rate);
        self.limit_burst = o.limit_burst.unwrap_or(self.limit_burst);
        self.limit_concurrency = o.limit_concurrency.or(self.limit_concurrency);
        self.retry_after_form = o.retry_after_form.unwrap_or(self.retry_after_form);
        self.dispersal = o.dispersal.unwrap_or(self.dispersal);
        self.gate = o.gate.unwrap_or(self.gate);
    }

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.requests().max(1), Self::MAX_CLIENTS)?;
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        check_window(self.window)?;
        super::check_duration(self.duration)?;
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0 && rate <= 1e6)
        {
            return Err(SimError::Invalid {
                param: "rate",
                allowed: "more than 0 and at most 1e6 requests per second",
            });
        }
        if !(self.limit_rate.is_finite() && self.limit_rate > 0.0 && self.limit_rate <= 1e9) {
            return Err(SimError::Invalid {
                param: "limit_rate",
                allowed: "more than 0 and at most 1e9 requests per second",
            });
        }
        if self.limit_burst == 0 || self.limit_burst > 1_000_000 {
            return Err(SimError::Invalid {
                param: "limit_burst",
                allowed: "between 1 and 1e6 tokens",
            });
        }
        if self.limit_concurrency == Some(0) {
            return Err(SimError::Invalid {
                param: "limit_concurrency",
                allowed: "at least 1",
            });
        }
        if self.timeout.is_zero() || self.timeout > Duration::from_secs(86_400) {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0 and at most a day",
            });
        }
        if self.retry_after > Duration::from_secs(86_400) {
            return Err(SimError::Invalid {
                param: "retry_after",
                allowed: "at most a day",
            });
        }
        Ok(())
    }

    fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = Plan::new(strategy);
        let requests = self.requests() as f64;
        // Each attempt is a send and an arrival and, at most, a departure from a concurrency
        // limiter.
        let per_attempt = if self.limit_concurrency.is_some() {
            3.0
        } else {
            2.0
        };
        // Every retry after a refusal waits at least the told wait, inside the deadline: a
        // request makes at most `1 + timeout / wait` attempts, or its policy's limit.
        let least_wait = match self.retry_after_form {
            RetryAfterForm::Fixed => nanos(self.retry_after),
            RetryAfterForm::FixedRounded => {
                RetryAfterForm::FixedRounded.wait(nanos(self.retry_after), 0)
            }
            RetryAfterForm::ExactRounded => SECOND,
            RetryAfterForm::Exact => 0,
        };
        let by_deadline = match nanos(self.timeout).checked_div(least_wait) {
            Some(waits) => waits.saturating_add(1),
            None => u64::MAX,
        };
        let per_request = plan.max_attempts.min(by_deadline).min(1_000_000);
        let attempts = requests * per_request as f64;
        let events = attempts * per_attempt + requests;
        let per_request = Call::bytes() as f64
            + size_of::<Nanos>() as f64
            + client_budget_bytes(strategy)
            + 2.0 * EventQueue::<Event>::bytes_per_pending();
        Estimate {
            events: count(events),
            bytes: count(requests * per_request) + Metrics::fixed_bytes() as u64,
        }
    }

    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        refuse_hedging::<Self>(strategy)?;
        let (mut metrics, counts) = self.simulate(strategy, seed, max_events)?;
        let requests = metrics.first_tries;
        let mut row = metrics.row(
            strategy.policy.name(),
            strategy.budget.map(|b| b.to_string()),
        );
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        row.served_share = Some(ratio(row.successes, requests));
        row.rejected_per_success = Some(ratio(counts.rejected, row.successes));
        row.early_retries = Some(counts.early);
        row.dispersal = Some(self.dispersal.name());
        row.gate = Some(self.gate);
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limiter_admits_one_request_per_interval_with_a_burst_of_one() {
        let mut limiter = RateLimiter::new(5.0, 1);
        assert_eq!(limiter.admit(0), Ok(()));
        assert_eq!(limiter.admit(1), Err(200_000_000 - 1));
        assert_eq!(limiter.admit(200_000_000), Ok(()));
        // A slot nobody takes is lost: the bucket holds one token.
        assert_eq!(limiter.admit(1_000_000_000), Ok(()));
        assert_eq!(limiter.admit(1_100_000_000), Err(100_000_000));
    }

    #[test]
    fn a_burst_admits_that_many_at_once() {
        let mut limiter = RateLimiter::new(10.0, 3);
        assert!((0..3).all(|_| limiter.admit(0).is_ok()));
        assert_eq!(limiter.admit(0), Err(100_000_000));
    }

    #[test]
    fn rounded_forms_round_up_to_whole_seconds() {
        assert_eq!(RetryAfterForm::ExactRounded.wait(0, 200_000_000), SECOND);
        assert_eq!(
            RetryAfterForm::FixedRounded.wait(1_500_000_000, 0),
            2 * SECOND
        );
        assert_eq!(RetryAfterForm::Exact.wait(SECOND, 3), 3);
        assert_eq!("exact-rounded".parse(), Ok(RetryAfterForm::ExactRounded));
        assert!("exactly".parse::<RetryAfterForm>().is_err());
    }
}
