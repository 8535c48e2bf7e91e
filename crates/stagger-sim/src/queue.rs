//! The event queue: events ordered by time, ties broken first in, first out.

use std::collections::VecDeque;

/// Time in the simulation: integer nanoseconds since the start of the run.
pub type Nanos = u64;

/// `d` in nanoseconds, saturating at [`Nanos::MAX`] (about 584 years).
pub(crate) use stagger_core::duration::saturating_nanos as nanos;

/// The width in bits of one digit of a time: the queue has a level of buckets per digit.
const DIGIT: u32 = 8;

/// Buckets per level, one per value of a digit.
const RADIX: usize = 1 << DIGIT;

/// Levels of buckets, one per digit of a [`Nanos`].
const LEVELS: usize = Nanos::BITS.div_ceil(DIGIT) as usize;

/// Buckets for the events later than the current time.
const BUCKETS: usize = LEVELS * RADIX;

/// Words of the bitmap of buckets that hold events.
const WORDS: usize = BUCKETS.div_ceil(64);

// One bit of `EventQueue::words` per word of the bitmap.
const _: () = assert!(WORDS <= 64);

/// The most events a bucket keeps room for once it has been spread.
const KEEP: usize = 1 << 8;

/// A queue of events of type `E`, popped in order of `(time, sequence)`: earliest first, and
/// in insertion order among equal times. Nothing depends on the order of a hash map, so a run
/// is reproducible to the byte.
///
/// Simulated time never goes backwards (an event is never scheduled before the last one
/// popped), so the queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) on digits
/// of 8 bits. One list holds the events at the current time, in insertion order. The
/// others are keyed by the highest digit in which an event's time differs from the current
/// time (its level) and by the event's value of that digit: every event of a bucket is earlier
/// than every event of the buckets after it, in the order level by level, digit by digit. An
/// event is pushed onto the end of its bucket; when the current list runs dry, the first bucket
/// that is not empty is spread over the levels below it, around its earliest time, which
/// becomes the current time. Each bucket keeps its events in insertion order (a bucket is only
/// ever spread into empty ones), so events at the same time come out first in, first out,
/// exactly as from a binary heap ordered by `(time, sequence)`; but every step is a sequential
/// read or write, which makes it several times faster than a heap on large queues. An event
/// moves at most once per digit, 8 times for 8-bit digits: on the outage and open-loop
/// workloads, 2.0 and 1.8 times per event on average, where a radix heap on single bits moved
/// it 4.7 and 4.3 times.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// The events at `now`, in insertion order.
    current: VecDeque<(Nanos, E)>,
    /// `later[level * RADIX + digit]`: the events whose time first differs from `now` in
    /// the digit `level` (counted from the lowest), where theirs is `digit`, in insertion order.
    later: Vec<Vec<(Nanos, E)>>,
    /// Bit `i % 64` of word `i / 64` is set when `later[i]` holds events: the first such
    /// bucket is found in a few words, not by looking through every bucket.
    occupied: [u64; WORDS],
    /// Bit `w` is set when word `w` of `occupied` is not zero.
    words: u64,
    /// Events pending.
    len: usize,
    sequence: u64,
    now: Nanos,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    #[must_use]
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue with room for `capacity` pending events at time zero (more may need to
    /// be allocated as they move between buckets).
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            current: VecDeque::with_capacity(capacity),
            later: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            words: 0,
            len: 0,
            sequence: 0,
            now: 0,
        }
    }

    /// The memory the queue takes per event pending at its peak, for estimates: each event
    /// is held once, as `(time, event)`, but the buckets keep some of the room they grew to,
    /// for about [`EventQueue::ROOM`] times the peak in all on a large queue. On a small one
    /// the room kept may be many times its peak, but never more than 256 events per bucket
    /// (2048 buckets: 16 MiB of 32-byte events in all, whatever the peak).
    #[must_use]
    pub const fn bytes_per_pending() -> f64 {
        (size_of::<(Nanos, E)>() * Self::ROOM) as f64
    }

    /// The memory per event scheduled so far ahead that it stays where it was pushed until
    /// the run ends (work a collapsed server will not finish): once, in a bucket grown by
    /// doubling.
    #[must_use]
    pub const fn bytes_per_parked() -> f64 {
        (size_of::<(Nanos, E)>() * 2) as f64
    }

    /// How many times the events pending at its peak the queue's buckets may hold room for:
    /// room for the peak in the buckets the events are pushed to (grown by doubling), and
    /// some more in the buckets they move through, which keep room for at most
    /// 256 events each once spread.
    pub const ROOM: usize = 3;

    /// The time of the last event popped.
    #[must_use]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedules `event` at `time`, or now if `time` is in the past.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: E) {
        let time = time.max(self.now);
        match bucket(time, self.now) {
            None => self.current.push_back((time, event)),
            Some(b) => {
                self.later[b].push((time, event));
                self.occupied[b / 64] |= 1 << (b % 64);
                self.words |= 1 << (b / 64);
            }
        }
        self.len += 1;
        self.sequence += 1;
    }

    /// Schedules `event` `delay` nanoseconds from now, saturating.
    pub fn push_after(&mut self, delay: Nanos, event: E) {
        self.push(self.now.saturating_add(delay), event);
    }

    /// The next event and its time, advancing the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let entry = match self.current.pop_front() {
            Some(entry) => entry,
            None => self.advance()?,
        };
        self.len -= 1;
        Some(entry)
    }

    /// Moves the clock to the earliest pending event, spreads the first bucket that holds
    /// events around it and takes that event out; `None` if nothing is pending.
    #[inline(never)]
    fn advance(&mut self) -> Option<(Nanos, E)> {
        if self.words == 0 {
            debug_assert_eq!(self.len, 0, "events pending, but no bucket marked");
            return None;
        }
        let w = self.words.trailing_zeros() as usize;
        let bits = self.occupied[w];
        let b = w * 64 + bits.trailing_zeros() as usize;
        // The lowest bit set is cleared: the bucket is emptied now.
        self.occupied[w] = bits & (bits - 1);
        if self.occupied[w] == 0 {
            self.words &= self.words - 1;
        }
        // Every time in bucket `b` agrees with the earliest one from its level up, so it
        // lands in a lower level (a bucket before `b`), all of whose buckets are empty.
        let (lower, rest) = self.later.split_at_mut(b);
        let spread = rest.first_mut()?;
        debug_assert!(!spread.is_empty(), "bucket {b} is marked but empty");
        if spread.len() == 1 {
            // Three spreads in four on the outage workload: the one event is the next.
            let entry = spread.pop()?;
            self.now = entry.0;
            return Some(entry);
        }
        let now = spread.iter().map(|&(t, _)| t).min()?;
        self.now = now;
        for (time, event) in spread.drain(..) {
            match bucket(time, now) {
                None => self.current.push_back((time, event)),
                Some(to) => {
                    lower[to].push((time, event));
                    self.occupied[to / 64] |= 1 << (to % 64);
                    self.words |= 1 << (to / 64);
                }
            }
        }
        // Keep a small bucket's room for its next events; a large one's goes back to the
        // allocator, or every bucket would keep room for the peak it once held.
        if spread.capacity() > KEEP {
            *spread = Vec::new();
        }
        self.current.pop_front()
    }

    /// Events scheduled so far.
    #[must_use]
    pub fn scheduled(&self) -> u64 {
        self.sequence
    }

    /// Events pending.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is pending.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The bucket of an event at `time` when the current time is `now`, `None` if they are equal:
