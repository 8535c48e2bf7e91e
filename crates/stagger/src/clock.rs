//! Clocks for the executors, beyond the core's.
//!
//! Every clock here that reads a real clock is on the process timeline
//! ([`Timeline::PROCESS`]), as the core's [`MonotonicClock`] is: a budget or gate shared by
//! runs on any of them, started at any time, compares their times on one line. tokio's clock
//! under paused time is not a real clock: `TokioClock` then reports a timeline of the paused
//! runtime's own. See the
//! [core's clock docs](stagger_core::clock) for the rule, and for what a clock of your own must
//! do.

pub use stagger_core::clock::{
    Clock, ManualClock, MonotonicClock, Timeline, TimelineBinding, Timestamp,
};

use std::time::SystemTime;

/// tokio's clock, which follows `tokio::time::pause` and `advance` in tests: on the process
/// timeline while it reads the operating system's clock, on a timeline of the runtime's own
/// once that runtime's time has been paused. Every `TokioClock` reads the same time, so making
/// one costs nothing.
///
/// Outside paused time, tokio's clock is the operating system's, so a `TokioClock` and a
/// [`MonotonicClock`] agree, and an async run and a blocking run can share a budget or a gate.
/// Under tokio's paused time (a test with `start_paused`), tokio's clock moves only as the
/// runtime says, and its readings are not the process timeline's: the clock then reports a
/// timeline of that runtime's own ([`Clock::timeline`]), the same for every run the runtime
/// drives and for every thread that reads its clock (its blocking tasks). A budget or gate
/// shared by a run on paused time and a run on a real clock refuses the second one with
/// [`ConfigError::TimelineMismatch`](stagger_core::ConfigError::TimelineMismatch), rather than
/// mix the two kinds of time.
///
/// tokio offers no way to ask whether time is paused; the clock finds out when a run asks for
/// its timeline (once, before the run's first attempt), in a few readings of both clocks:
///
/// - outside a runtime, or on a multi-thread runtime, tokio reads the operating system's clock
///   (only a current-thread runtime can pause): the process timeline;
/// - on a current-thread runtime, tokio's reading must lie between two readings of the
///   operating system's clock taken around it, and must move once the operating system's clock
///   has moved past it. A paused clock is frozen between the runtime's polls (it moves only by
///   `advance`, or by the runtime advancing it while it has no task to poll), and a clock
///   resumed after a pause keeps the offset the pause left; either fails one of the two tests.
///
/// The runtime is known by its [`Id`](tokio::runtime::Id): a runtime's timeline stays its own
/// after `tokio::time::resume`, since its clock then keeps the offset that the paused time left.
/// The timeline of a run is decided when it starts; pausing a runtime while one of its runs is
/// under way is not seen by that run.
///
/// ```
/// use stagger::clock::{Clock, Timeline, TokioClock};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let early = TokioClock::new();
/// let t0 = early.now();
/// tokio::time::sleep(std::time::Duration::from_secs(60)).await;
/// let late = TokioClock::new(); // made a minute later: the same timeline
/// assert_eq!(late.now().saturating_duration_since(t0).as_secs(), 60);
/// // Paused time is not the process timeline, but one of the runtime's own.
/// assert_ne!(late.timeline(), Timeline::PROCESS);
/// assert_eq!(late.timeline(), early.timeline());
/// # }
/// ```
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl TokioClock {
    /// tokio's clock.
    #[must_use]
    pub const fn new() -> Self {
        Self
    }
}

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    #[inline]
    fn now(&self) -> Timestamp {
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of tokio's clock.
        Timestamp::from_instant(tokio::time::Instant::now().into_std())
    }

    fn timeline(&self) -> Timeline {
        paused::timeline()
    }
}

/// Which timeline tokio's clock is on where it is read: see [`TokioClock`].
#[cfg(feature = "tokio")]
mod paused {
    use std::collections::HashMap;
    use std::sync::{Mutex, PoisonError};
    use std::time::Instant;

    use tokio::runtime::{Handle, Id, RuntimeFlavor};

    use super::Timeline;

    /// The most paused runtimes whose timelines are remembered; past it, the one unused
    /// longest is forgotten. A runtime forgotten while it still runs gets a new timeline, so
    /// its next runs are refused by what its earlier ones bound: an error, never a mix.
    const REMEMBERED: usize = 1024;

    /// The timeline of tokio's clock in the current context.
    pub(super) fn timeline() -> Timeline {
        // Outside a runtime tokio reads the operating system's clock; only a current-thread
        // runtime can pause its time.
        let Ok(handle) = Handle::try_current() else {
            return Timeline::PROCESS;
        };
        if handle.runtime_flavor() != RuntimeFlavor::CurrentThread || follows_the_os_clock() {
            return Timeline::PROCESS;
        }
        of_runtime(handle.id())
    }

