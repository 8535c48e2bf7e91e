//! # `serial`: closed-loop clients against independent failures
//!
//! The closed clients of Marc Brooker's "What is Backoff For?" (2022), the W3 setup of docs/scoreboard.md, on the
//! server of W2 ([`open_loop`](super::open_loop)). `clients` serial clients (default 100) each
//! have one call in flight: a client starts a request, retries it as its policy says, and when
//! the request ends (success or give-up) starts the next one at once, with no think time, for
//! `duration` (default 10 s). All clients start their first request at time zero. Each attempt
//! takes one round trip drawn from `Exp(mean 10 ms)`, and the server fails it independently with
//! probability `failure_rate` (default 0.5), with a retryable error. Each client holds its own
//! budget. No request starts at or after `duration`; the ones in flight then run to completion.
//!
//! Because a serial client only sends its next request once the previous one is over, time
//! spent backing off is time it does not spend sending first tries. Published: backoff barely
//! changes the amplification (attempts per request) of open clients, but cuts the total
//! attempts of serial clients sharply, mostly by delaying first tries. [`published_strategies`]
//! lists the post's two strategies: "no backoff" (3 immediate retries) and "backoff" (3 retries
//! waiting 0.1 s, doubling). Run them on [`OpenLoop`](super::open_loop::OpenLoop) for the open
//! clients' side of the comparison.
//!
//! A request that the budget refuses outright (only `sre-adaptive` refuses first attempts) ends
//! at once, and the client starts its next one at the same instant; a run that spins this way
//! past [`Serial::MAX_EVENTS`] stops with [`SimError::TooLarge`].

use std::rc::Rc;
use std::time::Duration;

use stagger_core::AnyConfig;
use stagger_core::SeededRng;
use stagger_core::budget::Budget;
use stagger_core::engine::Settings;
use stagger_core::policy::{Exponential, Immediate};

use super::call::{Call, Next};
use super::open_loop::{result, send};
use super::{
    Overrides, Workload, WorkloadKind, check_clients, check_duration, check_events,
    check_failure_rate, check_window, refuse_hedging,
};
use crate::dist::Delay;
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, grown, ns, peak};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{Strategy, client_budget_bytes};

/// The serial workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serial {
    /// Serial clients, one call in flight each (1 to [`Serial::MAX_CLIENTS`]).
    pub clients: u64,
    /// How long clients start new requests, longer than 0 and at most a day.
    pub duration: Duration,
    /// The server's independent failure probability per attempt, in [0, 1].
    pub failure_rate: f64,
    /// The round trip of one attempt (default `Exp(mean 10 ms)`); its mean must be positive.
    pub rtt: Delay,
    /// The window of the peak retry share.
    pub window: Duration,
}

impl Default for Serial {
    fn default() -> Self {
        Self {
            clients: 100,
            duration: Duration::from_secs(10),
            failure_rate: 0.5,
            rtt: Delay::Exponential { mean: 10_000_000 },
            window: Duration::from_millis(10),
        }
    }
}

impl Serial {
    /// The most clients.
    pub const MAX_CLIENTS: u64 = 100_000;
    /// The most attempts a run may need if every request were retried at once
    /// (`clients x duration / mean round trip`).
    pub const MAX_ATTEMPTS: f64 = 5e7;
    /// The most events a run may process before it stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = 200_000_000;
}

/// The strategies of Brooker's W3 post: "no backoff" (4 attempts, retried at once) and
/// "backoff" (`exponential`, 4 attempts, 0.1 s doubling: 0.1, 0.2, 0.4 s).
#[must_use]
pub fn published_strategies() -> Vec<(&'static str, Strategy)> {
    let backoff = Exponential::new()
        .with_base(Duration::from_millis(100))
        .with_factor(2.0)
        .with_max_attempts(4);
    vec![
        (
            "no backoff",
            Strategy::policy(AnyConfig::from(Immediate::new().with_max_attempts(4))),
        ),
        ("backoff", Strategy::policy(AnyConfig::from(backoff))),
    ]
}

