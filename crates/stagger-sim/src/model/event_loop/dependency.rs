//! The dependency side of the loop: an attempt travels the network, meets the limiter, the
//! outage, the service or the pool, and its answer is scheduled back to its client.

use std::time::Duration;

use stagger_core::{Failure, Rng, SeededRng};

use crate::error::SimError;
use crate::model::event::{Event, Id, Kind, Outcome};
use crate::model::event_loop::Loop;
use crate::model::outage::Outage;
use crate::model::parts::Network;
use crate::model::request::Driven;
use crate::queue::{Nanos, nanos};

impl<'a> Loop<'a> {
    /// Sends attempt `id` of the request in `slot`, of source `c`, at `now`, with the time it
    /// has, `remaining` (the request already awaits it): the network carries it, and its
    /// timeout is set if its time can run out.
    #[inline(always)]
    pub(super) fn dispatch(
        &mut self,
        slot: u32,
        id: Id,
        c: usize,
        now: Nanos,
        remaining: Option<Duration>,
    ) {
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
                self.attempts.set_out();
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
    pub(super) fn send_to_host(
        &mut self,
        slot: u32,
        id: Id,
        now: Nanos,
        timeout: Option<Nanos>,
    ) -> bool {
        let (Some(hosts), Some(request)) = (self.hosts.as_mut(), self.requests.get(slot)) else {
            return false;
        };
        hosts.sent(request.to_down, request.sent);
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
    pub(super) fn answers(&mut self, slot: u32, c: usize) -> &mut SeededRng {
        if self.hosts.is_some()
            && let Some(request) = self.requests.get(slot)
        {
            return &mut request.answers;
        }
        self.sources.server(c)
    }

    /// Whether the request in `slot` awaits attempt `id`: its source if it does.
    pub(super) fn awaiting(&mut self, slot: u32, id: Id) -> Option<usize> {
        self.requests
            .get(slot)
            .filter(|r| r.awaits(id))
            .map(|r| r.source as usize)
    }

    /// Attempt `id` of the request in `slot` reaches the dependency at `now` (one-way
    /// network). The dependency works on it whether or not its client still waits.
    pub(super) fn arrive(&mut self, slot: u32, id: Id, now: Nanos) {
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
    pub(super) fn respond(
        &mut self,
        slot: u32,
        id: Id,
        live: bool,
        now: Nanos,
        back: Nanos,
        outcome: Outcome,
    ) -> Option<Nanos> {
        if !matches!(outcome, Outcome::Busy(_))
            && let Some(served) = self.limiter.as_mut().and_then(|l| l.serve(now))
        {
            // The answer travels back after the service, as long as it would have.
            if live && let Some(request) = self.requests.get(slot) {
                request.set_trip(id, back.saturating_sub(now));
            }
            let (kind, wait) = outcome.split();
            self.queue.push(served, Event::Served(slot, id, kind, wait));
            return Some(served.saturating_add(back.saturating_sub(now)));
        }
        if matches!(outcome, Outcome::Ok | Outcome::Failed)
            && let Some(service) = self.service.as_mut()
        {
            let done = service.enter(now);
            let (kind, wait) = outcome.split();
            self.queue.push(done, Event::Served(slot, id, kind, wait));
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
    pub(super) fn enter_pool(
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
        let used = match &mut request.run {
            Driven::Hedged(h) => Some(&mut h.used),
            Driven::Retried { .. } => None,
        };
        let r = pool.pick(self.sources.server(c), used);
        request.set_trip(id, trip);
        if let Some((done, w)) = pool.arrive(r, slot, id, outcome.split().0, now) {
            self.queue
                .push(done, Event::Done(r as u32, w.slot, w.id, w.kind));
        }
    }

    /// Replica `r` finished attempt `id` of the request in `slot` at `now`: it starts the next
    /// attempt in its queue whose client still waits for it, dropping those that do not, and
    /// the answer `kind` goes back to the client, if it still waits.
    pub(super) fn done(
        &mut self,
        r: u32,
        slot: u32,
        id: Id,
        kind: Kind,
        now: Nanos,
    ) -> Result<(), SimError> {
        let r = r as usize;
        if let Some(pool) = self.pool.as_mut() {
            let requests = &mut self.requests;
            let next = pool.finished(r, now, |w| {
                requests.get(w.slot).is_some_and(|q| q.awaits(w.id))
            });
            if let Some((done, w)) = next {
                self.queue
                    .push(done, Event::Done(r as u32, w.slot, w.id, w.kind));
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
    pub(super) fn served(&mut self, slot: u32, id: Id, now: Nanos, outcome: Outcome) {
        if let Some(service) = self.service.as_mut() {
            service.leave();
        } else if let Some(limiter) = self.limiter.as_mut() {
            limiter.leave();
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
    pub(super) fn reach(&mut self, slot: u32, id: Id, live: Option<usize>, now: Nanos) -> Outcome {
        let mut request = match live {
            Some(_) => self.requests.get(slot).filter(|r| r.awaits(id)),
            None => None,
        };
        if let Some(limiter) = self.limiter.as_mut() {
            let early = request
                .as_ref()
                .is_some_and(|r| now < r.not_before && r.sent_at(id) >= r.told_at);
            if let Some(refusal) = limiter.reach(now, early) {
                return refusal;
            }
        }
        // Admitted: the attempt reaches the dependency (the recovery load counts it), and the
        // request met the outage if its first attempt to get through found it down.
        let down = self.outage.as_mut().is_some_and(|o| o.reach(now));
        let first = request
            .as_mut()
            .is_some_and(|request| !std::mem::replace(&mut request.reached, true));
        if down {
            if first
                && let Some(request) = request
                && let Some(outage) = self.outage.as_mut()
            {
                request.met = true;
                outage.met();
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
    pub(super) fn told(&mut self, slot: u32, id: Id, now: Nanos, wait: Nanos) {
        let least = self.model.network.least_one_way();
        if let Some(request) = self.requests.get(slot).filter(|r| r.awaits(id)) {
            request.told_at = now;
            request.not_before = now.saturating_add(wait).saturating_add(least);
        }
    }

    /// What an answer tells the client.
    pub(super) fn result_of(&self, outcome: Outcome) -> Result<(), Failure> {
        match outcome {
            Outcome::Ok => Ok(()),
            Outcome::Failed => Err(Failure::Retryable),
            Outcome::Down => Err(self
                .outage
                .as_ref()
                .map_or(Failure::Retryable, Outage::failure)),
            Outcome::Throttled(wait) => Err(Failure::Throttled(Some(Duration::from_nanos(wait)))),
            Outcome::Busy(wait) => Err(Failure::RetryAfter(Duration::from_nanos(wait))),
        }
    }
}