/// the level is the highest digit in which they differ, and the bucket within the level is the
/// event's value of that digit.
#[inline]
fn bucket(time: Nanos, now: Nanos) -> Option<usize> {
    let level = (time ^ now).checked_ilog2()? / DIGIT;
    let digit = (time >> (level * DIGIT)) as usize % RADIX;
    Some(level as usize * RADIX + digit)
}

/// The pending writes of a round: at most one per client, popped in order of `(time,
/// sequence)` as the crate's [`EventQueue`](crate::queue::EventQueue), so that ties are first
/// in, first out.
///
/// Every client has at most one event pending (its next write reaching the server), so a
/// winner tree over the clients replaces the heap: scheduling or clearing a client's event
/// replays its path to the root, one branch-free comparison per level, and the earliest event
/// is always at the root. A key is `[time, sequence << 24 | client]`: unique, ordered by time
/// then sequence, and carrying its client.
pub(crate) struct Writes {
    /// Node 1 is the root, node `n`'s children are `2n` and `2n + 1`, and node `leaves + c`
    /// is client `c`'s leaf. Each node holds the smallest key below it.
    key: Vec<[u64; 2]>,
    leaves: usize,
    sequence: u64,
}

impl Writes {
    const EMPTY: [u64; 2] = [u64::MAX; 2];
    /// The bits of a key that name its client.
    const CLIENT_BITS: u32 = 24;

