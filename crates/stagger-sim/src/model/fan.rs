//! A fan-out while a run goes: each request starts sub-requests, each a run of its own, and
//! succeeds when all of them have, as slow as the slowest. It keeps the requests' own
//! figures; the loop's metrics are the sub-requests'.

use crate::metrics::{Metrics, ResultRow};
use crate::model::slots::Slots;
use crate::queue::Nanos;
use crate::strategy::Strategy;

/// A request that fans out: when it started, how many of its sub-requests are still running,
/// and whether one has failed.
pub(crate) struct Parent {
    started: Nanos,
    running: u32,
    failed: bool,
}

/// The requests whose sub-requests run, and the requests' figures.
pub(crate) struct Fan {
    parents: Slots<Parent>,
    /// The parent of each slot of the requests' table, by slot.
    owner: Vec<u32>,
    /// The requests, their successes and latencies.
    metrics: Metrics,
    /// The sub-requests' successes counted when the latest one ended: one that ends with more
    /// succeeded.
    successes_seen: u64,
}

impl Fan {
    /// No request yet, figures kept over `window`.
    pub(crate) fn new(window: Nanos) -> Self {
        Self {
            parents: Slots::with_capacity(16),
            owner: Vec::new(),
            metrics: Metrics::new(window),
            successes_seen: 0,
        }
    }

    /// A request of `sub_requests` starts at `now`: its number, for its sub-requests.
    pub(crate) fn start(&mut self, now: Nanos, sub_requests: u32) -> u32 {
        self.metrics.first_try();
        self.parents.insert(Parent {
            started: now,
            running: sub_requests,
            failed: false,
        })
    }

    /// The sub-request in `slot` (of the requests' table) belongs to request `parent`.
    pub(crate) fn own(&mut self, slot: u32, parent: u32) {
        let i = slot as usize;
        if self.owner.len() <= i {
            self.owner.resize(i + 1, 0);
        }
        self.owner[i] = parent;
    }

    /// The sub-request in `slot` ended at `now`, with `successes` sub-requests' successes
    /// counted so far: it succeeded if one was counted since the latest one ended. Whether
    /// that ended its request with a success.
    pub(crate) fn ended(&mut self, slot: u32, successes: u64, now: Nanos) -> bool {
        let succeeded = successes > self.successes_seen;
        self.successes_seen = successes;
        let Some(&p) = self.owner.get(slot as usize) else {
            return false;
        };
        let Some(parent) = self.parents.get(p) else {
            return false;
        };
        parent.running -= 1;
        parent.failed |= !succeeded;
        if parent.running > 0 {
            return false;
        }
        let ok = !parent.failed;
        if ok {
            self.metrics.success(now - parent.started);
        }
        self.parents.remove(p);
        ok
    }

    /// The row's figures: success and latency are the requests'; the load and the attempts
    /// stay the sub-requests'.
    pub(crate) fn fill(mut self, row: &mut ResultRow, strategy: &Strategy) {
        let whole = self
            .metrics
            .row(strategy.name(), strategy.budget.map(|b| b.to_string()));
        row.success_rate = whole.success_rate;
        row.p50_ms = whole.p50_ms;
        row.p99_ms = whole.p99_ms;
        row.p999_ms = Some(p999(&self.metrics));
    }
}

/// The 99.9th percentile of the latencies `metrics` recorded, in milliseconds, if any.
pub(crate) fn p999(metrics: &Metrics) -> Option<f64> {
    (!metrics.latency_us.is_empty())
        .then(|| metrics.latency_us.value_at_quantile(0.999) as f64 / 1_000.0)
}
