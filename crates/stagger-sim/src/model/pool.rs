//! A pool of replicas ([`Replicas`]): each serves a number of attempts at once, queues the
//! rest first in, first out, and pauses now and then, its work stopping while it is paused.

use std::collections::VecDeque;

use stagger_core::{Rng, SeededRng};

use crate::dist::{Delay, exponential};
use crate::estimate::ns;
use crate::model::event::Kind;
use crate::model::parts::Replicas;
use crate::model::streams::PoolStreams;
use crate::queue::{Nanos, nanos};

/// The pool's state: its replicas and the generator of the service times.
pub(crate) struct Pool {
    replicas: Vec<Replica<Kind>>,
    concurrency: u32,
    service: Delay,
    service_rng: SeededRng,
    pause: Nanos,
    pause_every: f64,
}

impl Pool {
    /// The pool `replicas` describes, idle, drawing from `streams`: each replica forks its
    /// pauses' generator in turn.
    pub(crate) fn new(replicas: &Replicas, streams: PoolStreams) -> Self {
        let PoolStreams {
            service,
            replicas: mut world,
        } = streams;
        Self {
            replicas: (0..replicas.count)
                .map(|_| Replica::new(world.fork()))
                .collect(),
            concurrency: replicas.concurrency,
            service: replicas.service,
            service_rng: service,
            pause: nanos(replicas.pause),
            pause_every: ns(replicas.pause_every),
        }
    }

    /// The replica an attempt goes to, picked at random with `rng`: for a hedged request,
    /// whose replicas tried so far are `used` (sorted), one it has not tried while one is left,
    /// added to `used`; any replica otherwise.
    #[inline]
    pub(crate) fn pick(&self, rng: &mut SeededRng, used: Option<&mut Vec<u32>>) -> usize {
        let n = self.replicas.len();
        match used {
            Some(used) => {
                let r = distinct(rng, n, used);
                used.push(r as u32);
                used.sort_unstable();
                r
            }
            None => any(rng, n),
        }
    }

    /// Attempt `id` of the request in `slot` reaches replica `r` at `now`, to be answered
    /// `kind` once served; its service time is drawn now. If the replica has room it is served
    /// at once: when it is done, and the attempt. Otherwise it waits in the replica's queue.
    #[inline]
    pub(crate) fn arrive(
        &mut self,
        r: usize,
        slot: u32,
        id: u32,
        kind: Kind,
        now: Nanos,
    ) -> Option<(Nanos, Waiting<Kind>)> {
        let work = self.service.sample(&mut self.service_rng);
        let waiting = Waiting {
            slot,
            id,
            work,
            kind,
        };
        if self.replicas[r].busy < self.concurrency {
            Some(self.serve(r, waiting, now))
        } else {
            self.replicas[r].waiting.push_back(waiting);
            None
        }
    }

    /// Replica `r` finished an attempt at `now`: it starts the next attempt in its queue that
    /// is still `awaited`, dropping those that are not, as a server does that checks whether
    /// its client is still there before starting work. When that one is done, and it.
    #[inline]
    pub(crate) fn finished(
        &mut self,
        r: usize,
        now: Nanos,
        mut awaited: impl FnMut(&Waiting<Kind>) -> bool,
    ) -> Option<(Nanos, Waiting<Kind>)> {
        self.replicas[r].busy -= 1;
        while let Some(w) = self.replicas[r].waiting.pop_front() {
            if awaited(&w) {
                return Some(self.serve(r, w, now));
            }
        }
        None
    }

    /// Replica `r` starts serving `w` at `now`: when it is done (its pauses stop the work).
    #[inline]
    fn serve(&mut self, r: usize, w: Waiting<Kind>, now: Nanos) -> (Nanos, Waiting<Kind>) {
        let replica = &mut self.replicas[r];
        replica.busy += 1;
        (replica.finish(now, w.work, self.pause, self.pause_every), w)
    }
}

/// An attempt in a replica's queue: its request's slot, its id, its work, and the answer it
/// gets once served (the dependency's kind, as an event carries it).
#[derive(Clone, Copy)]
pub(crate) struct Waiting<K> {
    pub(crate) slot: u32,
    pub(crate) id: u32,
    pub(crate) work: Nanos,
    pub(crate) kind: K,
}