    pub(crate) fn new(clients: usize) -> Self {
        debug_assert!(clients < 1 << Self::CLIENT_BITS);
        let leaves = clients.next_power_of_two().max(2);
        Self {
            key: vec![Self::EMPTY; 2 * leaves],
            leaves,
            sequence: 0,
        }
    }

    /// Nothing pending, sequence numbers from zero: a new round.
    pub(crate) fn reset(&mut self) {
        self.key.fill(Self::EMPTY);
        self.sequence = 0;
    }

    /// The earliest pending write: its time and client.
    #[inline]
    pub(crate) fn first(&self) -> Option<(Nanos, usize)> {
        let [time, tag] = self.key[1];
        let client = (tag & ((1 << Self::CLIENT_BITS) - 1)) as usize;
        (tag != u64::MAX).then_some((time, client))
    }

    /// Client `c`'s write reaches the server at `time`, replacing any pending one.
    #[inline]
    pub(crate) fn schedule(&mut self, c: usize, time: Nanos) {
        // 40 bits of sequence: a round has far fewer events than 2^40 (see `MAX_WORK`).
        let tag = self.sequence << Self::CLIENT_BITS | c as u64;
        self.sequence += 1;
        self.replay(c, [time, tag]);
    }

    /// Client `c` has no write pending.
    #[inline]
    pub(crate) fn clear(&mut self, c: usize) {
        self.replay(c, Self::EMPTY);
    }

