//! [`Composed`], the whole model: the parts, the deadline and the budget's scope, and the
//! derived figures (requests, horizon, the engine's settings) that validation, the estimate
//! and the event loop all read, so that each is computed in one place.

use std::time::Duration;

use stagger_core::engine::{Dispersal, Settings};

use crate::estimate::ns;
use crate::limits;
use crate::model::parts::{BudgetScope, Clients, Dependency, Network};
use crate::per_second::{Load, Profile};
use crate::queue::{Nanos, nanos};

/// A run of clients, a network and a dependency: see the [module documentation](crate::model).
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
    /// Whether the clients share one [`Gate`](stagger_core::gate::Gate) for the dependency, in front of each request's
    /// budget, as the executors put one.
    pub gate: bool,
    /// The window of the peak retry share.
    pub window: Duration,
    /// How the open clients' rate changes over the run (steady by default).
    pub load: Load,
    /// Each attempt's own timeout, counted from when it is sent, besides the deadline; `None`
    /// for none. An attempt whose time runs out (this timeout or the deadline, as the engine's
    /// [`Attempt::remaining`](stagger_core::engine::Attempt::remaining) says) fails with
    /// [`Failure::Timeout`](stagger_core::Failure::Timeout), and its answer, if it comes later, is ignored.
    pub attempt_timeout: Option<Duration>,
    /// How long after the end of the run the requests still in flight are followed; those
    /// still unfinished then are counted under the give-up reason `"unfinished"`. `None`:
    /// every request is followed to its end.
    pub drain: Option<Duration>,
    /// The sub-requests each request fans out to, 1 to [`Composed::MAX_FANOUT`]: each is a
    /// run of the strategy of its own, and the request succeeds when all of them have, as
    /// slow as the slowest. The success rate, the latencies and the per-second arrivals and
    /// goodput are then the requests'; the load, the first tries, the attempts, the successes
    /// and the give-ups are the sub-requests'. With a fan-out, open sources' rates are of
    /// requests. Serial clients and an outage refuse a fan-out. A sub-request runs to its own
    /// end even after a sibling has failed (and so its request), as independent calls do.
    pub fanout: u32,
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
    pub(crate) fn requests(&self) -> f64 {
        match self.clients {
            Clients::Open { sources, rate } => {
                sources as f64 * self.profile(rate).between(0.0, self.duration.as_secs_f64())
            }
            clients => clients.requests(self.duration),
        }
    }

    /// The rate over time of one source whose base rate is `rate`.
    pub(crate) fn profile(&self, rate: f64) -> Profile {
        self.load.profile(rate)
    }

    /// How long requests are followed: the end of the run and the drain after it.
    pub(crate) fn horizon(&self) -> Nanos {
        self.drain.map_or(Nanos::MAX, |d| {
            nanos(self.duration).saturating_add(nanos(d))
        })
    }

    /// With a service, how long an attempt may take: the time it has (its timeout or the
    /// deadline), or the whole run and its drain.
    pub(crate) fn slow_attempt(&self) -> Option<f64> {
        self.dependency.service?;
        let has = match (self.attempt_timeout, self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Some(has.map_or(ns(self.duration) + self.drain_ns(), ns).max(1.0))
    }

    /// The drain after the run, in nanoseconds (none: the run's length again, for estimates).
    pub(crate) fn drain_ns(&self) -> f64 {
        self.drain.map_or(ns(self.duration), ns)
    }

    /// Whether an attempt's time can run out: an attempt timeout or a deadline.
    pub(crate) const fn times_attempts(&self) -> bool {
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
    /// [`SimError::TooLarge`](crate::SimError::TooLarge).
    pub const MAX_EVENTS: u64 = limits::MAX_EVENTS;

    /// The most sub-requests a request fans out to, [`limits::MAX_FANOUT`].
    pub const MAX_FANOUT: u32 = limits::MAX_FANOUT;

    /// The most pauses a pool of replicas may draw in a run, [`limits::MAX_PAUSES`].
    pub const MAX_PAUSES: f64 = limits::MAX_PAUSES;

    /// The engine's settings for each request: the deadline, the attempt timeout and the
    /// dispersal.
    #[inline]
    pub(crate) fn settings(&self) -> Settings {
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
    #[inline]
    pub(crate) const fn per_request(&self) -> bool {
        matches!(self.clients, Clients::Fixed { .. })
            || matches!(self.budget_scope, BudgetScope::PerRequest)
    }

    /// The sources the run keeps: one per open source or serial client, or one for all when
    /// each request holds its own budget.
    pub(crate) fn sources(&self) -> usize {
        if self.per_request() {
            1
        } else {
            usize::try_from(self.clients.count()).unwrap_or(usize::MAX)
        }
    }
}
