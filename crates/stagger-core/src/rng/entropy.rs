//! The one place this crate reads entropy from the operating system.
//!
//! The standard library seeds each thread's `RandomState` keys from the operating system and
//! advances them for every new instance. Hashing a process-wide counter with a fresh instance
//! therefore gives a seed that differs between calls, threads and processes, without a
//! dependency on a random-number crate.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts calls, so that two seeds drawn in the same instant still differ.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// A fresh 64-bit seed from process entropy.
pub(super) fn seed() -> u64 {
    #[allow(clippy::disallowed_methods)] // This module is the single wrapper of process entropy.
    let state = RandomState::new();
    let mut hasher = state.build_hasher();
    hasher.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}
