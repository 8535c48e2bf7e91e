//! What a run will cost before it starts: events and bytes, from the same plan of retries
//! the engine follows. The CLI refuses a run whose estimate is over its limits, so the
//! estimate errs high.

use std::sync::Arc;

use stagger_core::budget::{AnyBudget, BudgetPerDestination};
use stagger_core::engine::Settings;

use crate::dist::Delay;
use crate::estimate::{Estimate, Plan, count, ns, peak};
use crate::memory::{block, grown, room_for};
use crate::metrics::Metrics;
use crate::model::SECOND;
use crate::model::call::Call;
use crate::model::composed::{Composed, Layer};
use crate::model::event::{Event, Kind};
use crate::model::fan::Parent;
use crate::model::hosts::HOSTS;
use crate::model::parts::RetryAfterForm;
use crate::model::parts::{Clients, Limiter, Network};
use crate::model::pool::{Replica, Waiting};
use crate::model::request::{Flying, HedgedRequest, Request};
use crate::model::slots::Slots;
use crate::model::source::Source;
use crate::per_second::Series;
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{Strategy, client_budget_bytes};

impl Composed {
    /// The plan of `strategy` as this dependency runs it: delays no shorter than the outage's
    /// `Retry-After`, none at all if the engine refuses to wait that long, and no attempt sent
    /// past the deadline.
    pub(crate) fn plan(&self, strategy: &Strategy) -> Plan {
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
    pub(crate) fn in_flight(&self, plan: &Plan) -> f64 {
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
    pub(crate) fn busiest_calls_per_ns(&self) -> f64 {
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
    pub(crate) fn pool_terms(&self, plan: &Plan) -> Option<PoolTerms> {
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

    /// [`Composed::estimate`] without inner layers.
    fn estimate_one_layer(&self, strategy: &Strategy) -> Estimate {
        if self.independent(strategy, &[]).is_some() {
            return self.estimate_independent(strategy);
        }
        self.estimate_loop(strategy)
    }

    /// [`Composed::estimate`] for independent clients.
    pub(crate) fn estimate_independent(&self, strategy: &Strategy) -> Estimate {
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
    pub(crate) fn reserved_retries(&self, strategy: &Strategy) -> usize {
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
    pub(crate) fn estimate_loop(&self, strategy: &Strategy) -> Estimate {
        let plan = self.plan(strategy);
        let n = self.clients.count() as f64;
        let duration = ns(self.duration);
        let rtt = self.network.round_trip_mean();
        let x = self.dependency.failure_rate;
        let limited = self.dependency.limiter.is_some();
        let mut hops = self.network.hops();
        if self.dependency.service.is_some()
            || matches!(self.dependency.limiter, Some(Limiter::Concurrency(_)))
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
                + block(size_of::<BudgetPerDestination<AnyBudget>>()) as f64
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
    pub(crate) fn per_host(&self, figure: impl Fn(f64) -> f64) -> f64 {
        let x = self.dependency.failure_rate;
        match self.dependency.two_hosts {
            Some(hosts) => hosts.share_down * figure(1.0) + (1.0 - hosts.share_down) * figure(x),
            None => figure(x),
        }
    }

    /// What a run of `strategy`, with `inner` retry layers inside it, will cost: the events it
    /// processes and the memory its data holds at the peak (see [`estimate`](crate::estimate)). The parts should be valid
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
    ///
    /// Each inner layer that retries on its own multiplies the attempts by as many as it
    /// makes at most, its policy's limit (an upper bound: under its default a layer makes one).
    #[must_use]
    pub fn estimate(&self, strategy: &Strategy, inner: &[Layer]) -> Estimate {
        if inner.is_empty() {
            return self.estimate_one_layer(strategy);
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

/// The shortest wait a limiter's refusal tells, in nanoseconds.
pub(crate) fn least_wait(limiter: &Limiter) -> Nanos {
    match limiter.form() {
        RetryAfterForm::Fixed => nanos(limiter.retry_after()),
        RetryAfterForm::FixedRounded => {
            RetryAfterForm::FixedRounded.wait(nanos(limiter.retry_after()), 0)
        }
        RetryAfterForm::ExactRounded => SECOND,
        RetryAfterForm::Exact => 0,
    }
}

/// What the estimate takes of a pool: [`Composed::pool_terms`].
pub(crate) struct PoolTerms {
    /// Attempts per call.
    pub(crate) attempts: f64,
    /// An attempt's time at a replica, at most `limit`.
    pub(crate) sojourn: f64,
    /// The time a paused replica's backlog holds calls, spread over the replicas.
    pub(crate) backlog: f64,
    /// The longest an attempt may take.
    pub(crate) limit: f64,
}
