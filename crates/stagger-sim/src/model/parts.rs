//! The parts a model is assembled from, as plain configuration: who calls ([`Clients`]),
//! the network between ([`Network`]) and what the dependency does ([`Dependency`] and its
//! pieces). Each is a value a scenario file or a workload fills in; the state each part keeps
//! while a run goes lives in the part's own module.
//!
//! A scenario file reads the parts with serde, refusing unknown keys. A part with times is
//! generic over how a time is written, `D`: a [`Duration`] by default, or the text a file
//! holds, read into a `Duration` (and refused by the key's name) once the whole file is read.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

use crate::dist::Delay;
use crate::error::SimError;
use crate::estimate::ns;
use crate::limits;
use crate::model::SECOND;
use crate::queue::Nanos;

/// Who sends the requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clients {
    /// `sources` independent Poisson sources, each sending `rate` requests a second whether or
    /// not its earlier requests are over: retries add load on top of the offered rate.
    Open {
        /// The sources (1 to [`Composed::MAX_SOURCES`](crate::model::Composed::MAX_SOURCES)).
        sources: u64,
        /// Each source's requests a second, in (0, [`Composed::MAX_RATE`](crate::model::Composed::MAX_RATE)].
        rate: f64,
    },
    /// `clients` serial clients, each with one request in flight: when a request ends, the next
    /// starts `max(0, Exp(1 / rate) - (time since the last one started))` later (Brooker's
    /// `SerialClient`), so time spent retrying is time not spent on first tries.
    Serial {
        /// The clients (1 to [`Composed::MAX_SOURCES`](crate::model::Composed::MAX_SOURCES)).
        clients: u64,
        /// The rate at which each client starts requests when they are quick, in (0, 1e5].
        rate: f64,
    },
    /// `count` clients that each send one request at time zero (a fleet that meets the
    /// dependency together), each with a budget of its own.
    Fixed {
        /// The clients (1 to [`Composed::MAX_FIXED`](crate::model::Composed::MAX_FIXED)).
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
    pub(crate) fn requests(self, duration: Duration) -> f64 {
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
    pub(crate) const fn least_one_way(&self) -> Nanos {
        match self {
            Self::OneWay(Delay::Constant { nanos }) => *nanos,
            _ => 0,
        }
    }

    /// Events per attempt on the network: its answer, and its arrival if the trip is two.
    pub(crate) const fn hops(&self) -> f64 {
        match self {
            Self::RoundTrip(_) => 1.0,
            Self::OneWay(_) => 2.0,
        }
    }
}

/// A time during which the dependency is down (in a file: `at`, `for`, `retry_after`).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
// A file's `outage` that is not a table is told it needs this, as it always has been.
#[serde(deny_unknown_fields, expecting = "struct OutageWindow")]
pub struct Window<D = Duration> {
    /// When it goes down, from the start of the run.
    pub at: D,
    /// How long it stays down (longer than 0).
    #[serde(rename = "for")]
    pub lasts: D,
    /// If set, every answer while down is a throttle with this `Retry-After` (a floor the
    /// engine never undercuts) rather than a plain retryable failure.
    pub retry_after: Option<D>,
}

/// A limiter in front of the dependency, which refuses what it cannot take with a wait (in a
/// file: the `rate_limit` or the `concurrency_limit` table, one of them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limiter {
    /// A token bucket ([`RateLimit`]); a refusal is a 429
    /// ([`Failure::Throttled`](stagger_core::Failure::Throttled)): the attempt had no effect.
    Rate(RateLimit),
    /// A limit on the attempts in service ([`ConcurrencyLimit`]); a refusal is a 503 with the
    /// wait ([`Failure::RetryAfter`](stagger_core::Failure::RetryAfter)).
    Concurrency(ConcurrencyLimit),
}

impl Limiter {
    /// The fixed wait a refusal tells.
    #[must_use]
    pub const fn retry_after(&self) -> Duration {
        match self {
            Self::Rate(l) => l.retry_after,
            Self::Concurrency(l) => l.retry_after,
        }
    }

    /// How a refusal states its wait.
    #[must_use]
    pub const fn form(&self) -> RetryAfterForm {
        match self {
            Self::Rate(l) => l.form,
            Self::Concurrency(l) => l.form,
        }
    }
}

