//! # `tail`: a long tail from replicas that pause, and a timeout per attempt
//!
//! A pool of replicas serves requests that arrive at random. Most requests take a few
//! milliseconds; now and then a replica stops serving for a while (a stop-the-world pause),
//! and the requests it holds wait for it. Those few requests make the tail: the 99.9th
//! percentile is set by the pauses, not by the service time. A timeout per attempt
//! ([`Settings::with_attempt_timeout`]) cuts an attempt stuck on a paused replica and retries
//! it on another, picked at random.
//!
//! Model, deterministic by seed:
//!
//! - **Replicas:** `replicas` servers (default 10), each with `concurrency` requests in
//!   service at once (default 4) and a first-in, first-out queue beyond that. Each attempt's
//!   service time is drawn when it is sent, from `service` (default `Exp(mean 10 ms)`).
//! - **Pauses:** each replica runs for `Exp(mean pause_every)` (default 99 s), then pauses for
//!   `pause` (default 1 s), and so on, from a generator of its own: the pauses do not depend
//!   on the traffic. A paused replica serves nothing: the work of the attempts in service
//!   stops and resumes when the pause ends, and the queue waits. A `pause` of 0 is a pool with
//!   no tail.
//! - **Arrivals:** a Poisson process at `load` of the pool's capacity (default 0.6:
//!   `0.6 x replicas x concurrency / mean service`, 2 400 requests per second at the defaults)
//!   for `duration` (default 100 s). Every attempt, the first and each retry, goes to a replica
//!   picked at random; there is no load balancer that knows which replica is paused. A hedge
//!   ([`Strategy::hedging`]) goes to a replica picked at random among those the request has not
//!   tried, as gRFC A6 asks of hedges ("distinct backends, if possible"). No network delay is
//!   modelled.
//! - **Hedging:** each request runs the engine's [`Hedged`](stagger_core::engine::Hedged); a
//!   delay at a quantile is read, when the request starts, from one
//!   `LatencySketch` of the fleet's attempt latencies.
//!   Every attempt that answers is measured; a loser is measured for the time it ran. A loser
//!   still queued is dropped when its turn comes; one in service runs on, as a cut attempt
//!   does.
//! - **Clients:** each request is a run of the real engine with the strategy's policy, one
//!   budget for the whole client fleet (the strategy's, if any), an end-to-end deadline
//!   `timeout` (default 2 s) and, with `attempt_timeout`, a timeout per attempt. An attempt that
//!   outlives the time the engine gave it
//!   ([`Attempt::remaining`](stagger_core::engine::Attempt::remaining): the shorter of its
//!   timeout and the time left before the deadline) is cut at that time, and the client
//!   reports [`Failure::Timeout`], retried as any timeout is. Without an attempt timeout, an
//!   attempt has until the deadline.
//! - **What a cut attempt costs the server:** an attempt still waiting in a replica's queue is
//!   dropped when its turn comes, without service, as a server does that checks whether its
//!   client is still there (the connection, or a deadline it was passed) before starting work.
//!   An attempt already in service runs to its end and holds its slot: the server does not
//!   learn of the cancellation mid-work. This is the conservative choice for the
//!   attempt timeout (the work of a cut attempt is still paid where it started), and dropping
//!   the queued ones is what keeps the abandoned backlog of a paused replica from being served
//!   to nobody after the pause.
//!
//! **How the defaults make a tail.** A replica is paused `1 s / (99 s + 1 s)` = 1 % of the
//! time, so (Poisson arrivals see time averages) about 1 % of attempts arrive at a paused
//! replica. One that arrives `u` into a pause waits for the rest of the pause, `1 s - u`, and
//! then for the backlog ahead of it: the replica receives 240 requests per second (a tenth of
//! 2 400) and serves 400 (4 at a time, 10 ms each), so the backlog of `240 u` drains in
//! `0.6 u`. Its latency is `1 s - 0.4 u`, between 0.6 and 1 s: 60 to 100 times the 10 ms mean.
//! After the pause the backlog of 240 drains at 400 - 240 = 160 per second, in 1.5 s, during
//! which about another 1.5 % of requests wait less, from 0.6 s down to nothing. With 10
//! replicas over 100 s a run holds about 10 pauses. Without an attempt timeout, the 99.9th
//! percentile lies among the requests that met a pause; with a 50 ms attempt timeout those are
//! cut at 50 ms and retried on a replica that is (almost surely) running, at the cost of about
//! one extra attempt per request that met a pause or a long queue.
//!
//! Figures: the common ones, with `p50_ms`, `p99_ms` and `p999_ms` the latency of the requests
//! that succeeded, from their first attempt to the answer of their last (a request that gave
//! up, at its deadline or its attempts' end, has no latency; with the defaults hardly any
//! give up, and `success_rate` says how many), and `load` the attempts per request.

use std::collections::VecDeque;
use std::time::Duration;

use stagger_core::Failure;
use stagger_core::engine::{HedgeDelay, Settings};
use stagger_core::sketch::LatencySketch;
use stagger_core::{Rng, SeededRng};

