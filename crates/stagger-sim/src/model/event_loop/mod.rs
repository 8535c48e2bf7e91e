//! The event loop: the requests in flight, the queue of what happens next, and the parts of
//! the dependency side, assembled in [`Loop::new`]. The client side (arrivals, the engine's
//! decisions, endings) is in `clients`; what happens to an attempt once sent is in
//! `dependency`.

use std::rc::Rc;
use std::sync::Arc;

use stagger_core::budget::BudgetPerDestination;
use stagger_core::engine::Settings;
use stagger_core::gate::Gate;
use stagger_core::sketch::LatencySketch;
use stagger_core::{Failure, SeededRng};

use crate::dist::exponential;
use crate::error::SimError;
use crate::memory::room_for;
use crate::metrics::{Metrics, ResultRow};
use crate::model::SECOND;
use crate::model::composed::*;
use crate::model::event::*;
use crate::model::fan::*;
use crate::model::hosts::{HOSTS, Hosts};
use crate::model::limiter::Limiting;
use crate::model::outage::Outage;
use crate::model::parts::*;
use crate::model::pool::Pool;
use crate::model::request::*;
use crate::model::service::Serving;
use crate::model::slots::Slots;
use crate::model::source::*;
use crate::model::streams::*;
use crate::model::validate::check_events;
use crate::per_second::{Profile, Series};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{PolicyTemplate, SimBudget, Strategy};

mod clients;
mod dependency;

/// One run's state.
pub(crate) struct Loop<'a> {
    pub(crate) model: &'a Composed,
    pub(crate) strategy: &'a Strategy,
    /// The strategy's policy, built once: each request runs a copy.
    pub(crate) template: PolicyTemplate,
    /// The inner layers, outermost first.
    pub(crate) layers: &'a [Layer],
    /// The inner layers' budget: none.
    pub(crate) no_budget: SimBudget,
    /// The inner layers' policy generators, one per inner run in turn: a stream of its own,
    /// so that a stack whose inner layers never retry draws what its outer layer alone does.
    pub(crate) layer_rngs: SeededRng,
    pub(crate) settings: Settings,
    pub(crate) sources: Vec<Source>,
    /// A budget per request: the strategy has one, so each request forks its own.
    pub(crate) budget_each: bool,
    pub(crate) gate: Option<Arc<Gate>>,
    pub(crate) requests: Slots<Request>,
    pub(crate) queue: EventQueue<Event>,
    pub(crate) metrics: Metrics,
    /// The limiter in front of the dependency, if it has one.
    pub(crate) limiting: Option<Limiting>,
    /// The outage window, if the dependency has one.
    pub(crate) outage: Option<Outage>,
    pub(crate) end: Nanos,
    pub(crate) mean_gap: f64,
    /// Whether an attempt may have to wait before it goes: a gate, or a dependency that tells
    /// waits.
    pub(crate) may_wait: bool,
    /// Each source's rate over time and its peak, when it varies: arrivals are then thinned.
    pub(crate) thinning: Option<(Profile, f64)>,
    /// The service whose time grows with the work in progress, if the dependency has one.
    pub(crate) service: Option<Serving>,
    /// Attempts sent and still awaited.
    pub(crate) outstanding: u64,
    /// The next attempt's id.
    pub(crate) next_id: Id,
    /// Arrival events queued.
    pub(crate) arrivals_queued: u64,
    /// Attempts on their way to the dependency (one-way network), awaited or not: each still
    /// reaches it, and counts there.
    pub(crate) travelling: u64,
    /// When requests stop being followed.
    pub(crate) horizon: Nanos,
    /// The fleet's attempt latencies, for a hedge delay at a quantile.
    pub(crate) sketch: LatencySketch,
    /// Per-second counters, for a [`PerSecond`].
    pub(crate) series: Option<Series>,
    /// With two hosts: each host's counts.
    pub(crate) hosts: Option<Hosts>,
    /// The pool of replicas, if the dependency has one.
    pub(crate) pool: Option<Pool>,
    /// With a fan-out: the requests whose sub-requests run, and the requests' figures.
    pub(crate) fan: Option<Fan>,
    /// The successes counted when the latest request ended: a request that ends with more
    /// succeeded.
    pub(crate) successes_seen: u64,
}

