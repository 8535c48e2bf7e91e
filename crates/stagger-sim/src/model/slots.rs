//! A table of the requests in flight, whose slots are reused once a request is over.

use crate::memory::grown;

/// Values in numbered slots. A slot freed by [`Slots::remove`] is the next one
/// [`Slots::insert`] fills (last freed, first reused), so the table holds at most the values
/// live at once, and the numbers it hands out depend only on the order of the calls.
#[derive(Debug)]
pub(crate) struct Slots<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Slots<T> {
    /// An empty table with room for `capacity` values.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            slots: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
        }
    }

    /// Puts `value` in a free slot, or a new one, and returns its number.
    #[inline]
    pub(crate) fn insert(&mut self, value: T) -> u32 {
        self.insert_with(|| value)
    }

    /// Puts the value `make` makes in a free slot, or a new one, and returns its number. The
    /// value is made where it will lie: a request is a few hundred bytes, not copied twice.
    #[inline(always)]
    pub(crate) fn insert_with(&mut self, make: impl FnOnce() -> T) -> u32 {
        if let Some(slot) = self.free.pop() {
            // A free slot is empty, so filling it drops nothing.
            let entry = &mut self.slots[slot as usize];
            debug_assert!(entry.is_none(), "slot {slot} is on the free list but full");
            entry.get_or_insert_with(make);
            slot
        } else {
            self.slots.push(Some(make()));
            // Far fewer values are ever live at once than u32::MAX (the workloads' limits).
            u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
        }
    }

    /// The value in `slot`, if there is one.
    #[inline]
    pub(crate) fn get(&mut self, slot: u32) -> Option<&mut T> {
        self.slots.get_mut(slot as usize).and_then(Option::as_mut)
    }

    /// Empties `slot`, if it holds a value.
    #[inline]
    pub(crate) fn remove(&mut self, slot: u32) {
        // Dropped where it lies, not moved out first: a request is a few hundred bytes.
        if let Some(entry) = self.slots.get_mut(slot as usize)
            && entry.is_some()
        {
            *entry = None;
            self.free.push(slot);
        }
    }

    /// Values in the table.
    pub(crate) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The memory of a table that holds `peak` values at once (both vectors grow to the peak,
    /// starting from `reserved`).
    pub(crate) fn bytes(peak: f64, reserved: f64) -> f64 {
        let room = reserved.max(grown_from(reserved, peak));
        room * (size_of::<Option<T>>() + size_of::<u32>()) as f64
    }
}

/// The capacity a vector reserved for `reserved` elements reaches when it grows to `len`: it
/// doubles from `reserved` (or from the next power of two if it started empty).
fn grown_from(reserved: f64, len: f64) -> f64 {
    if reserved < 1.0 {
        return grown(len);
    }
    let mut room = reserved;
    while room < len {
        room *= 2.0;
    }
    room
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_slot_freed_is_the_next_one_filled() {
        let mut slots = Slots::with_capacity(0);
        let (a, b, c) = (slots.insert('a'), slots.insert('b'), slots.insert('c'));
        assert_eq!((a, b, c), (0, 1, 2));
        slots.remove(a);
        slots.remove(c);
        slots.remove(c);
        assert_eq!(slots.live(), 1);
        assert_eq!(slots.get(a), None);
        assert_eq!(slots.insert('d'), c);
        assert_eq!(slots.insert('e'), a);
        assert_eq!(slots.insert('f'), 3);
        assert_eq!(slots.get(b), Some(&mut 'b'));
        assert_eq!(slots.get(9), None);
    }

    #[test]
    fn the_table_grows_to_the_peak() {
        let slot = (size_of::<Option<u64>>() + size_of::<u32>()) as f64;
        assert_eq!(Slots::<u64>::bytes(1000.0, 0.0), 1024.0 * slot);
        assert_eq!(Slots::<u64>::bytes(1000.0, 100.0), 1600.0 * slot);
        assert_eq!(Slots::<u64>::bytes(10.0, 100.0), 100.0 * slot);
    }
}
