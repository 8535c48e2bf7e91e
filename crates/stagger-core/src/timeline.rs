//! [`Timeline`]: which clock's times may be compared with which.
//!
//! A leaf of its own, apart from [`clock`](crate::clock), because both the clocks and
//! [`ConfigError::TimelineMismatch`](crate::ConfigError::TimelineMismatch) name a timeline,
//! and the clock module's [`TimelineBinding`](crate::clock::TimelineBinding) returns that
//! error: with the type here, neither module imports the other in a cycle. Users reach it as
//! `stagger_core::clock::Timeline` (or `stagger_core::Timeline`).

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which timeline a clock's timestamps are on: timestamps from clocks on one timeline can be
/// compared, and only those may meet in a shared budget or gate. See the [clock module's
/// docs](crate::clock).
///
/// ```
/// use stagger_core::clock::{Clock, ManualClock, MonotonicClock, Timeline};
///
/// assert_eq!(MonotonicClock::new().timeline(), Timeline::PROCESS);
/// let manual = ManualClock::new();
/// assert_eq!(manual.clone().timeline(), manual.timeline()); // clones share their time
/// assert_ne!(ManualClock::new().timeline(), manual.timeline());
/// assert_ne!(Timeline::unique(), Timeline::unique());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timeline(NonZeroU64);

impl Timeline {
    /// The process timeline: the operating system's monotonic clock, measured from the process
    /// origin ([`Timestamp::from_instant`](crate::clock::Timestamp::from_instant)).
    pub const PROCESS: Self = Self(NonZeroU64::MIN);

    /// A timeline distinct from every other made in this process.
    #[must_use]
    pub fn unique() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(2);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        // 2^64 timelines would wrap to 0; none is left then, and the last one is reused.
        Self(NonZeroU64::new(id).unwrap_or(NonZeroU64::MAX))
    }

    /// The timeline's number, as a [`TimelineBinding`](crate::clock::TimelineBinding) stores it.
    #[inline]
    pub(crate) const fn id(self) -> NonZeroU64 {
        self.0
    }

    /// The timeline numbered `id`: the inverse of [`id`](Timeline::id).
    #[inline]
    pub(crate) const fn from_id(id: NonZeroU64) -> Self {
        Self(id)
    }
}

impl fmt::Display for Timeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::PROCESS {
            f.write_str("the process timeline")
        } else {
            write!(f, "timeline #{}", self.0)
        }
    }
}
