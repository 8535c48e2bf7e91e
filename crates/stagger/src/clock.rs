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

/// A monotonic clock read from the CPU's time-stamp counter, through the `quanta` crate: the
/// same timeline as [`MonotonicClock`] (nanoseconds since its first reading, never going
/// backwards), at a fraction of the cost of a read where the counter is usable, for loops
/// whose attempts are so cheap that the clock shows (see `docs/benchmarks.md`).
///
/// The counter is calibrated against the operating system's clock once per process, at the
/// first reading of the first `QuantaClock` (up to 200 ms by `quanta`'s documentation; 0.6 ms
/// on the machine `docs/benchmarks.md` was measured on): make it with
/// [`QuantaClock::starting_now`] at startup to pay that before the first retry. Where the CPU
/// does not report an invariant counter, `quanta` reads the operating system's clock instead.
/// `quanta` promises readings that never go backwards from one clock; across threads on
/// different cores it relies on the counters being synchronised, as current machines and
/// operating systems keep them (a reading earlier than the origin counts as the origin, and
/// the engine counts a late `now` in its latest window slot). What it does not follow: a system
/// suspend (the counter may stop or reset with the machine), and the corrections the
/// operating system makes to its own clock after the calibration, so it may drift from
/// [`MonotonicClock`] by parts per million. For deadlines of seconds to hours, that is
/// nothing.
///
/// ```
/// use std::time::Duration;
/// use stagger::clock::{Clock, QuantaClock};
///
/// let clock = QuantaClock::new();
/// let a = clock.now();
/// let b = clock.now();
/// assert!(b >= a);
/// assert!(b.since_origin() < Duration::from_secs(1));
/// ```
#[cfg(feature = "quanta")]
#[derive(Clone, Debug, Default)]
pub struct QuantaClock {
    origin: std::sync::OnceLock<quanta::Instant>,
}

/// The process's one `quanta` clock: making one asks the CPU what it supports (several
/// microseconds in a virtual machine), so every [`QuantaClock`] shares it.
#[cfg(feature = "quanta")]
fn quanta_clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}

#[cfg(feature = "quanta")]
impl QuantaClock {
    /// A clock whose origin will be its first reading.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            origin: std::sync::OnceLock::new(),
        }
    }

    /// A clock whose origin is now (and whose calibration, if it is the process's first, is
    /// done now rather than at its first use).
    #[must_use]
    pub fn starting_now() -> Self {
        let clock = Self::new();
        clock.now();
        clock
    }
}

#[cfg(feature = "quanta")]
impl Clock for QuantaClock {
    #[inline]
    fn now(&self) -> Timestamp {
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of quanta.
        let now = quanta_clock().now();
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
