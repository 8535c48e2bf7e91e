//! A clock for tests that read times from the start of the test: another clock, read from the
//! moment the stopwatch started. Its times are not the process timeline's, so it is a timeline
//! of its own, shared by its clones.

#![allow(dead_code, unreachable_pub)] // Each test file uses its own subset.

use std::time::Duration;

use stagger::clock::{Clock, Timeline, Timestamp};

/// `inner`'s time since the stopwatch started.
#[derive(Clone, Debug)]
pub struct Stopwatch<C> {
    inner: C,
    start: Timestamp,
    timeline: Timeline,
}

impl<C: Clock> Stopwatch<C> {
    /// Starts now, on `inner`'s time.
    pub fn start(inner: C) -> Self {
        let start = inner.now();
        Self {
            inner,
            start,
            timeline: Timeline::unique(),
        }
    }

    /// The time since the stopwatch started.
    pub fn elapsed(&self) -> Duration {
        self.now().since_origin()
    }
}

impl<C: Clock> Clock for Stopwatch<C> {
    fn now(&self) -> Timestamp {
        Timestamp::from_duration(self.inner.now().saturating_duration_since(self.start))
    }

    fn timeline(&self) -> Timeline {
        self.timeline
    }
}
