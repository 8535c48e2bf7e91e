//! Time, injected.
//!
//! Decision code never reads a clock: it receives `now` as a [`Timestamp`]. Drivers get `now`
//! from a [`Clock`]: [`MonotonicClock`] in production, [`ManualClock`] in tests and simulations,
//! where time moves only when the test says so. This module is the only place in the crate that
//! reads the operating system's clock.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// A point on a monotonic timeline: the time elapsed since the clock's origin.
///
/// Arithmetic saturates, so adding [`Duration::MAX`] to a timestamp is safe and gives the latest
/// representable timestamp.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::clock::Timestamp;
///
/// let t = Timestamp::from_nanos(1_500);
/// assert_eq!(t.saturating_add(Duration::MAX), Timestamp::MAX);
/// assert_eq!(t.saturating_duration_since(Timestamp::from_nanos(2_000)), Duration::ZERO);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(Duration);

impl Timestamp {
    /// The clock's origin.
    pub const ZERO: Self = Self(Duration::ZERO);
    /// The latest representable timestamp.
    pub const MAX: Self = Self(Duration::MAX);

    /// The timestamp `nanos` nanoseconds after the origin.
    #[must_use]
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(Duration::from_nanos(nanos))
    }

    /// The timestamp `since_origin` after the origin.
    #[inline]
    #[must_use]
    pub const fn from_duration(since_origin: Duration) -> Self {
        Self(since_origin)
    }

    /// The time elapsed between the origin and this timestamp.
    #[inline]
    #[must_use]
    pub const fn since_origin(self) -> Duration {
        self.0
    }

    /// This timestamp moved `d` later, saturating at [`Timestamp::MAX`].
    #[inline]
    #[must_use]
    pub const fn saturating_add(self, d: Duration) -> Self {
        Self(self.0.saturating_add(d))
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    #[inline]
    #[must_use]
    pub const fn saturating_duration_since(self, earlier: Self) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t+{:?}", self.0)
    }
}

/// A monotonic clock.
///
/// One method, shared by reference: a clock can be read from many threads at once.
pub trait Clock {
    /// The current time on this clock's timeline. It never goes backwards.
    fn now(&self) -> Timestamp;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

/// The operating system's monotonic clock. Its origin is the first time it is read, so making
/// one costs nothing.
#[derive(Clone, Debug, Default)]
pub struct MonotonicClock {
    origin: OnceLock<Instant>,
}

impl MonotonicClock {
    /// A clock whose origin will be its first reading.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            origin: OnceLock::new(),
        }
    }

    /// A clock whose origin is now.
    #[must_use]
    pub fn starting_now() -> Self {
        let clock = Self::new();
        clock.now();
        clock
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Timestamp {
        #[allow(clippy::disallowed_methods)] // This module is the single wrapper of the OS clock.
        let now = Instant::now();
        Timestamp(now.saturating_duration_since(*self.origin.get_or_init(|| now)))
    }
}

/// A clock that moves only when told to. Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::clock::{Clock, ManualClock, Timestamp};
///
/// let clock = ManualClock::new();
/// let view = clock.clone();
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(view.now(), Timestamp::from_nanos(250_000_000));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    /// The time since the origin. A lock rather than an atomic count of nanoseconds, so that
    /// the clock covers the whole range of [`Timestamp`], up to [`Timestamp::MAX`]
    /// (`Duration::MAX`), where 64 bits of nanoseconds stop at about 584 years.
    since_origin: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock at its origin.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn time(&self) -> MutexGuard<'_, Duration> {
        // A plain value: any state a panic could leave is a valid time.
        self.since_origin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves the clock `d` forward, saturating at [`Timestamp::MAX`].
    pub fn advance(&self, d: Duration) {
        let mut time = self.time();
        *time = time.saturating_add(d);
    }

    /// Moves the clock to `t` if `t` is later than the clock's time; a clock never goes back.
    pub fn advance_to(&self, t: Timestamp) {
        let mut time = self.time();
        *time = (*time).max(t.since_origin());
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_duration(*self.time())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_covers_every_timestamp_and_never_goes_back() {
        let clock = ManualClock::new();
        // Past 2^64 ns (about 584 years), where a count of nanoseconds would stop.
        let centuries = Duration::from_secs(600 * 365 * 24 * 3600);
        clock.advance(centuries);
        assert_eq!(clock.now(), Timestamp::from_duration(centuries));
        clock.advance(centuries);
        assert_eq!(clock.now(), Timestamp::from_duration(centuries * 2));
        clock.advance(Duration::MAX);
        assert_eq!(clock.now(), Timestamp::MAX);
        clock.advance_to(Timestamp::ZERO);
        assert_eq!(clock.now(), Timestamp::MAX);
        let other = ManualClock::new();
        other.advance_to(Timestamp::MAX);
        assert_eq!(other.now(), Timestamp::MAX);
    }

    #[test]
    fn monotonic_clock_does_not_go_back() {
        let clock = MonotonicClock::new();
        let a = clock.now();
        let b = clock.now();
        assert!(b >= a);
    }
}
