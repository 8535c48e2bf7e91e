//! # The composed model: clients, a network and a dependency as parts of one event loop
//!
//! A [`Composed`] run puts together three parts, each chosen on its own:
//!
//! - **clients** ([`Clients`]): *open* sources, each a Poisson process that sends whether or
//!   not earlier requests are over, at a steady rate or one that spikes or ramps ([`Load`],
//!   drawn exactly by thinning); *serial* clients, each with one request in flight that paces
//!   its next start after it ends; or a *fixed* population that calls at once;
//! - **network** ([`Network`]): one round trip drawn whole per attempt (the dependency answers
//!   as the attempt leaves), or a one-way delay drawn each way (the dependency answers when the
//!   attempt reaches it);
//! - **dependency** ([`Dependency`]): an independent failure probability per attempt, an
//!   outage window ([`Window`]) during which every attempt fails, with a `Retry-After` if the
//!   window says so, a limiter in front ([`Limiter`]: a token bucket answering 429, or a
//!   concurrency limit answering 503, each with its wait), a service time that grows with
//!   the work in progress ([`Service`], the server of Brooker's collapse simulation, which
//!   works on for attempts nobody waits for any more), a second host behind the same name
//!   that is down ([`TwoHosts`]), with a budget for both hosts or one per host, or a pool of
//!   replicas that pause now and then ([`Replicas`]), each attempt to one picked at random.
//!
//! A request may fan out ([`Composed::fanout`]) to sub-requests, each a run of its own, and
//! succeed when all of them have, as slow as the slowest.
//! The retry stack is the [`Strategy`] (the engine's run per request, with the deadline
//! ([`Composed::deadline`]) and each attempt's timeout ([`Composed::attempt_timeout`]), which
//! cut an attempt whose time runs out as the executors' race does, the dispersal above a
//! server's wait, a shared gate if asked for, a budget held per source, per request or shared
//! by all ([`BudgetScope`]), and hedging, whose attempts go out beside those in flight, at a
//! fixed delay or at a quantile of the fleet's attempt latencies) and, with
//! [`Composed::run_layered`], retry layers inside it ([`Layer`]), each attempt of a layer a run
//! of the one below. [`Composed::timeline`] adds the run's per-second series ([`Timeline`]).
//! Nine canonical workloads are compositions of these parts:
//! [`OpenLoop`](crate::workload::open_loop::OpenLoop) (open sources, a round trip, a failure
//! probability), [`Serial`](crate::workload::serial::Serial) (the same with serial clients),
//! [`Outage`](crate::workload::outage::Outage) (one open source, a one-way network, an outage
//! window), [`Throttle`](crate::workload::throttle::Throttle) (a fixed fleet, or one open
//! source, of one-shot clients behind a limiter), [`Herd`](crate::workload::herd::Herd) (a
//! fixed fleet, a constant one-way network, a dependency that always fails), and
//! [`Spike`](crate::workload::spike::Spike) and [`Ramp`](crate::workload::spike::Ramp) (one
//! open source whose rate spikes or ramps, a one-way network, a service, an attempt timeout
//! and a drain), [`Partition`](crate::workload::partition::Partition) (one open source, a
//! one-way network, two hosts) and [`Tail`](crate::workload::tail::Tail) (one open source, no
//! network delay, a pool of replicas, a deadline and an attempt timeout); each builds its
//! `Composed` and runs it, so their figures are this loop's. Clients that cannot affect one
//! another (the herd's) are run one at a time to their end, without the event queue, from the
//! same generators in the same order ([`Composed::independent`]), so that ten million of them
//! fit in memory.
//!
//! ## Generators
//!
//! Every generator derives from the world seed, in an order fixed by the parts, so a run is
//! reproducible to the byte. When each request holds its own budget (fixed clients, or
//! [`BudgetScope::PerRequest`]), one stream forked first draws the arrivals, the network and
//! the failures, and each request forks from the world in turn its budget's (if the strategy
//! has one), its policy's and, if the dependency can tell a wait
//! ([`Dependency::tells_waits`]), its spread's generators. Otherwise one open source draws from
//! the world in turn: its arrivals, its server (the network and the failures), its budget, and
//! then each request's policy from the world itself; several open sources each fork four of
//! their own (arrivals, server, policies, budget), and serial clients four (server, policies,
//! budget, pacing); a request that meets a server's wait and needs a draw for its spread forks
//! that generator from its source's policies then. The inner layers of a stack draw from a
//! stream of their own, derived from the world seed apart from the rest, so a stack whose
//! inner layers never retry draws exactly what its outer layer alone does. A failure is drawn
//! only when it is uncertain (a failure probability strictly between 0 and 1), after the
//! network's draw, and only for an attempt whose client still waits. With a load that varies,
//! each candidate arrival draws whether it is kept before the next one's gap. A hedged
//! request forks its policy's generator (and, if the dependency can tell a wait, its
//! spread's) when it starts. Behind a service, the way back is drawn when the work is done,
//! and only for an attempt still awaited. With two hosts, each request forks a generator of
//! its own from its source's server generator (its arrivals' when each request holds its own
//! budget) as it arrives, and draws from it its host, its policy's generator (forked) and
//! then its answers: the network's delays and its failures ([`TwoHosts`]). With a pool of
//! replicas and one open source, the source forks in turn its arrivals, its server (which
//! also picks the replicas), the pool's service times, its policies and its budget, and then
//! each replica forks its pauses' generator from the world, in the replicas' order; with
//! other clients the pool's streams (service times first, then each replica's) derive from
//! the world seed apart from the rest.
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

use std::rc::Rc;
use std::time::Duration;

use std::sync::Arc;

use stagger_core::budget::{AnyBudget, Budget, Partitioned};
use stagger_core::engine::{Dispersal, HedgeDelay, Settings, StopReason, Stopped};
use stagger_core::gate::{Gate, Gated};
use stagger_core::sketch::LatencySketch;
use stagger_core::{Failure, Rng, SeededRng};

use crate::dist::{Delay, exponential};
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, block, count, grown, ns, peak, room_for};
use crate::limits;
use crate::metrics::{HostFigures, Metrics, ResultRow};
use crate::pool::{Replica, Waiting};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{PolicyTemplate, SimBudget, Strategy, client_budget_bytes};
pub use crate::timeline::{Load, Timeline};
use crate::timeline::{Profile, Series};
use crate::workload::call::{Call, HedgedCall, Next, Settled, Step};
use crate::workload::partition::HOSTS;
use crate::workload::slots::Slots;
use crate::workload::throttle::{RateLimiter, RetryAfterForm};
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
    /// `count` clients that each send one request at time zero (a fleet that meets the
    /// dependency together), each with a budget of its own.
    Fixed {
        /// The clients (1 to [`Composed::MAX_FIXED`]).
        count: u64,
    },
}

impl Clients {
    /// One open source of `rate` requests a second, as most canonical workloads have.
    #[must_use]
    pub const fn one_source(rate: f64) -> Self {
        Self::Open { sources: 1, rate }
    }

    /// The sources or clients.
    #[must_use]
    pub const fn count(self) -> u64 {
        match self {
            Self::Open { sources, .. } => sources,
            Self::Serial { clients, .. } => clients,
            Self::Fixed { count } => count,
        }
    }

    /// Each source's or client's rate, in requests a second (`None` for a fixed population).
    #[must_use]
    pub const fn rate(self) -> Option<f64> {
        match self {
            Self::Open { rate, .. } | Self::Serial { rate, .. } => Some(rate),
            Self::Fixed { .. } => None,
        }
    }

    /// The requests the clients start: open sources' expected arrivals over `duration`, or the
    /// fixed population (serial clients start as many as their requests' lengths allow).
    fn requests(self, duration: Duration) -> f64 {
        match self {
            Self::Open { sources, rate } => sources as f64 * rate * duration.as_secs_f64(),
            Self::Serial { clients, rate } => clients as f64 * rate * duration.as_secs_f64(),
            Self::Fixed { count } => count as f64,
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

    /// The least time a retry takes to reach the dependency after it is sent: a constant
    /// one-way delay, or nothing.
    const fn least_one_way(&self) -> Nanos {
        match self {
            Self::OneWay(Delay::Constant { nanos }) => *nanos,
            _ => 0,
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

/// A limiter in front of the dependency, which refuses what it cannot take with a wait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limiter {
    /// What it limits.
    pub kind: LimiterKind,
    /// The fixed wait a refusal tells.
    pub retry_after: Duration,
    /// How the wait is stated: the fixed one or the exact time until a slot frees, rounded to
    /// whole seconds or not.
    pub form: RetryAfterForm,
}

/// What a [`Limiter`] limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimiterKind {
    /// A token bucket of `burst` tokens refilled at `rate` a second ([`RateLimiter`]); a
    /// refusal is a 429 ([`Failure::Throttled`]): the attempt had no effect.
    Rate {
        /// Tokens a second, in (0, 1e9].
        rate: f64,
        /// Tokens, 1 to 1e6.
        burst: u32,
    },
    /// At most `limit` attempts in service at once, each for `service`; a refusal is a 503
    /// with the wait ([`Failure::RetryAfter`]).
    Concurrency {
        /// The most attempts in service, at least 1.
        limit: u32,
        /// How long each is served.
        service: Duration,
    },
}

/// What the dependency does with an attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dependency {
    /// The probability that an attempt fails, independently of the others, in [0, 1].
    pub failure_rate: f64,
    /// An outage, if any: every attempt that reaches the dependency during it fails.
    pub outage: Option<Window>,
    /// A limiter in front of it, if any: an attempt it admits then meets the outage or the
    /// failure probability; one it refuses is answered with its wait at once.
    pub limiter: Option<Limiter>,
    /// A service time that grows with the work in progress, if any (the spike's server; it
    /// needs the one-way network): an attempt it admits, and is up for, answers once served.
    pub service: Option<Service>,
    /// Two hosts behind the dependency's one name, if set ([`TwoHosts`]): a share of the
    /// requests go to a host that is down, the rest to the dependency the other fields
    /// describe.
    pub two_hosts: Option<TwoHosts>,
    /// A pool of replicas that serves the attempts, if set ([`Replicas`], the `tail`
    /// workload's): an attempt the limiter admits, and the outage lets through, is served by a
    /// replica and answers once served.
    pub replicas: Option<Replicas>,
}

impl Dependency {
    /// A dependency that always answers at once and well: no failures, no outage, no limiter,
    /// no service, one host.
    pub const HEALTHY: Self = Self {
        failure_rate: 0.0,
        outage: None,
        limiter: None,
        service: None,
        two_hosts: None,
        replicas: None,
    };
}

/// A pool of replicas, the `tail` workload's: `count` replicas, each serving up to
/// `concurrency` attempts at once and queueing the rest first in, first out. Each attempt
/// goes to a replica picked at random (there is no load balancer that knows which replica is
/// paused); a hedge goes to one the request has not tried, while one is left (gRFC A6's
/// "distinct backends, if possible"). An attempt's service time is drawn from `service` when
/// it reaches the pool. Each replica runs for `Exp(mean pause_every)`, then pauses for
/// `pause`, and so on, from a generator of its own: the pauses do not depend on the traffic.
/// A paused replica serves nothing: the work in service stops and resumes when the pause ends,
/// and the queue waits.
///
/// An attempt whose client no longer waits for it (it timed out, or its request ended) is
/// dropped when its turn in the queue comes, without service, as a server does that checks
/// whether its client is still there before starting work; one already in service runs to
/// its end and holds its slot (the server does not learn of the cancellation mid-work).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Replicas {
    /// Replicas in the pool, 1 to 10 000.
    pub count: u32,
    /// Attempts each replica serves at once, 1 to 10 000; more wait in its queue.
    pub concurrency: u32,
    /// An attempt's service time, its mean between 1 µs and 1 s.
    pub service: Delay,
    /// How long a replica pauses, at most a day; zero for a pool that never pauses.
    pub pause: Duration,
    /// The mean time a replica runs between pauses (exponential), from 1 ms to a day.
    pub pause_every: Duration,
}

impl Replicas {
    /// The most replicas in a pool, [`limits::MAX_REPLICAS`].
    pub const MAX_COUNT: u32 = limits::MAX_REPLICAS;
    /// The most attempts a replica serves at once, [`limits::MAX_REPLICA_CONCURRENCY`].
    pub const MAX_CONCURRENCY: u32 = limits::MAX_REPLICA_CONCURRENCY;

    /// Checks the pool's parameters; `names` are those of its count, concurrency, service,
    /// pause and `pause_every`, as the caller's user knows them.
    pub(crate) fn validate_as(&self, names: [&'static str; 5]) -> Result<(), SimError> {
        const DAY: Duration = limits::MAX_DURATION;
        let [count, concurrency, service, pause, pause_every] = names;
        let refuse = |param, allowed| Err(SimError::Invalid { param, allowed });
        if self.count == 0 || self.count > Self::MAX_COUNT {
            return refuse(count, limits::POOL_SIZE_ALLOWED);
        }
        if self.concurrency == 0 || self.concurrency > Self::MAX_CONCURRENCY {
            return refuse(concurrency, limits::POOL_SIZE_ALLOWED);
        }
        if !(ns(limits::MIN_REPLICA_SERVICE)..=ns(limits::MAX_REPLICA_SERVICE))
            .contains(&self.service.mean())
        {
            return refuse(service, "a distribution whose mean is between 1 µs and 1 s");
        }
        if self.pause > DAY {
            return refuse(pause, limits::AT_MOST_A_DAY);
        }
        if self.pause_every < limits::MIN_PAUSE_EVERY || self.pause_every > DAY {
            return refuse(pause_every, "at least 1ms and at most a day");
        }
        Ok(())
    }

    /// Attempts the pool serves a second when every slot is busy and no replica pauses.
    #[must_use]
    pub fn capacity_per_second(&self) -> f64 {
        f64::from(self.count) * f64::from(self.concurrency) * 1e9 / self.service.mean()
    }

    /// The share of the time a replica is paused.
    fn pause_share(&self) -> f64 {
        if self.pause.is_zero() {
            0.0
        } else {
            ns(self.pause) / (ns(self.pause_every) + ns(self.pause))
        }
    }
}

/// Two hosts behind one name, the `partition` workload's: a request goes to host A with
/// probability `share_down`, to host B otherwise, and every attempt of the request goes to
/// its host. Host A is down for the whole run: every attempt to it fails with a retryable
/// error once the network has carried it there and back, and it meets neither the limiter,
/// the outage nor the service, which are host B's. Host B is the dependency the other parts
/// describe.
///
/// Each request draws its host, then its policy's generator (forked) and its server's answers
/// (the network's delays and its failures) from a generator of its own, forked from its
/// source's server generator when it arrives: whatever the budget grants, every strategy
/// meets the same requests and the same answers, and they differ only in the retries they
/// send. The row reports each host's figures ([`ResultRow::host_a`], [`ResultRow::host_b`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoHosts {
    /// The share of the requests that go to host A, the one that is down, in [0, 1].
    pub share_down: f64,
    /// Whether each budget is a set of one per host (a
    /// [`Partitioned`], as a layer that serves many
    /// destinations keeps), each host's starting full, rather than one for both hosts. A
    /// budget per request is its host's alone either way.
    pub budget_per_host: bool,
}

/// A dependency with no admission control whose work slows down as it piles up, the server of
/// Brooker's "simple collapse simulation" (2023): every attempt that reaches it is worked on
/// at once, for `base + per_in_flight * n`, where `n` counts the attempts in progress once it
/// has arrived, itself included. Work whose client has stopped waiting (its attempt timed
/// out) runs on and counts in `n` until it is done: the server never learns that nobody
/// waits. The answer travels back once the work is done.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Service {
    /// The service time with nothing else in progress.
    pub base: Duration,
    /// The service time added per attempt in progress.
    pub per_in_flight: Duration,
}

