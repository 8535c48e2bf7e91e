//! An outage window ([`Window`]) while a run goes: when the dependency is down, what it answers
//! then, and the counts the window adds to the row. The loop asks it once per attempt that
//! gets past the limiter.

use std::time::Duration;

use stagger_core::Failure;

use crate::metrics::ResultRow;
use crate::model::SECOND;
use crate::model::parts::Window;
use crate::queue::{Nanos, nanos};

/// The window as `[down, up)` in nanoseconds, its `Retry-After`, and what it counted.
pub(crate) struct Outage {
    down: Nanos,
    up: Nanos,
    retry_after: Option<Duration>,
    /// Requests whose first attempt to get through found the dependency down.
    met: u64,
    /// Those of them that succeeded.
    met_succeeded: u64,
    /// Attempts that reached the dependency in the second after the window ended.
    recovery_load: u64,
}

impl Outage {
    /// The window, nothing counted yet.
    pub(crate) fn new(window: &Window) -> Self {
        Self {
            down: nanos(window.at),
            up: nanos(window.at.saturating_add(window.lasts)),
            retry_after: window.retry_after,
            met: 0,
            met_succeeded: 0,
            recovery_load: 0,
        }
    }

    /// An attempt reaches the dependency at `now`: counted in the recovery load if it comes
    /// in the second after the window. Whether the dependency is down then.
    #[inline]
    pub(crate) fn reach(&mut self, now: Nanos) -> bool {
        if (self.up..self.up.saturating_add(SECOND)).contains(&now) {
            self.recovery_load += 1;
        }
        (self.down..self.up).contains(&now)
    }

    /// A request's first attempt to get through found the dependency down.
    #[inline]
    pub(crate) fn met(&mut self) {
        self.met += 1;
    }

    /// A request that met the outage succeeded.
    #[inline]
    pub(crate) fn met_and_succeeded(&mut self) {
        self.met_succeeded += 1;
    }

    /// What a client hears from the dependency while it is down: a retryable failure, or a
    /// throttle with the window's `Retry-After`.
    #[inline]
    pub(crate) fn failure(&self) -> Failure {
        self.retry_after
            .map_or(Failure::Retryable, Failure::RetryAfter)
    }

    /// The row's figures: the success rate of the requests that met the outage, how many did,
    /// and the recovery load.
    pub(crate) fn fill(&self, row: &mut ResultRow, ratio: impl Fn(u64, u64) -> f64) {
        row.success_rate = ratio(self.met_succeeded, self.met);
        row.met_outage = Some(self.met);
        row.recovery_load = Some(self.recovery_load);
    }
}