/// A lower bound on the mean of `delay`, in nanoseconds.
fn mean_floor(delay: &Delay) -> f64 {
    match *delay {
        Delay::Constant { nanos } => nanos as f64,
        // E|X| >= |E X| and, for a normal, E|X| >= E|X - mean| = sd * sqrt(2 / pi).
        Delay::AbsNormal { mean, sd } => {
            (mean as f64).max(sd as f64 * (2.0 / std::f64::consts::PI).sqrt())
        }
        Delay::Exponential { mean } => mean as f64,
    }
}

/// One serial client: its generators, its budget and its current request.
struct Client {
    server: SeededRng,
    policies: SeededRng,
    budget: Rc<dyn Budget>,
    call: Option<Call>,
}

#[derive(Clone, Copy)]
enum Event {
    /// Client `c` sends the next attempt of its request.
    Send(u32),
    /// The answer to client `c`'s attempt comes back: success or not.
    Answer(u32, bool),
}

impl Serial {
    /// Stops a run past [`Serial::MAX_EVENTS`] (with [`SimError::TooLarge`], as ever) or past
    /// a caller's lower limit (with [`SimError::EventLimit`]).
    fn check(&self, events: u64, max_events: u64) -> Result<(), SimError> {
        if events > Self::MAX_EVENTS {
            return Err(SimError::TooLarge {
                what: "events",
                limit: Self::MAX_EVENTS.to_string(),
            });
        }
        check_events(events, max_events)
    }

    /// Starts client `c`'s requests at `now` until one sends its first attempt (or time is up):
    /// the time its answer comes back and whether it succeeded.
    fn next_request(
        &self,
        strategy: &Strategy,
        client: &mut Client,
        now: Nanos,
        metrics: &mut Metrics,
        events: &mut u64,
        max_events: u64,
    ) -> Result<Option<(Nanos, bool)>, SimError> {
        client.call = None;
        if now >= nanos(self.duration) {
            return Ok(None);
        }
        loop {
            *events += 1;
            self.check(*events, max_events)?;
            metrics.first_try();
            let mut call = Call::start(
                strategy,
                client.policies.fork(),
                client.budget.clone(),
                Settings::new(),
                now,
            )?;
            if let Some(answer) = send(
                &mut call,
                now,
                &self.rtt,
                self.failure_rate,
                &mut client.server,
                metrics,
            ) {
                client.call = Some(call);
                return Ok(Some(answer));
            }
        }
    }
}

impl Workload for Serial {
    const KIND: WorkloadKind = WorkloadKind::Serial;