    /// Whether tokio's clock reads the operating system's: its reading lies between two
    /// readings of the operating system's clock taken around it, and it moves once the
    /// operating system's clock has moved past it. A paused clock does not move within a poll
    /// of the runtime's thread (nor while one of its blocking tasks runs, which holds off
    /// auto-advance); a clock resumed after a pause is off the operating system's by the
    /// offset the pause left.
    #[allow(clippy::disallowed_methods)] // A clock's own readings: what this type wraps.
    fn follows_the_os_clock() -> bool {
        let before = Instant::now();
        let tokio = tokio::time::Instant::now().into_std();
        let mut after = Instant::now();
        if tokio < before || tokio > after {
            return false;
        }
        // A clock that follows the operating system's reads at least `after` from now on, and
        // a frozen one still `tokio`: once `after` is past `tokio`, one more reading tells
        // them apart. The operating system's clock moves within nanoseconds; the bound only
        // keeps a broken one from spinning for ever (it then counts as followed, as before).
        let mut spins = 0_u32;
        while after <= tokio && spins < 1_000_000 {
            std::hint::spin_loop();
            after = Instant::now();
            spins += 1;
        }
        after <= tokio || tokio::time::Instant::now().into_std() > tokio
    }

    /// The timeline of the paused runtime `id`: one per runtime, the same for all its runs.
    fn of_runtime(id: Id) -> Timeline {
        static TIMELINES: Mutex<Option<Timelines>> = Mutex::new(None);
        let mut timelines = TIMELINES.lock().unwrap_or_else(PoisonError::into_inner);
        timelines.get_or_insert_with(Timelines::default).of(id)
    }

    /// The paused runtimes' timelines, and when each was last asked for.
    #[derive(Default)]
    struct Timelines {
        by_runtime: HashMap<Id, (Timeline, u64)>,
        asked: u64,
    }

    impl Timelines {
        fn of(&mut self, id: Id) -> Timeline {
            self.asked += 1;
            let asked = self.asked;
            if let Some((timeline, last)) = self.by_runtime.get_mut(&id) {
                *last = asked;
                return *timeline;
            }
            if self.by_runtime.len() >= REMEMBERED
                && let Some(oldest) = self
                    .by_runtime
                    .iter()
                    .min_by_key(|(_, (_, last))| *last)
                    .map(|(id, _)| *id)
            {
                self.by_runtime.remove(&oldest);
            }
            let timeline = Timeline::unique();
            self.by_runtime.insert(id, (timeline, asked));
            timeline
        }
    }
}

/// A monotonic clock read from the CPU's time-stamp counter, through the `quanta` crate: the
/// process timeline, as [`MonotonicClock`], at a fraction of the cost of a read where the
/// counter is usable, for loops whose attempts are so cheap that the clock shows (see
/// `docs/benchmarks.md`).
///
/// The counter is calibrated against the operating system's clock once per process, at the
/// first reading of the first `QuantaClock` (up to 200 ms by `quanta`'s documentation; 0.6 ms
/// on the machine `docs/benchmarks.md` was measured on): make it with
/// [`QuantaClock::calibrated`] at startup to pay that before the first retry. The counter is
/// tied to the process timeline at the same moment, by reading both clocks back to back. Where
/// the CPU does not report an invariant counter, `quanta` reads the operating system's clock
/// instead. `quanta` promises readings that never go backwards from one clock; across threads
/// on different cores it relies on the counters being synchronised, as current machines and
/// operating systems keep them (a reading earlier than the tie counts as the tie, and the
/// engine counts a late `now` in its latest window slot). What it does not follow: a system
/// suspend (the counter may stop or reset with the machine), and the corrections the
/// operating system makes to its own clock after the calibration, so it may drift from
/// [`MonotonicClock`] by parts per million. For deadlines of seconds to hours, that is
/// nothing.
///
/// ```
/// use std::time::Duration;
/// use stagger::clock::{Clock, MonotonicClock, QuantaClock};
///
/// let clock = QuantaClock::new();
/// let a = clock.now();
/// let b = clock.now();
/// assert!(b >= a);
/// // The process timeline: the operating system's clock reads the same time, within the
/// // calibration's error (the bound leaves room for a preempted thread).
/// let os = MonotonicClock::new().now();
/// let tsc = clock.now();
/// let apart = tsc.saturating_duration_since(os).max(os.saturating_duration_since(tsc));
/// assert!(apart < Duration::from_millis(100));
/// ```
#[cfg(feature = "quanta")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QuantaClock;

/// The process's one `quanta` clock, and where its counter meets the process timeline: making
/// a `quanta` clock asks the CPU what it supports (several microseconds in a virtual machine),
/// so every [`QuantaClock`] shares it.
#[cfg(feature = "quanta")]
fn quanta_tie() -> &'static (quanta::Clock, quanta::Instant, Timestamp) {
    static TIE: std::sync::OnceLock<(quanta::Clock, quanta::Instant, Timestamp)> =
        std::sync::OnceLock::new();
    TIE.get_or_init(|| {
        let clock = quanta::Clock::new();
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of quanta.
        let counter = clock.now();
        let os = MonotonicClock::new().now();
        (clock, counter, os)
    })
}

#[cfg(feature = "quanta")]
impl QuantaClock {
    /// The counter's clock.
    #[must_use]
    pub const fn new() -> Self {
        Self
    }

    /// The counter's clock, calibrated now if it is the process's first, rather than at its
    /// first use.
    #[must_use]
    pub fn calibrated() -> Self {
        quanta_tie();
        Self
    }
}

#[cfg(feature = "quanta")]
impl Clock for QuantaClock {
    #[inline]
    fn now(&self) -> Timestamp {
        let (clock, counter, os) = quanta_tie();
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of quanta.
        let now = clock.now();
        os.saturating_add(now.saturating_duration_since(*counter))
    }

    #[inline]
    fn timeline(&self) -> Timeline {
        Timeline::PROCESS
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