    #[inline]
    pub(crate) fn replay(&mut self, c: usize, key: [u64; 2]) {
        let keys = &mut self.key[..];
        // The tree's length is a power of two, so masking an index keeps it in bounds without
        // a check per level (every index here is below the length anyway).
        let mask = keys.len() - 1;
        debug_assert!(keys.len().is_power_of_two());
        let mut node = self.leaves + c;
        keys[node] = key;
        let [mut time, mut tag] = key;
        while node > 1 {
            let [t, g] = keys[(node ^ 1) & mask];
            // Which side wins is a coin flip that a branch predictor cannot learn: select.
            let take = (t < time) | ((t == time) & (g < tag));
            time = std::hint::select_unpredictable(take, t, time);
            tag = std::hint::select_unpredictable(take, g, tag);
            node >>= 1;
            keys[node & mask] = [time, tag];
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use stagger_core::{Rng, SeededRng};

    use super::*;

    #[test]
    fn earliest_first_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(20, "c");
        q.push(10, "a");
        q.push(10, "b");
        q.push(5, "first");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(5, "first"), (10, "a"), (10, "b"), (20, "c")]);
    }

    #[test]
    fn the_past_is_now() {
        let mut q = EventQueue::new();
        q.push(10, 1);
        q.pop();
        q.push(3, 2);
        assert_eq!(q.pop(), Some((10, 2)));
    }

    /// Times on both sides of digit boundaries (where an event changes level), ties among
    /// them and the end of time, pushed out of order and between pops, against the
    /// definition: a binary heap of `(time, sequence)`.
    #[test]
    fn digit_boundaries_and_the_end_of_time() {
        let edges = [
            0,
            1,
            255,
            256,
            257,
            511,
            512,
            65_535,
            65_536,
            65_537,
            (1 << 32) - 1,
            1 << 32,
            1 << 40,
            1 << 48,
            (1 << 56) - 1,
            1 << 56,
            3 << 56,
            1 << 63,
            u64::MAX - 256,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut sequence = 0u64;
        let mut push = |q: &mut EventQueue<usize>, reference: &mut BinaryHeap<_>, t, e| {
            q.push(t, e);
            reference.push(Reverse((t, sequence, e)));
            sequence += 1;
        };
        for (i, &t) in edges.iter().rev().enumerate() {
            push(&mut q, &mut reference, t, i);
            push(&mut q, &mut reference, t, 100 + i);
        }
        let mut pops = 0;
        while let Some(Reverse((t, _, e))) = reference.pop() {
            assert_eq!(q.pop(), Some((t, e)), "pop {pops}");
            pops += 1;
            // As a run goes: one more event now, and one a digit later.
            if pops < 20 {
                push(&mut q, &mut reference, t, 1000 + e);
                push(&mut q, &mut reference, t.saturating_add(256), 2000 + e);
            }
        }
        assert_eq!(pops, 2 * edges.len() + 2 * 19);
        assert!(q.is_empty() && q.pop().is_none());
    }

    /// The order of a binary heap of `(time, sequence)`, the queue's definition, on random
    /// pushes interleaved with pops: coarse times (many ties), fine ones, far ones, and the
    /// largest time.
    #[test]
    fn pops_in_the_order_of_a_heap_of_time_and_sequence() {
        for seed in 0..20 {
            let mut rng = SeededRng::new(seed);
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut sequence = 0u64;
            let mut now = 0;
            for step in 0..20_000 {
                if !rng.next_u64().is_multiple_of(3) || reference.is_empty() {
                    let r = rng.next_u64();
                    let delay = match r % 6 {
                        0 => 0,
                        1 => r >> 60,
                        2 => (r >> 8) % 1_000_000,
                        3 => (r >> 8) % 10_000_000_000,
                        // Every width, so that every level of buckets is used.
                        4 => rng.next_u64() >> ((r >> 8) % 64),
                        _ => Nanos::MAX - now,
                    };
                    // Some pushes into the past, which means now.
                    let time = if r.is_multiple_of(7) {
                        now.saturating_sub(5)
                    } else {
                        now.saturating_add(delay)
                    };
                    q.push(time, step);
                    reference.push(Reverse((time.max(now), sequence, step)));
                    sequence += 1;
                } else {
                    let Reverse((time, _, event)) = reference.pop().expect("not empty");
                    assert_eq!(q.pop(), Some((time, event)), "seed {seed}, step {step}");
                    now = time;
                    assert_eq!(q.now(), now);
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse((time, _, event))) = reference.pop() {
                assert_eq!(q.pop(), Some((time, event)));
            }
            assert!(q.is_empty() && q.pop().is_none());
            assert_eq!(q.scheduled(), sequence);
        }
    }

    #[test]
    fn the_winner_tree_pops_in_the_event_queues_order() {
        let mut rng = SeededRng::new(9);
        let clients = 37;
        let mut tree = Writes::new(clients);
        let mut queue: EventQueue<usize> = EventQueue::new();
        // Coarse times, so that ties are frequent: they must pop first in, first out.
        for c in 0..clients {
            let t = rng.next_u64() % 8;
            tree.schedule(c, t);
            queue.push(t, c);
        }
        let mut pending = vec![true; clients];
        let mut popped = 0;
        while let Some((now, c)) = tree.first() {
            assert_eq!(queue.pop(), Some((now, c)));
            popped += 1;
            if popped >= 5_000 {
                tree.clear(c);
                pending[c] = false;
            } else if rng.next_u64().is_multiple_of(8) {
                // Another client's turn: clear this one, schedule a random idle one.
                tree.clear(c);
                pending[c] = false;
                let other = (rng.next_u64() % clients as u64) as usize;
                if !pending[other] {
                    let t = now + rng.next_u64() % 8;
                    tree.schedule(other, t);
                    queue.push(t, other);
                    pending[other] = true;
                }
            } else {
                let t = now + rng.next_u64() % 8;
                tree.schedule(c, t);
                queue.push(t, c);
            }
        }
        assert!(queue.is_empty() && pending.iter().all(|p| !p));
        assert!(popped > 1_000, "{popped}");
    }
}
