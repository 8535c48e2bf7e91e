//! # The composed model: clients, a network and a dependency as parts of one event loop
//!
//! A [`Composed`] run puts together three parts, each chosen on its own:
//!
//! - **clients** ([`Clients`]): *open* sources, each a Poisson process that sends whether or
//!   not earlier requests are over, or *serial* clients, each with one request in flight that
//!   paces its next start after it ends;
//! - **network** ([`Network`]): one round trip drawn whole per attempt (the dependency answers
//!   as the attempt leaves), or a one-way delay drawn each way (the dependency answers when the
//!   attempt reaches it);
//! - **dependency** ([`Dependency`]): an independent failure probability per attempt, and an
//!   outage window ([`Window`]) during which every attempt fails, with a `Retry-After` if the
//!   window says so.
//!
//! The retry stack is the [`Strategy`]: the engine's run per request, with the file's deadline
//! ([`Composed::deadline`]) and a budget held per source or shared by all
//! ([`BudgetScope`]). Three canonical workloads are compositions of these parts:
//! [`OpenLoop`](crate::workload::open_loop::OpenLoop) (open sources, a round trip, a failure
//! probability), [`Serial`](crate::workload::serial::Serial) (the same with serial clients)
//! and [`Outage`](crate::workload::outage::Outage) (one open source, a one-way network, an
//! outage window); each builds its `Composed` and runs it, so their figures are this loop's.
//!
//! ## Generators
//!
//! Every generator derives from the world seed, in an order fixed by the parts, so a run is
//! reproducible to the byte. One open source draws from the world in turn: its arrivals, its
//! server (the network and the failures), its budget, and then each request's policy from the
//! world itself. Several open sources each fork four of their own (arrivals, server, policies,
//! budget), and serial clients four (server, policies, budget, pacing). A failure is drawn only
//! when it is uncertain (a failure probability strictly between 0 and 1), from the source's
//! server generator, after the round trip's draw.
//!
//! ## Metrics
//!
//! The common metrics are those of [`Metrics`]. With an outage window the success rate is that
//! of the requests that met the outage (whose first attempt reached the dependency while it was
//! down), [`ResultRow::met_outage`] counts them, and [`ResultRow::recovery_load`] counts the
//! attempts that reached the dependency in the second after the window ended.

use std::rc::Rc;
use std::time::Duration;

use stagger_core::budget::Budget;
use stagger_core::engine::{Dispersal, Settings};
use stagger_core::{Failure, Rng, SeededRng};

use crate::dist::{Delay, exponential};
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, count, grown, ns, peak, room_for};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{Strategy, client_budget_bytes};
use crate::workload::call::{Call, Next};
use crate::workload::slots::Slots;
use crate::workload::{
    check_clients, check_duration, check_events, check_failure_rate, check_window,
};

const SECOND: Nanos = 1_000_000_000;

/// Who sends the requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clients {
    /// `sources` independent Poisson sources, each sending `rate` requests a second whether or
    /// not its earlier requests are over: retries add load on top of the offered rate.
    Open {
        /// The sources (1 to [`Composed::MAX_SOURCES`]).
        sources: u64,
        /// Each source's requests a second, in (0, [`Composed::MAX_RATE`]].
        rate: f64,
    },
    /// `clients` serial clients, each with one request in flight: when a request ends, the next
    /// starts `max(0, Exp(1 / rate) - (time since the last one started))` later (Brooker's
    /// `SerialClient`), so time spent retrying is time not spent on first tries.
    Serial {
        /// The clients (1 to [`Composed::MAX_SOURCES`]).
        clients: u64,
        /// The rate at which each client starts requests when they are quick, in (0, 1e5].
        rate: f64,
    },
}

impl Clients {
    /// The sources or clients.
    #[must_use]
    pub const fn count(self) -> u64 {
        match self {
            Self::Open { sources, .. } => sources,
            Self::Serial { clients, .. } => clients,
        }
    }

    /// Each source's or client's rate, in requests a second.
    #[must_use]
    pub const fn rate(self) -> f64 {
        match self {
            Self::Open { rate, .. } | Self::Serial { rate, .. } => rate,
        }
    }
}

