//! A sliding window of counters in time slots: the sums over the last `slots` slots.
//!
//! Time is the engine's `now`. Each slot covers `slot` of time; the window slides in steps of
//! one slot, so a count expires between `(slots - 1) * slot` and `slots * slot` after it was
//! added. Running totals are kept as slots expire, so adding and summing cost the same whatever
//! the number of slots (amortised: expiring a slot is paid once, by the first call after it
//! ends). A `now` earlier than one already seen (calls racing from several threads) counts in
//! the latest slot.

use std::time::Duration;

use crate::clock::Timestamp;

/// `N` counters summed over a window of `slots` slots of `slot` each.
#[derive(Clone, Debug)]
pub(crate) struct Window<const N: usize> {
    slot_ns: u64,
    slots: Vec<[u64; N]>,
    totals: [u64; N],
    /// The epoch (slot number since the origin) of the latest slot; `None` before any call.
    latest: Option<u64>,
    /// The latest slot's index in `slots`.
    index: usize,
    /// Where the latest slot ends, in nanoseconds since the origin (0 before any call): a
    /// `now` before it falls in the latest slot (or, earlier, is a late call, counted there),
    /// so the common call needs no division.
    end_ns: u64,
}

impl<const N: usize> Window<N> {
    /// A window of `slots` slots (at least 1) of `slot` each (at least 1 ns).
    pub(crate) fn new(slot: Duration, slots: usize) -> Self {
        let slot_ns = crate::duration::saturating_nanos(slot).max(1);
        Self {
            slot_ns,
            slots: vec![[0; N]; slots.max(1)],
            totals: [0; N],
            latest: None,
            index: 0,
            end_ns: 0,
        }
    }

    /// Moves the window to `now`, expiring the slots it leaves behind; returns the index of the
    /// current slot.
    #[inline]
    fn advance(&mut self, now: Timestamp) -> usize {
        if now.as_nanos() < self.end_ns {
            return self.index;
        }
        self.advance_slot(now)
    }

    /// [`Window::advance`] to a later slot than the latest (or the first).
    #[cold]
    fn advance_slot(&mut self, now: Timestamp) -> usize {
        let epoch = self.epoch(now);
        let len = self.slots.len() as u64;
        match self.latest {
            Some(latest) if epoch <= latest => return self.index,
            Some(latest) if epoch - latest < len => {
                for e in latest + 1..=epoch {
                    self.expire((e % len) as usize);
                }
            }
            _ => {
                self.slots.iter_mut().for_each(|s| *s = [0; N]);
                self.totals = [0; N];
            }
        }
        self.latest = Some(epoch);
        self.index = (epoch % len) as usize;
        self.end_ns = epoch
            .saturating_mul(self.slot_ns)
            .saturating_add(self.slot_ns);
        self.index
    }

    fn expire(&mut self, index: usize) {
        let old = std::mem::replace(&mut self.slots[index], [0; N]);
        for (total, count) in self.totals.iter_mut().zip(old) {
            *total -= count;
        }
    }

    /// Adds `amount` to counter `index` at `now`.
    #[inline]
    pub(crate) fn add(&mut self, now: Timestamp, index: usize, amount: u64) {
        let slot = self.advance(now);
        // Totals are at least as large as any slot, so saturating the slot saturates both.
        let added = amount.min(u64::MAX - self.totals[index]);
        self.slots[slot][index] += added;
        self.totals[index] += added;
    }

    /// Takes back up to `amount` from counter `index`, added at `at`: from the slot `at` fell
    /// in, if that slot is still in the window (a count that has expired is gone already), and
    /// what that slot lacks from the later ones: a count added late (by a caller that lost a
    /// race to one with a later `now`) went into the latest slot of its time.
    pub(crate) fn remove(&mut self, at: Timestamp, index: usize, amount: u64) {
        let Some(latest) = self.latest else {
            return;
        };
        let len = self.slots.len() as u64;
        let mut epoch = self.epoch(at).min(latest);
        if latest - epoch >= len {
            return;
        }
        let mut left = amount;
        while left > 0 {
            let slot = &mut self.slots[(epoch % len) as usize][index];
            let removed = left.min(*slot);
            *slot -= removed;
            self.totals[index] -= removed;
            left -= removed;
            // The latest slot may be epoch u64::MAX (1 ns slots at the far end of time).
            if epoch == latest {
                break;
            }
            epoch += 1;
        }
    }

    /// The slot number of `t` since the origin (its nanoseconds over the slot's).
    #[inline]
    fn epoch(&self, t: Timestamp) -> u64 {
        t.as_nanos() / self.slot_ns
    }

    /// The sums of every counter over the window ending at `now`.
    #[inline]
    pub(crate) fn sums(&mut self, now: Timestamp) -> [u64; N] {
        self.advance(now);
        self.totals
    }

