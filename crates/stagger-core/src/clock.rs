//! Time, injected, on one timeline per process.
//!
//! Decision code never reads a clock: it receives `now` as a [`Timestamp`]. Drivers get `now`
//! from a [`Clock`]: [`MonotonicClock`] in production, [`ManualClock`] in tests and simulations,
//! where time moves only when the test says so. This module is the only place in the crate that
//! reads the operating system's clock.
//!
//! # One timeline
//!
//! A budget or a gate is shared by many runs, and it keeps the times they report: a window of
//! recent outcomes, a destination's closing time. Those times are only comparable if every run
//! reads them on the same timeline. So:
//!
//! - Every clock of these crates that reads the operating system ([`MonotonicClock`], and the
//!   facade's tokio and `quanta` clocks) measures from one origin per process, the
//!   [process origin](Timestamp::from_instant), and reports [`Timeline::PROCESS`]. Two runs
//!   that start minutes apart, on any thread, executor or integration, put their times on one
//!   line, however many clocks were made.
//! - A [`ManualClock`] is a timeline of its own ([`Timeline::unique`]), shared by its clones;
//!   so is tokio's paused time, whose readings the facade's tokio clock reports on a timeline of
//!   the paused runtime's own.
//! - A shared budget or gate binds to the timeline of the first run that uses it
//!   ([`Budget::bind`](crate::budget::Budget::bind)), and a run whose clock is on another
//!   timeline stops before its first attempt with [`ConfigError::TimelineMismatch`]: a
//!   mismatch is a typed error, never a wait that is silently off by minutes.
//!
//! ## Your own clock
//!
//! A [`Clock`] of your own must say which timeline it is on:
//!
//! - if it reads the operating system's monotonic clock (a [`std::time::Instant`]), turn each
//!   reading into a timestamp with [`Timestamp::from_instant`] and report
//!   [`Timeline::PROCESS`]: it then shares budgets and gates with every default clock;
//! - otherwise (a clock of its own origin, a test clock, a clock from another process), make
//!   one [`Timeline::unique`] when the clock is made, share it between the clock's copies, and
//!   report it. Only runs on that clock may then share a budget or gate with it.
//!
//! Either way, its readings never go backwards.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::duration::saturating_nanos;
use crate::error::ConfigError;
pub use crate::timeline::Timeline;

/// A point on a monotonic timeline: the time elapsed since the timeline's origin, in whole
/// nanoseconds.
///
/// The timeline ends [`Timestamp::MAX`], 2^64 - 1 ns (about 584 years), after the origin, and
/// arithmetic saturates there: adding [`Duration::MAX`] to a timestamp is safe and gives
/// `Timestamp::MAX`, the deadline that never comes. A timestamp is one integer, so the
/// engine's comparisons and differences of times are single instructions. Which timeline it
/// is on is the business of the [`Clock`] that made it ([`Clock::timeline`]).
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

    /// The operating system's monotonic instant `instant`, on the process timeline
    /// ([`Timeline::PROCESS`]): the time since the process origin, which every clock of these
    /// crates that reads the operating system shares.
    ///
    /// The process origin is fixed the first time any such clock is read, an hour before that
    /// reading (less where the operating system's clock has not run that long), so that an
    /// instant read a little earlier, on another thread or by a paused tokio runtime started
    /// before it, still falls on the timeline rather than at its start. An instant before the
    /// origin counts as the origin.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use stagger_core::clock::Timestamp;
    ///
    /// let now = Instant::now();
    /// let later = now + Duration::from_millis(250);
    /// assert_eq!(
    ///     Timestamp::from_instant(later).saturating_duration_since(Timestamp::from_instant(now)),
    ///     Duration::from_millis(250),
    /// );
    /// ```
    #[inline]
    #[must_use]
    pub fn from_instant(instant: Instant) -> Self {
        Self::from_duration(instant.saturating_duration_since(process_origin()))
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

/// The process origin: see [`Timestamp::from_instant`].
fn process_origin() -> Instant {
    /// How long before the process timeline's first reading its origin lies.
    const LEADS: [Duration; 3] = [
        Duration::from_secs(3600),
        Duration::from_secs(60),
        Duration::from_secs(1),
    ];
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(|| {
        #[allow(clippy::disallowed_methods)] // This module is the single wrapper of the OS clock.
        let now = Instant::now();
        LEADS
            .into_iter()
            .find_map(|lead| now.checked_sub(lead))
            .unwrap_or(now)
    })
}

/// The timeline a shared object keeps its times on: none until the first run binds it, then
/// that run's, for good.
///
/// Every budget and gate of these crates that keeps time holds one and checks it in
/// [`Budget::bind`](crate::budget::Budget::bind). A budget of your own that keeps time should
/// do the same.
///
/// ```
/// use stagger_core::clock::{Timeline, TimelineBinding};
///
/// let binding = TimelineBinding::new();
/// let manual = Timeline::unique();
/// assert!(binding.bind(manual).is_ok()); // the first run binds it
/// assert!(binding.bind(manual).is_ok()); // and every run on the same timeline may use it
/// assert!(binding.bind(Timeline::PROCESS).is_err()); // a run on another one may not
/// assert_eq!(binding.bound(), Some(manual));
/// ```
#[derive(Debug, Default)]
pub struct TimelineBinding(AtomicU64);

impl TimelineBinding {
    /// Bound to no timeline yet.
    #[must_use]
    pub const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// Binds to `timeline` if unbound, and checks that the binding is `timeline`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::TimelineMismatch`] if another timeline was bound first.
    #[inline]
    pub fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        let given = timeline.id().get();
        // Bound once, read ever after: a load, and a write only while unbound, so that runs
        // sharing a budget do not write its cache line on every start.
        let bound = self.0.load(Ordering::Acquire);
        if bound == given {
            return Ok(());
        }
        let swapped = if bound == 0 {
            self.0
                .compare_exchange(0, given, Ordering::AcqRel, Ordering::Acquire)
        } else {
            Err(bound)
        };
        match swapped {
            Ok(_) => Ok(()),
            Err(bound) if bound == given => Ok(()),
            Err(bound) => Err(ConfigError::TimelineMismatch {
                // `bound` is not 0: only timelines are stored.
                bound: Timeline::from_id(NonZeroU64::new(bound).unwrap_or(NonZeroU64::MIN)),
                given: timeline,
            }),
        }
    }

    /// The timeline bound, if any.
    #[must_use]
    pub fn bound(&self) -> Option<Timeline> {
        NonZeroU64::new(self.0.load(Ordering::Acquire)).map(Timeline::from_id)
    }
}