/// How long an attempt spends on the network.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Network {
    /// One draw for the whole round trip; the dependency answers as the attempt leaves (it
    /// sees the attempt at its send time).
    RoundTrip(Delay),
    /// One draw each way; the dependency answers when the attempt reaches it.
    OneWay(Delay),
}

impl Network {
    /// The mean round trip, in nanoseconds.
    #[must_use]
    pub fn round_trip_mean(&self) -> f64 {
        match self {
            Self::RoundTrip(d) => d.mean(),
            Self::OneWay(d) => 2.0 * d.mean(),
        }
    }

    /// Events per attempt on the network: its answer, and its arrival if the trip is two.
    const fn hops(&self) -> f64 {
        match self {
            Self::RoundTrip(_) => 1.0,
            Self::OneWay(_) => 2.0,
        }
    }
}

/// A time during which the dependency is down.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// When it goes down, from the start of the run.
    pub at: Duration,
    /// How long it stays down (longer than 0).
    pub lasts: Duration,
    /// If set, every answer while down is a throttle with this `Retry-After` (a floor the
    /// engine never undercuts) rather than a plain retryable failure.
    pub retry_after: Option<Duration>,
}

/// What the dependency does with an attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dependency {
    /// The probability that an attempt fails, independently of the others, in [0, 1].
    pub failure_rate: f64,
    /// An outage, if any: every attempt that reaches the dependency during it fails.
    pub outage: Option<Window>,
}

/// Who holds a budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BudgetScope {
    /// Each source or client holds its own, seeing only its own calls.
    #[default]
    PerSource,
    /// One budget for every source and client.
    Shared,
}

/// A run of clients, a network and a dependency: see the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Composed {
    /// Who sends the requests.
    pub clients: Clients,
    /// How long requests start; those in flight then run to their end.
    pub duration: Duration,
    /// The network between the clients and the dependency.
    pub network: Network,
    /// The dependency.
    pub dependency: Dependency,
    /// One end-to-end deadline per request, from its first attempt; `None` for none.
    pub deadline: Option<Duration>,
    /// Who holds the strategy's budget.
    pub budget_scope: BudgetScope,
    /// What a request adds above a server's wait (the outage's `Retry-After`). A request that
    /// meets a wait and needs a draw for it forks its generator then, from its source's
    /// policy generator, as the executors give one only to the runs that need it.
    pub dispersal: Dispersal,
    /// The window of the peak retry share.
    pub window: Duration,
}

/// What an attempt's answer says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    /// A failure drawn from the failure probability.
    Failed,
    /// The dependency was down.
    Down,
}

#[derive(Clone, Copy)]
enum Event {
    /// Source `c`'s next request starts.
    Arrival(u32),
    /// The request in slot `r` sends its next attempt.
    Send(u32),
    /// The attempt of the request in slot `r` reaches the dependency (one-way network).
    Arrive(u32),
    /// The answer to the request in slot `r` comes back.
    Answer(u32, Outcome),
}

/// One source or client: its generators and its budget.
struct Source {
    /// Open: the gaps between arrivals. Serial: the gaps between starts.
    gaps: SeededRng,
    /// The network's delays and the failures.
    server: SeededRng,
    /// One generator per request, forked in turn.
    policies: SeededRng,
    budget: Rc<dyn Budget>,
    /// Serial: when its latest request started (or was due to).
    last_start: Nanos,
}

/// A request in flight: its engine run, its source, and whether its first attempt met the
/// outage.
struct Request {
    call: Call,
    source: u32,
    met: bool,
}

/// The counts an outage window adds to the row.
#[derive(Default)]
struct OutageCounts {
    met: u64,
    met_succeeded: u64,
    recovery_load: u64,
}

