//! A service whose time grows with the work in progress ([`Service`], the server of
//! Brooker's collapse simulation) while a run goes: the work it holds, abandoned work
//! included, which is what slows it.

use crate::model::parts::Service;
use crate::queue::{Nanos, nanos};

/// The service's base time, its time per attempt in progress, and the attempts in progress.
pub(crate) struct Serving {
    base: Nanos,
    per_in_flight: Nanos,
    in_progress: u64,
}

impl Serving {
    /// The service, idle.
    pub(crate) fn new(service: &Service) -> Self {
        Self {
            base: nanos(service.base),
            per_in_flight: nanos(service.per_in_flight),
            in_progress: 0,
        }
    }

    /// An attempt arrives at `now`: it is in progress too, and slows itself. When it is done.
    #[inline]
    pub(crate) fn enter(&mut self, now: Nanos) -> Nanos {
        self.in_progress += 1;
        let time = self
            .base
            .saturating_add(self.per_in_flight.saturating_mul(self.in_progress));
        now.saturating_add(time)
    }

    /// An attempt's work is done.
    #[inline]
    pub(crate) fn leave(&mut self) {
        self.in_progress -= 1;
    }

    /// The attempts in progress, abandoned ones included.
    #[inline]
    pub(crate) const fn in_progress(&self) -> u64 {
        self.in_progress
    }
}