    const ACCEPTS: &'static [&'static str] = &["clients", "duration", "failure_rate", "window"];

    fn set(&mut self, o: &Overrides) {
        self.clients = o.clients.unwrap_or(self.clients);
        self.duration = o.duration.unwrap_or(self.duration);
        self.failure_rate = o.failure_rate.unwrap_or(self.failure_rate);
        self.window = o.window.unwrap_or(self.window);
    }

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        check_duration(self.duration)?;
        check_failure_rate(self.failure_rate)?;
        check_window(self.window)?;
        let rtt = mean_floor(&self.rtt);
        if rtt < 1.0 {
            return Err(SimError::Invalid {
                param: "rtt",
                allowed: "a round trip with a mean of at least 1 ns",
            });
        }
        if self.clients as f64 * self.duration.as_nanos() as f64 / rtt > Self::MAX_ATTEMPTS {
            return Err(SimError::TooLarge {
                what: "clients x duration / mean round trip",
                limit: "5e7 attempts".to_owned(),
            });
        }
        Ok(())
    }

    /// Each client runs requests back to back for `duration`, each lasting its attempts'
    /// round trips and its retries' delays: `duration / lifetime + 1` requests per client,
    /// lifetimes counted up to `duration` (the last request runs to its end). A request is one event, each attempt one, each retry
    /// one more: `2 x attempts` per request. A budget can cut every request short, and its
    /// client then starts the next at once, so with one the estimate is the most a client
    /// can do: an attempt per round trip. Requests that a budget refuses outright
    /// (`sre-adaptive`) are not modelled. Memory is every client with its one request, and
    /// one pending event each.
    fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = Plan::new(strategy);
        let n = self.clients as f64;
        let duration = ns(self.duration);
        let rtt = self.rtt.mean().max(1.0);
        let attempts = plan.attempts(self.failure_rate);
        // Requests that would outlive the run count as lasting the run: a client does many
        // short requests before it meets the rare long one, not `duration / mean`.
        let lifetime = plan.lifetime_within(self.failure_rate, rtt, duration);
        let requests = n * (duration / lifetime + 1.0);
        let events = if strategy.budget.is_some() {
            // At most an attempt per round trip, and the last request's.
            2.0 * n * (duration / rtt + attempts)
        } else {
            2.0 * requests * attempts
        };
        let retries_per_ns = requests * (attempts - 1.0) / duration;
        let window = peak(retries_per_ns * ns(self.window)).min(requests * attempts);
        let bytes = n
            * (size_of::<Client>() as f64
                + client_budget_bytes(strategy)
                + EventQueue::<Event>::bytes_per_pending())
            + grown(window) * Metrics::STORED_RETRY_BYTES as f64
            + Metrics::fixed_bytes() as f64;
        Estimate::of(events, bytes)
    }

    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        refuse_hedging::<Self>(strategy)?;
        self.validate()?;
        let mut world = SeededRng::new(seed);
        let n = self.clients as usize;
        let mut clients = Vec::with_capacity(n);
        // With no budget, one "no budget" for all: it holds no state.
        let shared = strategy.shared_unlimited();
        for _ in 0..n {
            let server = world.fork();
            let policies = world.fork();
            // Drawn whether or not there is a budget, so that the streams stay the same.
            let budget_rng = world.fork();
            let budget = match &shared {
                Some(unlimited) => unlimited.clone(),
                None => strategy.client_budget(budget_rng),
            };
            clients.push(Client {
                server,
                policies,
                budget,
                call: None,
            });
        }
        let mut metrics = Metrics::new(nanos(self.window));
        let mut queue = EventQueue::new();
        let mut events = 0u64;
        for (c, client) in clients.iter_mut().enumerate() {
            if let Some((back, ok)) =
                self.next_request(strategy, client, 0, &mut metrics, &mut events, max_events)?
            {
                queue.push(back, Event::Answer(c as u32, ok));
            }
        }
        while let Some((now, event)) = queue.pop() {
            events += 1;
            self.check(events, max_events)?;
            let (c, answer) = match event {
                Event::Send(c) => {
                    let client = &mut clients[c as usize];
                    let Some(call) = client.call.as_mut() else {
                        continue;
                    };
                    match send(
                        call,
                        now,
                        &self.rtt,
                        self.failure_rate,
                        &mut client.server,
                        &mut metrics,
                    ) {
                        Some(answer) => (c, Some(answer)),
                        None => (
                            c,
                            self.next_request(
                                strategy,
                                client,
                                now,
                                &mut metrics,
                                &mut events,
                                max_events,
                            )?,
                        ),
                    }
                }
                Event::Answer(c, ok) => {
                    let client = &mut clients[c as usize];
                    let Some(call) = client.call.as_mut() else {
                        continue;
                    };
                    match call.end(now, result(ok), &mut metrics) {
                        Next::RetryAt(at) => {
                            queue.push(at, Event::Send(c));
                            continue;
                        }
                        Next::Done => (
                            c,
                            self.next_request(
                                strategy,
                                client,
                                now,
                                &mut metrics,
                                &mut events,
                                max_events,
                            )?,
                        ),
                    }
                }
            };
            if let Some((back, ok)) = answer {
                queue.push(back, Event::Answer(c, ok));
            }
        }
        metrics.events = events;
        Ok(metrics.row(
            strategy.policy.name(),
            strategy.budget.map(|b| b.to_string()),
        ))
    }
}
