//! A request that fans out to sub-requests, and succeeds when all of them have.

use crate::metrics::Metrics;
use crate::model::slots::Slots;
use crate::queue::Nanos;

/// A request that fans out: when it started, how many of its sub-requests are still running,
/// and whether one has failed.
pub(crate) struct Parent {
    pub(crate) started: Nanos,
    pub(crate) running: u32,
    pub(crate) failed: bool,
}

/// The fan-out's bookkeeping: [`Loop::fan`].
pub(crate) struct Fan {
    pub(crate) parents: Slots<Parent>,
    /// The parent of each slot of the requests' table, by slot.
    pub(crate) owner: Vec<u32>,
    /// The requests, their successes and latencies.
    pub(crate) metrics: Metrics,
}