/// A copy is bound to the same timeline: its times are the original's.
impl Clone for TimelineBinding {
    fn clone(&self) -> Self {
        Self(AtomicU64::new(self.0.load(Ordering::Acquire)))
    }
}

/// A monotonic clock.
///
/// Shared by reference: a clock can be read from many threads at once. Every clock says which
/// [`Timeline`] it is on, so that runs on clocks that disagree cannot share a budget or a gate
/// by accident; see the [module docs](self) for what a clock of your own must do.
pub trait Clock {
    /// The current time on this clock's timeline. It never goes backwards.
    fn now(&self) -> Timestamp;

    /// The timeline of this clock's timestamps: [`Timeline::PROCESS`] for a clock that reads
    /// the operating system's monotonic clock through [`Timestamp::from_instant`], a
    /// [`Timeline::unique`] of its own otherwise.
    fn timeline(&self) -> Timeline;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
    fn timeline(&self) -> Timeline {
        (**self).timeline()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
    fn timeline(&self) -> Timeline {
        (**self).timeline()
    }
}

/// The operating system's monotonic clock, on the process timeline: every `MonotonicClock`,
/// wherever it is made, reads the same time, so making one costs nothing.
///
/// ```
/// use stagger_core::clock::{Clock, MonotonicClock};
///
/// let (a, b) = (MonotonicClock::new(), MonotonicClock::new());
/// let first = a.now();
/// assert!(b.now() >= first); // two clocks, one timeline
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MonotonicClock;

impl MonotonicClock {
    /// The operating system's monotonic clock.
    #[must_use]
    pub const fn new() -> Self {
        Self
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now(&self) -> Timestamp {
        #[allow(clippy::disallowed_methods)] // This module is the single wrapper of the OS clock.
        Timestamp::from_instant(Instant::now())
    }

    #[inline]
    fn timeline(&self) -> Timeline {
        Timeline::PROCESS
    }
}

/// A clock that moves only when told to, on a timeline of its own. Clones share the same time
/// and the same timeline, so one `ManualClock` (and its clones) can drive every run, budget
/// and gate of a test.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::clock::{Clock, ManualClock, Timestamp};
///
/// let clock = ManualClock::new();
/// let view = clock.clone();
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(view.now(), Timestamp::from_nanos(250_000_000));
/// assert_eq!(view.timeline(), clock.timeline());
/// ```
#[derive(Clone, Debug)]
pub struct ManualClock {
    /// The nanoseconds since the origin: the whole range of [`Timestamp`].
    since_origin: Arc<AtomicU64>,
    /// The clock's own timeline, shared by its clones.
    timeline: Timeline,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualClock {
    /// A clock at its origin, on a new timeline.
    #[must_use]
    pub fn new() -> Self {
        Self {
            since_origin: Arc::default(),
            timeline: Timeline::unique(),
        }
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

    fn timeline(&self) -> Timeline {
        self.timeline
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
