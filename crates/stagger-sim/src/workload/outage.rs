//! # `outage`: steady arrivals through a thirty-second outage
//!
//! Requests arrive as a Poisson process at `rate` per second (default 100) for `duration`
//! (default 60 s). The dependency is down from 15 s to 45 s: every attempt that reaches it then
//! fails with a retryable error; before and after, every attempt succeeds. The network is a
//! constant one-way delay of 1 ms.
//!
//! It measures what the catalog's `constant` page quotes: the success rate of the requests that met
//! the outage (those whose first attempt reached the dependency while it was down), and the
//! load on the dependency in the second after it recovered (attempts reaching it in
//! [45 s, 46 s)). A policy's patience decides the first: `constant` at its defaults waits
//! 700 ms in all, so only requests that met the last 0.7 s of the outage can succeed.
//!
//! Two overrides exercise the rest of the engine. `timeout` gives each request one end-to-end
//! deadline from its first attempt: a request whose next wait would cross it gives up (reason
//! `wait-exceeds-deadline`, or `deadline` if it is already past). `retry_after` turns the
//! outage into throttling: every answer while down carries that `Retry-After`, a floor the
//! engine never undercuts, so `constant` at its defaults waits 7 x the floor rather than
//! 700 ms (with 2 s, about 14/30 of the requests that met the outage succeed, against 2 %).

use std::time::Duration;

use stagger_core::engine::Settings;
use stagger_core::{Failure, SeededRng};

use super::call::{Call, Next};
use super::slots::Slots;
use super::{Overrides, Workload, WorkloadKind, check_events, check_window, refuse_hedging};
use crate::dist::{Delay, exponential};
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, count, grown, ns, peak, room_for};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::Strategy;

const SECOND: Nanos = 1_000_000_000;

/// The outage's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outage {
    /// Requests per second.
    pub rate: f64,
    /// The whole run.
    pub duration: Duration,
    /// When the dependency goes down.
    pub down_at: Duration,
    /// How long it stays down.
    pub down_for: Duration,
    /// The one-way network delay.
    pub network: Delay,
    /// The window of the peak share.
    pub window: Duration,
    /// One end-to-end deadline per request, measured from its first attempt; `None` for
    /// none. A request that would retry past it gives up with reason `deadline`.
    pub timeout: Option<Duration>,
    /// If set, the dependency throttles rather than fails while it is down: every answer
    /// is a 503 with this `Retry-After`, which the engine treats as a floor under the
    /// policy's next delay. `None` for plain retryable failures.
    pub retry_after: Option<Duration>,
}

impl Default for Outage {
    fn default() -> Self {
        Self {
            rate: 100.0,
            duration: Duration::from_secs(60),
            down_at: Duration::from_secs(15),
            down_for: Duration::from_secs(30),
            network: Delay::Constant { nanos: 1_000_000 },
            window: Duration::from_millis(10),
            timeout: None,
            retry_after: None,
        }
    }
}

enum Event {
    /// The next request arrives.
    Arrival,
    /// The request in slot `r` sends an attempt.
    Send(u32),
    /// The attempt of the request in slot `r` reaches the dependency.
    Arrive(u32),
    /// The answer reaches the request in slot `r`: success or not.
    Answer(u32, bool),
}

impl Outage {
    /// The most requests a run may offer (`rate` x `duration`).
    pub const MAX_REQUESTS: f64 = 1e7;
}

impl Workload for Outage {
    const KIND: WorkloadKind = WorkloadKind::Outage;

