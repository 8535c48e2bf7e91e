//! The client side of the loop: requests arrive, start their engine runs, send attempts
//! (through inner layers, or hedged), hear answers and end.

use stagger_core::{Failure, Rng, SeededRng};

use crate::error::SimError;
use crate::model::call::{Settled, Step};
use crate::model::event::{Event, Id};
use crate::model::event_loop::Loop;
use crate::model::hosts::{DESTINATION, HOSTS, Hosts};
use crate::model::parts::Clients;
use crate::model::request::{Driven, Ended, Flying, HedgedRequest, Request, failure_of};
use crate::queue::Nanos;

impl<'a> Loop<'a> {
    /// Notes that the request in `slot` is a sub-request of `parent`, if it has one.
    pub(super) fn own(&mut self, slot: u32, parent: Option<u32>) {
        if let (Some(fan), Some(parent)) = (self.fan.as_mut(), parent) {
            fan.own(slot, parent);
        }
    }

    /// The request in `slot` is over at `now`: frees it, and for a serial client schedules its
    /// next.
    #[inline(always)]
    pub(super) fn finish(&mut self, slot: u32, now: Nanos) {
        let Some(request) = self.requests.get(slot) else {
            return;
        };
        let c = request.source;
        if let Some(hosts) = self.hosts.as_mut() {
            hosts.ended(request.to_down, &self.metrics);
        }
        self.requests.remove(slot);
        if let Some(fan) = self.fan.as_mut()
            && fan.ended(slot, self.metrics.successes, now)
            && let Some(series) = self.series.as_mut()
        {
            series.success(now);
        }
        if matches!(self.model.clients, Clients::Serial { .. })
            && let Some(at) = self.sources.next_start(c, now)
        {
            self.arrive_at(at, c);
        }
    }

    /// Source `c`'s request starts at `now`; an open source's next arrival is drawn first.
    /// With a load that varies, the arrival is a candidate, kept with probability
    /// `rate(now) / peak` (drawn before the next candidate's gap).
    pub(super) fn arrival(&mut self, c: u32, now: Nanos) -> Result<(), SimError> {
        let mut kept = true;
        if matches!(self.model.clients, Clients::Open { .. }) {
            let next;
            (kept, next) = self.sources.arrival(c, now);
            if let Some(next) = next {
                self.arrive_at(next, c);
            }
        }
        if !kept {
            return Ok(());
        }
        if self.fan.is_some()
            && let Some(series) = self.series.as_mut()
        {
            // The per-second series counts requests, not their sub-requests.
            series.arrival(now);
        }
        let parent = self
            .fan
            .as_mut()
            .map(|fan| fan.start(now, self.model.fanout));
        for _ in 0..self.model.fanout {
            self.start(c, now, parent)?;
        }
        Ok(())
    }

    /// A request of source `c` starts at `now`, a sub-request of `parent` if it has one.
    pub(super) fn start(
        &mut self,
        c: u32,
        now: Nanos,
        parent: Option<u32>,
    ) -> Result<(), SimError> {
        self.metrics.first_try();
        if parent.is_none()
            && let Some(series) = self.series.as_mut()
        {
            series.arrival(now);
        }
        // With two hosts, the request's host, its policy's generator and its answers' come
        // from a generator of its own.
        let (to_down, mut own) = match self.model.dependency.two_hosts {
            Some(hosts) => {
                let mut own = self.sources.get(c).server().fork();
                let to_down = own.next_f64() < hosts.share_down;
                (to_down, Some(own))
            }
            None => (false, None),
        };
        let host = Hosts::index(to_down);
        if let Some(hosts) = self.hosts.as_mut() {
            hosts.started(to_down);
        }
        let budget = self.sources.budget(c, host, self.stack.strategy());
        let key = if own.is_some() {
            HOSTS[host]
        } else {
            DESTINATION
        };
        let budget = self.stack.gated(budget, key);
        let policy_rng = own.as_mut().map(SeededRng::fork);
        let answers = own.unwrap_or(SeededRng::new(0));
        let tells_waits = self.model.dependency.tells_waits();
        let source = self.sources.get(c);
        if let Some(hedging) = self.stack.strategy().hedging {
            let rng = policy_rng.unwrap_or_else(|| source.policies.fork());
            // A hedged request that may meet a server's wait gets its spread's generator now.
            let dispersal_rng = tells_waits.then(|| source.policies.fork());
            let call = self
                .stack
                .hedged_call(hedging, rng, dispersal_rng, budget, now)?;
            let hedged = Driven::Hedged(Box::new(HedgedRequest {
                call,
                flying: Vec::new(),
                wake: Some(now),
                used: Vec::new(),
            }));
            let slot = self
                .requests
                .insert(Request::new(hedged, c, to_down, answers));
            self.own(slot, parent);
            // The hedged request is asked what to do once the events queued for now are done.
            self.queue.push(now, Event::Wake(slot));
            return Ok(());
        }
        let stack = &self.stack;
        let gives_dispersal_rng = self.model.per_request() && tells_waits;
        let slot = self.requests.insert_with(
            #[inline(always)]
            || {
                let mut call = stack.call(
                    policy_rng.unwrap_or_else(|| source.policies.fork()),
                    budget,
                    now,
                );
                if gives_dispersal_rng {
                    call.give_dispersal_rng(source.policies.fork());
                }
                let retried = Driven::Retried {
                    call,
                    inner: Vec::new(),
                    pending: None,
                    sent_at: 0,
                    trip: 0,
                };
                Request::new(retried, c, to_down, answers)
            },
        );
        self.own(slot, parent);
        self.send(slot, now)
    }