impl Dependency {
    /// Whether an answer can tell a client to wait (a limiter's refusal, or the outage's
    /// `Retry-After`): only then may a request need a generator for the spread above it.
    #[must_use]
    pub fn tells_waits(&self) -> bool {
        self.limiter.is_some() || self.outage.is_some_and(|w| w.retry_after.is_some())
    }
}

/// Who holds a budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BudgetScope {
    /// Each source or client holds its own, seeing only its own calls.
    #[default]
    PerSource,
    /// One budget for every source and client.
    Shared,
    /// Each request holds its own: every request is a client of its own (a fleet of one-shot
    /// clients), and open sources merge into one Poisson process of their summed rate. Fixed
    /// clients hold theirs this way unless the scope is [`BudgetScope::Shared`]; serial
    /// clients, one process each, refuse it.
    PerRequest,
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
    /// Whether the clients share one [`Gate`] for the dependency, in front of each request's
    /// budget, as the executors put one.
    pub gate: bool,
    /// The window of the peak retry share.
    pub window: Duration,
    /// How the open clients' rate changes over the run (steady by default).
    pub load: Load,
    /// Each attempt's own timeout, counted from when it is sent, besides the deadline; `None`
    /// for none. An attempt whose time runs out (this timeout or the deadline, as the engine's
    /// [`Attempt::remaining`](stagger_core::engine::Attempt::remaining) says) fails with
    /// [`Failure::Timeout`], and its answer, if it comes later, is ignored.
    pub attempt_timeout: Option<Duration>,
    /// How long after the end of the run the requests still in flight are followed; those
    /// still unfinished then are counted under the give-up reason `"unfinished"`. `None`:
    /// every request is followed to its end.
    pub drain: Option<Duration>,
    /// The sub-requests each request fans out to, 1 to [`Composed::MAX_FANOUT`]: each is a
    /// run of the strategy of its own, and the request succeeds when all of them have, as
    /// slow as the slowest. The success rate, the latencies and the timeline's arrivals and
    /// goodput are then the requests'; the load, the first tries, the attempts, the successes
    /// and the give-ups are the sub-requests'. With a fan-out, open sources' rates are of
    /// requests. Serial clients and an outage refuse a fan-out. A sub-request runs to its own
    /// end even after a sibling has failed (and so its request), as independent calls do.
    pub fanout: u32,
}

/// What an attempt's answer says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    /// A failure drawn from the failure probability.
    Failed,
    /// The dependency was down.
    Down,
    /// The rate limiter refused it with this wait, in nanoseconds (a 429).
    Throttled(Nanos),
    /// The concurrency limiter refused it with this wait (a 503).
    Busy(Nanos),
}

/// An attempt's id, unique among the attempts whose events may still be queued: a counter
/// that wraps after 2^32 attempts, far more than a run's [`Composed::MAX_EVENTS`] allow.
type Id = u32;

const _: () = assert!(Composed::MAX_EVENTS < (1 << 32));

#[derive(Clone, Copy)]
enum Event {
    /// Source `c`'s next request starts (for open sources with a load that varies, a
    /// candidate arrival of the thinned process).
    Arrival(u32),
    /// The request in slot `r` sends its next attempt.
    Send(u32),
    /// Attempt `id` of the request in slot `r` reaches the dependency (one-way network).
    Arrive(u32, Id),
    /// The answer to attempt `id` of the request in slot `r` comes back: its kind and wait
    /// ([`Outcome::split`], which keeps an event to 24 bytes).
    Answer(u32, Id, Kind, Nanos),
    /// Attempt `id` of the request in slot `r` leaves a concurrency limiter or the service,
    /// served, with the dependency's answer.
    Served(u32, Id, Kind, Nanos),
    /// Attempt `id`'s time runs out.
    Timeout(u32, Id),
    /// Replica `replica` of the pool finishes attempt `id` of the request in slot `r`, which
    /// then answers `kind`.
    Done(u32, u32, Id, Kind),
    /// The hedged request in slot `r` asked to be woken now.
    Wake(u32),
}

/// An [`Outcome`] without its wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ok,
    Failed,
    Down,
    Throttled,
    Busy,
}

impl Outcome {
    /// Its kind and its wait (0 for none), as an event carries them.
    const fn split(self) -> (Kind, Nanos) {
        match self {
            Self::Ok => (Kind::Ok, 0),
            Self::Failed => (Kind::Failed, 0),
            Self::Down => (Kind::Down, 0),
            Self::Throttled(wait) => (Kind::Throttled, wait),
            Self::Busy(wait) => (Kind::Busy, wait),
        }
    }

    /// The outcome an event carries as `kind` and `wait`.
    const fn join(kind: Kind, wait: Nanos) -> Self {
        match kind {
            Kind::Ok => Self::Ok,
            Kind::Failed => Self::Failed,
            Kind::Down => Self::Down,
            Kind::Throttled => Self::Throttled(wait),
            Kind::Busy => Self::Busy(wait),
        }
    }
}

/// One source or client: its generators and its budget.
struct Source {
    /// Open: the gaps between arrivals. Serial: the gaps between starts. A budget per request:
    /// the network's delays and the failures too.
    gaps: SeededRng,
    /// The network's delays and the failures; `None` when they come from `gaps`.
    server: Option<SeededRng>,
    /// One generator per request, forked in turn.
    policies: SeededRng,
    budget: SimBudget,
    /// With two hosts and a budget per host: the source's budgets, one per host.
    per_host: Option<Rc<Partitioned<AnyBudget>>>,
    /// Serial: when its latest request started (or was due to).
    last_start: Nanos,
}

/// A source's budget, and with two hosts and a budget per host its budgets, one per host.
type Budgets = (SimBudget, Option<Rc<Partitioned<AnyBudget>>>);

impl Source {
    fn new(
        gaps: SeededRng,
        server: Option<SeededRng>,
        policies: SeededRng,
        (budget, per_host): Budgets,
    ) -> Self {
        Self {
            gaps,
            server,
            policies,
            budget,
            per_host,
            last_start: 0,
        }
    }
}

/// A request in flight: its engine run, its source, whether its first attempt met the
/// outage, and the earliest time a limiter's wait lets its next attempt reach the dependency.
struct Request {
    /// The engine's run: retried, or hedged.
    run: Driven,
    source: u32,
    met: bool,
    not_before: Nanos,
    /// When the client heard the latest refusal: an attempt sent before then (a hedge already
    /// in flight) was not told to wait, so it is never early.
    told_at: Nanos,
    /// Attempts sent to the dependency.
    sent: u32,
    /// Whether an attempt of the request has reached the dependency behind the limiter.
    reached: bool,
    /// With two hosts: whether the request goes to host A, the one that is down.
    to_down: bool,
    /// With two hosts: the generator of the request's answers ([`TwoHosts`]).
    answers: SeededRng,
}

/// How a request's attempts are driven. A hedged run is boxed: most runs retry, and a request
/// that retries stays the size it was.
#[allow(clippy::large_enum_variant)]
enum Driven {
    /// One attempt at a time, through the layers of the stack.
    Retried {
        /// The outermost layer's run.
        call: Call,
        /// The runs of the inner layers in progress, outermost first: each makes its attempts
        /// inside one attempt of the layer above.
        inner: Vec<Call>,
        /// The attempt awaited, if one is.
        pending: Option<Id>,
        /// When it was sent.
        sent_at: Nanos,
        /// A round trip's time back from the dependency, held while a concurrency limiter
        /// serves the attempt.
        trip: Nanos,
    },
    /// Attempts beside those in flight.
    Hedged(Box<HedgedRequest>),
}

/// A hedged request's run, the attempts it awaits, and when it asked to be woken.
struct HedgedRequest {
    call: HedgedCall,
    flying: Vec<Flying>,
    wake: Option<Nanos>,
    /// With a pool, the replicas its attempts went to, sorted.
    used: Vec<u32>,
}

/// An attempt of a hedged request in flight.
struct Flying {
    id: Id,
    number: u32,
    sent: Nanos,
    /// As [`Driven::Retried`]'s `trip`.
    trip: Nanos,
}

impl Request {
    /// The innermost run in progress of a retried request: the one whose attempt comes next.
    fn top(&mut self) -> Option<&mut Call> {
        match &mut self.run {
            Driven::Retried { call, inner, .. } => Some(inner.last_mut().unwrap_or(call)),
            Driven::Hedged(_) => None,
        }
    }

    /// Whether the request awaits attempt `id`.
    fn awaits(&self, id: Id) -> bool {
        match &self.run {
            Driven::Retried { pending, .. } => *pending == Some(id),
            Driven::Hedged(h) => h.flying.iter().any(|f| f.id == id),
        }
    }

    /// When attempt `id` was sent (0 if the request no longer awaits it).
    fn sent_at(&self, id: Id) -> Nanos {
        match &self.run {
            Driven::Retried { sent_at, .. } => *sent_at,
            Driven::Hedged(h) => h.flying.iter().find(|f| f.id == id).map_or(0, |f| f.sent),
        }
    }

    /// Holds the time back of attempt `id` while a concurrency limiter serves it.
    fn set_trip(&mut self, id: Id, back: Nanos) {
        match &mut self.run {
            Driven::Retried { trip, .. } => *trip = back,
            Driven::Hedged(h) => {
                if let Some(f) = h.flying.iter_mut().find(|f| f.id == id) {
                    f.trip = back;
                }
            }
        }
    }

    /// The time back of attempt `id` held by [`Request::set_trip`].
    fn trip(&self, id: Id) -> Nanos {
        match &self.run {
            Driven::Retried { trip, .. } => *trip,
            Driven::Hedged(h) => h.flying.iter().find(|f| f.id == id).map_or(0, |f| f.trip),
        }
    }
}

/// A retry layer inside the outermost one: a layer of the stack between the client and the
/// dependency, whose run starts inside each attempt of the layer above. Under its settings'
/// default ([`Nested::SingleAttempt`](stagger_core::engine::Nested::SingleAttempt)) it makes
/// one attempt and leaves recovery to the layer above, as stagger's executors do; under
/// `Nested::Retry` it retries on its own, and the layers' attempts multiply. It holds no
/// budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layer {
    /// Its policy.
    pub policy: crate::strategy::SimPolicy,
    /// Its settings: the nesting rule, and a deadline of its own if any.
    pub settings: Settings,
}

/// How a run in a request's stack ended.
enum Ended {
    Succeeded { latency: Nanos },
    GaveUp(Stopped),
}

/// The failure an inner layer's end shows the layer above, as stagger's `RetryError` classifies
/// it: the last failure the inner run met (a 429's wait included), or, if it sent nothing, a
/// throttle when its budget refused the first attempt and a rejection otherwise. (Every
/// simulated call is idempotent, so nothing becomes permanent for that reason.)
fn failure_of(stopped: &Stopped) -> Failure {
    match stopped.summary.last_failure {
        Some(failure) => failure,
        None if stopped.reason == StopReason::BudgetRefusedFirstAttempt => Failure::Throttled(None),
        None => Failure::Rejected,
    }
}

impl Source {
    fn server(&mut self) -> &mut SeededRng {
        self.server.as_mut().unwrap_or(&mut self.gaps)
    }
}

/// What a limiter counted.
struct Limiting {
    rate: Option<RateLimiter>,
    /// A concurrency limiter's most attempts in service, its service time and how many are.
    concurrency: Option<(u32, Nanos, u32)>,
    limiter: Limiter,
    rejected: u64,
    early: u64,
}

/// The counts an outage window adds to the row.
#[derive(Default)]
struct OutageCounts {
    met: u64,
    met_succeeded: u64,
    recovery_load: u64,
}

impl Composed {
    /// `clients` calling through `network` for `duration` a dependency that always answers
    /// at once and well: no failures, no outage, no limiter, no deadline, a budget per source,
    /// the default dispersal, no gate, a 10 ms window for the peak retry share. Set the other
    /// parts with the struct's fields.
    #[must_use]
    pub fn new(clients: Clients, duration: Duration, network: Network) -> Self {
        Self {
            clients,
            duration,
            network,
            dependency: Dependency::HEALTHY,
            deadline: None,
            budget_scope: BudgetScope::PerSource,
            dispersal: Dispersal::default(),
            gate: false,
            window: Duration::from_millis(10),
            load: Load::Steady,
            attempt_timeout: None,
            drain: None,
            fanout: 1,
        }
    }

    /// The requests the clients start: open sources' expected arrivals over the run (with
    /// its load), or the fixed population (serial clients start as many as their requests'
    /// lengths allow).
    fn requests(&self) -> f64 {
        match self.clients {
            Clients::Open { sources, rate } => {
                sources as f64 * self.profile(rate).between(0.0, self.duration.as_secs_f64())
            }
            clients => clients.requests(self.duration),
        }
    }

    /// The rate over time of one source whose base rate is `rate`.
    fn profile(&self, rate: f64) -> Profile {
        self.load.profile(rate)
    }

    /// How long requests are followed: the end of the run and the drain after it.
    fn horizon(&self) -> Nanos {
        self.drain.map_or(Nanos::MAX, |d| {
            nanos(self.duration).saturating_add(nanos(d))
        })
    }

