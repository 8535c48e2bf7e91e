//! The event loop: the queue of what happens next, the requests in flight, and the parts
//! that keep state while a run goes, assembled in [`Loop::new`]. Each part owns its state and
//! the loop calls it: the sources, the retry stack, and the dependency's limiter, outage,
//! service, pool and hosts, and a fan-out. The client side (arrivals, the engine's decisions,
//! endings) is in `clients`; what happens to an attempt once sent is in `dependency`.

use stagger_core::Failure;

use crate::error::SimError;
use crate::memory::room_for;
use crate::metrics::{Metrics, ResultRow};
use crate::model::composed::{Composed, Layer};
use crate::model::event::{Attempts, Event, Kind, Outcome};
use crate::model::fan::{Fan, p999};
use crate::model::hosts::Hosts;
use crate::model::limiter::Limiting;
use crate::model::outage::Outage;
use crate::model::parts::Clients;
use crate::model::pool::Pool;
use crate::model::request::Request;
use crate::model::service::Serving;
use crate::model::slots::Slots;
use crate::model::source::Sources;
use crate::model::stack::Stack;
use crate::model::streams::Streams;
use crate::model::validate::check_events;
use crate::per_second::Series;
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::Strategy;

mod clients;
mod dependency;

/// One run's state: the queue, the requests in flight, and the parts. A part is an optional
/// field here that owns its state, built from its configuration in [`Loop::new`] and called
/// where it acts; a new part (the fleet's shared store) is one more.
pub(crate) struct Loop<'a> {
    model: &'a Composed,
    queue: EventQueue<Event>,
    requests: Slots<Request>,
    /// The attempts' ids and counts.
    attempts: Attempts,
    /// When requests stop being followed.
    horizon: Nanos,
    metrics: Metrics,
    /// Per-second counters, for a [`PerSecond`](crate::per_second::PerSecond).
    series: Option<Series>,
    /// Who sends the requests.
    sources: Sources,
    /// The retry stack each request runs.
    stack: Stack<'a>,
    /// The limiter in front of the dependency, if it has one.
    limiter: Option<Limiting>,
    /// The outage window, if the dependency has one.
    outage: Option<Outage>,
    /// The service whose time grows with the work in progress, if the dependency has one.
    service: Option<Serving>,
    /// The pool of replicas, if the dependency has one.
    pool: Option<Pool>,
    /// With two hosts: each host's counts.
    hosts: Option<Hosts>,
    /// With a fan-out: the requests whose sub-requests run, and the requests' figures.
    fan: Option<Fan>,
}

impl<'a> Loop<'a> {
    /// The run of `strategy` with `layers` inside it on `model`, every generator derived from
    /// `seed`, its first arrivals queued; `keep_times` keeps every retry's time.
    pub(crate) fn new(
        model: &'a Composed,
        strategy: &'a Strategy,
        layers: &'a [Layer],
        seed: u64,
        keep_times: bool,
    ) -> Result<Self, SimError> {
        let n = model.clients.count() as usize;
        let streams = Streams::new(seed);
        let layer_rngs = streams.layers();
        let (sources, pool_streams) = Sources::new(model, strategy, streams)?;
        let pool = model.dependency.replicas.map(|r| {
            let streams = pool_streams.unwrap_or_else(|| Streams::pool_apart(seed));
            Pool::new(&r, streams)
        });
        let requests = model.requests().max(1.0);
        let room = match model.clients {
            Clients::Serial { .. } => n,
            _ => {
                room_for(model.in_flight(&model.plan(strategy)).min(requests)).max(model.sources())
            }
        };
        let mut run = Self {
            model,
            queue: EventQueue::new(),
            requests: Slots::with_capacity(room),
            attempts: Attempts::default(),
            horizon: model.horizon(),
            metrics: if keep_times {
                Metrics::unordered(nanos(model.window), 0)
            } else {
                Metrics::new(nanos(model.window))
            },
            series: None,
            sources,
            stack: Stack::new(model, strategy, layers, layer_rngs)?,
            limiter: model.dependency.limiter.map(Limiting::new),
            outage: model.dependency.outage.as_ref().map(Outage::new),
            service: model.dependency.service.as_ref().map(Serving::new),
            pool,
            hosts: model.dependency.two_hosts.map(|_| Hosts::default()),
            fan: (model.fanout > 1).then(|| Fan::new(nanos(model.window))),
        };
        match model.clients {
            Clients::Fixed { count } => {
                for _ in 0..count {
                    run.arrive_at(0, 0);
                }
            }
            Clients::Open { .. } => {
                for c in 0..run.sources.len() as u32 {
                    if let Some(at) = run.sources.first_arrival(c) {
                        run.arrive_at(at, c);
                    }
                }
            }
            Clients::Serial { .. } => {
                for c in 0..n {
                    if let Some(at) = run.sources.next_start(c as u32, 0) {
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
        self.sources.queued();
        self.queue.push(at, Event::Arrival(c));
    }

    /// Keeps the per-second counters of a run of `model`'s length.
    pub(crate) fn keep_series(&mut self) {
        self.series = Some(Series::new(self.model.duration));
    }

    /// Pops and handles events until none is left, the horizon is reached, or nothing is left
    /// to follow; past `max_events` events (or the model's own limit) it stops with an error.
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
                    .map_or(self.attempts.awaited(), Serving::in_progress);
                series.sample(now, in_flight);
            }
            // Past the horizon, or once nothing is left to follow: no request to come or in
            // flight, and no attempt on its way to the dependency (the work it still does for
            // abandoned attempts answers nobody).
            if now >= self.horizon
                || (!self.sources.any_queued()
                    && !self.attempts.any_travelling()
                    && self.requests.live() == 0)
            {
                break;
            }
            match event {
                Event::Arrival(c) => {
                    self.sources.dequeued();
                    self.arrival(c, now)?;
                }
                Event::Send(slot) => self.send(slot, now)?,
                Event::Arrive(slot, id) => {
                    self.attempts.reached();
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

    /// The metrics of the run, for its retries' times.
    pub(crate) fn into_metrics(self) -> Metrics {
        self.metrics
    }

    /// The metrics so far.
    #[cfg(test)]
    pub(crate) fn metrics(&mut self) -> &mut Metrics {
        &mut self.metrics
    }

    /// The per-second counters kept, if any.
    pub(crate) fn take_series(&mut self) -> Option<Series> {
        self.series.take()
    }

    /// The run's row: the metrics, and each part's figures.
    pub(crate) fn row(mut self) -> ResultRow {
        let requests = self.metrics.first_tries;
        let unfinished = self.requests.live() as u64;
        if unfinished > 0 {
            self.metrics.gave_up_as("unfinished", unfinished);
        }
        let strategy = self.stack.strategy();
        let mut row = self
            .metrics
            .row(strategy.name(), strategy.budget.map(|b| b.to_string()));
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        if let Some(limiter) = &self.limiter {
            limiter.fill(&mut row, requests, ratio);
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
            fan.fill(&mut row, strategy);
        }
        row
    }
}
