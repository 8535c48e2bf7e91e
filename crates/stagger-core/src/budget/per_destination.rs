//! Budgets per destination: [`PerDestination`], what a layer serving many destinations holds,
//! and [`BudgetPerDestination`], one budget of its own for each destination.
//!
//! A layer (the tower layer, the reqwest middleware) serves requests to many hosts, and asks
//! for each request's budget by its destination. Every type that does so is a
//! [`PerDestination`], and is named for it: [`BudgetPerDestination`] here,
//! [`GatedPerDestination`](crate::gate::GatedPerDestination) (a gate in front of any of them)
//! and [`SpecPerDestination`](crate::config::SpecPerDestination) (what a configuration file
//! describes). What one hands out, for one request, is a budget: `Arc<B>`,
//! [`GatedBudget`](crate::gate::GatedBudget), [`SpecBudget`](crate::config::SpecBudget).
//!
//! A budget shared by every request of a client bounds the client's retries as a whole. When
//! the client calls many hosts, one host's outage then spends the retries the others need. A
//! [`BudgetPerDestination`] keeps a budget of its own for each destination, all of one
//! configuration, and builds one the first time a destination is seen. The set is bounded: at
//! most `capacity` destinations, so a flood of distinct hosts cannot grow its memory. To make
//! room, the one used least recently among those no run holds is forgotten (its next request
//! starts a fresh budget); when every one is held, a new destination shares one overflow budget
//! with the others that find the set full, rather than get a fresh budget each, which would
//! bound nothing. The set is the same bounded table as a [`Gate`](crate::gate::Gate)'s, told
//! that only a budget no run holds may go.
//!
//! ```
//! use std::sync::Arc;
//! use stagger_core::budget::{Budget, BudgetPerDestination, PerDestination, TokenBucket};
//! use stagger_core::{Failure, SeededRng, Timestamp};
//!
//! // Ten retries a host at most (50 tokens, 5 a retry).
//! let bucket = TokenBucket::AWS_STANDARD.with_capacity(50.0);
//! let budgets = Arc::new(BudgetPerDestination::new(bucket, 1024, SeededRng::new(7))?);
//! let down = budgets.for_key("down.example:443");
//! let now = Timestamp::ZERO;
//! let granted = (0..100).filter(|_| down.try_retry(now, &Failure::Retryable).is_some());
//! assert_eq!(granted.count(), 10);
//! // Another host's retries are untouched.
//! let up = budgets.for_destination(|| "up.example:443".into());
//! assert!(up.try_retry(now, &Failure::Retryable).is_some());
//! assert_eq!(budgets.len(), 2);
//! # Ok::<(), stagger_core::ConfigError>(())
//! ```

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Budget, BudgetConfig};
use crate::error::ConfigError;
use crate::keyed::Keyed;
use crate::rng::SeededRng;

/// Budgets by destination: what a layer serving many destinations (the tower layer, the
/// reqwest middleware) holds, and asks for each request's budget by the request's key (its host
/// and port).
///
/// Every budget that can be cloned is one, the same for every destination: an `Arc` of one
/// budget is shared by all of them, as before. An `Arc<`[`BudgetPerDestination`]`>` gives each
/// destination a budget of its own, so that one host's outage cannot drain another's retries;
/// a [`GatedPerDestination`](crate::gate::GatedPerDestination) puts a gate in front of either.
pub trait PerDestination {
    /// The budget of one request.
    type Budget: Budget;

    /// The budget for a request to the destination `key` names. `key` is called at most once,
    /// and not at all by budgets that are the same everywhere.
    fn for_destination(&self, key: impl FnOnce() -> Arc<str>) -> Self::Budget;
}

impl<B: Budget + Clone> PerDestination for B {
    type Budget = B;

    #[inline]
    fn for_destination(&self, _key: impl FnOnce() -> Arc<str>) -> B {
        self.clone()
    }
}

/// Builds a destination's budget from the generator it is given.
type Make<B> = dyn Fn(SeededRng) -> Result<B, ConfigError> + Send + Sync;

/// One budget per destination, built on first use, in a set bounded by `capacity`. See the
/// [module docs](self).
pub struct BudgetPerDestination<B> {
    make: Box<Make<B>>,
    /// A budget built when the set was made: the proof that the configuration builds, and the
    /// overflow budget that destinations share when the set is full of budgets in use (or if a
    /// later build fails all the same).
    first: Arc<B>,
    table: Mutex<Table<B>>,
}

struct Table<B> {
    /// Each destination's budget, and when it was last used (a count of lookups).
    parts: Keyed<(Arc<B>, u64)>,
    lookups: u64,
    rng: SeededRng,
}

impl<B> BudgetPerDestination<B> {
    /// The most destinations a set may hold. Making room scans the set, under its lock.
    pub const MAX_CAPACITY: usize = crate::limits::MAX_DESTINATIONS;

    /// A budget of `config` for each of up to `capacity` destinations (1 to
    /// [`BudgetPerDestination::MAX_CAPACITY`]). Each destination's budget draws (where it draws)
    /// from its own generator, forked from `rng`.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] if the configuration is invalid or the capacity is out of range.
    pub fn new<C>(config: C, capacity: usize, rng: SeededRng) -> Result<Self, ConfigError>
    where
        C: BudgetConfig<Budget = B> + Send + Sync + 'static,
    {
        Self::with(capacity, rng, move |rng| config.build(rng))
    }

