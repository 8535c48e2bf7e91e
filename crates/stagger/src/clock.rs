//! Clocks for the executors, beyond the core's.

pub use stagger_core::clock::{Clock, ManualClock, MonotonicClock, Timestamp};

use std::time::SystemTime;

/// tokio's clock, which follows `tokio::time::pause` and `advance` in tests. Its origin is the
/// first time it is read, so making one costs nothing.
#[cfg(feature = "tokio")]
#[derive(Clone, Debug, Default)]
pub struct TokioClock {
    origin: std::sync::OnceLock<tokio::time::Instant>,
}

#[cfg(feature = "tokio")]
impl TokioClock {
    /// A clock whose origin will be its first reading.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            origin: std::sync::OnceLock::new(),
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

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of tokio's clock.
        let now = tokio::time::Instant::now();
        Timestamp::from_duration(now.saturating_duration_since(*self.origin.get_or_init(|| now)))
    }
}

/// The async executor's default clock: [`TokioClock`] with the `tokio` feature.
#[cfg(feature = "tokio")]
pub type DefaultClock = TokioClock;

/// The async executor's default clock: [`MonotonicClock`] without the `tokio` feature.
#[cfg(not(feature = "tokio"))]
pub type DefaultClock = MonotonicClock;

/// A wall clock: the calendar time, which an HTTP-date such as `Retry-After: Wed, 21 Oct 2015
/// 07:28:00 GMT` is measured against.
///
/// The executors measure deadlines and delays on a monotonic [`Clock`]; a wall clock is only
/// read to turn a date a server sent into a wait. It is injected like every other source of
/// time: [`SystemClock`] reads the operating system's, a `SystemTime` is a clock stopped at that
/// time (for tests), and any `Fn() -> SystemTime` is a clock.
///
/// ```
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use stagger::clock::{SystemClock, WallClock};
///
/// let fixed = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
/// assert_eq!(fixed.now(), fixed); // a stopped clock
/// assert_eq!((|| fixed).now(), fixed); // a closure
/// assert!(SystemClock.now() > fixed); // the operating system's clock, read when asked
/// ```
pub trait WallClock {
    /// The current calendar time on this clock.
    fn now(&self) -> SystemTime;
}

/// The operating system's wall clock, [`SystemTime::now`].
///
/// Unlike a monotonic clock, it can jump: a date-based wait is only as accurate as the two
/// clocks that agree on it, which is why the HTTP classifier prefers the response's own `Date`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn now(&self) -> SystemTime {
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of the wall clock.
        SystemTime::now()
    }
}

/// A clock stopped at this time: it always answers `self`.
impl WallClock for SystemTime {
    fn now(&self) -> SystemTime {
        *self
    }
}

/// Any closure that returns the time is a wall clock.
impl<F: Fn() -> SystemTime> WallClock for F {
    fn now(&self) -> SystemTime {
        self()
    }
}