use super::call::{Call, HedgedCall, Next, Step};
use super::slots::Slots;
use super::{Overrides, Workload, WorkloadKind, check_duration, check_events, check_window};
use crate::dist::{Delay, exponential};
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, grown, ns, peak, room_for};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{Strategy, client_budget_bytes};

const SECOND: f64 = 1e9;

/// The tail workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tail {
    /// Replicas in the pool, 1 to [`Tail::MAX_REPLICAS`].
    pub replicas: u32,
    /// Requests each replica serves at once, 1 to [`Tail::MAX_CONCURRENCY`]; more wait in its
    /// queue.
    pub concurrency: u32,
    /// The service time of one attempt, drawn when it is sent (default `Exp(mean 10 ms)`); its
    /// mean between 1 µs and 1 s.
    pub service: Delay,
    /// The offered load, as a share of the pool's capacity (`replicas x concurrency / mean
    /// service`), in (0, 1).
    pub load: f64,
    /// How long a replica pauses, at most a day; 0 for no pauses.
    pub pause: Duration,
    /// The mean time a replica runs between pauses (exponential), from 1 ms to a day.
    pub pause_every: Duration,
    /// How long requests arrive, longer than 0 and at most a day.
    pub duration: Duration,
    /// Each request's end-to-end deadline, from its first attempt, longer than 0 and at most
    /// a day.
    pub timeout: Duration,
    /// A timeout for each attempt ([`Settings::with_attempt_timeout`]), from 1 ms to a day,
    /// or none.
    pub attempt_timeout: Option<Duration>,
    /// The window of the peak retry share.
    pub window: Duration,
    /// The sub-requests each request fans out to, 1 to [`Tail::MAX_FANOUT`] (default 1): each
    /// is a run of its own, to a replica picked at random, and the request succeeds when all
    /// of them have, as slow as the slowest. The offered load counts sub-requests: arrivals
    /// come `fanout` times less often.
    pub fanout: u32,
}

impl Default for Tail {
    fn default() -> Self {
        Self {
            replicas: 10,
            concurrency: 4,
            service: Delay::Exponential { mean: 10_000_000 },
            load: 0.6,
            pause: Duration::from_secs(1),
            pause_every: Duration::from_secs(99),
            duration: Duration::from_secs(100),
            timeout: Duration::from_secs(2),
            attempt_timeout: None,
            window: Duration::from_millis(10),
            fanout: 1,
        }
    }
}

impl Tail {
    /// The most replicas.
    pub const MAX_REPLICAS: u32 = 10_000;
    /// The most requests a replica serves at once.
    pub const MAX_CONCURRENCY: u32 = 10_000;
    /// The most requests a run may expect (arrival rate x `duration`).
    pub const MAX_REQUESTS: f64 = 1e7;
    /// The most events a run may process; past it the run stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = 200_000_000;
    /// The most sub-requests a request fans out to.
    pub const MAX_FANOUT: u32 = 1_000;

    /// The offered rate, in requests per second: `load x replicas x concurrency / mean
    /// service`.
    #[must_use]
    pub fn requests_per_second(&self) -> f64 {
        self.rate() * SECOND
    }

    /// The arrival rate, in requests per nanosecond.
    fn rate(&self) -> f64 {
        self.load * f64::from(self.replicas) * f64::from(self.concurrency) / self.service.mean()
    }

    /// The requests the run expects.
    fn requests(&self) -> f64 {
        self.rate() * ns(self.duration)
    }

    /// The settings of every request.
    fn settings(&self) -> Settings {
        let settings = Settings::new().with_timeout(self.timeout);
        match self.attempt_timeout {
            Some(t) => settings.with_attempt_timeout(t),
            None => settings,
        }
    }

    /// The longest an attempt may take before it is cut, in nanoseconds.
    fn limit(&self) -> f64 {
        let deadline = ns(self.timeout);
        self.attempt_timeout
            .map_or(deadline, |t| ns(t).min(deadline))
    }

    /// The share of time a replica is paused.
    fn pause_share(&self) -> f64 {
        if self.pause.is_zero() {
            0.0
        } else {
            ns(self.pause) / (ns(self.pause_every) + ns(self.pause))
        }
    }

    /// The chance an attempt outlives its limit, for the estimate: it arrives at a paused
    /// replica with more of the pause left than the limit, or its time at the replica is
    /// longer.
    fn cut_share(&self) -> f64 {
        let limit = self.limit();
        let paused = if self.pause.is_zero() {
            0.0
        } else {
            self.pause_share() * (1.0 - limit / ns(self.pause)).max(0.0)
        };
        // The time an attempt spends at a replica, as an M/M/1 queue at the same load has it:
        // exponential with mean `service / (1 - load)`, a heavier tail than the pool's.
        let sojourn = self.service.mean() / (1.0 - self.load.min(0.99));
        let slow = libm::exp(-limit / sojourn);
        (paused + slow).min(1.0)
    }
}

