//! A sliding window of counters in time slots: the sums over the last `slots` slots.
//!
//! Time is the engine's `now`. Each slot covers `slot` of time; a slot older than the window is
//! reset when its turn comes round again. The window therefore slides in steps of one slot: a
//! count expires between `(slots - 1) * slot` and `slots * slot` after it was added.

use std::time::Duration;

use crate::clock::Timestamp;

/// `N` counters summed over a window of `slots` slots of `slot` each.
#[derive(Clone, Debug)]
pub(crate) struct Window<const N: usize> {
    slot_ns: u64,
    slots: Vec<Slot<N>>,
}

#[derive(Clone, Copy, Debug)]
struct Slot<const N: usize> {
    epoch: u64,
    counts: [u64; N],
}

impl<const N: usize> Window<N> {
    /// A window of `slots` slots (at least 1) of `slot` each (at least 1 ns).
    pub(crate) fn new(slot: Duration, slots: usize) -> Self {
        let slot_ns = u64::try_from(slot.as_nanos()).unwrap_or(u64::MAX).max(1);
        Self {
            slot_ns,
            // Epoch 0 is a real epoch; start every slot one full window in the past of it.
            slots: vec![
                Slot {
                    epoch: u64::MAX,
                    counts: [0; N]
                };
                slots.max(1)
            ],
        }
    }

    fn epoch(&self, now: Timestamp) -> u64 {
        let ns = u64::try_from(now.since_origin().as_nanos()).unwrap_or(u64::MAX);
        ns / self.slot_ns
    }

    /// Adds `amount` to counter `index` at `now`.
    pub(crate) fn add(&mut self, now: Timestamp, index: usize, amount: u64) {
        let epoch = self.epoch(now);
        let len = self.slots.len() as u64;
        let slot = &mut self.slots[(epoch % len) as usize];
        if slot.epoch != epoch {
            *slot = Slot {
                epoch,
                counts: [0; N],
            };
        }
        slot.counts[index] = slot.counts[index].saturating_add(amount);
    }

    /// The sums of every counter over the window ending at `now`.
    pub(crate) fn sums(&self, now: Timestamp) -> [u64; N] {
        let epoch = self.epoch(now);
        let len = self.slots.len() as u64;
        let mut sums = [0u64; N];
        for slot in &self.slots {
            if slot.epoch <= epoch && epoch - slot.epoch < len {
                for (sum, count) in sums.iter_mut().zip(slot.counts) {
                    *sum = sum.saturating_add(count);
                }
            }
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn counts_expire_after_the_window() {
        let mut w = Window::<2>::new(Duration::from_secs(1), 10);
        w.add(at(0), 0, 3);
        w.add(at(500), 1, 1);
        w.add(at(9_999), 0, 1);
        assert_eq!(w.sums(at(9_999)), [4, 1]);
        // The first slot (0..1 s) leaves the window at 10 s.
        assert_eq!(w.sums(at(10_000)), [1, 0]);
        assert_eq!(w.sums(at(19_999)), [0, 0]);
    }

    #[test]
    fn a_reused_slot_starts_from_zero() {
        let mut w = Window::<1>::new(Duration::from_secs(1), 2);
        w.add(at(0), 0, 5);
        w.add(at(2_000), 0, 1);
        assert_eq!(w.sums(at(2_000)), [1]);
    }
}