    const ACCEPTS: &'static [&'static str] =
        &["rate", "duration", "window", "timeout", "retry_after"];

    fn set(&mut self, o: &Overrides) {
        self.rate = o.rate.unwrap_or(self.rate);
        self.duration = o.duration.unwrap_or(self.duration);
        self.window = o.window.unwrap_or(self.window);
        self.timeout = o.timeout.or(self.timeout);
        self.retry_after = o.retry_after.or(self.retry_after);
    }

    fn validate(&self) -> Result<(), SimError> {
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= 1e6) {
            return Err(SimError::Invalid {
                param: "rate",
                allowed: "a number of requests per second in (0, 1e6]",
            });
        }
        // The outage and the second after it (the recovery load) must fit in the run.
        let needed = self
            .down_at
            .saturating_add(self.down_for)
            .saturating_add(Duration::from_secs(1));
        if self.duration < needed || self.duration > Duration::from_secs(86_400) {
            return Err(SimError::Invalid {
                param: "duration",
                allowed: "at least the outage's end plus 1 s (46 s by default) and at most a day",
            });
        }
        if self.rate * self.duration.as_secs_f64() > Self::MAX_REQUESTS {
            return Err(SimError::TooLarge {
                what: "rate x duration",
                limit: format!("{} requests", Self::MAX_REQUESTS),
            });
        }
        if self.timeout.is_some_and(|t| t.is_zero()) {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0",
            });
        }
        if self
            .retry_after
            .is_some_and(|w| w > Duration::from_secs(86_400))
        {
            return Err(SimError::Invalid {
                param: "retry_after",
                allowed: "at most a day",
            });
        }
        check_window(self.window)?;
        Ok(())
    }

    /// Requests before and after the outage make one attempt; one that meets it makes the
    /// attempts its policy sends before the outage ends (with the `Retry-After` floor and
    /// within the deadline), and one more after, if it has one left. Each attempt is three
    /// events (sent, reaching the dependency, answered), each arrival one. The requests in
    /// flight at the peak, at the end of the outage, are those that met it within a
    /// request's lifetime of its end.
    fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = self.plan(strategy);
        let rtt = 2.0 * self.network.mean();
        let duration = ns(self.duration);
        let down = ns(self.down_for).min(duration);
        let per_ns = self.rate / 1e9;
        let requests = self.rate * self.duration.as_secs_f64();
        let met = plan.outage_attempts(rtt, down) * per_ns;
        let attempts = requests - down * per_ns + met;
        let events = requests + 1.0 + 3.0 * attempts;

        let in_flight = self.in_flight(&plan);
        let retries_per_ns = (met - down * per_ns).max(0.0) / down.max(1.0);
        let window = peak(retries_per_ns * ns(self.window));
        let bytes = Slots::<Request>::bytes(in_flight, room_for(in_flight) as f64)
            + in_flight * EventQueue::<Event>::bytes_per_pending()
            + grown(window.min(attempts)) * Metrics::STORED_RETRY_BYTES as f64
            + strategy.budget_bytes() as f64
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
        let mut arrivals = world.fork();
        let mut net = world.fork();
        let budget = strategy.client_budget(world.fork());
        let (down, up, end) = (
            nanos(self.down_at),
            nanos(self.down_at + self.down_for),
            nanos(self.duration),
        );
        let mean_gap = SECOND as f64 / self.rate;
        let options = match self.timeout {
            Some(timeout) => Settings::new().with_timeout(timeout),
            None => Settings::new(),
        };
        let refusal = self
            .retry_after
            .map_or(Failure::Retryable, Failure::RetryAfter);
        let mut metrics = Metrics::new(nanos(self.window));
        // The requests in flight; a slot is reused once its request is over, so memory follows
        // the requests in flight rather than all requests.
        let mut requests: Slots<Request> =
            Slots::with_capacity(room_for(self.in_flight(&self.plan(strategy))));
        let (mut met_outage, mut met_succeeded, mut recovery_load) = (0u64, 0u64, 0u64);
        let mut queue = EventQueue::new();
        queue.push(
            exponential(&mut arrivals, mean_gap) as Nanos,
            Event::Arrival,
        );
        while let Some((now, event)) = queue.pop() {
            metrics.events += 1;
            check_events(metrics.events, max_events)?;
            match event {
                Event::Arrival => {
                    if now >= end {
                        continue;
                    }
                    let call = Call::start(strategy, world.fork(), budget.clone(), options, now)?;
                    let r = requests.insert(Request { call, met: false });
                    metrics.first_try();
                    queue.push(now, Event::Send(r));
                    queue.push(
                        now + exponential(&mut arrivals, mean_gap) as Nanos,
                        Event::Arrival,
                    );
                }
                Event::Send(r) => {
                    let Some(request) = requests.get(r) else {
                        continue;
                    };
                    if request.call.begin(now, &mut metrics).is_some() {
                        queue.push(now + self.network.sample(&mut net), Event::Arrive(r));
                    } else {
                        requests.remove(r);
                    }
                }
                Event::Arrive(r) => {
                    let is_down = (down..up).contains(&now);
                    if (up..up + SECOND).contains(&now) {
                        recovery_load += 1;
                    }
                    let Some(request) = requests.get(r) else {
                        continue;
                    };
                    if is_down && !request.met && calls_first(&request.call) {
                        request.met = true;
                        met_outage += 1;
                    }
                    queue.push(
                        now + self.network.sample(&mut net),
                        Event::Answer(r, !is_down),
                    );
                }
                Event::Answer(r, ok) => {
                    let result = if ok { Ok(()) } else { Err(refusal) };
                    let before = metrics.successes;
                    let Some(request) = requests.get(r) else {
                        continue;
                    };
                    match request.call.end(now, result, &mut metrics) {
                        Next::RetryAt(at) => queue.push(at, Event::Send(r)),
                        Next::Done => {
                            if request.met && metrics.successes > before {
                                met_succeeded += 1;
                            }
                            requests.remove(r);
                        }
                    }
                }
            }
        }
        let mut row = metrics.row(
            strategy.policy.name(),
            strategy.budget.map(|b| b.to_string()),
        );
        row.success_rate = if met_outage == 0 {
            0.0
        } else {
            met_succeeded as f64 / met_outage as f64
        };
        row.met_outage = Some(met_outage);
        row.recovery_load = Some(recovery_load);
        Ok(row)
    }
}

impl Outage {
    /// The requests in flight at the peak, at the end of the outage: every attempt fails
    /// while it lasts, so a request lives until its last attempt is answered, or the outage
    /// ends.
    fn in_flight(&self, plan: &Plan) -> f64 {
        let rtt = 2.0 * self.network.mean();
        let down = ns(self.down_for).min(ns(self.duration));
        let (_, last) = plan.attempts_within(rtt, f64::INFINITY);
        let lifetime = (last + rtt).min(down + rtt);
        peak(self.rate / 1e9 * lifetime.max(rtt))
    }

    /// The plan of `strategy` as this outage runs it: delays no shorter than the
    /// `Retry-After`, none at all if the engine refuses to wait that long, and no attempt sent
    /// past the deadline.
    fn plan(&self, strategy: &Strategy) -> Plan {
        let rtt = 2.0 * self.network.mean();
        let mut plan = Plan::new(strategy);
        if let Some(wait) = self.retry_after {
            plan = if wait > Settings::new().max_server_wait() {
                plan.at_most(1)
            } else {
                plan.with_floor(ns(wait))
            };
        }
        if let Some(timeout) = self.timeout {
            let (within, _) = plan.attempts_within(rtt, ns(timeout));
            plan = plan.at_most(count(within));
        }
        plan
    }
}

/// A request in flight: its engine run, and whether its first attempt met the outage.
struct Request {
    call: Call,
    met: bool,
}

/// Whether the call is on its first attempt.
fn calls_first(call: &Call) -> bool {
    call.attempts() == 1
}