/// A request in the table: its engine run and the attempts it waits for.
enum Request {
    /// A request that retries: one attempt at a time.
    Retried {
        call: Call,
        /// The attempt it waits for, if any.
        attempt: Option<u64>,
    },
    /// A request that hedges: several attempts in flight.
    Hedged {
        call: HedgedCall,
        /// The attempts in flight: their ids, numbers and when each was sent.
        live: Vec<Live>,
        /// The replicas its attempts went to, in order.
        used: Vec<u32>,
        /// When it asked to be woken, if it did.
        wake: Option<Nanos>,
    },
}

/// An attempt of a hedged request in flight.
#[derive(Clone, Copy)]
struct Live {
    id: u64,
    number: u32,
    sent: Nanos,
}

impl Request {
    /// Whether the request still waits for attempt `id`.
    fn waits_for(&self, id: u64) -> bool {
        match self {
            Self::Retried { attempt, .. } => *attempt == Some(id),
            Self::Hedged { live, .. } => live.iter().any(|l| l.id == id),
        }
    }
}

/// An attempt in a replica's queue: its request's slot, its number and its work.
#[derive(Clone, Copy)]
struct Waiting {
    slot: u32,
    attempt: u64,
    work: Nanos,
}

/// One replica: its attempts in service, its queue and its pauses.
struct Replica {
    busy: u32,
    waiting: VecDeque<Waiting>,
    /// The pauses drawn so far that have not ended, `(start, end)`, in order.
    pauses: VecDeque<(Nanos, Nanos)>,
    /// The end of the last pause drawn.
    horizon: Nanos,
    rng: SeededRng,
}

impl Replica {
    fn new(rng: SeededRng) -> Self {
        Self {
            busy: 0,
            waiting: VecDeque::new(),
            pauses: VecDeque::new(),
            horizon: 0,
            rng,
        }
    }