/// One replica: its attempts in service, its queue and its pauses.
pub(crate) struct Replica<K> {
    pub(crate) busy: u32,
    pub(crate) waiting: VecDeque<Waiting<K>>,
    /// The pauses drawn so far that have not ended, `(start, end)`, in order.
    pauses: VecDeque<(Nanos, Nanos)>,
    /// The end of the last pause drawn.
    horizon: Nanos,
    rng: SeededRng,
}

impl<K> Replica<K> {
    pub(crate) fn new(rng: SeededRng) -> Self {
        Self {
            busy: 0,
            waiting: VecDeque::new(),
            pauses: VecDeque::new(),
            horizon: 0,
            rng,
        }
    }

    /// When work of `work` nanoseconds that starts at `now` ends, given the pauses, each
    /// `pause` long after a run of `Exp(mean pause_every)` (drawn from the replica's own
    /// generator as they are needed): the work stops while the replica is paused.
    pub(crate) fn finish(
        &mut self,
        now: Nanos,
        work: Nanos,
        pause: Nanos,
        pause_every: f64,
    ) -> Nanos {
        if pause == 0 {
            return now.saturating_add(work);
        }
        while self.pauses.front().is_some_and(|p| p.1 <= now) {
            self.pauses.pop_front();
        }
        let (mut at, mut left, mut i) = (now, work, 0);
        loop {
            if i == self.pauses.len() {
                let run = exponential(&mut self.rng, pause_every) as Nanos;
                let start = self.horizon.saturating_add(run);
                self.horizon = start.saturating_add(pause);
                if self.horizon <= now {
                    // Over before the work starts (the replica was idle through it): drawn,
                    // so that the stream stays the same, but nothing to keep.
                    continue;
                }
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

/// A replica picked at random among `n`.
#[inline]
fn any(rng: &mut SeededRng, n: usize) -> usize {
    ((rng.next_f64() * n as f64) as usize).min(n - 1)
}

/// A replica picked at random among the `n` that `used` (sorted) does not hold, as a load
/// balancer that sends each hedge to a replica the request has not tried (gRFC A6 asks for
/// distinct backends where possible); any of the `n` once every one has been tried.
fn distinct(rng: &mut SeededRng, n: usize, used: &[u32]) -> usize {
    let free = n.saturating_sub(used.len());
    if free == 0 {
        return any(rng, n);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_stops_while_the_replica_is_paused() {
        let (pause, every) = (100_000_000, 99e9);
        let mut r = Replica::<()>::new(SeededRng::new(1));
        r.pauses.push_back((1_000, 2_000));
        r.pauses.push_back((5_000, 6_000));
        r.horizon = 6_000;
        // Before the first pause; across it; starting inside it; across both.
        assert_eq!(r.finish(0, 500, pause, every), 500);
        assert_eq!(r.finish(500, 1_000, pause, every), 2_500);
        assert_eq!(r.finish(1_500, 100, pause, every), 2_100);
        assert_eq!(r.finish(1_500, 3_500, pause, every), 6_500);
        // The pauses that ended are dropped, and new ones drawn past the horizon.
        assert!(r.finish(7_000, 1, pause, every) >= 7_001);
        assert!(
            r.pauses
                .front()
                .is_some_and(|p| p.0 >= 6_000 && p.1 > 7_000)
        );
        assert_eq!(r.finish(7_000, 10, 0, every), 7_010);
    }

    #[test]
    fn a_replica_idle_through_many_pauses_keeps_none_of_them() {
        // Pauses of 1 µs about every 1 ms; first used after 100 s, about 100 000 pauses in.
        let mut r = Replica::<()>::new(SeededRng::new(7));
        let done = r.finish(100_000_000_000, 1_000, 1_000, 1e6);
        assert!(done >= 100_000_001_000);
        // Only pauses that end after the work starts are kept: one or two, not 100 000.
        assert!(r.pauses.len() <= 3, "{}", r.pauses.len());
        assert!(r.pauses.iter().all(|p| p.1 > 100_000_000_000));
    }

    #[test]
    fn a_hedge_goes_to_a_replica_not_tried_while_one_is_left() {
        let mut rng = SeededRng::new(3);
        for _ in 0..1_000 {
            let r = distinct(&mut rng, 4, &[0, 2]);
            assert!(r == 1 || r == 3, "{r}");
            assert!(distinct(&mut rng, 2, &[0, 1]) < 2);
        }
    }
}