    /// A budget built by `make` for each of up to `capacity` destinations: for budgets that no
    /// [`BudgetConfig`] describes (a configuration file's, say).
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of `make`, or one for a capacity out of range.
    pub fn with(
        capacity: usize,
        mut rng: SeededRng,
        make: impl Fn(SeededRng) -> Result<B, ConfigError> + Send + Sync + 'static,
    ) -> Result<Self, ConfigError> {
        let parts = Keyed::new("capacity", capacity)?;
        let first = Arc::new(make(rng.fork())?);
        Ok(Self {
            make: Box::new(make),
            first,
            table: Mutex::new(Table {
                parts,
                lookups: 0,
                rng,
            }),
        })
    }

    fn table(&self) -> MutexGuard<'_, Table<B>> {
        // Every update leaves the table valid, so a poisoned lock is safe to reuse.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The budget of the destination `key`, built if it is new.
    pub fn for_key(&self, key: &str) -> Arc<B> {
        let mut table = self.table();
        let Table {
            parts,
            lookups,
            rng,
        } = &mut *table;
        *lookups += 1;
        let now = *lookups;
        if let Some((budget, used)) = parts.get_mut(key) {
            *used = now;
            return Arc::clone(budget);
        }
        // Only a budget no run holds may be forgotten: one in use would live on beside a fresh
        // one, and the destination would have two. If every one is held, the overflow budget.
        let added = parts.insert(
            key,
            |(_, used)| *used,
            |(budget, _)| Arc::strong_count(budget) == 1,
            || {
                // The configuration built once already, so this cannot fail; if it did, the
                // destination would share the first budget rather than go without one.
                let built = (self.make)(rng.fork());
                let budget = built.map_or_else(|_| Arc::clone(&self.first), Arc::new);
                (budget, now)
            },
        );
        added.map_or_else(|| Arc::clone(&self.first), |(budget, _)| Arc::clone(budget))
    }

    /// The destinations the set holds now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table().parts.len()
    }

    /// Whether the set holds no destination.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.table().parts.is_empty()
    }
}

impl<B> fmt::Debug for BudgetPerDestination<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (capacity, destinations) = {
            let table = self.table();
            (table.parts.capacity(), table.parts.len())
        };
        f.debug_struct("BudgetPerDestination")
            .field("capacity", &capacity)
            .field("destinations", &destinations)
            .field("budget", &std::any::type_name::<B>())
            .finish_non_exhaustive()
    }
}

impl<B: Budget> PerDestination for Arc<BudgetPerDestination<B>> {
    type Budget = Arc<B>;

    fn for_destination(&self, key: impl FnOnce() -> Arc<str>) -> Arc<B> {
        self.for_key(&key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::TokenBucket;
    use crate::clock::Timestamp;
    use crate::failure::Failure;

    #[test]
    fn the_set_is_bounded_and_forgets_the_least_recently_used() {
        let bucket = TokenBucket::AWS_STANDARD.with_capacity(10.0);
        let parts = BudgetPerDestination::new(bucket, 2, SeededRng::new(1)).unwrap();
        assert!(
            parts
                .for_key("a")
                .try_retry(Timestamp::ZERO, &Failure::Retryable)
                .is_some()
        );
        drop(parts.for_key("b"));
        // "a" was used after "b"; "c" pushes out "b", which no run holds.
        assert_eq!(parts.for_key("a").tokens(), 5.0);
        drop(parts.for_key("c"));
        assert_eq!(parts.len(), 2);
        assert_eq!(parts.for_key("a").tokens(), 5.0, "kept, as it was");
        // "b" starts afresh, pushing out "c".
        assert_eq!(parts.for_key("b").tokens(), 10.0);
        assert_eq!(parts.len(), 2);
    }

    #[test]
    fn a_budget_in_use_is_not_forgotten_and_a_full_set_shares_its_overflow() {
        let bucket = TokenBucket::AWS_STANDARD.with_capacity(10.0);
        let parts = BudgetPerDestination::new(bucket, 1, SeededRng::new(1)).unwrap();
        let a = parts.for_key("a");
        // "a" is held by a run: "b" and "c" share the overflow budget instead of evicting it.
        let b = parts.for_key("b");
        let c = parts.for_key("c");
        assert!(Arc::ptr_eq(&b, &c));
        assert!(!Arc::ptr_eq(&a, &b));
        assert!(Arc::ptr_eq(&a, &parts.for_key("a")));
        // Once no run holds "a", it may go.
        drop(a);
        let d = parts.for_key("d");
        assert!(!Arc::ptr_eq(&d, &b));
        assert_eq!(parts.len(), 1);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let bucket = TokenBucket::AWS_STANDARD;
        assert!(BudgetPerDestination::new(bucket, 0, SeededRng::new(1)).is_err());
        assert!(
            BudgetPerDestination::new(
                bucket,
                BudgetPerDestination::<()>::MAX_CAPACITY + 1,
                SeededRng::new(1)
            )
            .is_err()
        );
        assert!(
            BudgetPerDestination::new(bucket.with_capacity(-1.0), 8, SeededRng::new(1)).is_err()
        );
    }
}