impl<'a> Loop<'a> {
    pub(crate) fn new(
        model: &'a Composed,
        strategy: &'a Strategy,
        layers: &'a [Layer],
        seed: u64,
        keep_times: bool,
    ) -> Result<Self, SimError> {
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
                        let set = BudgetPerDestination::with(HOSTS.len(), rng, move |rng| {
                            config.build(rng)
                        })?;
                        (None, Some(Rc::new(set)))
                    }
                    None => (strategy.client_budget(rng), None),
                },
            })
        };
        let mut sources: Vec<Source> = Vec::with_capacity(model.sources());
        let mut budget_each = false;
        let streams = Streams::new(seed);
        let layer_rngs = streams.layers();
        // The pool's streams: after the tail's for one open source, apart otherwise.
        let mut pool_streams: Option<PoolStreams> = None;
        let of =
            |s: SourceStreams, budgets: Budgets| Source::new(s.gaps, s.server, s.policies, budgets);
        if model.per_request() {
            // Each request forks its budget (if there is one), its policy's and its spread's
            // from the source's policies.
            let (s, budget) = streams
                .per_request(unlimited.is_none() && model.budget_scope == BudgetScope::Shared);
            let budgets = match (&unlimited, budget) {
                (Some(none), _) => (none.clone(), None),
                (None, Some(rng)) => budget_of(rng, None)?,
                (None, None) => {
                    budget_each = true;
                    (None, None)
                }
            };
            sources.push(of(s, budgets));
        } else {
            match model.clients {
                Clients::Open { sources: 1, .. } if model.dependency.replicas.is_some() => {
                    let (s, budget, pool) = streams.one_source_with_pool();
                    let budgets = budget_of(budget, None)?;
                    sources.push(of(s, budgets));
                    pool_streams = Some(pool);
                }
                Clients::Open { sources: 1, .. } => {
                    let (s, budget) = streams.one_source();
                    let budgets = budget_of(budget, None)?;
                    sources.push(of(s, budgets));
                }
                clients => {
                    let open = matches!(clients, Clients::Open { .. });
                    let mut streams = streams;
                    for _ in 0..n {
                        let (s, budget) = streams.next_source(open);
                        let budgets = budget_of(budget, sources.first())?;
                        sources.push(of(s, budgets));
                    }
                }
            }
        }
        let pool = model.dependency.replicas.map(|r| {
            let streams = pool_streams
                .take()
                .unwrap_or_else(|| Streams::pool_apart(seed));
            Pool::new(&r, streams)
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
        let mut run = Self {
            model,
            strategy,
            template: PolicyTemplate::new(&strategy.policy)?,
            layers,
            no_budget: None,
            layer_rngs,
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
            limiting: model.dependency.limiter.map(Limiting::new),
            outage: model.dependency.outage.as_ref().map(Outage::new),
            end,
            mean_gap,
            may_wait: model.gate || model.dependency.tells_waits(),
            thinning,
            service: model.dependency.service.as_ref().map(Serving::new),
            outstanding: 0,
            next_id: 0,
            arrivals_queued: 0,
            travelling: 0,
            horizon: model.horizon(),
            sketch: LatencySketch::new(),
            series: None,
            hosts: model.dependency.two_hosts.map(|_| Hosts::default()),
            pool,
            fan: (model.fanout > 1).then(|| Fan::new(nanos(model.window))),
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
    pub(crate) fn arrive_at(&mut self, at: Nanos, c: u32) {
        self.arrivals_queued += 1;
        self.queue.push(at, Event::Arrival(c));
    }

    pub(crate) fn go(&mut self, max_events: u64) -> Result<(), SimError> {
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
                let in_flight = self
                    .service
                    .as_ref()
                    .map_or(self.outstanding, Serving::in_progress);
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

    pub(crate) fn row(mut self) -> ResultRow {
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
            limiting.fill(&mut row, requests, ratio);
            row.dispersal = Some(self.model.dispersal.name());
            row.gate = Some(self.model.gate);
        }
        if let Some(outage) = &self.outage {
            outage.fill(&mut row, ratio);
        }
        if let (Some(hosts), Some(two)) = (&self.hosts, self.model.dependency.two_hosts) {
            hosts.fill(&mut row, two.budget_per_host);
        }
        if self.pool.is_some() {
            row.p999_ms = Some(p999(&self.metrics));
        }
        if let Some(fan) = self.fan {
            fan.fill(&mut row, self.strategy);
        }
        row
    }
}