/// A token bucket of `burst` tokens refilled at `rate` a second
/// ([`RateLimiter`](crate::model::RateLimiter)), in front of the dependency (in a file: the
/// `rate_limit` table, `burst` 1 and `form` `fixed` unless set).
///
/// `D` is how a time is written and `F` how the form is: a `Duration` and a [`RetryAfterForm`]
/// by default, or what a scenario file holds.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit<D = Duration, F = RetryAfterForm> {
    /// Tokens a second, in (0, 1e9].
    pub rate: f64,
    /// Tokens, 1 to 1e6.
    #[serde(default = "one")]
    pub burst: u32,
    /// The fixed wait a refusal tells.
    pub retry_after: D,
    /// How the wait is stated: the fixed one or the exact time until a token comes, rounded
    /// to whole seconds or not.
    #[serde(default)]
    pub form: F,
}

/// At most `limit` attempts in service at once, each for `service`, in front of the
/// dependency (in a file: the `concurrency_limit` table, `form` `fixed` unless set).
///
/// `D` is how a time is written and `F` how the form is: a `Duration` and a [`RetryAfterForm`]
/// by default, or what a scenario file holds.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyLimit<D = Duration, F = RetryAfterForm> {
    /// The most attempts in service, at least 1.
    pub limit: u32,
    /// How long each is served.
    pub service: D,
    /// The fixed wait a refusal tells.
    pub retry_after: D,
    /// How the wait is stated: the fixed one or the exact time until a slot frees, rounded to
    /// whole seconds or not.
    #[serde(default)]
    pub form: F,
}

/// A rate limit's burst unless a file sets it.
const fn one() -> u32 {
    1
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
///
/// `D` is how a time is written and `S` the service time's distribution: a `Duration` and a
/// [`Delay`] by default, or what a scenario file holds.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replicas<D = Duration, S = Delay> {
    /// Replicas in the pool, 1 to 10 000.
    pub count: u32,
    /// Attempts each replica serves at once, 1 to 10 000; more wait in its queue.
    pub concurrency: u32,
    /// An attempt's service time, its mean between 1 µs and 1 s.
    pub service: S,
    /// How long a replica pauses, at most a day; zero for a pool that never pauses.
    pub pause: D,
    /// The mean time a replica runs between pauses (exponential), from 1 ms to a day.
    pub pause_every: D,
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
    pub(crate) fn pause_share(&self) -> f64 {
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
/// send. The row reports each host's figures ([`ResultRow::host_a`](crate::metrics::ResultRow::host_a), [`ResultRow::host_b`](crate::metrics::ResultRow::host_b)).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwoHosts {
    /// The share of the requests that go to host A, the one that is down, in [0, 1].
    pub share_down: f64,
    /// Whether each budget is a set of one per host (a
    /// [`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination), as a layer that serves
    /// many destinations keeps), each host's starting full, rather than one for both hosts. A
    /// budget per request is its host's alone either way. A scenario file sets it with the
    /// outer layer's `budget_per_destination`, not here.
    #[serde(skip)]
    pub budget_per_host: bool,
}

/// A dependency with no admission control whose work slows down as it piles up, the server of
/// Brooker's "simple collapse simulation" (2023): every attempt that reaches it is worked on
/// at once, for `base + per_in_flight * n`, where `n` counts the attempts in progress once it
/// has arrived, itself included. Work whose client has stopped waiting (its attempt timed
/// out) runs on and counts in `n` until it is done: the server never learns that nobody
/// waits. The answer travels back once the work is done.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Service<D = Duration> {
    /// The service time with nothing else in progress.
    pub base: D,
    /// The service time added per attempt in progress.
    pub per_in_flight: D,
}

impl Dependency {
    /// Whether an answer can tell a client to wait (a limiter's refusal, or the outage's
    /// `Retry-After`): only then may a request need a generator for the spread above it.
    #[must_use]
    pub fn tells_waits(&self) -> bool {
        self.limiter.is_some() || self.outage.is_some_and(|w| w.retry_after.is_some())
    }
}

/// Who holds a budget (in a file: `per-source`, `shared` or `per-request`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
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

#[cfg(test)]
mod tests {
    use super::*;

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