    /// Adds `amount` to counter `index` in the latest slot, where the window stands since the
    /// last [`Window::sums`] or [`Window::add`]: the same as `add` at that call's `now`, without
    /// working out its slot again. Before any call, nothing is added.
    #[inline]
    pub(crate) fn add_latest(&mut self, index: usize, amount: u64) {
        if self.latest.is_none() {
            return;
        }
        let slot = self.index;
        let added = amount.min(u64::MAX - self.totals[index]);
        self.slots[slot][index] += added;
        self.totals[index] += added;
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
    fn a_reused_slot_starts_from_zero_and_gaps_reset_everything() {
        let mut w = Window::<1>::new(Duration::from_secs(1), 2);
        w.add(at(0), 0, 5);
        w.add(at(2_000), 0, 1);
        assert_eq!(w.sums(at(2_000)), [1]);
        w.add(at(1_000_000), 0, 2);
        assert_eq!(w.sums(at(1_000_000)), [2]);
    }

    #[test]
    fn a_late_call_counts_in_the_latest_slot() {
        let mut w = Window::<1>::new(Duration::from_secs(1), 3);
        w.add(at(5_000), 0, 1);
        w.add(at(1_000), 0, 1);
        assert_eq!(w.sums(at(5_000)), [2]);
        assert_eq!(w.sums(at(7_999)), [2]);
        assert_eq!(w.sums(at(8_000)), [0]);
    }

    #[test]
    fn a_removed_count_leaves_its_own_slot_and_an_expired_one_is_not_removed() {
        let mut w = Window::<2>::new(Duration::from_secs(1), 3);
        w.add(at(0), 1, 1);
        w.add(at(1_500), 1, 1);
        assert_eq!(w.sums(at(1_500)), [0, 2]);
        // Taken from the slot of 0..1 s, so the count of 1.5 s still expires at 4 s.
        w.remove(at(200), 1, 1);
        assert_eq!(w.sums(at(2_000)), [0, 1]);
        assert_eq!(w.sums(at(3_999)), [0, 1]);
        assert_eq!(w.sums(at(4_000)), [0, 0]);
        // A count added late, in a later slot than its own time's, is found there.
        let mut late = Window::<1>::new(Duration::from_secs(1), 3);
        late.add(at(2_500), 0, 1);
        late.add(at(1_200), 0, 1); // counted in the slot of 2.5 s
        late.remove(at(1_200), 0, 1);
        assert_eq!(late.sums(at(2_500)), [1]);
        late.remove(at(2_500), 0, 1);
        assert_eq!(late.sums(at(2_500)), [0]);
        // A count whose slot has left the window is not taken from a newer one.
        w.add(at(4_000), 1, 1);
        w.remove(at(1_500), 1, 1);
        assert_eq!(w.sums(at(4_000)), [0, 1]);
        // Never below zero.
        w.remove(at(4_000), 1, 5);
        w.remove(at(4_000), 0, 5);
        assert_eq!(w.sums(at(4_000)), [0, 0]);
    }

    #[test]
    fn adding_to_the_latest_slot_is_adding_at_the_last_calls_time() {
        let mut by_time: Window<2> = Window::new(Duration::from_millis(100), 10);
        let mut latest = by_time.clone();
        // Nothing is added before the window has a slot.
        latest.add_latest(1, 5);
        assert_eq!(latest.sums(at(0)), [0, 0]);
        for ms in [0, 50, 250, 1_300, 1_310, 5_000] {
            by_time.sums(at(ms));
            latest.sums(at(ms));
            by_time.add(at(ms), 1, 2);
            latest.add_latest(1, 2);
            assert_eq!(by_time.sums(at(ms)), latest.sums(at(ms)), "{ms} ms");
            // And they expire alike.
            assert_eq!(
                by_time.sums(at(ms + 950)),
                latest.sums(at(ms + 950)),
                "{ms} ms"
            );
        }
        // Time far past the origin saturates rather than wrapping.
        let far = Timestamp::from_duration(Duration::MAX);
        by_time.add(far, 0, 1);
        assert_eq!(by_time.sums(far), [1, 0]);
        // With 1 ns slots the latest epoch is u64::MAX there: removing more than it holds
        // stops at it.
        let mut fine: Window<1> = Window::new(Duration::from_nanos(1), 10);
        fine.add(far, 0, 1);
        fine.remove(far, 0, 5);
        assert_eq!(fine.sums(far), [0]);
    }

    #[test]
    fn sums_match_a_direct_count() {
        // Against a brute-force count of the events in the window, for a pseudo-random stream.
        let mut w = Window::<1>::new(Duration::from_millis(100), 10);
        let mut events: Vec<u64> = Vec::new();
        let mut t = 0u64;
        let mut x = 12_345u64;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            t += (x >> 33) % 60;
            w.add(at(t), 0, 1);
            events.push(t);
            let epoch = t / 100;
            let expected = events.iter().filter(|&&e| epoch - e / 100 < 10).count() as u64;
            assert_eq!(w.sums(at(t)), [expected]);
        }
    }
}