impl Composed {
    /// The most sources or clients.
    pub const MAX_SOURCES: u64 = 100_000;
    /// The highest rate of one open source, in requests a second.
    pub const MAX_RATE: f64 = 1e6;
    /// The most requests open sources may offer (`sources x rate x duration`).
    pub const MAX_REQUESTS: f64 = 1e7;
    /// The most attempts serial clients may need if every request were retried at once
    /// (`clients x duration / mean round trip`).
    pub const MAX_SERIAL_ATTEMPTS: f64 = 5e7;
    /// The most events a run may process; a run that needs more (a policy with no attempt
    /// limit against a dependency that always fails, say) stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = 200_000_000;

    /// Checks the parts.
    ///
    /// # Errors
    ///
    /// [`SimError::Invalid`] or [`SimError::TooLarge`] naming the parameter.
    pub fn validate(&self) -> Result<(), SimError> {
        check_clients(self.clients.count(), Self::MAX_SOURCES)?;
        let rate = self.clients.rate();
        let (most, allowed) = match self.clients {
            Clients::Open { .. } => (
                Self::MAX_RATE,
                "a number of requests per second in (0, 1e6]",
            ),
            Clients::Serial { .. } => (1e5, "in (0, 1e5] calls per second"),
        };
        if !(rate.is_finite() && rate > 0.0 && rate <= most) {
            return Err(SimError::Invalid {
                param: "rate",
                allowed,
            });
        }
        check_duration(self.duration)?;
        check_failure_rate(self.dependency.failure_rate)?;
        check_window(self.window)?;
        if let Some(w) = self.dependency.outage {
            if w.lasts.is_zero() || w.at.saturating_add(w.lasts) > self.duration {
                return Err(SimError::Invalid {
                    param: "outage",
                    allowed: "a window longer than 0 that ends within the run's duration",
                });
            }
            if w.retry_after
                .is_some_and(|d| d > Duration::from_secs(86_400))
            {
                return Err(SimError::Invalid {
                    param: "retry_after",
                    allowed: "at most a day",
                });
            }
        }
        if self.deadline.is_some_and(|t| t.is_zero()) {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0",
            });
        }
        let n = self.clients.count() as f64;
        match self.clients {
            Clients::Open { .. } => {
                if n * rate * self.duration.as_secs_f64() > Self::MAX_REQUESTS {
                    return Err(SimError::TooLarge {
                        what: "sources x rate x duration",
                        limit: "1e7 requests".to_owned(),
                    });
                }
            }
            Clients::Serial { .. } => {
                let rtt = mean_floor(&self.network);
                if rtt < 1.0 {
                    return Err(SimError::Invalid {
                        param: "rtt",
                        allowed: "a round trip with a mean of at least 1 ns",
                    });
                }
                if n * self.duration.as_nanos() as f64 / rtt > Self::MAX_SERIAL_ATTEMPTS {
                    return Err(SimError::TooLarge {
                        what: "clients x duration / mean round trip",
                        limit: "5e7 attempts".to_owned(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The plan of `strategy` as this dependency runs it: delays no shorter than the outage's
    /// `Retry-After`, none at all if the engine refuses to wait that long, and no attempt sent
    /// past the deadline.
    fn plan(&self, strategy: &Strategy) -> Plan {
        let rtt = self.network.round_trip_mean();
        let mut plan = Plan::new(strategy);
        if let Some(wait) = self.dependency.outage.and_then(|w| w.retry_after) {
            plan = if wait > Settings::new().max_server_wait() {
                plan.at_most(1)
            } else {
                plan.with_floor(ns(wait))
            };
        }
        if let Some(timeout) = self.deadline {
            let (within, _) = plan.attempts_within(rtt, ns(timeout));
            plan = plan.at_most(count(within));
        }
        plan
    }

    /// The requests in flight at the peak, for open sources: the arrival rate times the
    /// longer of how long a request lives at the failure probability and how long one that
    /// meets the outage lives (until its last attempt, or the outage's end).
    fn in_flight(&self, plan: &Plan) -> f64 {
        let rtt = self.network.round_trip_mean();
        let per_ns = self.clients.count() as f64 * self.clients.rate() / 1e9;
        let mut lifetime = plan.lifetime(self.dependency.failure_rate, rtt);
        if let Some(w) = self.dependency.outage {
            let down = ns(w.lasts).min(ns(self.duration));
            let (_, last) = plan.attempts_within(rtt, f64::INFINITY);
            lifetime = lifetime.max((last + rtt).min(down + rtt));
        }
        peak(per_ns * lifetime.max(rtt))
    }

    /// What a run of `strategy` will cost: the events it processes and the memory its data
    /// holds at the peak (see [`estimate`](crate::estimate)). The parts should be valid
    /// ([`Composed::validate`]).
    ///
    /// Open sources: each request is one event to arrive, each attempt one per hop of the
    /// network, each retry one more to send. A request that meets the outage makes the
    /// attempts its policy sends before the outage ends (with the `Retry-After` floor and
    /// within the deadline), and one more after; the others as many as the failure
    /// probability asks for, `sum_k x^k`. Serial clients run requests one at a time, no more
    /// than their rate, each lasting its attempts' round trips and its retries' delays. A
    /// budget only takes retries away.
    #[must_use]
    pub fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = self.plan(strategy);
        let n = self.clients.count() as f64;
        let rate = self.clients.rate();
        let duration = ns(self.duration);
        let rtt = self.network.round_trip_mean();
        let x = self.dependency.failure_rate;
        let hops = self.network.hops();
        let (requests, attempts, bytes) = match self.clients {
            Clients::Open { .. } => {
                let requests = n * rate * self.duration.as_secs_f64();
                let per_ns = n * rate / 1e9;
                let attempts = match self.dependency.outage {
                    Some(w) => {
                        let down = ns(w.lasts).min(duration);
                        (requests - down * per_ns).max(0.0) * plan.attempts(x)
                            + plan.outage_attempts(rtt, down) * per_ns
                    }
                    None => requests * plan.attempts(x),
                };
                let in_flight = self.in_flight(&plan);
                let room = room_for(in_flight).max(self.clients.count() as usize);
                let bytes = Slots::<Request>::bytes(in_flight, room as f64)
                    + (n + in_flight) * EventQueue::<Event>::bytes_per_pending();
                (requests, attempts, bytes)
            }
            Clients::Serial { .. } => {
                let rtt = rtt.max(1.0);
                // Requests that would outlive the run count as lasting the run: a client does
                // many short requests before it meets the rare long one.
                let lifetime = plan.lifetime_within(x, rtt, duration);
                // Paced at `rate`: no more requests than that, however short they are.
                let paced = rate * duration / 1e9;
                let requests = n * ((duration / lifetime).min(paced) + 1.0);
                let mut attempts = requests * plan.attempts(x);
                if let Some(w) = self.dependency.outage {
                    // Each client's request during the outage retries until it ends.
                    let down = ns(w.lasts).min(duration);
                    attempts += n * plan.attempts_within(rtt, down).0;
                }
                let bytes =
                    n * EventQueue::<Event>::bytes_per_pending() + Slots::<Request>::bytes(n, n);
                (requests, attempts, bytes)
            }
        };
        let events = requests + hops * attempts + (attempts - requests).max(0.0);
        let retries = (attempts - requests).max(0.0);
        // The retries come at least as densely as over the whole run, and during an outage as
        // densely as they come in it.
        let mut retries_per_ns = retries / duration;
        if let (Some(w), Clients::Open { .. }) = (self.dependency.outage, self.clients) {
            let down = ns(w.lasts).min(duration).max(1.0);
            let per_ns = n * rate / 1e9;
            let met = plan.outage_attempts(rtt, down) * per_ns;
            retries_per_ns = retries_per_ns.max((met - down * per_ns).max(0.0) / down);
        }
        let window = peak(retries_per_ns * ns(self.window)).min(attempts);
        let bytes = bytes
            + n * (size_of::<Source>() as f64 + client_budget_bytes(strategy))
            + grown(window) * Metrics::STORED_RETRY_BYTES as f64
            + Metrics::fixed_bytes() as f64;
        Estimate::of(events, bytes)
    }

    /// Runs `strategy`, every generator derived from `seed`, with no limit but the model's own.
    ///
    /// # Errors
    ///
    /// The parts' or the policy's [`SimError`].
    pub fn run(&self, strategy: &Strategy, seed: u64) -> Result<ResultRow, SimError> {
        self.run_within(strategy, seed, u64::MAX)
    }

    /// Runs `strategy`, every generator derived from `seed`, and stops it with
    /// [`SimError::EventLimit`] once it has processed more than `max_events` events.
    ///
    /// # Errors
    ///
    /// The parts' or the policy's [`SimError`], [`SimError::TooLarge`] past
    /// [`Composed::MAX_EVENTS`], or [`SimError::EventLimit`]. A strategy that hedges is
    /// refused ([`SimError::NotApplicable`]): this model's attempts are sequential.
    pub fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        if strategy.hedging.is_some() {
            return Err(SimError::NotApplicable {
                param: "hedge",
                workload: "composed",
            });
        }
        self.validate()?;
        let mut run = Loop::new(self, strategy, seed);
        run.go(max_events)?;
        Ok(run.row())
    }
}

/// A lower bound on the mean round trip of `network`, in nanoseconds.
fn mean_floor(network: &Network) -> f64 {
    let one = |delay: &Delay| match *delay {
        Delay::Constant { nanos } => nanos as f64,
        // E|X| >= |E X| and, for a normal, E|X| >= E|X - mean| = sd * sqrt(2 / pi).
        Delay::AbsNormal { mean, sd } => {
            (mean as f64).max(sd as f64 * (2.0 / std::f64::consts::PI).sqrt())
        }
        Delay::Exponential { mean } => mean as f64,
    };
    match network {
        Network::RoundTrip(d) => one(d),
        Network::OneWay(d) => 2.0 * one(d),
    }
}

/// One run's state.
struct Loop<'a> {
    model: &'a Composed,
    strategy: &'a Strategy,
    settings: Settings,
    sources: Vec<Source>,
    requests: Slots<Request>,
    queue: EventQueue<Event>,
    metrics: Metrics,
    outage: OutageCounts,
    /// The outage as `[down, up)` in nanoseconds, and its `Retry-After`.
    down: Option<(Nanos, Nanos, Option<Duration>)>,
    end: Nanos,
    mean_gap: f64,
}

impl<'a> Loop<'a> {
    fn new(model: &'a Composed, strategy: &'a Strategy, seed: u64) -> Self {
        let mut world = SeededRng::new(seed);
        let n = model.clients.count() as usize;
        let end = nanos(model.duration);
        let mean_gap = SECOND as f64 / model.clients.rate();
        // With no budget, one "no budget" for all: it holds no state.
        let unlimited = strategy.shared_unlimited();
        let budget_of = |rng: SeededRng, first: Option<&Source>| -> Rc<dyn Budget> {
            match (&unlimited, first, model.budget_scope) {
                (Some(none), _, _) => none.clone(),
                (None, Some(first), BudgetScope::Shared) => first.budget.clone(),
                (None, _, _) => strategy.client_budget(rng),
            }
        };
        let mut sources: Vec<Source> = Vec::with_capacity(n);
        match model.clients {
            Clients::Open { sources: 1, .. } => {
                let gaps = world.fork();
                let server = world.fork();
                let budget = budget_of(world.fork(), None);
                sources.push(Source {
                    gaps,
                    server,
                    policies: world,
                    budget,
                    last_start: 0,
                });
            }
            Clients::Open { .. } => {
                for _ in 0..n {
                    let gaps = world.fork();
                    let server = world.fork();
                    let policies = world.fork();
                    // Forked whether or not there is a budget, so that the streams stay the same.
                    let budget = budget_of(world.fork(), sources.first());
                    sources.push(Source {
                        gaps,
                        server,
                        policies,
                        budget,
                        last_start: 0,
                    });
                }
            }
            Clients::Serial { .. } => {
                for _ in 0..n {
                    let server = world.fork();
                    let policies = world.fork();
                    let budget = budget_of(world.fork(), sources.first());
                    let gaps = world.fork();
                    sources.push(Source {
                        gaps,
                        server,
                        policies,
                        budget,
                        last_start: 0,
                    });
                }
            }
        }
        let settings = match model.deadline {
            Some(timeout) => Settings::new().with_timeout(timeout),
            None => Settings::new(),
        }
        .with_dispersal(model.dispersal);
        let room = match model.clients {
            Clients::Open { .. } => room_for(model.in_flight(&model.plan(strategy))).max(n),
            Clients::Serial { .. } => n,
        };
        let mut run = Self {
            model,
            strategy,
            settings,
            sources,
            requests: Slots::with_capacity(room),
            queue: EventQueue::new(),
            metrics: Metrics::new(nanos(model.window)),
            outage: OutageCounts::default(),
            down: model.dependency.outage.map(|w| {
                (
                    nanos(w.at),
                    nanos(w.at.saturating_add(w.lasts)),
                    w.retry_after,
                )
            }),
            end,
            mean_gap,
        };
        for c in 0..n {
            let first = match model.clients {
                Clients::Open { .. } => {
                    let gap = exponential(&mut run.sources[c].gaps, mean_gap) as Nanos;
                    (gap < end).then_some(gap)
                }
                Clients::Serial { .. } => run.next_start(c as u32, 0),
            };
            if let Some(at) = first {
                run.queue.push(at, Event::Arrival(c as u32));
            }
        }
        run
    }

    /// When serial client `c`, whose request ended at `now`, starts its next one: a gap of
    /// `Exp(1 / rate)` after its last start, or at once if that has passed; `None` once no
    /// request starts any more.
    fn next_start(&mut self, c: u32, now: Nanos) -> Option<Nanos> {
        let source = &mut self.sources[c as usize];
        let gap = exponential(&mut source.gaps, self.mean_gap) as Nanos;
        let at = source.last_start.saturating_add(gap).max(now);
        source.last_start = at;
        (at < self.end).then_some(at)
    }

    /// The request in `slot` is over at `now`: frees it, and for a serial client schedules its next.
    fn finish(&mut self, slot: u32, now: Nanos) {
        let Some(request) = self.requests.get(slot) else {
            return;
        };
        let c = request.source;
        self.requests.remove(slot);
        if matches!(self.model.clients, Clients::Serial { .. })
            && let Some(at) = self.next_start(c, now)
        {
            self.queue.push(at, Event::Arrival(c));
        }
    }

    fn go(&mut self, max_events: u64) -> Result<(), SimError> {
        while let Some((now, event)) = self.queue.pop() {
            self.metrics.events += 1;
            if self.metrics.events > Composed::MAX_EVENTS {
                return Err(SimError::TooLarge {
                    what: "events",
                    limit: Composed::MAX_EVENTS.to_string(),
                });
            }
            check_events(self.metrics.events, max_events)?;
            match event {
                Event::Arrival(c) => self.arrival(c, now)?,
                Event::Send(slot) => {
                    if self.requests.get(slot).is_some() {
                        self.send(slot, now);
                    }
                }
                Event::Arrive(slot) => self.arrive(slot, now),
                Event::Answer(slot, outcome) => self.answer(slot, now, outcome),
            }
        }
        Ok(())
    }

    /// Source `c`'s request starts at `now`; an open source's next arrival is drawn first.
    fn arrival(&mut self, c: u32, now: Nanos) -> Result<(), SimError> {
        let source = &mut self.sources[c as usize];
        if matches!(self.model.clients, Clients::Open { .. }) {
            let next = now.saturating_add(exponential(&mut source.gaps, self.mean_gap) as Nanos);
            if next < self.end {
                self.queue.push(next, Event::Arrival(c));
            }
        }
        self.metrics.first_try();
        let call = Call::start(
            self.strategy,
            source.policies.fork(),
            source.budget.clone(),
            self.settings,
            now,
        )?;
        let slot = self.requests.insert(Request {
            call,
            source: c,
            met: false,
        });
        self.send(slot, now);
        Ok(())
    }

    /// The request in `slot` sends an attempt at `now`, if the engine lets it.
    fn send(&mut self, slot: u32, now: Nanos) {
        let Some(request) = self.requests.get(slot) else {
            return;
        };
        if request.call.begin(now, &mut self.metrics).is_none() {
            self.finish(slot, now);
            return;
        }
        let c = request.source as usize;
        match self.model.network {
            Network::RoundTrip(rtt) => {
                let back = now.saturating_add(rtt.sample(&mut self.sources[c].server));
                let outcome = self.reach(slot, c, now);
                self.queue.push(back, Event::Answer(slot, outcome));
            }
            Network::OneWay(delay) => {
                let at = now.saturating_add(delay.sample(&mut self.sources[c].server));
                self.queue.push(at, Event::Arrive(slot));
            }
        }
    }

    /// The attempt of the request in `slot` reaches the dependency at `now` (one-way network).
    fn arrive(&mut self, slot: u32, now: Nanos) {
        let Some(request) = self.requests.get(slot) else {
            // A request is only freed when it is over, so this does not happen; counted as
            // the recovery load would count it all the same.
            self.count_recovery(now);
            return;
        };
        let c = request.source as usize;
        let outcome = self.reach(slot, c, now);
        let Network::OneWay(delay) = self.model.network else {
            return;
        };
        let back = now.saturating_add(delay.sample(&mut self.sources[c].server));
        self.queue.push(back, Event::Answer(slot, outcome));
    }

    fn count_recovery(&mut self, now: Nanos) {
        if let Some((_, up, _)) = self.down
            && (up..up.saturating_add(SECOND)).contains(&now)
        {
            self.outage.recovery_load += 1;
        }
    }

    /// What the dependency answers to the attempt of the request in `slot`, of source `c`,
    /// reaching it at `now`; marks the request if its first attempt met the outage.
    fn reach(&mut self, slot: u32, c: usize, now: Nanos) -> Outcome {
        self.count_recovery(now);
        if let Some((down, up, _)) = self.down
            && (down..up).contains(&now)
        {
            if let Some(request) = self.requests.get(slot)
                && !request.met
                && request.call.attempts() == 1
            {
                request.met = true;
                self.outage.met += 1;
            }
            return Outcome::Down;
        }
        let x = self.model.dependency.failure_rate;
        let failed = if x <= 0.0 {
            false
        } else if x >= 1.0 {
            true
        } else {
            self.sources[c].server.next_f64() < x
        };
        if failed { Outcome::Failed } else { Outcome::Ok }
    }

    /// The answer to the request in `slot` comes back at `now`.
    fn answer(&mut self, slot: u32, now: Nanos, outcome: Outcome) {
        let result = match outcome {
            Outcome::Ok => Ok(()),
            Outcome::Failed => Err(Failure::Retryable),
            Outcome::Down => Err(self
                .down
                .and_then(|(_, _, wait)| wait)
                .map_or(Failure::Retryable, Failure::RetryAfter)),
        };
        let before = self.metrics.successes;
        let Some(request) = self.requests.get(slot) else {
            return;
        };
        if let Err(failure) = &result
            && request.call.wants_spread(failure)
        {
            let rng = self.sources[request.source as usize].policies.fork();
            request.call.give_spread(rng);
        }
        match request.call.end(now, result, &mut self.metrics) {
            Next::RetryAt(at) => self.queue.push(at, Event::Send(slot)),
            Next::Done => {
                if request.met && self.metrics.successes > before {
                    self.outage.met_succeeded += 1;
                }
                self.finish(slot, now);
            }
        }
    }

    fn row(mut self) -> ResultRow {
        let mut row = self.metrics.row(
            self.strategy.policy.name(),
            self.strategy.budget.map(|b| b.to_string()),
        );
        if self.down.is_some() {
            let o = &self.outage;
            row.success_rate = if o.met == 0 {
                0.0
            } else {
                o.met_succeeded as f64 / o.met as f64
            };
            row.met_outage = Some(o.met);
            row.recovery_load = Some(o.recovery_load);
        }
        row
    }
}