    /// When work of `work` nanoseconds that starts at `now` ends, given the pauses: the work
    /// stops while the replica is paused.
    fn finish(&mut self, now: Nanos, work: Nanos, tail: &Tail) -> Nanos {
        if tail.pause.is_zero() {
            return now.saturating_add(work);
        }
        while self.pauses.front().is_some_and(|p| p.1 <= now) {
            self.pauses.pop_front();
        }
        let (mut at, mut left, mut i) = (now, work, 0);
        loop {
            if i == self.pauses.len() {
                let run = exponential(&mut self.rng, ns(tail.pause_every)) as Nanos;
                let start = self.horizon.saturating_add(run);
                self.horizon = start.saturating_add(nanos(tail.pause));
                self.pauses.push_back((start, self.horizon));
            }
            let (start, end) = self.pauses[i];
            i += 1;
            if at >= start {
                at = at.max(end);
            } else if left <= start - at {
                return at + left;
            } else {
                left -= start - at;
                at = end;
            }
            if at == Nanos::MAX {
                return at;
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Event {
    /// The next request arrives.
    Arrival,
    /// The request in slot `r` sends its next attempt.
    Send(u32),
    /// Replica `replica` finishes an attempt of the request in `slot`.
    Done {
        replica: u32,
        slot: u32,
        attempt: u64,
    },
    /// The time of an attempt of the request in `slot` is up.
    Cut { slot: u32, attempt: u64 },
    /// The hedged request in `slot` asked to be woken now.
    Wake(u32),
}

/// The state of a run.
struct World<'a> {
    tail: &'a Tail,
    replicas: Vec<Replica>,
    table: Slots<Request>,
    queue: EventQueue<Event>,
    metrics: Metrics,
    routing: SeededRng,
    service: SeededRng,
    next_attempt: u64,
    /// The latencies of the fleet's attempts, for a hedge delay at a quantile.
    sketch: LatencySketch,
    /// With a fan-out: the requests whose sub-requests are in the table, the request each slot
    /// serves, and the requests' own figures.
    fan: Option<Fan>,
}

/// A request that fans out: when it started, how many of its sub-requests are still running,
/// and whether one has given up.
struct Parent {
    started: Nanos,
    running: u32,
    failed: bool,
}

/// The fan-out's bookkeeping: [`World::fan`].
struct Fan {
    parents: Slots<Parent>,
    /// The parent of each slot of the table, by slot.
    owner: Vec<u32>,
    /// Requests, their successes and latencies.
    metrics: Metrics,
}

impl World<'_> {
    /// Sends the next attempt of the request in `slot` at `now`, if the engine lets it, to a
    /// replica picked at random; otherwise the request is over.
    fn send(&mut self, slot: u32, now: Nanos) {
        let Some(Request::Retried { call, attempt }) = self.table.get(slot) else {
            return;
        };
        let Some(remaining) = call.begin_timed(now, &mut self.metrics) else {
            self.over(slot, now, false);
            return;
        };
        let id = self.next_attempt;
        self.next_attempt += 1;
        *attempt = Some(id);
        self.dispatch(slot, id, remaining, now);
    }

    /// Asks the hedged request in `slot` what to do at `now`, and does it: sends the attempts
    /// it sends, sets the wake-up it asks for, or ends it.
    fn step(&mut self, slot: u32, now: Nanos) {
        loop {
            let Some(Request::Hedged {
                call,
                live,
                used,
                wake,
            }) = self.table.get(slot)
            else {
                return;
            };
            match call.next(now, &mut self.metrics) {
                Step::Send(number, remaining) => {
                    let id = self.next_attempt;
                    self.next_attempt += 1;
                    let r = distinct(&mut self.routing, self.replicas.len(), used);
                    used.push(r as u32);
                    used.sort_unstable();
                    live.push(Live {
                        id,
                        number,
                        sent: now,
                    });
                    self.dispatch_to(slot, id, remaining, now, r);
                }
                Step::WakeAt(at) => {
                    if wake.is_none_or(|w| at < w) {
                        *wake = Some(at);
                        self.queue.push(at, Event::Wake(slot));
                    }
                    return;
                }
                Step::Idle => return,
                Step::Done => return self.finish_hedged(slot, now, false),
            }
        }
    }

    /// The hedged request in `slot` is over at `now`: the attempts still in flight are
    /// cancelled, each measured for as long as it ran (a lower bound of its latency, and one
    /// past the hedge delay: what a quantile needs of it).
    fn finish_hedged(&mut self, slot: u32, now: Nanos, succeeded: bool) {
        if let Some(Request::Hedged { live, .. }) = self.table.get(slot) {
            for l in live.iter() {
                self.sketch.record(Duration::from_nanos(now - l.sent));
            }
        }
        self.over(slot, now, succeeded);
    }

    /// The (sub-)request in `slot` is over at `now`, a success or not: its slot is freed and,
    /// with a fan-out, its request learns of it, and is over too once all its sub-requests are.
    fn over(&mut self, slot: u32, now: Nanos, succeeded: bool) {
        self.table.remove(slot);
        let Some(fan) = self.fan.as_mut() else {
            return;
        };
        let Some(&p) = fan.owner.get(slot as usize) else {
            return;
        };
        let Some(parent) = fan.parents.get(p) else {
            return;
        };
        parent.running -= 1;
        parent.failed |= !succeeded;
        if parent.running == 0 {
            if !parent.failed {
                fan.metrics.success(now - parent.started);
            }
            fan.parents.remove(p);
        }
    }

    /// Notes that the table's `slot` serves request `parent`.
    fn own(&mut self, slot: u32, parent: Option<u32>) {
        if let (Some(fan), Some(parent)) = (self.fan.as_mut(), parent) {
            let i = slot as usize;
            if fan.owner.len() <= i {
                fan.owner.resize(i + 1, 0);
            }
            fan.owner[i] = parent;
        }
    }

    /// Attempt `id` of the request in `slot` goes out at `now`, with `remaining` to live, to a
    /// replica picked at random.
    fn dispatch(&mut self, slot: u32, id: u64, remaining: Option<Duration>, now: Nanos) {
        let n = self.replicas.len();
        let r = ((self.routing.next_f64() * n as f64) as usize).min(n - 1);
        self.dispatch_to(slot, id, remaining, now, r);
    }

    /// Attempt `id` of the request in `slot` goes out at `now`, with `remaining` to live, to
    /// replica `r`.
    fn dispatch_to(
        &mut self,
        slot: u32,
        id: u64,
        remaining: Option<Duration>,
        now: Nanos,
        r: usize,
    ) {
        let attempt = id;
        if let Some(remaining) = remaining {
            self.queue.push(
                now.saturating_add(nanos(remaining)),
                Event::Cut { slot, attempt },
            );
        }
        let work = self.tail.service.sample(&mut self.service);
        let waiting = Waiting {
            slot,
            attempt,
            work,
        };
        let replica = &mut self.replicas[r];
        if replica.busy < self.tail.concurrency {
            self.start(r, waiting, now);
        } else {
            replica.waiting.push_back(waiting);
        }
    }

    /// Replica `r` starts serving `w` at `now`.
    fn start(&mut self, r: usize, w: Waiting, now: Nanos) {
        let replica = &mut self.replicas[r];
        replica.busy += 1;
        let done = replica.finish(now, w.work, self.tail);
        self.queue.push(
            done,
            Event::Done {
                replica: r as u32,
                slot: w.slot,
                attempt: w.attempt,
            },
        );
    }

    /// Replica `r` finished an attempt at `now`: it starts the next one in its queue whose
    /// client still waits for it, dropping those that were cut.
    fn free(&mut self, r: usize, now: Nanos) {
        self.replicas[r].busy -= 1;
        while let Some(w) = self.replicas[r].waiting.pop_front() {
            let live = self
                .table
                .get(w.slot)
                .is_some_and(|q| q.waits_for(w.attempt));
            if live {
                self.start(r, w, now);
                break;
            }
        }
    }

    /// The attempt `attempt` of the request in `slot` ended at `now` with `result`, if the
    /// request still waits for it.
    fn end(&mut self, slot: u32, id: u64, now: Nanos, result: Result<(), Failure>) {
        match self.table.get(slot) {
            Some(Request::Retried { call, attempt }) if *attempt == Some(id) => {
                *attempt = None;
                let before = self.metrics.successes;
                match call.end(now, result, &mut self.metrics) {
                    Next::RetryAt(at) => self.queue.push(at, Event::Send(slot)),
                    Next::Done => {
                        let succeeded = self.metrics.successes > before;
                        self.over(slot, now, succeeded);
                    }
                }
            }
            Some(Request::Hedged { call, live, .. }) => {
                let Some(i) = live.iter().position(|l| l.id == id) else {
                    return;
                };
                let l = live.swap_remove(i);
                self.sketch.record(Duration::from_nanos(now - l.sent));
                debug_assert!(call.is_in_flight(l.number));
                let before = self.metrics.successes;
                if call.answered(l.number, now, result, &mut self.metrics) {
                    let succeeded = self.metrics.successes > before;
                    self.finish_hedged(slot, now, succeeded);
                } else {
                    self.step(slot, now);
                }
            }
            _ => {}
        }
    }

    /// The wake-up the hedged request in `slot` asked for at `now`, if it still stands.
    fn wake(&mut self, slot: u32, now: Nanos) {
        if let Some(Request::Hedged { wake, .. }) = self.table.get(slot)
            && *wake == Some(now)
        {
            *wake = None;
            self.step(slot, now);
        }
    }
}

/// A replica picked at random among the `n` that `used` (sorted) does not hold, as a load
/// balancer that sends each hedge to a replica the request has not tried (gRFC A6 asks for
/// distinct backends where possible); any of the `n` once every one has been tried.
fn distinct(rng: &mut SeededRng, n: usize, used: &[u32]) -> usize {
    let free = n.saturating_sub(used.len());
    if free == 0 {
        return ((rng.next_f64() * n as f64) as usize).min(n - 1);
    }
    let mut r = ((rng.next_f64() * free as f64) as usize).min(free - 1);
    // The `r`-th replica not in `used`.
    for &u in used {
        if (u as usize) <= r {
            r += 1;
        }
    }
    r
}

impl Tail {
    /// The requests in flight at the peak, for memory: the arrival rate times how long a
    /// request's attempts last, and a paused replica's backlog.
    fn in_flight(&self, attempts: f64) -> f64 {
        let rate = self.rate();
        let limit = self.limit();
        let load = self.load.min(0.99);
        let sojourn = (self.service.mean() / (1.0 - load)).min(limit);
        let backlog = (ns(self.pause) / (1.0 - load)).min(limit);
        let paused_at_once = (f64::from(self.replicas) * self.pause_share() * 2.0).max(1.0);
        peak(rate * attempts * sojourn + rate / f64::from(self.replicas) * backlog * paused_at_once)
    }
}

impl Workload for Tail {
    const KIND: WorkloadKind = WorkloadKind::Tail;

    const ACCEPTS: &'static [&'static str] = &[
        "duration",
        "timeout",
        "window",
        "attempt_timeout",
        "load",
        "replicas",
        "concurrency",
        "pause",
        "pause_every",
        "fanout",
    ];

    fn set(&mut self, o: &Overrides) {
        self.duration = o.duration.unwrap_or(self.duration);
        self.timeout = o.timeout.unwrap_or(self.timeout);
        self.window = o.window.unwrap_or(self.window);
        self.attempt_timeout = o.attempt_timeout.or(self.attempt_timeout);
        self.load = o.load.unwrap_or(self.load);
        self.replicas = o.replicas.unwrap_or(self.replicas);
        self.concurrency = o.concurrency.unwrap_or(self.concurrency);
        self.pause = o.pause.unwrap_or(self.pause);
        self.pause_every = o.pause_every.unwrap_or(self.pause_every);
        self.fanout = o.fanout.unwrap_or(self.fanout);
    }

    fn validate(&self) -> Result<(), SimError> {
        const DAY: Duration = Duration::from_secs(86_400);
        if self.replicas == 0 || self.replicas > Self::MAX_REPLICAS {
            return Err(SimError::Invalid {
                param: "replicas",
                allowed: "between 1 and 10000",
            });
        }
        if self.concurrency == 0 || self.concurrency > Self::MAX_CONCURRENCY {
            return Err(SimError::Invalid {
                param: "concurrency",
                allowed: "between 1 and 10000",
            });
        }
        let mean = self.service.mean();
        if !(1e3..=1e9).contains(&mean) {
            return Err(SimError::Invalid {
                param: "service",
                allowed: "a distribution whose mean is between 1 µs and 1 s",
            });
        }
        if !(self.load.is_finite() && self.load > 0.0 && self.load < 1.0) {
            return Err(SimError::Invalid {
                param: "load",
                allowed: "a share of the pool's capacity in (0, 1)",
            });
        }
        if self.pause > DAY {
            return Err(SimError::Invalid {
                param: "pause",
                allowed: "at most a day",
            });
        }
        if self.pause_every < Duration::from_millis(1) || self.pause_every > DAY {
            return Err(SimError::Invalid {
                param: "pause_every",
                allowed: "at least 1ms and at most a day",
            });
        }
        check_duration(self.duration)?;
        if self.timeout.is_zero() || self.timeout > DAY {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0 and at most a day",
            });
        }
        if let Some(t) = self.attempt_timeout
            && (t < Duration::from_millis(1) || t > DAY)
        {
            return Err(SimError::Invalid {
                param: "attempt_timeout",
                allowed: "at least 1ms and at most a day",
            });
        }
        check_window(self.window)?;
        if self.fanout == 0 || self.fanout > Self::MAX_FANOUT {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: "between 1 and 1000",
            });
        }
        if self.requests() > Self::MAX_REQUESTS {
            return Err(SimError::TooLarge {
                what: "load x replicas x concurrency / mean service x duration",
                limit: "1e7 requests".to_owned(),
            });
        }
        Ok(())
    }

    /// Each arrival is one event; each attempt one when its time is up and at most one when a
    /// replica finishes it; each retry one more when it is sent: `3 x attempts` per request at
    /// most (`1 + 2a + (a - 1)`).
    /// Attempts per request follow the policy at the chance an attempt is cut
    /// (`Tail::cut_share`), at most one per attempt timeout within the deadline. Memory is
    /// the replicas, the requests in flight (and a paused replica's backlog), and the events
    /// pending, chiefly each attempt's cut, pending for as long as the attempt may last.
    fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = Plan::new(strategy);
        let requests = self.requests();
        let by_deadline = ns(self.timeout) / self.limit() + 1.0;
        let attempts = plan.attempts(self.cut_share()).min(by_deadline.floor());
        let events = requests * 3.0 * attempts;
        let in_flight = self.in_flight(attempts);
        let rate = self.rate();
        let pending = peak(rate * attempts * self.limit()) + in_flight;
        let retries_per_ns = requests * (attempts - 1.0) / ns(self.duration);
        let window = peak(retries_per_ns * ns(self.window)).min(requests * attempts);
        let bytes = f64::from(self.replicas) * size_of::<Replica>() as f64
            + grown(in_flight) * size_of::<Waiting>() as f64
            + Slots::<Request>::bytes(in_flight, room_for(in_flight) as f64)
            + pending * EventQueue::<Event>::bytes_per_pending()
            + client_budget_bytes(strategy)
            + grown(window) * Metrics::STORED_RETRY_BYTES as f64
            + Metrics::fixed_bytes() as f64;
        // A fan-out's requests, each slot's owner, and the requests' own figures.
        let fan = if self.fanout > 1 {
            let parents = in_flight / f64::from(self.fanout) + 1.0;
            Slots::<Parent>::bytes(parents, room_for(parents) as f64)
                + grown(room_for(in_flight) as f64) * size_of::<u32>() as f64
                + Metrics::fixed_bytes() as f64
        } else {
            0.0
        };
        Estimate::of(events, bytes + fan)
    }

    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        self.validate()?;
        let mut world = SeededRng::new(seed);
        let mut arrivals = world.fork();
        let routing = world.fork();
        let service = world.fork();
        let mut policies = world.fork();
        let budget_rng = world.fork();
        let budget = match strategy.shared_unlimited() {
            Some(unlimited) => unlimited,
            None => strategy.client_budget(budget_rng),
        };
        let replicas = (0..self.replicas)
            .map(|_| Replica::new(world.fork()))
            .collect();
        let end = nanos(self.duration);
        let fanout = self.fanout.max(1);
        // Requests arrive `fanout` times less often than sub-requests.
        let mean_gap = f64::from(fanout) / self.rate();
        let attempts = Plan::new(strategy).attempts(self.cut_share());
        let mut w = World {
            tail: self,
            replicas,
            table: Slots::with_capacity(room_for(self.in_flight(attempts))),
            queue: EventQueue::new(),
            metrics: Metrics::new(nanos(self.window)),
            routing,
            service,
            next_attempt: 0,
            sketch: LatencySketch::new(),
            fan: (fanout > 1).then(|| Fan {
                parents: Slots::with_capacity(16),
                owner: Vec::new(),
                metrics: Metrics::new(nanos(self.window)),
            }),
        };
        let settings = self.settings();
        let first = exponential(&mut arrivals, mean_gap) as Nanos;
        if first < end {
            w.queue.push(first, Event::Arrival);
        }
        let mut events = 0u64;
        while let Some((now, event)) = w.queue.pop() {
            events += 1;
            if events > Self::MAX_EVENTS {
                return Err(SimError::TooLarge {
                    what: "events",
                    limit: Self::MAX_EVENTS.to_string(),
                });
            }
            check_events(events, max_events)?;
            match event {
                Event::Arrival => {
                    let next = now.saturating_add(exponential(&mut arrivals, mean_gap) as Nanos);
                    if next < end {
                        w.queue.push(next, Event::Arrival);
                    }
                    let parent = w.fan.as_mut().map(|fan| {
                        fan.metrics.first_try();
                        fan.parents.insert(Parent {
                            started: now,
                            running: fanout,
                            failed: false,
                        })
                    });
                    for _ in 0..fanout {
                        w.metrics.first_try();
                        let rng = policies.fork();
                        if let Some(hedging) = strategy.hedging {
                            let measured = match hedging.delay() {
                                HedgeDelay::Quantile(q) => w.sketch.quantile(q),
                                _ => None,
                            };
                            let call = HedgedCall::start(
                                strategy,
                                hedging,
                                measured,
                                rng,
                                None,
                                budget.clone(),
                                settings,
                                now,
                            )?;
                            let slot = w.table.insert(Request::Hedged {
                                call,
                                live: Vec::new(),
                                used: Vec::new(),
                                wake: None,
                            });
                            w.own(slot, parent);
                            w.step(slot, now);
                        } else {
                            let call = Call::start(strategy, rng, budget.clone(), settings, now)?;
                            let slot = w.table.insert(Request::Retried {
                                call,
                                attempt: None,
                            });
                            w.own(slot, parent);
                            w.send(slot, now);
                        }
                    }
                }
                Event::Send(slot) => w.send(slot, now),
                Event::Wake(slot) => w.wake(slot, now),
                Event::Done {
                    replica,
                    slot,
                    attempt,
                } => {
                    w.free(replica as usize, now);
                    w.end(slot, attempt, now, Ok(()));
                }
                Event::Cut { slot, attempt } => w.end(slot, attempt, now, Err(Failure::Timeout)),
            }
        }
        w.metrics.events = events;
        let p999 = |m: &Metrics| {
            (!m.latency_us.is_empty())
                .then(|| m.latency_us.value_at_quantile(0.999) as f64 / 1_000.0)
        };
        let budget = strategy.budget.map(|b| b.to_string());
        let mut row = w.metrics.row(strategy.name(), budget.clone());
        row.p999_ms = Some(p999(&w.metrics));
        if let Some(mut fan) = w.fan {
            // Success and latency are the requests'; load and attempts the sub-requests'.
            let whole = fan.metrics.row(strategy.name(), budget);
            row.success_rate = whole.success_rate;
            row.p50_ms = whole.p50_ms;
            row.p99_ms = whole.p99_ms;
            row.p999_ms = Some(p999(&fan.metrics));
        }
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use stagger_core::AnyConfig;
    use stagger_core::policy::{Immediate, NoRetry};

    use super::*;

    fn immediate(attempts: u32) -> Strategy {
        Strategy::policy(AnyConfig::from(
            Immediate::new().with_max_attempts(attempts),
        ))
    }

    fn short() -> Tail {
        Tail {
            duration: Duration::from_secs(20),
            pause_every: Duration::from_secs(19),
            ..Tail::default()
        }
    }

    #[test]
    fn the_defaults_offer_2400_requests_per_second() {
        assert!((Tail::default().requests_per_second() - 2_400.0).abs() < 1e-6);
        assert!((Tail::default().pause_share() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn work_stops_while_the_replica_is_paused() {
        let tail = Tail {
            pause: Duration::from_millis(100),
            ..Tail::default()
        };
        let mut r = Replica::new(SeededRng::new(1));
        r.pauses.push_back((1_000, 2_000));
        r.pauses.push_back((5_000, 6_000));
        r.horizon = 6_000;
        // Before the first pause; across it; starting inside it; across both.
        assert_eq!(r.finish(0, 500, &tail), 500);
        assert_eq!(r.finish(500, 1_000, &tail), 2_500);
        assert_eq!(r.finish(1_500, 100, &tail), 2_100);
        assert_eq!(r.finish(1_500, 3_500, &tail), 6_500);
        // The pauses that ended are dropped, and new ones drawn past the horizon.
        assert!(r.finish(7_000, 1, &tail) >= 7_001);
        assert!(
            r.pauses
                .front()
                .is_some_and(|p| p.0 >= 6_000 && p.1 > 7_000)
        );
        let none = Tail {
            pause: Duration::ZERO,
            ..tail
        };
        assert_eq!(r.finish(7_000, 10, &none), 7_010);
    }

    #[test]
    fn the_same_seed_gives_the_same_row_and_another_seed_another() {
        let w = Tail {
            attempt_timeout: Some(Duration::from_millis(50)),
            ..short()
        };
        let s = immediate(3);
        assert_eq!(w.run(&s, 5).unwrap(), w.run(&s, 5).unwrap());
        assert_ne!(w.run(&s, 5).unwrap(), w.run(&s, 6).unwrap());
    }

    #[test]
    fn without_pauses_or_retries_every_request_is_served_once() {
        let w = Tail {
            pause: Duration::ZERO,
            ..short()
        };
        let row = w
            .run(&Strategy::policy(AnyConfig::from(NoRetry::new())), 1)
            .unwrap();
        assert_eq!(row.success_rate, 1.0);
        assert_eq!(row.load, 1.0);
        // An M/M/4 queue at 60 %: the median is near the service time, the tail short.
        let (p50, p999) = (row.p50_ms.unwrap(), row.p999_ms.flatten().unwrap());
        assert!((5.0..12.0).contains(&p50), "{p50}");
        assert!(p999 < 150.0, "{p999}");
    }

    #[test]
    fn bad_parameters_are_refused_with_their_names() {
        let s = immediate(3);
        let d = Tail::default();
        let param = |w: Tail| w.run(&s, 1).unwrap_err().param();
        for load in [0.0, -0.5, 1.0, 2.0, f64::NAN, f64::INFINITY] {
            assert_eq!(param(Tail { load, ..d }), Some("load"), "{load}");
        }
        assert_eq!(param(Tail { replicas: 0, ..d }), Some("replicas"));
        assert_eq!(
            param(Tail {
                replicas: u32::MAX,
                ..d
            }),
            Some("replicas")
        );
        assert_eq!(
            param(Tail {
                concurrency: 0,
                ..d
            }),
            Some("concurrency")
        );
        assert_eq!(
            param(Tail {
                service: Delay::Constant { nanos: 0 },
                ..d
            }),
            Some("service")
        );
        assert_eq!(
            param(Tail {
                pause: Duration::from_secs(100_000),
                ..d
            }),
            Some("pause")
        );
        assert_eq!(
            param(Tail {
                pause_every: Duration::ZERO,
                ..d
            }),
            Some("pause_every")
        );
        assert_eq!(
            param(Tail {
                duration: Duration::ZERO,
                ..d
            }),
            Some("duration")
        );
        assert_eq!(
            param(Tail {
                timeout: Duration::ZERO,
                ..d
            }),
            Some("timeout")
        );
        for t in [Duration::ZERO, Duration::from_micros(999), Duration::MAX] {
            assert_eq!(
                param(Tail {
                    attempt_timeout: Some(t),
                    ..d
                }),
                Some("attempt_timeout"),
                "{t:?}"
            );
        }
        assert_eq!(
            param(Tail {
                window: Duration::ZERO,
                ..d
            }),
            Some("window")
        );
        let huge = Tail {
            replicas: 10_000,
            concurrency: 10_000,
            ..d
        };
        assert!(matches!(huge.validate(), Err(SimError::TooLarge { .. })));
        // An override the workload does not use is refused, not ignored.
        let clients = Overrides {
            clients: Some(3),
            ..Overrides::default()
        };
        assert_eq!(
            Tail::default().apply(&clients),
            Err(SimError::NotApplicable {
                param: "clients",
                workload: "tail",
            })
        );
        let mut w = Tail::default();
        w.apply(&Overrides {
            attempt_timeout: Some(Duration::from_millis(50)),
            load: Some(0.3),
            replicas: Some(3),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(
            (w.attempt_timeout, w.load, w.replicas),
            (Some(Duration::from_millis(50)), 0.3, 3)
        );
    }

    #[test]
    fn a_hedged_run_is_the_same_for_the_same_seed_and_never_exceeds_its_attempts() {
        use stagger_core::engine::Hedging;
        for hedging in [
            Hedging::quantile(9500, 2),
            Hedging::fixed(Duration::from_millis(30), 3),
        ] {
            let s = immediate(2).with_hedging(Some(hedging));
            let w = Tail {
                fanout: 3,
                ..short()
            };
            let row = w.run(&s, 7).unwrap();
            assert_eq!(row, w.run(&s, 7).unwrap());
            assert_ne!(row, w.run(&s, 8).unwrap());
            assert!(row.load > 1.0 && row.load <= f64::from(hedging.max_attempts()));
            assert_eq!(row.policy, s.name());
        }
    }

    #[test]
    fn a_request_that_fans_out_is_as_slow_as_its_slowest_sub_request() {
        let one = short();
        let ten = Tail {
            fanout: 10,
            ..short()
        };
        let s = Strategy::policy(AnyConfig::from(NoRetry::new()));
        let (a, b) = (one.run(&s, 1).unwrap(), ten.run(&s, 1).unwrap());
        // The same offered load of sub-requests, each served once.
        assert_eq!(b.load, 1.0);
        assert!((b.first_tries as f64 / a.first_tries as f64 - 1.0).abs() < 0.05);
        // A tenth as many requests, each needing ten: many more of them meet a slow replica
        // (here, pausing 5 % of the time, about two in five), so the median climbs into the
        // tail, and the tail is no shorter.
        assert!(b.p50_ms.unwrap() > 5.0 * a.p50_ms.unwrap(), "{a:?} {b:?}");
        assert!(b.p99_ms.unwrap() >= a.p99_ms.unwrap(), "{a:?} {b:?}");
        // The same seed gives the same row.
        assert_eq!(b, ten.run(&s, 1).unwrap());
        assert_eq!(
            Tail {
                fanout: 0,
                ..short()
            }
            .run(&s, 1)
            .unwrap_err()
            .param(),
            Some("fanout")
        );
    }

    #[test]
    fn the_estimate_is_near_the_run() {
        for attempt_timeout in [None, Some(Duration::from_millis(50))] {
            let w = Tail {
                attempt_timeout,
                ..short()
            };
            let s = immediate(3);
            let e = w.estimate(&s);
            let row = w.run(&s, 1).unwrap();
            let ratio = row.events as f64 / e.events as f64;
            assert!(
                (0.8..=1.25).contains(&ratio),
                "{attempt_timeout:?}: {ratio}"
            );
        }
    }
}