    /// With a service, how long an attempt may take: the time it has (its timeout or the
    /// deadline), or the whole run and its drain.
    fn slow_attempt(&self) -> Option<f64> {
        self.dependency.service?;
        let has = match (self.attempt_timeout, self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Some(has.map_or(ns(self.duration) + self.drain_ns(), ns).max(1.0))
    }

    /// The drain after the run, in nanoseconds (none: the run's length again, for estimates).
    fn drain_ns(&self) -> f64 {
        self.drain.map_or(ns(self.duration), ns)
    }

    /// Whether an attempt's time can run out: an attempt timeout or a deadline.
    const fn times_attempts(&self) -> bool {
        self.attempt_timeout.is_some() || self.deadline.is_some()
    }

    /// The most open sources or serial clients, [`limits::MAX_SOURCES`].
    pub const MAX_SOURCES: u64 = limits::MAX_SOURCES;
    /// The most fixed clients, [`limits::MAX_FIXED_CLIENTS`].
    pub const MAX_FIXED: u64 = limits::MAX_FIXED_CLIENTS;
    /// The most attempts a run of independent clients ([`Composed::independent`]) may make
    /// before it is stopped and refused, [`limits::MAX_INDEPENDENT_ATTEMPTS`]: a policy with no
    /// attempt limit never gives up against a dependency that always fails.
    pub const MAX_INDEPENDENT_ATTEMPTS: u64 = limits::MAX_INDEPENDENT_ATTEMPTS;
    /// The highest rate of one open source, in requests a second, [`limits::MAX_SOURCE_RATE`].
    pub const MAX_RATE: f64 = limits::MAX_SOURCE_RATE;
    /// The most requests open sources may offer (`sources x rate x duration`),
    /// [`limits::MAX_REQUESTS`].
    pub const MAX_REQUESTS: f64 = limits::MAX_REQUESTS;
    /// The most attempts serial clients may need if every request were retried at once
    /// (`clients x duration / mean round trip`), [`limits::MAX_SERIAL_ATTEMPTS`].
    pub const MAX_SERIAL_ATTEMPTS: f64 = limits::MAX_SERIAL_ATTEMPTS;
    /// The most events a run may process, [`limits::MAX_EVENTS`]; a run that needs more (a
    /// policy with no attempt limit against a dependency that always fails, say) stops with
    /// [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = limits::MAX_EVENTS;
    /// The most sub-requests a request fans out to, [`limits::MAX_FANOUT`].
    pub const MAX_FANOUT: u32 = limits::MAX_FANOUT;
    /// The most pauses a pool of replicas may draw in a run, [`limits::MAX_PAUSES`].
    pub const MAX_PAUSES: f64 = limits::MAX_PAUSES;

    /// Checks the parts.
    ///
    /// # Errors
    ///
    /// [`SimError::Invalid`] or [`SimError::TooLarge`] naming the parameter.
    pub fn validate(&self) -> Result<(), SimError> {
        let most = match self.clients {
            Clients::Fixed { .. } => Self::MAX_FIXED,
            _ => Self::MAX_SOURCES,
        };
        check_clients(self.clients.count(), most)?;
        if let Some(rate) = self.clients.rate() {
            let (most, allowed) = match self.clients {
                Clients::Serial { .. } => (limits::MAX_SERIAL_RATE, "in (0, 1e5] calls per second"),
                _ => (Self::MAX_RATE, limits::SOURCE_RATE_ALLOWED),
            };
            if !(rate.is_finite() && rate > 0.0 && rate <= most) {
                return Err(SimError::Invalid {
                    param: "rate",
                    allowed,
                });
            }
        }
        check_duration(self.duration)?;
        check_failure_rate(self.dependency.failure_rate)?;
        check_window(self.window)?;
        if let Some(hosts) = self.dependency.two_hosts
            && !(0.0..=1.0).contains(&hosts.share_down)
        {
            return Err(SimError::Invalid {
                param: "share_down",
                allowed: "a share in [0, 1]",
            });
        }
        if let Some(w) = self.dependency.outage {
            // The second after it, whose load is measured, must fit too.
            let end =
                w.at.saturating_add(w.lasts)
                    .saturating_add(Duration::from_secs(1));
            if w.lasts.is_zero() || end > self.duration {
                return Err(SimError::Invalid {
                    param: "outage",
                    allowed: "a window longer than 0 that ends at least 1 s before the end of \
                              the run's duration",
                });
            }
            if w.retry_after.is_some_and(|d| d > limits::MAX_DURATION) {
                return Err(SimError::Invalid {
                    param: "retry_after",
                    allowed: limits::AT_MOST_A_DAY,
                });
            }
        }
        if let Some(limiter) = self.dependency.limiter {
            validate_limiter(&limiter)?;
        }
        if self
            .deadline
            .is_some_and(|t| t.is_zero() || t > limits::MAX_DURATION)
        {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0 and at most a day",
            });
        }
        self.validate_over_time()?;
        let n = self.clients.count() as f64;
        match self.clients {
            Clients::Open { .. } => {
                if self.requests() > Self::MAX_REQUESTS {
                    return Err(SimError::TooLarge {
                        what: "sources x rate x duration",
                        limit: format!("{:e} requests", Self::MAX_REQUESTS),
                    });
                }
                // A slowing service collapses: its requests cost several times more.
                if self.dependency.service.is_some()
                    && n * self.profile(self.clients.rate().unwrap_or(0.0)).peak()
                        * self.duration.as_secs_f64()
                        > limits::MAX_PEAK_REQUESTS
                {
                    return Err(SimError::TooLarge {
                        what: "peak rate x duration",
                        limit: format!("{:e} requests", limits::MAX_PEAK_REQUESTS),
                    });
                }
            }
            Clients::Serial { .. } => {
                // An attempt lasts its round trip and, with a pool, its service there.
                let rtt = mean_floor(&self.network)
                    + self
                        .dependency
                        .replicas
                        .map_or(0.0, |r| delay_floor(&r.service));
                if rtt < 1.0 {
                    return Err(SimError::Invalid {
                        param: "rtt",
                        allowed: "a round trip (with a pool, and its service) with a mean of \
                                  at least 1 ns",
                    });
                }
                if n * self.duration.as_nanos() as f64 / rtt > Self::MAX_SERIAL_ATTEMPTS {
                    return Err(SimError::TooLarge {
                        what: "clients x duration / mean round trip",
                        limit: format!("{:e} attempts", Self::MAX_SERIAL_ATTEMPTS),
                    });
                }
            }
            Clients::Fixed { .. } => {}
        }
        if matches!(self.clients, Clients::Serial { .. })
            && self.budget_scope == BudgetScope::PerRequest
        {
            return Err(SimError::Invalid {
                param: "budget_scope",
                allowed: "per-source or shared for serial clients (each serial client is one \
                          process with one request at a time)",
            });
        }
        Ok(())
    }

    /// Checks the load, the service, the attempt timeout and the drain.
    fn validate_over_time(&self) -> Result<(), SimError> {
        const DAY: Duration = limits::MAX_DURATION;
        // Named as a scenario file names them.
        if let Some((param, factor)) = self.load.factor() {
            if !matches!(self.clients, Clients::Open { .. }) {
                return Err(SimError::Invalid {
                    param: "clients.spike or clients.ramp",
                    allowed: "a spike or a ramp of open clients only",
                });
            }
            let least = if matches!(self.load, Load::Ramp { .. }) {
                // A ramp rises to its peak: below 1 it would fall, then rise without end.
                1.0
            } else {
                0.0
            };
            if !(factor.is_finite()
                && factor >= least
                && factor > 0.0
                && factor <= limits::MAX_LOAD_FACTOR)
            {
                return Err(SimError::Invalid {
                    param,
                    allowed: if least > 0.0 {
                        "a multiple of the rate in [1, 1000]: the rate rises to the peak"
                    } else {
                        "a multiple of the rate in (0, 1000]"
                    },
                });
            }
        }
        match self.load {
            Load::Spike { at, lasts, .. }
                if lasts.is_zero() || at.saturating_add(lasts) > self.duration =>
            {
                return Err(SimError::Invalid {
                    param: "clients.spike",
                    allowed: "a spike longer than 0 that ends within the run's duration",
                });
            }
            Load::Ramp { peak_at, .. } if peak_at.is_zero() || peak_at > DAY => {
                return Err(SimError::Invalid {
                    param: "clients.ramp.peak_at",
                    allowed: "longer than 0 and at most a day",
                });
            }
            _ => {}
        }
        if let Some(service) = self.dependency.service {
            if service.base > limits::MAX_SERVICE_TIME
                || service.per_in_flight > limits::MAX_SERVICE_TIME
            {
                return Err(SimError::Invalid {
                    param: "dependency.service",
                    allowed: "a base and a per_in_flight time of at most an hour each",
                });
            }
            if !matches!(self.network, Network::OneWay(_)) {
                return Err(SimError::Invalid {
                    param: "dependency.service",
                    allowed: "behind a one-way network (`network`, not `rtt`): the answer \
                              travels back once the work is done",
                });
            }
            if matches!(
                self.dependency.limiter,
                Some(Limiter {
                    kind: LimiterKind::Concurrency { .. },
                    ..
                })
            ) {
                return Err(SimError::Invalid {
                    param: "dependency.service",
                    allowed: "without a concurrency_limit beside it (the limit has a service \
                              time of its own)",
                });
            }
        }
        if self
            .attempt_timeout
            .is_some_and(|t| t < limits::MIN_ATTEMPT_TIMEOUT || t > DAY)
        {
            return Err(SimError::Invalid {
                param: "attempt_timeout",
                allowed: limits::ATTEMPT_TIMEOUT_ALLOWED,
            });
        }
        if self.drain.is_some_and(|d| d > DAY) {
            return Err(SimError::Invalid {
                param: "drain",
                allowed: limits::AT_MOST_A_DAY,
            });
        }
        if self.fanout == 0 || self.fanout > Self::MAX_FANOUT {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: limits::FANOUT_ALLOWED,
            });
        }
        if self.fanout > 1 && self.dependency.outage.is_some() {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: "1 beside an outage (its success rate is that of the requests that \
                          met it, which a fan-out splits among sub-requests)",
            });
        }
        if self.fanout > 1 && matches!(self.clients, Clients::Serial { .. }) {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: "1 for serial clients (each paces one call at a time)",
            });
        }
        if let Some(pool) = self.dependency.replicas {
            validate_pool(&pool)?;
            // Each replica draws its pauses up to the last time it is used: bounded so that a
            // short pause_every over a long run is refused rather than drawn for hours.
            if !pool.pause.is_zero() {
                let span = ns(self.duration)
                    + self.drain_ns()
                    + self.deadline.map_or(ns(self.duration), ns);
                let pauses = f64::from(pool.count) * span / (ns(pool.pause_every) + ns(pool.pause));
                if pauses > Self::MAX_PAUSES {
                    return Err(SimError::TooLarge {
                        what: "replicas x (duration + drain + deadline) / (pause_every + pause)",
                        limit: format!("{:e} pauses", Self::MAX_PAUSES),
                    });
                }
            }
            let concurrency_limit = matches!(
                self.dependency.limiter,
                Some(Limiter {
                    kind: LimiterKind::Concurrency { .. },
                    ..
                })
            );
            let beside = if self.dependency.service.is_some() {
                Some("a pool without a service beside it (its service times are its own)")
            } else if concurrency_limit {
                Some("a pool without a concurrency_limit beside it (its concurrency is its own)")
            } else if self.dependency.two_hosts.is_some() {
                Some("a pool without two_hosts beside it")
            } else {
                None
            };
            if let Some(allowed) = beside {
                return Err(SimError::Invalid {
                    param: "dependency.replicas",
                    allowed,
                });
            }
        }
        Ok(())
    }

    /// The round trip, if the requests of `strategy` cannot affect one another nor draw from a
    /// generator they share, so that each can be run to its end in turn, with no event queue:
    /// fixed clients, a constant network, a dependency of one host that always or never fails,
    /// with no outage and no limiter, no gate, no budget shared by all and no inner layers. A
    /// fleet that meets a dead dependency together (the canonical `herd`) is such a run: it
    /// holds one request at a time and every retry's time, where the event loop would hold
    /// every request.
    /// It draws what the event loop draws, in the same order, and gives the same figures; it
    /// counts one event per attempt (its answer), where the loop counts the request's start,
    /// each attempt's hops and each retry's send.
    #[must_use]
    pub fn independent(&self, strategy: &Strategy, inner: &[Layer]) -> Option<Nanos> {
        let x = self.dependency.failure_rate;
        let shared = self.budget_scope == BudgetScope::Shared && strategy.budget.is_some();
        if !matches!(self.clients, Clients::Fixed { .. })
            || !inner.is_empty()
            || !(x <= 0.0 || x >= 1.0)
            || self.dependency.outage.is_some()
            || self.dependency.limiter.is_some()
            || self.dependency.service.is_some()
            || self.dependency.two_hosts.is_some()
            || self.dependency.replicas.is_some()
            || self.fanout > 1
            || self.drain.is_some()
            || strategy.hedging.is_some()
            || self.gate
            || shared
        {
            return None;
        }
        match self.network {
            Network::RoundTrip(Delay::Constant { nanos }) => Some(nanos),
            Network::OneWay(Delay::Constant { nanos }) => Some(nanos.saturating_mul(2)),
            _ => None,
        }
    }

    /// The engine's settings for each request: the deadline, the attempt timeout and the
    /// dispersal.
    fn settings(&self) -> Settings {
        let settings = match self.deadline {
            Some(timeout) => Settings::new().with_timeout(timeout),
            None => Settings::new(),
        };
        match self.attempt_timeout {
            Some(timeout) => settings.with_attempt_timeout(timeout),
            None => settings,
        }
        .with_dispersal(self.dispersal)
    }

    /// Whether each request holds a budget of its own (and its generators come from the
    /// world in turn): fixed clients, or [`BudgetScope::PerRequest`].
    const fn per_request(&self) -> bool {
        matches!(self.clients, Clients::Fixed { .. })
            || matches!(self.budget_scope, BudgetScope::PerRequest)
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
        if let Some(limiter) = self.dependency.limiter {
            // Every retry after a refusal waits at least the told wait, inside the deadline.
            let least = least_wait(&limiter);
            if let Some(timeout) = self.deadline
                && let Some(waits) = nanos(timeout).checked_div(least)
            {
                plan = plan.at_most(waits.saturating_add(1));
            }
        }
        plan
    }

    /// The requests in flight at the peak: the arrival rate times the longer of how long a
    /// request lives at the failure probability and how long one that meets the outage lives
    /// (until its last attempt, or the outage's end); every fixed client at once.
    fn in_flight(&self, plan: &Plan) -> f64 {
        let fanout = f64::from(self.fanout);
        let Some(rate) = self.clients.rate() else {
            return self.clients.count() as f64 * fanout;
        };
        let rtt = self.network.round_trip_mean();
        let mut per_ns = self.clients.count() as f64 * rate * fanout / 1e9;
        let mut lifetime = self.per_host(|x| plan.lifetime(x, rtt));
        if let Some(slow) = self.slow_attempt() {
            // Against a service that piles work up, every attempt may take all the time it
            // has: a request lives its timeouts and its delays.
            let (_, last) = plan.attempts_within(slow, ns(self.duration) + self.drain_ns());
            lifetime = lifetime.max(last + slow);
        }
        let profile = self.profile(rate);
        if profile.varies() {
            // At the busiest rate over such a lifetime.
            let busiest = profile.busiest(lifetime / 1e9, self.duration.as_secs_f64());
            per_ns = self.clients.count() as f64 * busiest * fanout / 1e9;
        }
        let mut backlog = 0.0;
        if let Some(pool) = self.pool_terms(plan) {
            // Each attempt at a replica for its time there, and a paused replica's backlog.
            lifetime = lifetime.max(pool.attempts * pool.sojourn);
            backlog = per_ns * pool.backlog;
        }
        if let Some(w) = self.dependency.outage {
            let down = ns(w.lasts).min(ns(self.duration));
            let (_, last) = plan.attempts_within(rtt, f64::INFINITY);
            lifetime = lifetime.max((last + rtt).min(down + rtt));
        }
        if let Some(limiter) = self.dependency.limiter {
            // A refused request waits at least the told wait before each retry: it may live
            // that long for every retry it has, up to its deadline.
            let waits = least_wait(&limiter) as f64 * plan.max_attempts.saturating_sub(1) as f64;
            let until = self.deadline.map_or(waits, |d| waits.min(ns(d)));
            lifetime = lifetime.max(until);
        }
        peak(per_ns * lifetime.max(rtt) + backlog)
    }

    /// Calls (sub-requests, with a fan-out) a nanosecond at the busiest.
    fn busiest_calls_per_ns(&self) -> f64 {
        let fanout = f64::from(self.fanout);
        match self.clients {
            Clients::Open { sources, rate } => {
                sources as f64 * self.profile(rate).peak() * fanout / 1e9
            }
            Clients::Serial { clients, rate } => clients as f64 * rate / 1e9,
            Clients::Fixed { count } => count as f64 * fanout / ns(self.duration).max(1.0),
        }
    }

    /// With a pool, what the estimate takes of it (after the `tail` workload's reasoning): the
    /// chance an attempt outlives the time it has (it meets a paused replica with more of the
    /// pause left, or its time at the replica, as an M/M/1 queue at the same load has it, is
    /// longer), the attempts a call makes at that chance, the time an attempt spends at a
    /// replica, and the share of a paused replica's backlog in flight.
    fn pool_terms(&self, plan: &Plan) -> Option<PoolTerms> {
        let pool = self.dependency.replicas?;
        let mean = pool.service.mean();
        let load = self.busiest_calls_per_ns() * mean
            / (f64::from(pool.count) * f64::from(pool.concurrency));
        // The longest an attempt may take before it is cut: its timeout or the deadline, or
        // with neither the run and its drain.
        let limit = match (self.attempt_timeout, self.deadline) {
            (Some(a), Some(b)) => ns(a.min(b)),
            (a, b) => a.or(b).map_or(ns(self.duration) + self.drain_ns(), ns),
        }
        .max(1.0);
        let (sojourn, backlog) = if load < 0.99 {
            (mean / (1.0 - load), ns(pool.pause) / (1.0 - load))
        } else {
            // Overloaded: the queues grow, and an attempt may wait all the time it has.
            (limit, limit)
        };
        let times = self.attempt_timeout.is_some() || self.deadline.is_some();
        let cut = if times {
            let paused = if pool.pause.is_zero() {
                0.0
            } else {
                pool.pause_share() * (1.0 - limit / ns(pool.pause)).max(0.0)
            };
            (paused + libm::exp(-limit / sojourn)).min(1.0)
        } else {
            0.0
        };
        let x = self.dependency.failure_rate;
        let mut attempts = plan.attempts(1.0 - (1.0 - x) * (1.0 - cut));
        if let Some(deadline) = self.deadline {
            attempts = attempts.min((ns(deadline) / limit + 1.0).floor());
        }
        let paused_at_once = (f64::from(pool.count) * pool.pause_share() * 2.0).max(1.0);
        Some(PoolTerms {
            attempts,
            sojourn: sojourn.min(limit),
            backlog: backlog.min(limit) * paused_at_once / f64::from(pool.count),
            limit,
        })
    }

    /// What a run of `strategy` will cost: the events it processes and the memory its data
    /// holds at the peak (see [`estimate`](crate::estimate)). The parts should be valid
    /// ([`Composed::validate`]).
    ///
    /// Each request is one event to start, each attempt one per hop of the network (and one
    /// more to leave a concurrency limiter), each retry one more to send. A request that meets
    /// the outage makes the attempts its policy sends before the outage ends (with the
    /// `Retry-After` floor and within the deadline), and one more after; behind a limiter, a
    /// request may make every attempt its policy and deadline allow; the others as many as
    /// the failure probability asks for, `sum_k x^k`. Serial clients run requests one at a
    /// time, no more than their rate, each lasting its attempts' round trips and its retries'
    /// delays. A budget only takes retries away.
    ///
    /// Independent clients ([`Composed::independent`]) make one event per attempt, and hold
    /// one request at a time and every retry's time.
    #[must_use]
    pub fn estimate(&self, strategy: &Strategy) -> Estimate {
        if self.independent(strategy, &[]).is_some() {
            return self.estimate_independent(strategy);
        }
        self.estimate_loop(strategy)
    }

    /// [`Composed::estimate`] for independent clients.
    fn estimate_independent(&self, strategy: &Strategy) -> Estimate {
        let plan = self.plan(strategy);
        let requests = self.clients.count() as f64;
        // A run past `MAX_INDEPENDENT_ATTEMPTS` is stopped there, with an error; its
        // estimate says what it would take to finish.
        let attempts = requests * plan.attempts(self.dependency.failure_rate);
        let retries = self.reserved_retries(strategy) as f64;
        let bytes = Call::bytes() as f64
            + client_budget_bytes(strategy)
            + retries * Metrics::STORED_RETRY_BYTES as f64
            + Metrics::scratch_bytes(retries)
            + Metrics::fixed_bytes() as f64;
        Estimate::of(attempts, bytes)
    }

    /// The retries whose times independent clients keep, room reserved up front: every retry
    /// the policy allows each client if the dependency always fails, within the attempt limit.
    fn reserved_retries(&self, strategy: &Strategy) -> usize {
        if self.dependency.failure_rate < 1.0 {
            return 0;
        }
        // Within the deadline, if there is one.
        let per_client = self.plan(strategy).max_attempts.saturating_sub(1);
        let retries = self
            .clients
            .count()
            .saturating_mul(per_client)
            .min(Self::MAX_INDEPENDENT_ATTEMPTS);
        usize::try_from(retries).unwrap_or(usize::MAX)
    }

    /// [`Composed::estimate`] for the event loop.
    fn estimate_loop(&self, strategy: &Strategy) -> Estimate {
        let plan = self.plan(strategy);
        let n = self.clients.count() as f64;
        let duration = ns(self.duration);
        let rtt = self.network.round_trip_mean();
        let x = self.dependency.failure_rate;
        let limited = self.dependency.limiter.is_some();
        let mut hops = self.network.hops();
        if self.dependency.service.is_some()
            || matches!(
                self.dependency.limiter,
                Some(Limiter {
                    kind: LimiterKind::Concurrency { .. },
                    ..
                })
            )
        {
            // Leaving the service or the limiter.
            hops += 1.0;
        }
        let pool = self.pool_terms(&plan);
        if pool.is_some() {
            // Leaving the replica; with nothing to travel back, the client hears it then.
            hops += 1.0;
            if self.network == Network::RoundTrip(Delay::Constant { nanos: 0 }) {
                hops -= 1.0;
            }
        }
        // An attempt's timeout, and a hedged request's wake-up per attempt.
        hops += f64::from(u8::from(self.times_attempts()))
            + f64::from(u8::from(strategy.hedging.is_some()));
        let horizon = duration + self.drain_ns();
        let mut per_request = match self.slow_attempt() {
            // Whether the service keeps up cannot be known without running it, so the
            // estimate takes the collapse: every attempt the policy allows, one per timeout.
            Some(slow) => (plan.max_attempts as f64).min(horizon / slow + 1.0),
            None if limited => plan.max_attempts.min(1_000_000) as f64,
            None => match &pool {
                Some(pool) => pool.attempts,
                None => self.per_host(|x| plan.attempts(x)),
            },
        };
        // With two hosts, what a request to host A makes: every attempt the policy allows.
        let mut per_down = match self.slow_attempt() {
            None if !limited => plan.attempts(1.0),
            _ => per_request,
        };
        if let Some(hedging) = strategy.hedging {
            // Hedges go out on a timer, failures or not: the bound is every attempt the
            // hedging allows.
            per_request = per_request.max(f64::from(hedging.max_attempts()));
            per_down = per_down.max(f64::from(hedging.max_attempts()));
        }
        let (requests, attempts, bytes) = match self.clients {
            Clients::Serial { rate, .. } => {
                let rtt = rtt.max(1.0);
                // Requests that would outlive the run count as lasting the run: a client does
                // many short requests before it meets the rare long one.
                let lifetime = plan.lifetime_within(x, rtt, duration);
                // Paced at `rate`: no more requests than that, however short they are.
                let paced = rate * duration / 1e9;
                let requests = n * ((duration / lifetime).min(paced) + 1.0);
                let mut attempts = requests * per_request;
                if let Some(w) = self.dependency.outage {
                    // Each client's request during the outage retries until it ends.
                    let down = ns(w.lasts).min(duration);
                    attempts += n * plan.attempts_within(rtt, down).0;
                }
                let bytes =
                    n * EventQueue::<Event>::bytes_per_pending() + Slots::<Request>::bytes(n, n);
                (requests, attempts, bytes)
            }
            Clients::Open { .. } | Clients::Fixed { .. } => {
                // Calls: each request's sub-requests.
                let requests = self.requests() * f64::from(self.fanout);
                let per_ns = requests / duration.max(1.0);
                let mut attempts = match self.dependency.outage {
                    Some(w) => {
                        let down = ns(w.lasts).min(duration);
                        let spread = (requests - down * per_ns).max(0.0) * per_request
                            + plan.outage_attempts(rtt, down) * per_ns;
                        if matches!(self.clients, Clients::Fixed { .. }) {
                            // A fleet calls at once, not spread over the run: every client
                            // may meet the outage and retry through it.
                            spread.max(requests * (plan.attempts_within(rtt, down).0 + 1.0))
                        } else {
                            spread
                        }
                    }
                    None => requests * per_request,
                };
                if let Some(hedging) = strategy.hedging {
                    // However the policy retries, every hedge may go out, outage or not.
                    attempts = attempts.max(requests * f64::from(hedging.max_attempts()));
                }
                let in_flight = self.in_flight(&plan).min(requests.max(1.0));
                let room = room_for(in_flight).max(self.sources());
                let bytes = Slots::<Request>::bytes(in_flight, room as f64)
                    + (n + in_flight) * EventQueue::<Event>::bytes_per_pending();
                (requests, attempts, bytes)
            }
        };
        let retries = (attempts - requests).max(0.0);
        let mut events = requests + hops * attempts + retries;
        if let (Some(hosts), None) = (self.dependency.two_hosts, self.dependency.outage) {
            // An attempt to host A is one event, its failure, however far it travels: none to
            // reach it, leave a limiter or the service.
            let down = requests * hosts.share_down * per_down;
            events -= (hops
                - 1.0
                - f64::from(u8::from(self.times_attempts()))
                - f64::from(u8::from(strategy.hedging.is_some())))
            .max(0.0)
                * down;
        }
        let mut bytes = bytes;
        if let Clients::Open { sources, rate } = self.clients {
            let profile = self.profile(rate);
            if profile.varies() {
                // Each candidate arrival of the thinning is an event.
                events += sources as f64 * profile.peak() * self.duration.as_secs_f64() - requests;
            }
        }
        if let Some(service) = self.dependency.service {
            // The service finishes fewer than one attempt per `per_in_flight` however much it
            // holds; the attempts it has not finished wait in the queue.
            let per = ns(service.per_in_flight);
            let finished = if per > 0.0 { horizon / per } else { attempts };
            let live = self.in_flight(&plan).min(requests.max(1.0));
            bytes += (attempts - finished).max(live) * EventQueue::<Event>::bytes_per_parked();
        }
        if self.times_attempts() {
            bytes += self.in_flight(&plan).min(requests.max(1.0))
                * EventQueue::<Event>::bytes_per_pending();
        }
        if let (Some(terms), Some(replicas)) = (&pool, self.dependency.replicas) {
            // The replicas, their queues, and each attempt's timeout, pending for as long as
            // the attempt may last.
            let live = self.in_flight(&plan).min(requests.max(1.0));
            let pending = if self.times_attempts() {
                peak(self.busiest_calls_per_ns() * terms.attempts * terms.limit).min(attempts)
            } else {
                0.0
            };
            bytes += f64::from(replicas.count) * size_of::<Replica<Kind>>() as f64
                + grown(live) * size_of::<Waiting<Kind>>() as f64
                + pending * EventQueue::<Event>::bytes_per_pending();
        }
        if self.fanout > 1 {
            // The requests whose sub-requests run, each slot's owner, and the requests' own
            // figures.
            let live = self.in_flight(&plan).min(requests.max(1.0));
            let parents = live / f64::from(self.fanout) + 1.0;
            bytes += Slots::<Parent>::bytes(parents, room_for(parents) as f64)
                + grown(room_for(live) as f64) * size_of::<u32>() as f64
                + Metrics::fixed_bytes() as f64;
        }
        bytes += Series::bytes(self.duration);
        if let Some(hedging) = strategy.hedging {
            // A hedged request's run is boxed beside its slot, with its attempts in flight.
            let most = hedging.max_attempts() as usize;
            let each = block(size_of::<HedgedRequest>())
                + block(most.next_power_of_two() * size_of::<Flying>());
            // Each attempt in flight holds its hop and its timeout in the queue.
            let queued = most as f64 * 2.0 * EventQueue::<Event>::bytes_per_pending();
            bytes += self.in_flight(&plan).min(requests.max(1.0)) * (each as f64 + queued);
        }
        // The retries come at least as densely as over the whole run, and during an outage as
        // densely as they come in it.
        let mut retries_per_ns = retries / duration;
        if let (Some(w), Some(rate)) = (self.dependency.outage, self.clients.rate()) {
            let down = ns(w.lasts).min(duration).max(1.0);
            let per_ns = n * rate / 1e9;
            let met = plan.outage_attempts(rtt, down) * per_ns;
            retries_per_ns = retries_per_ns.max((met - down * per_ns).max(0.0) / down);
        }
        let window = if limited || matches!(self.clients, Clients::Fixed { .. }) {
            retries
        } else {
            peak(retries_per_ns * ns(self.window)).min(attempts)
        };
        let budgets = if self.per_request() {
            self.in_flight(&plan).min(requests.max(1.0))
        } else {
            n
        };
        let mut per_budget = client_budget_bytes(strategy);
        if self
            .dependency
            .two_hosts
            .is_some_and(|h| h.budget_per_host && strategy.budget.is_some())
        {
            // A set per budget: a budget per host, each an `Arc`'s block, the set's table, and
            // for each request in flight an `Rc` of its host's `Arc`.
            let hosts = HOSTS.len() as f64;
            per_budget = hosts * per_budget
                + block(size_of::<Partitioned<AnyBudget>>()) as f64
                + hosts * block(64 + HOSTS[0].len()) as f64;
            bytes += self.in_flight(&plan).min(requests.max(1.0))
                * block(2 * size_of::<usize>() + size_of::<Arc<AnyBudget>>()) as f64;
        }
        let bytes = bytes
            + self.sources() as f64 * size_of::<Source>() as f64
            + budgets * per_budget
            + grown(window) * Metrics::STORED_RETRY_BYTES as f64
            + Metrics::fixed_bytes() as f64;
        Estimate::of(events, bytes)
    }

    /// `figure` at the dependency's failure probability, or with two hosts its mean over them:
    /// at 1 for the share of the requests to host A, which is down.
    fn per_host(&self, figure: impl Fn(f64) -> f64) -> f64 {
        let x = self.dependency.failure_rate;
        match self.dependency.two_hosts {
            Some(hosts) => hosts.share_down * figure(1.0) + (1.0 - hosts.share_down) * figure(x),
            None => figure(x),
        }
    }

    /// The sources the run keeps: one per open source or serial client, or one for all when
    /// each request holds its own budget.
    fn sources(&self) -> usize {
        if self.per_request() {
            1
        } else {
            usize::try_from(self.clients.count()).unwrap_or(usize::MAX)
        }
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
    /// [`Composed::MAX_EVENTS`], or [`SimError::EventLimit`]. A strategy that hedges sends its
    /// hedges beside the attempts in flight; with inner layers it is refused
    /// ([`SimError::NotApplicable`]): hedged attempts go to the dependency.
    pub fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        self.run_layered(strategy, &[], seed, max_events)
    }

    /// [`Composed::run_within`] with `inner` retry layers between the outermost one (the
    /// strategy's) and the dependency, outermost first: each attempt of a layer is a run of the
    /// layer below, and only the innermost layer's attempts reach the dependency (the load
    /// counts those). The request's success or give-up is the outermost layer's.
    ///
    /// # Errors
    ///
    /// As [`Composed::run_within`], and an inner layer's invalid policy.
    pub fn run_layered(
        &self,
        strategy: &Strategy,
        inner: &[Layer],
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        self.check(strategy, inner)?;
        // A load that changes over the run has its timeline's figures in the row.
        if self.load != Load::Steady {
            return self
                .timeline_checked(strategy, inner, seed, max_events)
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

    /// The time of every retry of a run of `strategy` (in no particular order), for a plot of
    /// their spread.
    ///
    /// # Errors
    ///
    /// As [`Composed::run`].
    pub fn retry_times(&self, strategy: &Strategy, seed: u64) -> Result<Vec<Nanos>, SimError> {
        self.retry_times_layered(strategy, &[], seed)
    }

    /// [`Composed::retry_times`] with `inner` retry layers, as [`Composed::run_layered`] runs
    /// them: the retries that reach the dependency.
    ///
    /// # Errors
    ///
    /// As [`Composed::run_layered`].
    pub fn retry_times_layered(
        &self,
        strategy: &Strategy,
        inner: &[Layer],
        seed: u64,
    ) -> Result<Vec<Nanos>, SimError> {
        self.check(strategy, inner)?;
        let metrics = match self.independent(strategy, inner) {
            Some(round_trip) => self.one_at_a_time(round_trip, strategy, seed, u64::MAX)?,
            None => {
                let mut run = Loop::new(self, strategy, inner, seed, true)?;
                run.go(u64::MAX)?;
                run.metrics
            }
        };
        Ok(metrics.into_retry_times())
    }

    /// The retries of a run of `strategy` through `inner` layers counted in buckets of `bucket`
    /// from time zero until `until` (at most 2^20 buckets), for a plot of how they bunch.
    ///
    /// # Errors
    ///
    /// As [`Composed::run`].
    pub fn retry_histogram(
        &self,
        strategy: &Strategy,
        inner: &[Layer],
        seed: u64,
        bucket: Duration,
        until: Duration,
    ) -> Result<Vec<u64>, SimError> {
        let times = self.retry_times_layered(strategy, inner, seed)?;
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

    /// Refuses invalid parts, an invalid policy (even if no request comes), invalid hedging,
    /// hedging with inner layers (a hedged request's attempts go to the dependency) and an
    /// inner layer's invalid policy.
    fn check(&self, strategy: &Strategy, inner: &[Layer]) -> Result<(), SimError> {
        self.validate()?;
        limits::check_layers(inner.len().saturating_add(1))?;
        strategy.policy.build(SeededRng::new(0))?;
        if let Some(hedging) = strategy.hedging {
            hedging.validate()?;
            if !inner.is_empty() {
                return Err(SimError::NotApplicable {
                    param: "hedge",
                    workload: "composed with inner layers",
                });
            }
        }
        for layer in inner {
            layer.policy.build(SeededRng::new(0))?;
        }
        Ok(())
    }

    /// Runs `strategy`, every generator derived from `seed`, and returns its row with the
    /// per-second series behind it ([`Timeline`]): goodput, offered rate, arrivals, attempts
    /// and work in progress, the tail goodput ratio over the final 30 s and, with a spike,
    /// the recovery time after it. Stopped with [`SimError::EventLimit`] past `max_events`
    /// events.
    ///
    /// # Errors
    ///
    /// As [`Composed::run_within`].
    pub fn timeline(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<Timeline, SimError> {
        self.timeline_layered(strategy, &[], seed, max_events)
    }

    /// [`Composed::timeline`] with `inner` retry layers, as [`Composed::run_layered`] runs
    /// them.
    ///
    /// # Errors
    ///
    /// As [`Composed::run_layered`].
    pub fn timeline_layered(
        &self,
        strategy: &Strategy,
        inner: &[Layer],
        seed: u64,
        max_events: u64,
    ) -> Result<Timeline, SimError> {
        self.check(strategy, inner)?;
        self.timeline_checked(strategy, inner, seed, max_events)
    }

    /// [`Composed::timeline_layered`] of parts already checked.
    fn timeline_checked(
        &self,
        strategy: &Strategy,
        inner: &[Layer],
        seed: u64,
        max_events: u64,
    ) -> Result<Timeline, SimError> {
        let mut run = Loop::new(self, strategy, inner, seed, false)?;
        run.series = Some(Series::new(self.duration));
        run.go(max_events)?;
        let series = run.series.take();
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
            .timeline(row, self.duration, between, self.load.trigger_end()))
    }

    /// Runs independent clients ([`Composed::independent`]) one after the other, each to its
    /// end, with the generators the event loop would give them, in its order: the stream of
    /// arrivals, network and failures first (which a constant network and a certain outcome
    /// never draw from), then each request's budget's (if it has its own) and its policy's.
    fn one_at_a_time(
        &self,
        round_trip: Nanos,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<Metrics, SimError> {
        let mut metrics = Metrics::unordered(nanos(self.window), self.reserved_retries(strategy));
        let mut world = SeededRng::new(seed);
        let _stream = world.fork();
        let shared = strategy.shared_unlimited();
        let template = PolicyTemplate::new(&strategy.policy)?;
        let settings = self.settings();
        let fails = self.dependency.failure_rate >= 1.0;
        for _ in 0..self.clients.count() {
            let budget = match &shared {
                Some(none) => none.clone(),
                None => strategy.client_budget(world.fork()),
            };
            let mut call = Call::start(template.start(world.fork()), budget, settings, 0);
            metrics.first_try();
            let mut at = 0;
            loop {
                // The loop asks whether the attempt may go now (`Call::pace`): a gate could hold
                // it, or a server's wait. Neither exists here (no gate, and no answer tells a
                // wait), so the answer is always yes, and asking would cost a tenth of the run.
                debug_assert!(matches!(call.pace(at), Ok(None)));
                let Some(remaining) = call.begin_timed(at, &mut metrics) else {
                    break;
                };
                // An attempt whose time runs out first times out, as in the loop: on a round
                // trip the answer wins a tie, on a one-way network the timeout (it was queued
                // first).
                let left = remaining.map_or(Nanos::MAX, nanos);
                let timed_out = match self.network {
                    Network::RoundTrip(_) => left < round_trip,
                    Network::OneWay(_) => left <= round_trip,
                };
                let now = at.saturating_add(if timed_out { left } else { round_trip });
                metrics.events += 1;
                check_events(metrics.events, max_events)?;
                let result = if timed_out {
                    Err(Failure::Timeout)
                } else if fails {
                    Err(Failure::Retryable)
                } else {
                    Ok(())
                };
                match call.end(now, result, &mut metrics) {
                    Next::RetryAt(next) => {
                        if metrics.attempts >= Self::MAX_INDEPENDENT_ATTEMPTS {
                            return Err(SimError::TooLarge {
                                what: "attempts (a policy with no attempt limit never gives up \
                                       here)",
                                limit: Self::MAX_INDEPENDENT_ATTEMPTS.to_string(),
                            });
                        }
                        at = next;
                    }
                    Next::Done => break,
                }
            }
        }
        Ok(metrics)
    }

    /// [`Composed::estimate`] with `inner` retry layers: each layer that retries on its own
    /// multiplies the attempts by as many as it makes at most, its policy's limit (an upper
    /// bound: under its default a layer makes one).
    #[must_use]
    pub fn estimate_layered(&self, strategy: &Strategy, inner: &[Layer]) -> Estimate {
        if inner.is_empty() {
            return self.estimate(strategy);
        }
        let base = self.estimate_loop(strategy);
        let rtt = self.network.round_trip_mean();
        let within = |l: &Layer| match (l.settings.timeout(), self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let retrying = || {
            inner
                .iter()
                .filter(|l| l.settings.nested() == stagger_core::engine::Nested::Retry)
        };
        // Each layer that retries makes as many attempts as its policy allows within its
        // deadline (itself within the outer one's): it multiplies the attempts.
        let factor = retrying()
            .map(|l| {
                let plan = Plan::new(&Strategy::of(l.policy));
                match within(l) {
                    Some(d) => plan.attempts_within(rtt, ns(d)).0.max(1.0),
                    None => plan.max_attempts.max(1) as f64,
                }
            })
            .product::<f64>();
        // A request lives through its inner runs too: at most every outer attempt's inner
        // runs, each as long as its layer's retries take within its deadline. The requests in
        // flight grow with that, each holding a run per inner layer.
        let windows: f64 = retrying()
            .map(|l| {
                let until = within(l).map_or(f64::INFINITY, ns);
                Plan::new(&Strategy::of(l.policy))
                    .attempts_within(rtt, until)
                    .1
            })
            .sum();
        let plan = self.plan(strategy);
        let requests = self.requests().max(1.0);
        let per_ns = requests / ns(self.duration).max(1.0);
        let lifetime = plan.lifetime(self.dependency.failure_rate, rtt)
            + plan.max_attempts as f64 * factor * windows;
        let in_flight = peak(per_ns * lifetime).min(requests);
        let runs = block(inner.len().saturating_mul(Call::bytes() as usize)) as f64;
        let held = Slots::<Request>::bytes(in_flight, in_flight)
            + in_flight * (runs + 2.0 * EventQueue::<Event>::bytes_per_pending());
        // The peak retry share keeps the retries of the busiest window: as many more as the
        // attempts, at most the rate of every event over the window.
        let events = base.events as f64 * factor;
        let window = peak(events / ns(self.duration).max(1.0) * ns(self.window)).min(events);
        let times = grown(window) * Metrics::STORED_RETRY_BYTES as f64;
        Estimate::of(events, base.bytes as f64 + held + times)
    }
}

/// Checks a pool's parameters, under the names the file's keys give them.
fn validate_pool(pool: &Replicas) -> Result<(), SimError> {
    pool.validate_as([
        "dependency.replicas.count",
        "dependency.replicas.concurrency",
        "dependency.replicas.service",
        "dependency.replicas.pause",
        "dependency.replicas.pause_every",
    ])
}

fn validate_limiter(limiter: &Limiter) -> Result<(), SimError> {
    match limiter.kind {
        LimiterKind::Rate { rate, burst } => {
            check_limiter_rate(rate, burst)?;
        }
        LimiterKind::Concurrency { limit, service } => {
            if limit == 0 {
                return Err(SimError::Invalid {
                    param: "limit_concurrency",
                    allowed: "at least 1",
                });
            }
            if service > limits::MAX_DURATION {
                return Err(SimError::Invalid {
                    param: "service",
                    allowed: limits::AT_MOST_A_DAY,
                });
            }
        }
    }
    if limiter.retry_after > limits::MAX_DURATION {
        return Err(SimError::Invalid {
            param: "retry_after",
            allowed: limits::AT_MOST_A_DAY,
        });
    }
    Ok(())
}

/// Checks a rate limiter's rate (up to [`limits::MAX_LIMITER_RATE`]) and burst (up to
/// [`limits::MAX_LIMITER_BURST`]): the composed model's and the throttle workload's.
pub(crate) fn check_limiter_rate(rate: f64, burst: u32) -> Result<(), SimError> {
    if !(rate.is_finite() && rate > 0.0 && rate <= limits::MAX_LIMITER_RATE) {
        return Err(SimError::Invalid {
            param: "limit_rate",
            allowed: limits::LIMITER_RATE_ALLOWED,
        });
    }
    if burst == 0 || burst > limits::MAX_LIMITER_BURST {
        return Err(SimError::Invalid {
            param: "limit_burst",
            allowed: limits::LIMITER_BURST_ALLOWED,
        });
    }
    Ok(())
}

/// The shortest wait a limiter's refusal tells, in nanoseconds.
fn least_wait(limiter: &Limiter) -> Nanos {
    match limiter.form {
        RetryAfterForm::Fixed => nanos(limiter.retry_after),
        RetryAfterForm::FixedRounded => {
            RetryAfterForm::FixedRounded.wait(nanos(limiter.retry_after), 0)
        }
        RetryAfterForm::ExactRounded => SECOND,
        RetryAfterForm::Exact => 0,
    }
}

/// A lower bound on the mean round trip of `network`, in nanoseconds.
fn mean_floor(network: &Network) -> f64 {
    match network {
        Network::RoundTrip(d) => delay_floor(d),
        Network::OneWay(d) => 2.0 * delay_floor(d),
    }
}

/// A lower bound on a delay's mean.
fn delay_floor(delay: &Delay) -> f64 {
    match *delay {
        Delay::Constant { nanos } => nanos as f64,
        // E|X| >= |E X| and, for a normal, E|X| >= E|X - mean| = sd * sqrt(2 / pi).
        Delay::AbsNormal { mean, sd } => {
            (mean as f64).max(sd as f64 * (2.0 / std::f64::consts::PI).sqrt())
        }
        Delay::Exponential { mean } => mean as f64,
    }
}

/// The one destination's key in the gate.
const DESTINATION: &str = "dependency";

/// What the world seed is mixed with for the inner layers' stream.
const LAYER_STREAM: u64 = 0x6c61_7965_7273_2121;

/// What the world seed is mixed with for a pool's streams, but for one open source's.
const POOL_STREAM: u64 = 0x7265_706c_6963_6173;

/// One run's state.
struct Loop<'a> {
    model: &'a Composed,
    strategy: &'a Strategy,
    /// The strategy's policy, built once: each request runs a copy.
    template: PolicyTemplate,
    /// The inner layers, outermost first.
    layers: &'a [Layer],
    /// The inner layers' budget: none.
    no_budget: SimBudget,
    /// The inner layers' policy generators, one per inner run in turn: a stream of its own,
    /// so that a stack whose inner layers never retry draws what its outer layer alone does.
    layer_rngs: SeededRng,
    settings: Settings,
    sources: Vec<Source>,
    /// A budget per request: the strategy has one, so each request forks its own.
    budget_each: bool,
    gate: Option<Arc<Gate>>,
    requests: Slots<Request>,
    queue: EventQueue<Event>,
    metrics: Metrics,
    outage: OutageCounts,
    limiting: Option<Limiting>,
    /// The outage as `[down, up)` in nanoseconds, and its `Retry-After`.
    down: Option<(Nanos, Nanos, Option<Duration>)>,
    end: Nanos,
    mean_gap: f64,
    /// Whether an attempt may have to wait before it goes: a gate, or a dependency that tells
    /// waits.
    may_wait: bool,
    /// Each source's rate over time and its peak, when it varies: arrivals are then thinned.
    thinning: Option<(Profile, f64)>,
    /// The service: its base time and time per attempt in progress, and the attempts in
    /// progress, abandoned ones included.
    service: Option<(Nanos, Nanos, u64)>,
    /// Attempts sent and still awaited.
    outstanding: u64,
    /// The next attempt's id.
    next_id: Id,
    /// Arrival events queued.
    arrivals_queued: u64,
    /// Attempts on their way to the dependency (one-way network), awaited or not: each still
    /// reaches it, and counts there.
    travelling: u64,
    /// When requests stop being followed.
    horizon: Nanos,
    /// The fleet's attempt latencies, for a hedge delay at a quantile.
    sketch: LatencySketch,
    /// Per-second counters, for a [`Timeline`].
    series: Option<Series>,
    /// With two hosts: each host's counts, host A first, and the successes and the budget's
    /// refusals counted so far, to share out to the host of the next request that ends.
    hosts: Option<([HostCounts; 2], u64, u64)>,
    /// The pool of replicas, if the dependency has one.
    pool: Option<Pool>,
    /// With a fan-out: the requests whose sub-requests run, and the requests' figures.
    fan: Option<Fan>,
    /// The successes counted when the latest request ended: a request that ends with more
    /// succeeded.
    successes_seen: u64,
}

/// The pool's state: its replicas and the generator of the service times.
struct Pool {
    replicas: Vec<Replica<Kind>>,
    concurrency: u32,
    service: Delay,
    service_rng: SeededRng,
    pause: Nanos,
    pause_every: f64,
}

/// A request that fans out: when it started, how many of its sub-requests are still running,
/// and whether one has failed.
struct Parent {
    started: Nanos,
    running: u32,
    failed: bool,
}

/// The fan-out's bookkeeping: [`Loop::fan`].
struct Fan {
    parents: Slots<Parent>,
    /// The parent of each slot of the requests' table, by slot.
    owner: Vec<u32>,
    /// The requests, their successes and latencies.
    metrics: Metrics,
}

/// What the estimate takes of a pool: [`Composed::pool_terms`].
struct PoolTerms {
    /// Attempts per call.
    attempts: f64,
    /// An attempt's time at a replica, at most `limit`.
    sojourn: f64,
    /// The time a paused replica's backlog holds calls, spread over the replicas.
    backlog: f64,
    /// The longest an attempt may take.
    limit: f64,
}

/// One host's counts, while a run with two hosts goes.
#[derive(Clone, Copy, Default)]
struct HostCounts {
    requests: u64,
    successes: u64,
    retries: u64,
    refused: u64,
}

impl HostCounts {
    fn figures(self) -> HostFigures {
        HostFigures {
            requests: self.requests,
            successes: self.successes,
            success_share: if self.requests == 0 {
                0.0
            } else {
                self.successes as f64 / self.requests as f64
            },
            retries: self.retries,
            refused: self.refused,
        }
    }
}

/// The attempts a budget refused so far, as the metrics count the give-ups: retries
/// (`budget-exhausted`) and, for a budget that refuses first attempts, those.
fn budget_refusals(metrics: &Metrics) -> u64 {
    metrics.gave_up_for(StopReason::BudgetExhausted)
        + metrics.gave_up_for(StopReason::BudgetRefusedFirstAttempt)
}

impl<'a> Loop<'a> {
    fn new(
        model: &'a Composed,
        strategy: &'a Strategy,
        layers: &'a [Layer],
        seed: u64,
        keep_times: bool,
    ) -> Result<Self, SimError> {
        let mut world = SeededRng::new(seed);
        let n = model.clients.count() as usize;
        let end = nanos(model.duration);
        // One source per request merges the open sources into one Poisson process of their
        // summed rate.
        let merged = match (model.clients, model.per_request()) {
            (Clients::Open { sources, .. }, true) => sources as f64,
            _ => 1.0,
        };
        let profile = model
            .clients
            .rate()
            .map(|rate| model.profile(rate * merged));
        let mean_gap = profile.map_or(f64::INFINITY, |p| SECOND as f64 / p.peak());
        let thinning = profile
            .filter(|p| matches!(model.clients, Clients::Open { .. }) && p.varies())
            .map(|p| (p, p.peak()));
        // With no budget, one "no budget" for all: it holds no state.
        let unlimited = strategy.shared_unlimited();
        let per_host = model
            .dependency
            .two_hosts
            .is_some_and(|h| h.budget_per_host);
        // A source's budget, and with a budget per host its set of them.
        let budget_of = |rng: SeededRng, first: Option<&Source>| -> Result<Budgets, SimError> {
            Ok(match (&unlimited, first, model.budget_scope) {
                (Some(none), _, _) => (none.clone(), None),
                (None, Some(first), BudgetScope::Shared) => {
                    (first.budget.clone(), first.per_host.clone())
                }
                (None, _, _) => match strategy.budget_config().filter(|_| per_host) {
                    Some(config) => {
                        let set =
                            Partitioned::with(HOSTS.len(), rng, move |rng| config.build(rng))?;
                        (None, Some(Rc::new(set)))
                    }
                    None => (strategy.client_budget(rng), None),
                },
            })
        };
        let mut sources: Vec<Source> = Vec::with_capacity(model.sources());
        let mut budget_each = false;
        // The pool's service times and its replicas' pauses: after the tail's streams for one
        // open source, from a stream of their own otherwise.
        let mut pool_rngs: Option<SeededRng> = None;
        let mut pool_world: Option<SeededRng> = None;
        if model.per_request() {
            // One stream for the arrivals, the network and the failures; each request forks
            // its budget (if there is one), its policy's and its spread's from the world.
            let gaps = world.fork();
            let budgets = match (&unlimited, model.budget_scope) {
                (None, BudgetScope::Shared) => budget_of(world.fork(), None)?,
                (Some(none), _) => (none.clone(), None),
                (None, _) => {
                    budget_each = true;
                    (None, None)
                }
            };
            sources.push(Source::new(gaps, None, world, budgets));
        } else {
            match model.clients {
                Clients::Open { sources: 1, .. } if model.dependency.replicas.is_some() => {
                    // The tail's order: the arrivals, the routing, the service times, the
                    // policies, the budget, then each replica's pauses.
                    let gaps = world.fork();
                    let server = Some(world.fork());
                    pool_rngs = Some(world.fork());
                    let policies = world.fork();
                    let budgets = budget_of(world.fork(), None)?;
                    sources.push(Source::new(gaps, server, policies, budgets));
                    pool_world = Some(world);
                }
                Clients::Open { sources: 1, .. } => {
                    let gaps = world.fork();
                    let server = Some(world.fork());
                    let budgets = budget_of(world.fork(), None)?;
                    sources.push(Source::new(gaps, server, world, budgets));
                }
                clients => {
                    let open = matches!(clients, Clients::Open { .. });
                    for _ in 0..n {
                        // Open sources fork their arrivals first; serial clients their
                        // pacing last. The budget's is forked whether or not there is a
                        // budget, so that the streams stay the same.
                        let first = open.then(|| world.fork());
                        let server = Some(world.fork());
                        let policies = world.fork();
                        let budgets = budget_of(world.fork(), sources.first())?;
                        let gaps = first.unwrap_or_else(|| world.fork());
                        sources.push(Source::new(gaps, server, policies, budgets));
                    }
                }
            }
        }
        let pool = model.dependency.replicas.map(|r| {
            let mut world = pool_world
                .take()
                .unwrap_or_else(|| SeededRng::new(seed ^ POOL_STREAM));
            let service_rng = pool_rngs.take().unwrap_or_else(|| world.fork());
            Pool {
                replicas: (0..r.count).map(|_| Replica::new(world.fork())).collect(),
                concurrency: r.concurrency,
                service: r.service,
                service_rng,
                pause: nanos(r.pause),
                pause_every: ns(r.pause_every),
            }
        });
        let settings = model.settings();
        let requests = model.requests().max(1.0);
        let room = match model.clients {
            Clients::Serial { .. } => n,
            _ => {
                room_for(model.in_flight(&model.plan(strategy)).min(requests)).max(model.sources())
            }
        };
        let gate = if model.gate {
            Some(Arc::new(Gate::new(HOSTS.len())?))
        } else {
            None
        };
        let limiting = model.dependency.limiter.map(|limiter| Limiting {
            rate: match limiter.kind {
                LimiterKind::Rate { rate, burst } => Some(RateLimiter::new(rate, burst)),
                LimiterKind::Concurrency { .. } => None,
            },
            concurrency: match limiter.kind {
                LimiterKind::Concurrency { limit, service } => Some((limit, nanos(service), 0)),
                LimiterKind::Rate { .. } => None,
            },
            limiter,
            rejected: 0,
            early: 0,
        });
        let mut run = Self {
            model,
            strategy,
            template: PolicyTemplate::new(&strategy.policy)?,
            layers,
            no_budget: None,
            layer_rngs: SeededRng::new(seed ^ LAYER_STREAM).fork(),
            settings,
            sources,
            budget_each,
            gate,
            requests: Slots::with_capacity(room),
            queue: EventQueue::new(),
            metrics: if keep_times {
                Metrics::unordered(nanos(model.window), 0)
            } else {
                Metrics::new(nanos(model.window))
            },
            outage: OutageCounts::default(),
            limiting,
            down: model.dependency.outage.map(|w| {
                (
                    nanos(w.at),
                    nanos(w.at.saturating_add(w.lasts)),
                    w.retry_after,
                )
            }),
            end,
            mean_gap,
            may_wait: model.gate || model.dependency.tells_waits(),
            thinning,
            service: model
                .dependency
                .service
                .map(|s| (nanos(s.base), nanos(s.per_in_flight), 0)),
            outstanding: 0,
            next_id: 0,
            arrivals_queued: 0,
            travelling: 0,
            horizon: model.horizon(),
            sketch: LatencySketch::new(),
            series: None,
            hosts: model
                .dependency
                .two_hosts
                .map(|_| ([HostCounts::default(); 2], 0, 0)),
            pool,
            fan: (model.fanout > 1).then(|| Fan {
                parents: Slots::with_capacity(16),
                owner: Vec::new(),
                metrics: Metrics::new(nanos(model.window)),
            }),
            successes_seen: 0,
        };
        match model.clients {
            Clients::Fixed { count } => {
                for _ in 0..count {
                    run.arrive_at(0, 0);
                }
            }
            Clients::Open { .. } => {
                for c in 0..run.sources.len() {
                    let gap = exponential(&mut run.sources[c].gaps, mean_gap) as Nanos;
                    if gap < end {
                        run.arrive_at(gap, c as u32);
                    }
                }
            }
            Clients::Serial { .. } => {
                for c in 0..n {
                    if let Some(at) = run.next_start(c as u32, 0) {
                        run.arrive_at(at, c as u32);
                    }
                }
            }
        }
        Ok(run)
    }

    /// Queues source `c`'s next arrival at `at`.
    #[inline(always)]
    fn arrive_at(&mut self, at: Nanos, c: u32) {
        self.arrivals_queued += 1;
        self.queue.push(at, Event::Arrival(c));
    }

    /// Notes that the request in `slot` is a sub-request of `parent`, if it has one.
    fn own(&mut self, slot: u32, parent: Option<u32>) {
        if let (Some(fan), Some(parent)) = (self.fan.as_mut(), parent) {
            let i = slot as usize;
            if fan.owner.len() <= i {
                fan.owner.resize(i + 1, 0);
            }
            fan.owner[i] = parent;
        }
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

    /// The request in `slot` is over at `now`: frees it, and for a serial client schedules its
    /// next.
    #[inline(always)]
    fn finish(&mut self, slot: u32, now: Nanos) {
        let Some(request) = self.requests.get(slot) else {
            return;
        };
        let c = request.source;
        if let Some((counts, successes, refused)) = self.hosts.as_mut() {
            // The successes and refusals since the last request ended are this one's.
            let host = &mut counts[usize::from(!request.to_down)];
            let (now_successes, now_refused) =
                (self.metrics.successes, budget_refusals(&self.metrics));
            host.successes += now_successes - *successes;
            host.refused += now_refused - *refused;
            (*successes, *refused) = (now_successes, now_refused);
        }
        self.requests.remove(slot);
        if let Some(fan) = self.fan.as_mut() {
            // The request succeeded if a success was counted since the latest one ended.
            let succeeded = self.metrics.successes > self.successes_seen;
            self.successes_seen = self.metrics.successes;
            if let Some(&p) = fan.owner.get(slot as usize)
                && let Some(parent) = fan.parents.get(p)
            {
                parent.running -= 1;
                parent.failed |= !succeeded;
                if parent.running == 0 {
                    if !parent.failed {
                        fan.metrics.success(now - parent.started);
                        if let Some(series) = self.series.as_mut() {
                            series.success(now);
                        }
                    }
                    fan.parents.remove(p);
                }
            }
        }
        if matches!(self.model.clients, Clients::Serial { .. })
            && let Some(at) = self.next_start(c, now)
        {
            self.arrive_at(at, c);
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
            if let Some(series) = self.series.as_mut() {
                let in_flight = self.service.map_or(self.outstanding, |s| s.2);
                series.sample(now, in_flight);
            }
            // Past the horizon, or once nothing is left to follow: no request to come or in
            // flight, and no attempt on its way to the dependency (the work it still does for
            // abandoned attempts answers nobody).
            if now >= self.horizon
                || (self.arrivals_queued == 0 && self.travelling == 0 && self.requests.live() == 0)
            {
                break;
            }
            match event {
                Event::Arrival(c) => {
                    self.arrivals_queued -= 1;
                    self.arrival(c, now)?;
                }
                Event::Send(slot) => self.send(slot, now)?,
                Event::Arrive(slot, id) => {
                    self.travelling -= 1;
                    self.arrive(slot, id, now);
                }
                Event::Served(slot, id, kind, wait) => {
                    self.served(slot, id, now, Outcome::join(kind, wait));
                }
                Event::Answer(slot, id, kind, wait) => {
                    if matches!(kind, Kind::Throttled | Kind::Busy) {
                        self.told(slot, id, now, wait);
                    }
                    let result = self.result_of(Outcome::join(kind, wait));
                    self.heard(slot, id, now, result)?;
                }
                Event::Timeout(slot, id) => self.heard(slot, id, now, Err(Failure::Timeout))?,
                Event::Done(replica, slot, id, kind) => self.done(replica, slot, id, kind, now)?,
                Event::Wake(slot) => self.wake(slot, now)?,
            }
        }
        Ok(())
    }

    /// Source `c`'s request starts at `now`; an open source's next arrival is drawn first.
    /// With a load that varies, the arrival is a candidate, kept with probability
    /// `rate(now) / peak` (drawn before the next candidate's gap).
    fn arrival(&mut self, c: u32, now: Nanos) -> Result<(), SimError> {
        let source = &mut self.sources[c as usize];
        let mut kept = true;
        if matches!(self.model.clients, Clients::Open { .. }) {
            if let Some((profile, peak)) = &self.thinning {
                let t = now as f64 / SECOND as f64;
                kept = source.gaps.next_f64() * peak < profile.at(t);
            }
            let next = now.saturating_add(exponential(&mut source.gaps, self.mean_gap) as Nanos);
            if next < self.end {
                self.arrive_at(next, c);
            }
        }
        if !kept {
            return Ok(());
        }
        if self.fan.is_some()
            && let Some(series) = self.series.as_mut()
        {
            // The timeline counts requests, not their sub-requests.
            series.arrival(now);
        }
        let parent = self.fan.as_mut().map(|fan| {
            fan.metrics.first_try();
            fan.parents.insert(Parent {
                started: now,
                running: self.model.fanout,
                failed: false,
            })
        });
        for _ in 0..self.model.fanout {
            self.start(c, now, parent)?;
        }
        Ok(())
    }

    /// A request of source `c` starts at `now`, a sub-request of `parent` if it has one.
    fn start(&mut self, c: u32, now: Nanos, parent: Option<u32>) -> Result<(), SimError> {
        self.metrics.first_try();
        if parent.is_none()
            && let Some(series) = self.series.as_mut()
        {
            series.arrival(now);
        }
        let source = &mut self.sources[c as usize];
        // With two hosts, the request's host, its policy's generator and its answers' come
        // from a generator of its own.
        let (to_down, mut own) = match self.model.dependency.two_hosts {
            Some(hosts) => {
                let mut own = source.server().fork();
                let to_down = own.next_f64() < hosts.share_down;
                (to_down, Some(own))
            }
            None => (false, None),
        };
        let host = usize::from(!to_down);
        if let Some((counts, ..)) = self.hosts.as_mut() {
            counts[host].requests += 1;
        }
        let mut budget = if self.budget_each {
            self.strategy.client_budget(source.policies.fork())
        } else if let Some(set) = &source.per_host {
            Some(Rc::new(set.for_key(HOSTS[host])) as Rc<dyn Budget>)
        } else {
            source.budget.clone()
        };
        if let Some(gate) = &self.gate {
            let key = if own.is_some() {
                HOSTS[host]
            } else {
                DESTINATION
            };
            budget = Some(Rc::new(Gated::new(budget, Arc::clone(gate), key)));
        }
        let policy_rng = own.as_mut().map(SeededRng::fork);
        let answers = own.unwrap_or(SeededRng::new(0));
        let tells_waits = self.model.dependency.tells_waits();
        if let Some(hedging) = self.strategy.hedging {
            let measured = match hedging.delay() {
                HedgeDelay::Quantile(q) => self.sketch.quantile(q),
                _ => None,
            };
            let rng = policy_rng.unwrap_or_else(|| source.policies.fork());
            // A hedged request that may meet a server's wait gets its spread's generator now.
            let spread = tells_waits.then(|| source.policies.fork());
            let call = HedgedCall::start(
                self.template.start(rng),
                hedging,
                measured,
                spread,
                budget,
                self.settings,
                now,
            )?;
            let slot = self.requests.insert(Request {
                run: Driven::Hedged(Box::new(HedgedRequest {
                    call,
                    flying: Vec::new(),
                    wake: Some(now),
                    used: Vec::new(),
                })),
                source: c,
                met: false,
                not_before: 0,
                told_at: 0,
                sent: 0,
                reached: false,
                to_down,
                answers,
            });
            self.own(slot, parent);
            // The hedged request is asked what to do once the events queued for now are done.
            self.queue.push(now, Event::Wake(slot));
            return Ok(());
        }
        let mut call = Call::start(
            self.template
                .start(policy_rng.unwrap_or_else(|| source.policies.fork())),
            budget,
            self.settings,
            now,
        );
        if self.model.per_request() && tells_waits {
            call = call.spread(source.policies.fork());
        }
        let slot = self.requests.insert(Request {
            run: Driven::Retried {
                call,
                inner: Vec::new(),
                pending: None,
                sent_at: 0,
                trip: 0,
            },
            source: c,
            met: false,
            not_before: 0,
            told_at: 0,
            sent: 0,
            reached: false,
            to_down,
            answers,
        });
        self.own(slot, parent);
        self.send(slot, now)
    }

    /// The request in `slot` sends an attempt at `now`, if the engine lets it: a gate may hold
    /// it to a later slot. An attempt of a layer above the innermost starts a run of the layer
    /// below, which sends its first attempt at once; the innermost layer's attempt goes to the
    /// dependency.
    fn send(&mut self, slot: u32, now: Nanos) -> Result<(), SimError> {
        let Some(request) = self.requests.get(slot) else {
            return Ok(());
        };
        let Driven::Retried { inner, .. } = &request.run else {
            return self.step(slot, now);
        };
        let mut depth = inner.len();
        let remaining = loop {
            let Some(top) = request.top() else {
                return Ok(());
            };
            // Only a gate or a server's wait can hold an attempt back; without either, the
            // answer is always to go now, and not asking saves a tenth of an attempt's cost.
            let begun = if self.may_wait {
                match top.pace(now) {
                    Ok(None) => top.try_begin(now),
                    Ok(Some(at)) => {
                        self.queue.push(at, Event::Send(slot));
                        return Ok(());
                    }
                    Err(stopped) => Err(stopped),
                }
            } else {
                top.try_begin(now)
            };
            let attempt = match begun {
                Ok(attempt) => attempt,
                Err(stopped) => {
                    self.ended(slot, now, Ended::GaveUp(stopped));
                    return Ok(());
                }
            };
            let Some(layer) = self.layers.get(depth) else {
                break attempt.remaining;
            };
            // The layer below runs inside this attempt: within the time it has, and its own
            // deadline if that is sooner, as an executor's attempt is raced against it.
            let mut settings = layer.settings;
            if let Some(left) = attempt.remaining {
                let within = settings.timeout().map_or(left, |own| own.min(left));
                settings = settings.with_timeout(within);
            }
            let mut call = Call::start(
                layer.policy.running(self.layer_rngs.fork())?,
                self.no_budget.clone(),
                settings,
                now,
            );
            call.nest();
            if let Driven::Retried { inner, .. } = &mut request.run {
                inner.push(call);
            }
            depth += 1;
        };
        request.sent += 1;
        self.metrics.attempt(now, request.sent);
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        if let Driven::Retried {
            pending, sent_at, ..
        } = &mut request.run
        {
            *pending = Some(id);
            *sent_at = now;
        }
        let c = request.source as usize;
        self.dispatch(slot, id, c, now, remaining);
        Ok(())
    }

    /// Sends attempt `id` of the request in `slot`, of source `c`, at `now`, with the time it
    /// has, `remaining` (the request already awaits it): the network carries it, and its
    /// timeout is set if its time can run out.
    #[inline(always)]
    fn dispatch(&mut self, slot: u32, id: Id, c: usize, now: Nanos, remaining: Option<Duration>) {
        self.outstanding += 1;
        if let Some(series) = self.series.as_mut() {
            series.attempt(now);
        }
        let timeout = remaining.map(|r| now.saturating_add(nanos(r)));
        if self.hosts.is_some() && self.send_to_host(slot, id, now, timeout) {
            return;
        }
        match self.model.network {
            Network::RoundTrip(rtt) => {
                let back = now.saturating_add(rtt.sample(self.answers(slot, c)));
                let outcome = self.reach(slot, id, Some(c), now);
                if self.pool.is_some() && matches!(outcome, Outcome::Ok | Outcome::Failed) {
                    // Into service (or the queue) first, so that an attempt served at once
                    // whose work ends at its timeout is answered: the answer wins a tie, as
                    // without a pool.
                    self.enter_pool(slot, id, c, now, back - now, outcome);
                    if let Some(at) = timeout {
                        self.queue.push(at, Event::Timeout(slot, id));
                    }
                    return;
                }
                let answer = self.respond(slot, id, true, now, back, outcome);
                // The timeout matters only if it comes before the answer (which wins a tie).
                if let Some(at) = timeout.filter(|&at| answer.is_none_or(|a| at < a)) {
                    self.queue.push(at, Event::Timeout(slot, id));
                }
            }
            Network::OneWay(delay) => {
                let at = now.saturating_add(delay.sample(self.answers(slot, c)));
                self.travelling += 1;
                self.queue.push(at, Event::Arrive(slot, id));
                if let Some(at) = timeout {
                    self.queue.push(at, Event::Timeout(slot, id));
                }
            }
        }
    }

    /// With two hosts: counts attempt `id` of the request in `slot`, sent at `now`, for its
    /// host, and if it goes to host A, which is down, queues its failure once the network has
    /// carried it there and back (or its timeout, if that comes first). Whether it went to A.
    fn send_to_host(&mut self, slot: u32, id: Id, now: Nanos, timeout: Option<Nanos>) -> bool {
        let (Some((counts, ..)), Some(request)) = (self.hosts.as_mut(), self.requests.get(slot))
        else {
            return false;
        };
        if request.sent > 1 {
            counts[usize::from(!request.to_down)].retries += 1;
        }
        if !request.to_down {
            return false;
        }
        let trip = match self.model.network {
            Network::RoundTrip(rtt) => rtt.sample(&mut request.answers),
            Network::OneWay(delay) => {
                let there = delay.sample(&mut request.answers);
                there.saturating_add(delay.sample(&mut request.answers))
            }
        };
        let back = now.saturating_add(trip);
        let (kind, wait) = Outcome::Failed.split();
        self.queue.push(back, Event::Answer(slot, id, kind, wait));
        if let Some(at) = timeout.filter(|&at| at < back) {
            self.queue.push(at, Event::Timeout(slot, id));
        }
        true
    }

    /// The generator of the network's delays and the failures for the request in `slot`, of
    /// source `c`: its own with two hosts, its source's otherwise.
    #[inline(always)]
    fn answers(&mut self, slot: u32, c: usize) -> &mut SeededRng {
        if self.hosts.is_some()
            && let Some(request) = self.requests.get(slot)
        {
            return &mut request.answers;
        }
        self.sources[c].server()
    }

    /// Asks the hedged request in `slot` what to do at `now`, and does it: sends the attempts
    /// it sends, sets the wake-up it asks for, or ends it.
    fn step(&mut self, slot: u32, now: Nanos) -> Result<(), SimError> {
        loop {
            let Some(request) = self.requests.get(slot) else {
                return Ok(());
            };
            let Driven::Hedged(h) = &mut request.run else {
                return Ok(());
            };
            match h.call.next(now, &mut self.metrics) {
                Step::Send(number, remaining) => {
                    request.sent += 1;
                    let id = self.next_id;
                    self.next_id = self.next_id.wrapping_add(1);
                    h.flying.push(Flying {
                        id,
                        number,
                        sent: now,
                        trip: 0,
                    });
                    let c = request.source as usize;
                    self.dispatch(slot, id, c, now, remaining);
                }
                Step::WakeAt(at) => {
                    if h.wake.is_none_or(|w| at < w) {
                        h.wake = Some(at);
                        self.queue.push(at, Event::Wake(slot));
                    }
                    return Ok(());
                }
                Step::Idle => return Ok(()),
                Step::Done => {
                    self.finish_hedged(slot, now);
                    return Ok(());
                }
            }
        }
    }

    /// The hedged request in `slot` asked to be woken at `now`.
    fn wake(&mut self, slot: u32, now: Nanos) -> Result<(), SimError> {
        let Some(Request {
            run: Driven::Hedged(h),
            ..
        }) = self.requests.get(slot)
        else {
            return Ok(());
        };
        if h.wake != Some(now) {
            return Ok(());
        }
        h.wake = None;
        self.step(slot, now)
    }

    /// The hedged request in `slot` is over at `now`: its attempts still awaited are abandoned
    /// (the dependency works on), each measured for as long as it ran.
    fn finish_hedged(&mut self, slot: u32, now: Nanos) {
        if let Some(Request {
            run: Driven::Hedged(h),
            ..
        }) = self.requests.get(slot)
        {
            for f in &h.flying {
                self.sketch.record(Duration::from_nanos(now - f.sent));
            }
            self.outstanding -= h.flying.len() as u64;
        }
        self.finish(slot, now);
    }

    /// Whether the request in `slot` awaits attempt `id`: its source if it does.
    fn awaiting(&mut self, slot: u32, id: Id) -> Option<usize> {
        self.requests
            .get(slot)
            .filter(|r| r.awaits(id))
            .map(|r| r.source as usize)
    }

    /// Attempt `id` of the request in `slot` reaches the dependency at `now` (one-way
    /// network). The dependency works on it whether or not its client still waits.
    fn arrive(&mut self, slot: u32, id: Id, now: Nanos) {
        let Network::OneWay(delay) = self.model.network else {
            return;
        };
        let live = self.awaiting(slot, id);
        let outcome = self.reach(slot, id, live, now);
        let Some(c) = live else {
            // Nobody waits for the answer: only the work it takes the dependency is left (a
            // pool drops it).
            self.respond(slot, id, false, now, now, outcome);
            return;
        };
        if self.pool.is_some() && matches!(outcome, Outcome::Ok | Outcome::Failed) {
            self.enter_pool(slot, id, c, now, 0, outcome);
            return;
        }
        // Served work's answer travels back once it is done.
        if self.service.is_some() && matches!(outcome, Outcome::Ok | Outcome::Failed) {
            self.respond(slot, id, true, now, now, outcome);
            return;
        }
        let back = now.saturating_add(delay.sample(self.answers(slot, c)));
        self.respond(slot, id, true, now, back, outcome);
    }

    /// Schedules the answer to attempt `id` of the request in `slot`, which reached the
    /// dependency at `now`: at `back`, or, through a concurrency limiter that admitted it or
    /// the service, once it is served. Work whose client no longer waits is still served.
    /// Returns when the answer reaches the client, if that is known now (not behind the
    /// service, whose way back is drawn once the work is done).
    fn respond(
        &mut self,
        slot: u32,
        id: Id,
        live: bool,
        now: Nanos,
        back: Nanos,
        outcome: Outcome,
    ) -> Option<Nanos> {
        if let Some(limiting) = self.limiting.as_mut()
            && let Some((_, service, in_service)) = limiting.concurrency.as_mut()
            && !matches!(outcome, Outcome::Busy(_))
        {
            *in_service += 1;
            let served = now.saturating_add(*service);
            // The answer travels back after the service, as long as it would have.
            if live && let Some(request) = self.requests.get(slot) {
                request.set_trip(id, back.saturating_sub(now));
            }
            let (kind, wait) = outcome.split();
            self.queue.push(served, Event::Served(slot, id, kind, wait));
            return Some(served.saturating_add(back.saturating_sub(now)));
        }
        if let Some((base, per, in_progress)) = self.service.as_mut()
            && matches!(outcome, Outcome::Ok | Outcome::Failed)
        {
            // The arriving attempt is in progress too, and slows itself.
            *in_progress += 1;
            let time = base.saturating_add(per.saturating_mul(*in_progress));
            let (kind, wait) = outcome.split();
            self.queue.push(
                now.saturating_add(time),
                Event::Served(slot, id, kind, wait),
            );
            return None;
        }
        if live {
            let (kind, wait) = outcome.split();
            self.queue.push(back, Event::Answer(slot, id, kind, wait));
        }
        Some(back)
    }

    /// Attempt `id` of the request in `slot`, of source `c`, reaches the pool at `now`, to be
    /// answered `outcome` once served and then `trip` later (a round trip's time back; 0 for a
    /// one-way network, whose way back is drawn once it is served). It goes to a replica
    /// picked at random (a hedge to one its request has not tried), with its service time
    /// drawn now, and is served at once if the replica has room, queued otherwise.
    fn enter_pool(
        &mut self,
        slot: u32,
        id: Id,
        c: usize,
        now: Nanos,
        trip: Nanos,
        outcome: Outcome,
    ) {
        let (Some(pool), Some(request)) = (self.pool.as_mut(), self.requests.get(slot)) else {
            return;
        };
        let n = pool.replicas.len();
        let rng = self.sources[c].server();
        let r = match &mut request.run {
            Driven::Hedged(h) => {
                let r = crate::pool::distinct(rng, n, &h.used);
                h.used.push(r as u32);
                h.used.sort_unstable();
                r
            }
            Driven::Retried { .. } => crate::pool::any(rng, n),
        };
        request.set_trip(id, trip);
        let work = pool.service.sample(&mut pool.service_rng);
        let waiting = Waiting {
            slot,
            id,
            work,
            kind: outcome.split().0,
        };
        if pool.replicas[r].busy < pool.concurrency {
            self.serve(r, waiting, now);
        } else {
            pool.replicas[r].waiting.push_back(waiting);
        }
    }

    /// Replica `r` starts serving `w` at `now`.
    fn serve(&mut self, r: usize, w: Waiting<Kind>, now: Nanos) {
        let Some(pool) = self.pool.as_mut() else {
            return;
        };
        let replica = &mut pool.replicas[r];
        replica.busy += 1;
        let done = replica.finish(now, w.work, pool.pause, pool.pause_every);
        self.queue
            .push(done, Event::Done(r as u32, w.slot, w.id, w.kind));
    }

    /// Replica `r` finished attempt `id` of the request in `slot` at `now`: it starts the next
    /// attempt in its queue whose client still waits for it, dropping those that do not, and
    /// the answer `kind` goes back to the client, if it still waits.
    fn done(&mut self, r: u32, slot: u32, id: Id, kind: Kind, now: Nanos) -> Result<(), SimError> {
        let r = r as usize;
        if let Some(pool) = self.pool.as_mut() {
            pool.replicas[r].busy -= 1;
            while let Some(w) = pool.replicas[r].waiting.pop_front() {
                if self.requests.get(w.slot).is_some_and(|q| q.awaits(w.id)) {
                    self.serve(r, w, now);
                    break;
                }
            }
        }
        let Some(c) = self.awaiting(slot, id) else {
            return Ok(());
        };
        let back = match self.model.network {
            Network::OneWay(delay) => now.saturating_add(delay.sample(self.answers(slot, c))),
            Network::RoundTrip(_) => match self.requests.get(slot) {
                Some(request) => now.saturating_add(request.trip(id)),
                None => return Ok(()),
            },
        };
        if back == now {
            // Nothing to travel: the client hears it now.
            let result = self.result_of(Outcome::join(kind, 0));
            return self.heard(slot, id, now, result);
        }
        self.queue.push(back, Event::Answer(slot, id, kind, 0));
        Ok(())
    }

    /// Attempt `id` of the request in `slot` leaves the concurrency limiter or the service at
    /// `now`, served: its answer travels back, if its client still waits.
    fn served(&mut self, slot: u32, id: Id, now: Nanos, outcome: Outcome) {
        if let Some((_, _, in_progress)) = self.service.as_mut() {
            *in_progress -= 1;
        } else if let Some((_, _, in_service)) =
            self.limiting.as_mut().and_then(|l| l.concurrency.as_mut())
        {
            *in_service = in_service.saturating_sub(1);
        }
        let Some(c) = self.awaiting(slot, id) else {
            return;
        };
        let back = match (self.service.is_some(), self.model.network) {
            (true, Network::OneWay(delay)) => {
                now.saturating_add(delay.sample(self.answers(slot, c)))
            }
            _ => match self.requests.get(slot) {
                Some(request) => now.saturating_add(request.trip(id)),
                None => return,
            },
        };
        let (kind, wait) = outcome.split();
        self.queue.push(back, Event::Answer(slot, id, kind, wait));
    }

    /// What the dependency answers to attempt `id` of the request in `slot` reaching it at
    /// `now`: a limiter in front refuses it, or the outage or the failure probability decide.
    /// `live` is the request's source if it still awaits the attempt: only then is the request
    /// marked (its first attempt met the outage) and a failure drawn, from its source's server
    /// generator. A limiter's wait runs from when the client hears it ([`Loop::told`]).
    fn reach(&mut self, slot: u32, id: Id, live: Option<usize>, now: Nanos) -> Outcome {
        let mut request = match live {
            Some(_) => self.requests.get(slot).filter(|r| r.awaits(id)),
            None => None,
        };
        if let Some(limiting) = self.limiting.as_mut() {
            if request
                .as_ref()
                .is_some_and(|r| now < r.not_before && r.sent_at(id) >= r.told_at)
            {
                limiting.early += 1;
            }
            let refusal = match limiting.concurrency {
                Some((limit, service, in_service)) => (in_service >= limit).then_some(service),
                None => limiting.rate.as_mut().and_then(|r| r.admit(now).err()),
            };
            if let Some(exact) = refusal {
                limiting.rejected += 1;
                let wait = limiting
                    .limiter
                    .form
                    .wait(nanos(limiting.limiter.retry_after), exact);
                return if limiting.concurrency.is_some() {
                    Outcome::Busy(wait)
                } else {
                    Outcome::Throttled(wait)
                };
            }
        }
        // Admitted: the attempt reaches the dependency (the recovery load counts it), and the
        // request met the outage if its first attempt to get through found it down.
        if let Some((_, up, _)) = self.down
            && (up..up.saturating_add(SECOND)).contains(&now)
        {
            self.outage.recovery_load += 1;
        }
        let first = request
            .as_mut()
            .is_some_and(|request| !std::mem::replace(&mut request.reached, true));
        if let Some((down, up, _)) = self.down
            && (down..up).contains(&now)
        {
            if first && let Some(request) = request {
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
        } else if let Some(c) = live {
            self.answers(slot, c).next_f64() < x
        } else {
            // Nobody hears the answer: no draw.
            false
        };
        if failed { Outcome::Failed } else { Outcome::Ok }
    }

    /// The client of the request in `slot` hears at `now` a refusal of attempt `id` that tells
    /// it to wait `wait`: an attempt it sends from now on that reaches the limiter before then
    /// (and the least one-way trip after it) is early. A refusal it never hears (its attempt
    /// timed out first) tells it nothing.
    fn told(&mut self, slot: u32, id: Id, now: Nanos, wait: Nanos) {
        let least = self.model.network.least_one_way();
        if let Some(request) = self.requests.get(slot).filter(|r| r.awaits(id)) {
            request.told_at = now;
            request.not_before = now.saturating_add(wait).saturating_add(least);
        }
    }

    /// What an answer tells the client.
    fn result_of(&self, outcome: Outcome) -> Result<(), Failure> {
        match outcome {
            Outcome::Ok => Ok(()),
            Outcome::Failed => Err(Failure::Retryable),
            Outcome::Down => Err(self
                .down
                .and_then(|(_, _, wait)| wait)
                .map_or(Failure::Retryable, Failure::RetryAfter)),
            Outcome::Throttled(wait) => Err(Failure::Throttled(Some(Duration::from_nanos(wait)))),
            Outcome::Busy(wait) => Err(Failure::RetryAfter(Duration::from_nanos(wait))),
        }
    }

    /// Attempt `id` of the request in `slot` ended at `now` with `result` (its answer, or its
    /// timeout), if the request still awaits it.
    fn heard(
        &mut self,
        slot: u32,
        id: Id,
        now: Nanos,
        result: Result<(), Failure>,
    ) -> Result<(), SimError> {
        let Some(request) = self.requests.get(slot).filter(|r| r.awaits(id)) else {
            return Ok(());
        };
        self.outstanding -= 1;
        let h = match &mut request.run {
            Driven::Retried { pending, .. } => {
                *pending = None;
                match self.settle_top(slot, now, result) {
                    Some(Settled::RetryAt(at)) => self.queue.push(at, Event::Send(slot)),
                    Some(Settled::Succeeded { latency }) => {
                        self.ended(slot, now, Ended::Succeeded { latency });
                    }
                    Some(Settled::GaveUp(stopped)) => {
                        self.ended(slot, now, Ended::GaveUp(stopped));
                    }
                    None => {}
                }
                return Ok(());
            }
            Driven::Hedged(h) => h,
        };
        let Some(i) = h.flying.iter().position(|f| f.id == id) else {
            return Ok(());
        };
        let flying = h.flying.swap_remove(i);
        self.sketch.record(Duration::from_nanos(now - flying.sent));
        let before = self.metrics.successes;
        if !h
            .call
            .answered(flying.number, now, result, &mut self.metrics)
        {
            return self.step(slot, now);
        }
        if self.metrics.successes > before {
            self.succeeded(slot, now);
        }
        self.finish_hedged(slot, now);
        Ok(())
    }

    /// The request in `slot` succeeded at `now` (its success recorded): the outage's and the
    /// timeline's counts.
    fn succeeded(&mut self, slot: u32, now: Nanos) {
        if self.requests.get(slot).is_some_and(|r| r.met) {
            self.outage.met_succeeded += 1;
        }
        if self.fan.is_none()
            && let Some(series) = self.series.as_mut()
        {
            series.success(now);
        }
    }

    /// The innermost run in progress of the request in `slot` hears `result` at `now`. A run
    /// that needs a generator for the spread above a server's wait gets one first: the
    /// outermost from its source's policy generator, an inner one from the inner layers'
    /// stream. `None` if the slot is empty.
    fn settle_top(
        &mut self,
        slot: u32,
        now: Nanos,
        result: Result<(), Failure>,
    ) -> Option<Settled> {
        let request = self.requests.get(slot)?;
        let source = request.source as usize;
        let inner = matches!(&request.run, Driven::Retried { inner, .. } if !inner.is_empty());
        let top = request.top()?;
        if let Err(failure) = &result
            && top.wants_spread(failure)
        {
            let rng = if inner {
                self.layer_rngs.fork()
            } else {
                self.sources[source].policies.fork()
            };
            top.give_spread(rng);
        }
        Some(top.settle(now, result))
    }

    /// The innermost run in progress of the request in `slot` ended at `now`: an inner layer's
    /// end is the answer to the attempt of the layer above, which may retry (a new run of the
    /// layer below); the outermost layer's end is the request's, recorded.
    fn ended(&mut self, slot: u32, now: Nanos, mut ended: Ended) {
        loop {
            let Some(Request {
                run: Driven::Retried { inner, .. },
                ..
            }) = self.requests.get(slot)
            else {
                return;
            };
            if inner.pop().is_none() {
                match ended {
                    Ended::Succeeded { latency } => {
                        self.metrics.success(latency);
                        self.succeeded(slot, now);
                    }
                    Ended::GaveUp(stopped) => self.metrics.gave_up(stopped.reason),
                }
                self.finish(slot, now);
                return;
            }
            let result = match &ended {
                Ended::Succeeded { .. } => Ok(()),
                Ended::GaveUp(stopped) => Err(failure_of(stopped)),
            };
            ended = match self.settle_top(slot, now, result) {
                Some(Settled::RetryAt(at)) => {
                    self.queue.push(at, Event::Send(slot));
                    return;
                }
                Some(Settled::Succeeded { latency }) => Ended::Succeeded { latency },
                Some(Settled::GaveUp(stopped)) => Ended::GaveUp(stopped),
                None => return,
            };
        }
    }

    fn row(mut self) -> ResultRow {
        let requests = self.metrics.first_tries;
        let unfinished = self.requests.live() as u64;
        if unfinished > 0 {
            self.metrics.gave_up_as("unfinished", unfinished);
        }
        let mut row = self.metrics.row(
            self.strategy.name(),
            self.strategy.budget.map(|b| b.to_string()),
        );
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        if let Some(limiting) = &self.limiting {
            row.served_share = Some(ratio(row.successes, requests));
            row.rejected_per_success = Some(ratio(limiting.rejected, row.successes));
            row.early_retries = Some(limiting.early);
            row.dispersal = Some(self.model.dispersal.name());
            row.gate = Some(self.model.gate);
        }
        if self.down.is_some() {
            let o = &self.outage;
            row.success_rate = ratio(o.met_succeeded, o.met);
            row.met_outage = Some(o.met);
            row.recovery_load = Some(o.recovery_load);
        }
        if let (Some((counts, ..)), Some(hosts)) = (self.hosts, self.model.dependency.two_hosts) {
            row.budget_partition = Some(if hosts.budget_per_host {
                "partitioned"
            } else {
                "shared"
            });
            row.host_a = Some(counts[0].figures());
            row.host_b = Some(counts[1].figures());
        }
        let p999 = |m: &Metrics| {
            (!m.latency_us.is_empty())
                .then(|| m.latency_us.value_at_quantile(0.999) as f64 / 1_000.0)
        };
        if self.pool.is_some() {
            row.p999_ms = Some(p999(&self.metrics));
        }
        if let Some(mut fan) = self.fan {
            // Success and latency are the requests'; the load and the attempts the
            // sub-requests'.
            let whole = fan.metrics.row(
                self.strategy.name(),
                self.strategy.budget.map(|b| b.to_string()),
            );
            row.success_rate = whole.success_rate;
            row.p50_ms = whole.p50_ms;
            row.p99_ms = whole.p99_ms;
            row.p999_ms = Some(p999(&fan.metrics));
        }
        row
    }
}

#[cfg(test)]
mod tests {
    use stagger_core::budget::BudgetKind;
    use stagger_core::{AnyConfig, Param, PolicyConfig, PolicyKind};

    use super::*;

    /// Independent clients run one at a time give the event loop's figures, event counts
    /// apart: the same generators in the same order, whatever the policy, the budget, the
    /// deadline, the network's shape and the outcome.
    #[test]
    fn one_at_a_time_is_the_event_loop_without_the_queue() {
        let capped = AnyConfig::from(PolicyKind::Constant)
            .set(Param::MaxAttempts(6))
            .expect("a valid limit");
        let strategies = [
            Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter)),
            Strategy::policy(AnyConfig::from(PolicyKind::DecorrelatedJitter))
                .with_budget(Some(BudgetKind::AwsStandard)),
            Strategy::policy(capped).with_budget(Some(BudgetKind::Brooker)),
        ];
        let mut compared = 0;
        for network in [
            Network::OneWay(Delay::Constant { nanos: 1_000_000 }),
            Network::RoundTrip(Delay::Constant { nanos: 3_000_000 }),
        ] {
            for failure_rate in [1.0, 0.0] {
                for deadline in [None, Some(Duration::from_millis(700))] {
                    // An attempt timeout shorter than the round trip, and one equal to it (a
                    // tie the timeout wins on a one-way network and loses on a round trip).
                    for (scope, attempt_timeout) in [
                        (BudgetScope::PerSource, None),
                        (BudgetScope::PerRequest, None),
                        (BudgetScope::PerSource, Some(Duration::from_millis(2))),
                        (BudgetScope::PerRequest, Some(Duration::from_millis(3))),
                    ] {
                        let mut model = Composed::new(
                            Clients::Fixed { count: 300 },
                            Duration::from_secs(60),
                            network,
                        );
                        model.dependency.failure_rate = failure_rate;
                        model.deadline = deadline;
                        model.attempt_timeout = attempt_timeout;
                        model.budget_scope = scope;
                        for (i, strategy) in strategies.iter().enumerate() {
                            let round_trip =
                                model.independent(strategy, &[]).expect("independent parts");
                            let mut alone = model
                                .one_at_a_time(round_trip, strategy, 7, u64::MAX)
                                .expect("runs");
                            let mut run = Loop::new(&model, strategy, &[], 7, true).expect("made");
                            run.go(u64::MAX).expect("runs");
                            let mut times = run.metrics.retry_times().expect("kept").to_vec();
                            let mut alone_times = alone.retry_times().expect("kept").to_vec();
                            times.sort_unstable();
                            alone_times.sort_unstable();
                            assert_eq!(times, alone_times, "strategy {i}");
                            let mut looped = run.row();
                            let mut row = alone.row(strategy.policy.name(), None);
                            // The timeouts fire where they should: 2 ms cuts every attempt
                            // (a tie on the one-way 2 ms trip, short of the 3 ms round trip),
                            // and 3 ms none (longer than the one-way trip, a tie the round
                            // trip's answer wins).
                            if failure_rate == 0.0 {
                                let fired = attempt_timeout == Some(Duration::from_millis(2));
                                let all = if fired { 0 } else { 300 };
                                assert_eq!(row.successes, all, "{network:?} {attempt_timeout:?}");
                            }
                            assert!(looped.events > row.events);
                            (looped.events, row.events, looped.budget) = (0, 0, None);
                            assert_eq!(
                                looped, row,
                                "strategy {i}, {network:?}, {deadline:?}, {attempt_timeout:?}"
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 96);
    }

    /// Parts through which clients could affect one another, or draw from a shared stream,
    /// run through the event loop.
    #[test]
    fn only_independent_parts_skip_the_queue() {
        let strategy = Strategy::policy(AnyConfig::from(PolicyKind::Exponential));
        let herd = || {
            let mut m = Composed::new(
                Clients::Fixed { count: 10 },
                Duration::from_secs(60),
                Network::OneWay(Delay::Constant { nanos: 1_000 }),
            );
            m.dependency.failure_rate = 1.0;
            m
        };
        assert_eq!(herd().independent(&strategy, &[]), Some(2_000));
        let mut varied = herd();
        varied.network = Network::OneWay(Delay::Exponential { mean: 1_000 });
        let mut uncertain = herd();
        uncertain.dependency.failure_rate = 0.5;
        let mut gated = herd();
        gated.gate = true;
        let mut down = herd();
        down.dependency.outage = Some(Window {
            at: Duration::from_secs(1),
            lasts: Duration::from_secs(2),
            retry_after: None,
        });
        let mut open = herd();
        open.clients = Clients::Open {
            sources: 1,
            rate: 10.0,
        };
        for model in [varied, uncertain, gated, down, open] {
            assert_eq!(model.independent(&strategy, &[]), None, "{model:?}");
        }
        let mut shared = herd();
        shared.budget_scope = BudgetScope::Shared;
        assert_eq!(shared.independent(&strategy, &[]), Some(2_000));
        let budgeted = strategy.with_budget(Some(BudgetKind::Brooker));
        assert_eq!(shared.independent(&budgeted, &[]), None);
        let layer = Layer {
            policy: crate::strategy::SimPolicy::Catalog(AnyConfig::from(PolicyKind::Immediate)),
            settings: Settings::new(),
        };
        assert_eq!(herd().independent(&strategy, &[layer]), None);
    }
}
