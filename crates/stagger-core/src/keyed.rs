//! [`Keyed`]: the bounded table of per-destination state that the gate and the budgets per
//! destination share.
//!
//! A [`Gate`](crate::gate::Gate) keeps each destination's pacing, and a
//! [`BudgetPerDestination`](crate::budget::BudgetPerDestination) set each destination's budget.
//! Both must stay bounded, so that a flood of distinct hosts cannot grow their memory: at most
//! `capacity` destinations (1 to [`MAX_DESTINATIONS`](crate::limits::MAX_DESTINATIONS)). When the
//! table is full, a new destination makes room by forgetting the entry used least recently among
//! those that may be forgotten, or is refused if none may. The table asks its owner what "used" and
//! "may be forgotten" mean (a gate forgets any destination, idle longest first; a budget per
//! destination only one no run holds), so the bound and the eviction are written once.
//!
//! The table holds no lock: each owner keeps it under its own mutex, together with whatever
//! else that lock covers (the set's generator and lookup count), so that a call takes one lock
//! once, as it would with a hand-written map.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::ConfigError;

/// Up to `capacity` values, one per destination, keyed by the destination's name.
pub(crate) struct Keyed<V> {
    capacity: usize,
    entries: BTreeMap<Box<str>, V>,
}

impl<V> Keyed<V> {
    /// An empty table for up to `capacity` destinations.
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] naming `param` for a capacity of 0 or above
    /// [`MAX_DESTINATIONS`](crate::limits::MAX_DESTINATIONS).
    pub(crate) fn new(param: &'static str, capacity: usize) -> Result<Self, ConfigError> {
        crate::error::check_destinations(param, capacity)?;
        Ok(Self {
            capacity,
            entries: BTreeMap::new(),
        })
    }

    /// The most destinations the table holds.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The destinations the table holds now.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table holds no destination.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `key`, if the table holds it.
    #[inline]
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        self.entries.get(key)
    }

    /// The value of `key`, to change, if the table holds it.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.entries.get_mut(key)
    }

    /// Forgets `key`.
    #[inline]
    pub(crate) fn remove(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// Adds `key`, which the table does not hold, with the value `make` gives, and returns it.
    ///
    /// A full table first forgets, among the entries `may_forget` allows, the one whose
    /// `last_used` is least (the first by key on a tie). If it may forget none, nothing is
    /// added, `make` is not called, and the answer is `None`.
    #[inline]
    pub(crate) fn insert<T: Ord>(
        &mut self,
        key: &str,
        last_used: impl Fn(&V) -> T,
        may_forget: impl Fn(&V) -> bool,
        make: impl FnOnce() -> V,
    ) -> Option<&mut V> {
        debug_assert!(
            !self.entries.contains_key(key),
            "{key} is already in the table"
        );
        if self.entries.len() >= self.capacity {
            // A scan, bounded by the capacity (see `MAX_DESTINATIONS`).
            let oldest = self
                .entries
                .iter()
                .filter(|(_, value)| may_forget(value))
                .min_by_key(|(_, value)| last_used(value))
                .map(|(key, _)| key.clone())?;
            self.entries.remove(&oldest);
        }
        Some(self.entries.entry(key.into()).or_insert_with(make))
    }
}

/// The entries, as a map: the bound is its owner's to show.
impl<V: fmt::Debug> fmt::Debug for Keyed<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.entries.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_forgets_the_least_recently_used_it_may_or_refuses() {
        // (last used, may be forgotten)
        let mut table: Keyed<(u32, bool)> = Keyed::new("capacity", 2).unwrap();
        let used = |v: &(u32, bool)| v.0;
        let free = |v: &(u32, bool)| v.1;
        assert!(table.insert("b", used, free, || (2, true)).is_some());
        assert!(table.insert("a", used, free, || (1, false)).is_some());
        // Full: "a" was used least recently, but may not go; "b" goes.
        assert_eq!(
            table.insert("c", used, free, || (3, true)),
            Some(&mut (3, true))
        );
        assert!(table.get("b").is_none() && table.get("a").is_some());
        // On a tie, the first by key goes.
        table.get_mut("a").unwrap().1 = true;
        table.get_mut("c").unwrap().0 = 1;
        assert!(table.insert("d", used, free, || (4, true)).is_some());
        assert!(table.get("a").is_none() && table.get("c").is_some());
        // Nothing may go: refused, and the value is not made.
        let mut held: Keyed<(u32, bool)> = Keyed::new("capacity", 1).unwrap();
        held.insert("a", used, free, || (1, false));
        assert!(held.insert("b", used, free, || unreachable!()).is_none());
        assert_eq!((held.len(), held.capacity()), (1, 1));
        held.remove("a");
        assert!(held.is_empty());
        assert!(Keyed::<()>::new("capacity", 0).is_err());
        assert!(Keyed::<()>::new("capacity", crate::limits::MAX_DESTINATIONS + 1).is_err());
    }
}