    /// The request in `slot` sends an attempt at `now`, if the engine lets it: a gate may hold
    /// it to a later slot. An attempt of a layer above the innermost starts a run of the layer
    /// below, which sends its first attempt at once; the innermost layer's attempt goes to the
    /// dependency.
    pub(super) fn send(&mut self, slot: u32, now: Nanos) -> Result<(), SimError> {
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
            let begun = if self.stack.may_wait() {
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
            // The layer below runs inside this attempt.
            let Some(call) = self.stack.inner(depth, attempt.remaining, now)? else {
                break attempt.remaining;
            };
            if let Driven::Retried { inner, .. } = &mut request.run {
                inner.push(call);
            }
            depth += 1;
        };
        request.sent += 1;
        self.metrics.attempt(now, request.sent);
        let id = self.attempts.sent();
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

    /// Asks the hedged request in `slot` what to do at `now`, and does it: sends the attempts
    /// it sends, sets the wake-up it asks for, or ends it.
    pub(super) fn step(&mut self, slot: u32, now: Nanos) -> Result<(), SimError> {
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
                    let id = self.attempts.sent();
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
    pub(super) fn wake(&mut self, slot: u32, now: Nanos) -> Result<(), SimError> {
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
    pub(super) fn finish_hedged(&mut self, slot: u32, now: Nanos) {
        if let Some(Request {
            run: Driven::Hedged(h),
            ..
        }) = self.requests.get(slot)
        {
            for f in &h.flying {
                self.stack.measured(now - f.sent);
            }
            self.attempts.settled(h.flying.len() as u64);
        }
        self.finish(slot, now);
    }

    /// Attempt `id` of the request in `slot` ended at `now` with `result` (its answer, or its
    /// timeout), if the request still awaits it.
    pub(super) fn heard(
        &mut self,
        slot: u32,
        id: Id,
        now: Nanos,
        result: Result<(), Failure>,
    ) -> Result<(), SimError> {
        let Some(request) = self.requests.get(slot).filter(|r| r.awaits(id)) else {
            return Ok(());
        };
        self.attempts.settled(1);
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
        self.stack.measured(now - flying.sent);
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
    /// per-second counts.
    pub(super) fn succeeded(&mut self, slot: u32, now: Nanos) {
        if self.requests.get(slot).is_some_and(|r| r.met)
            && let Some(outage) = self.outage.as_mut()
        {
            outage.met_and_succeeded();
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
    pub(super) fn settle_top(
        &mut self,
        slot: u32,
        now: Nanos,
        result: Result<(), Failure>,
    ) -> Option<Settled> {
        let request = self.requests.get(slot)?;
        let source = request.source;
        let inner = matches!(&request.run, Driven::Retried { inner, .. } if !inner.is_empty());
        let top = request.top()?;
        if let Err(failure) = &result
            && top.wants_dispersal_rng(failure)
        {
            let rng = if inner {
                self.stack.layer_rng()
            } else {
                self.sources.get(source).policies.fork()
            };
            top.give_dispersal_rng(rng);
        }
        Some(top.settle(now, result))
    }

    /// The innermost run in progress of the request in `slot` ended at `now`: an inner layer's
    /// end is the answer to the attempt of the layer above, which may retry (a new run of the
    /// layer below); the outermost layer's end is the request's, recorded.
    pub(super) fn ended(&mut self, slot: u32, now: Nanos, mut ended: Ended) {
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
}
