//! # `serial`: closed-loop clients against independent failures
//!
//! The closed clients of Marc Brooker's "What is Backoff For?" (2022), the W3 setup of docs/scoreboard.md, on the
//! server of W2 ([`open_loop`](super::open_loop)). `clients` serial clients (default 100) each
//! have one call in flight and start calls at about `rate` a second (default 10), as the
//! source's `SerialClient` paces them: when a request ends (success or give-up), the next
//! starts `max(0, Exp(1 / rate) - (time since the last one started))` later, so a client that
//! spent longer than its draw on a request starts the next at once. The first starts after one
//! such draw from time zero. Requests start for `duration` (default 10 s); the ones in flight
//! then run to completion. Each attempt takes one round trip drawn from `Exp(mean 10 ms)`, and
//! the server fails it independently with probability `failure_rate` (default 0.5), with a
//! retryable error. Each client holds its own budget.
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
//! at once, and the client paces its next one as after any other.

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
use crate::dist::{Delay, exponential};
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
    /// The rate at which each client starts calls, when its calls are quick enough, in calls a
    /// second (in (0, 1e5]).
    pub rate: f64,
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
            rate: 10.0,
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
    /// Draws the gaps between the starts of its calls.
    pacing: SeededRng,
    budget: Rc<dyn Budget>,
    call: Option<Call>,
    /// When its latest call started (or was due to).
    last_start: Nanos,
}

#[derive(Clone, Copy)]
enum Event {
    /// Client `c` starts its next request.
    Start(u32),
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

    /// When client `client`, whose request ended at `now`, starts its next one: a gap of
    /// `Exp(1 / rate)` after its last start, or at once if that has passed; `None` once no
    /// request starts any more.
    fn next_start(&self, client: &mut Client, now: Nanos) -> Option<Nanos> {
        client.call = None;
        let gap = exponential(&mut client.pacing, 1e9 / self.rate) as Nanos;
        let at = client.last_start.saturating_add(gap).max(now);
        client.last_start = at;
        (at < nanos(self.duration)).then_some(at)
    }

    /// Starts a request of client `client` at `now`: the time the answer to its first attempt
    /// comes back and whether it succeeded, or `None` if the budget refused it outright.
    fn start_request(
        &self,
        strategy: &Strategy,
        client: &mut Client,
        now: Nanos,
        metrics: &mut Metrics,
    ) -> Result<Option<(Nanos, bool)>, SimError> {
        metrics.first_try();
        let mut call = Call::start(
            strategy,
            client.policies.fork(),
            client.budget.clone(),
            Settings::new(),
            now,
        )?;
        let answer = send(
            &mut call,
            now,
            &self.rtt,
            self.failure_rate,
            &mut client.server,
            metrics,
        );
        if answer.is_some() {
            client.call = Some(call);
        }
        Ok(answer)
    }
}

impl Workload for Serial {
    const KIND: WorkloadKind = WorkloadKind::Serial;

    const ACCEPTS: &'static [&'static str] =
        &["clients", "rate", "duration", "failure_rate", "window"];

    fn set(&mut self, o: &Overrides) {
        self.clients = o.clients.unwrap_or(self.clients);
        self.rate = o.rate.unwrap_or(self.rate);
        self.duration = o.duration.unwrap_or(self.duration);
        self.failure_rate = o.failure_rate.unwrap_or(self.failure_rate);
        self.window = o.window.unwrap_or(self.window);
    }

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= 1e5) {
            return Err(SimError::Invalid {
                param: "rate",
                allowed: "in (0, 1e5] calls per second",
            });
        }
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

    /// Each client runs requests one at a time for `duration`, each lasting its attempts'
    /// round trips and its retries' delays, and no more than `rate` a second: the fewer of
    /// `duration / lifetime` and `rate x duration`, plus one, requests per client, lifetimes
    /// counted up to `duration` (the last request runs to its end). A request is one event to
    /// start, each attempt one, each retry one more: `2 x attempts + 1` per request. A budget
    /// only takes retries away, and its client paces the next request as after any other, so
    /// the same bound holds with one. Memory is every client with its one request, and one
    /// pending event each.
    fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = Plan::new(strategy);
        let n = self.clients as f64;
        let duration = ns(self.duration);
        let rtt = self.rtt.mean().max(1.0);
        let attempts = plan.attempts(self.failure_rate);
        // Requests that would outlive the run count as lasting the run: a client does many
        // short requests before it meets the rare long one, not `duration / mean`.
        let lifetime = plan.lifetime_within(self.failure_rate, rtt, duration);
        // Paced at `rate`: no more requests than that, however short they are.
        let paced = self.rate * duration / 1e9;
        let requests = n * ((duration / lifetime).min(paced) + 1.0);
        // A budget only takes retries away, and a request it refuses outright is paced like
        // any other: the same bound holds with one.
        let events = 2.0 * requests * attempts + requests;
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
            let pacing = world.fork();
            clients.push(Client {
                server,
                policies,
                pacing,
                budget,
                call: None,
                last_start: 0,
            });
        }
        let mut metrics = Metrics::new(nanos(self.window));
        let mut queue = EventQueue::new();
        let mut events = 0u64;
        for (c, client) in clients.iter_mut().enumerate() {
            if let Some(at) = self.next_start(client, 0) {
                queue.push(at, Event::Start(c as u32));
            }
        }
        while let Some((now, event)) = queue.pop() {
            events += 1;
            self.check(events, max_events)?;
            let (c, answer) = match event {
                Event::Start(c) => {
                    let client = &mut clients[c as usize];
                    match self.start_request(strategy, client, now, &mut metrics)? {
                        Some(answer) => (c, Some(answer)),
                        None => {
                            // Refused outright: the next is paced as after any request.
                            if let Some(at) = self.next_start(client, now) {
                                queue.push(at, Event::Start(c));
                            }
                            continue;
                        }
                    }
                }
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
                        None => {
                            if let Some(at) = self.next_start(client, now) {
                                queue.push(at, Event::Start(c));
                            }
                            continue;
                        }
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
                        Next::Done => {
                            if let Some(at) = self.next_start(client, now) {
                                queue.push(at, Event::Start(c));
                            }
                            continue;
                        }
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
