//! The event queue: events ordered by time, ties broken first in, first out.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Time in the simulation: integer nanoseconds since the start of the run.
pub type Nanos = u64;

/// `d` in nanoseconds, saturating at [`Nanos::MAX`] (about 584 years).
pub(crate) fn nanos(d: std::time::Duration) -> Nanos {
    u64::try_from(d.as_nanos()).unwrap_or(Nanos::MAX)
}

/// A queue of events of type `E`, popped in order of `(time, sequence)`: earliest first, and
/// in insertion order among equal times. Nothing depends on the order of a hash map, so a run
/// is reproducible to the byte.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    sequence: u64,
    now: Nanos,
}

#[derive(Debug)]
struct Entry<E> {
    time: Nanos,
    sequence: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.sequence) == (other.time, other.sequence)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so that the max-heap pops the earliest `(time, sequence)`.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.sequence).cmp(&(self.time, self.sequence))
    }
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
        Self {
            heap: BinaryHeap::new(),
            sequence: 0,
            now: 0,
        }
    }

    /// An empty queue with room for `capacity` pending events.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(capacity),
            sequence: 0,
            now: 0,
        }
    }

    /// The time of the last event popped.
    #[must_use]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedules `event` at `time`, or now if `time` is in the past.
    pub fn push(&mut self, time: Nanos, event: E) {
        let time = time.max(self.now);
        self.heap.push(Entry {
            time,
            sequence: self.sequence,
            event,
        });
        self.sequence += 1;
    }

    /// Schedules `event` `delay` nanoseconds from now, saturating.
    pub fn push_after(&mut self, delay: Nanos, event: E) {
        self.push(self.now.saturating_add(delay), event);
    }

    /// The next event and its time, advancing the clock to it.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let entry = self.heap.pop()?;
        self.now = entry.time;
        Some((entry.time, entry.event))
    }

    /// Events scheduled so far.
    #[must_use]
    pub fn scheduled(&self) -> u64 {
        self.sequence
    }

    /// Events pending.
    #[must_use]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
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
}
