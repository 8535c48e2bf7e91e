//! Time, injected.
//!
//! Decision code never reads a clock: it receives `now` as a [`Timestamp`]. Drivers get `now`
//! from a [`Clock`]: [`MonotonicClock`] in production, [`ManualClock`] in tests and simulations,
//! where time moves only when the test says so. This module is the only place in the crate that
//! reads the operating system's clock.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::duration::saturating_nanos;

/// A point on a monotonic timeline: the time elapsed since the clock's origin, in whole
/// nanoseconds.
///
/// The timeline ends [`Timestamp::MAX`], 2^64 - 1 ns (about 584 years), after the origin, which
/// is the first time a clock is read, and arithmetic saturates there: adding [`Duration::MAX`]
/// to a timestamp is safe and gives `Timestamp::MAX`, the deadline that never comes. A
/// timestamp is one integer, so the engine's comparisons and differences of times are single
/// instructions.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::clock::Timestamp;
///
/// let t = Timestamp::from_nanos(1_500);
/// assert_eq!(t.saturating_add(Duration::MAX), Timestamp::MAX);
/// assert_eq!(t.saturating_duration_since(Timestamp::from_nanos(2_000)), Duration::ZERO);
/// assert_eq!(Timestamp::from_duration(Duration::MAX), Timestamp::MAX);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The clock's origin.
    pub const ZERO: Self = Self(0);
    /// The latest representable timestamp, 2^64 - 1 ns after the origin.
    pub const MAX: Self = Self(u64::MAX);

    /// The timestamp `nanos` nanoseconds after the origin.
    #[inline]
    #[must_use]
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// The timestamp `since_origin` after the origin, saturating at [`Timestamp::MAX`].
    #[inline]
    #[must_use]
    pub const fn from_duration(since_origin: Duration) -> Self {
        Self(saturating_nanos(since_origin))
    }

    /// The time elapsed between the origin and this timestamp.
    #[inline]
    #[must_use]
    pub const fn since_origin(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// The nanoseconds elapsed between the origin and this timestamp.
    #[inline]
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// This timestamp moved `d` later, saturating at [`Timestamp::MAX`].
    #[inline]
    #[must_use]
    pub const fn saturating_add(self, d: Duration) -> Self {
        Self(self.0.saturating_add(saturating_nanos(d)))
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    #[inline]
    #[must_use]
    pub const fn saturating_duration_since(self, earlier: Self) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t+{:?}", self.since_origin())
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
        Timestamp::from_duration(now.saturating_duration_since(*self.origin.get_or_init(|| now)))
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
    /// The nanoseconds since the origin: the whole range of [`Timestamp`].
    since_origin: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at its origin.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock `d` forward, saturating at [`Timestamp::MAX`].
    pub fn advance(&self, d: Duration) {
        let d = saturating_nanos(d);
        // The closure always returns a value, so the update cannot fail.
        let _ = self
            .since_origin
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some(t.saturating_add(d))
            });
    }

    /// Moves the clock to `t` if `t` is later than the clock's time; a clock never goes back.
    pub fn advance_to(&self, t: Timestamp) {
        self.since_origin.fetch_max(t.as_nanos(), Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.since_origin.load(Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_covers_every_timestamp_and_never_goes_back() {
        let clock = ManualClock::new();
        let centuries = Duration::from_secs(300 * 365 * 24 * 3600);
        clock.advance(centuries);
        assert_eq!(clock.now(), Timestamp::from_duration(centuries));
        // Past 2^64 ns (about 584 years), where the timeline ends: it saturates.
        clock.advance(centuries);
        assert_eq!(clock.now(), Timestamp::MAX);
        clock.advance(Duration::MAX);
        assert_eq!(clock.now(), Timestamp::MAX);
        clock.advance_to(Timestamp::ZERO);
        assert_eq!(clock.now(), Timestamp::MAX);
        let other = ManualClock::new();
        other.advance(Duration::from_nanos(7));
        other.advance_to(Timestamp::from_nanos(5));
        assert_eq!(other.now(), Timestamp::from_nanos(7));
        other.advance_to(Timestamp::MAX);
        assert_eq!(other.now(), Timestamp::MAX);
    }

    #[test]
    fn timestamps_saturate_at_the_end_of_the_timeline() {
        let end = Timestamp::MAX.since_origin();
        assert_eq!(end, Duration::from_nanos(u64::MAX));
        assert_eq!(Timestamp::from_duration(end), Timestamp::MAX);
        assert_eq!(
            Timestamp::from_duration(end + Duration::from_nanos(1)),
            Timestamp::MAX
        );
        let t = Timestamp::from_nanos(u64::MAX - 1);
        assert_eq!(t.saturating_add(Duration::from_nanos(1)), Timestamp::MAX);
        assert_eq!(t.saturating_add(Duration::from_nanos(2)), Timestamp::MAX);
        assert_eq!(
            Timestamp::MAX.saturating_duration_since(Timestamp::ZERO),
            end
        );
        assert_eq!(
            Timestamp::ZERO.saturating_duration_since(Timestamp::MAX),
            Duration::ZERO
        );
        assert_eq!(Timestamp::from_nanos(42).as_nanos(), 42);
    }

    #[test]
    fn monotonic_clock_does_not_go_back() {
        let clock = MonotonicClock::new();
        let a = clock.now();
        let b = clock.now();
        assert!(b >= a);
    }
}
