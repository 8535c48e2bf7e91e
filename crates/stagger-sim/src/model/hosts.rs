//! Two hosts behind one name ([`TwoHosts`](crate::model::TwoHosts)) while a run goes: their
//! keys, and each host's requests, successes, retries and refusals, shared out to a request's
//! host as it ends.

use stagger_core::engine::StopReason;

use crate::metrics::{HostFigures, Metrics, ResultRow};

/// The hosts' keys in a budget per destination, host A (down) first.
pub const HOSTS: [&str; 2] = ["host-a.example:443", "host-b.example:443"];

/// The one destination's key in the gate.
pub(crate) const DESTINATION: &str = "dependency";

/// One host's counts, while a run with two hosts goes.
#[derive(Clone, Copy, Default)]
struct HostCounts {
    requests: u64,
    successes: u64,
    retries: u64,
    refused: u64,
}

impl HostCounts {
    fn figures(self) -> HostFigures {
        HostFigures {
            requests: self.requests,
            successes: self.successes,
            success_share: if self.requests == 0 {
                0.0
            } else {
                self.successes as f64 / self.requests as f64
            },
            retries: self.retries,
            refused: self.refused,
        }
    }
}

/// Each host's counts, host A (down) first, and the successes and the budget's refusals
/// counted so far, to share out to the host of the next request that ends.
#[derive(Default)]
pub(crate) struct Hosts {
    counts: [HostCounts; 2],
    successes: u64,
    refused: u64,
}

impl Hosts {
    /// The index of a request's host in [`HOSTS`]: A if it goes to the host that is down.
    #[inline]
    pub(crate) const fn index(to_down: bool) -> usize {
        if to_down { 0 } else { 1 }
    }

    /// A request to host A (`to_down`) or B starts.
    #[inline]
    pub(crate) fn started(&mut self, to_down: bool) {
        self.counts[Self::index(to_down)].requests += 1;
    }

    /// A request sends its `sent`-th attempt: a retry if it is not the first.
    #[inline]
    pub(crate) fn sent(&mut self, to_down: bool, sent: u32) {
        if sent > 1 {
            self.counts[Self::index(to_down)].retries += 1;
        }
    }

    /// A request ends: the successes and refusals counted since the last one ended are its.
    #[inline]
    pub(crate) fn ended(&mut self, to_down: bool, metrics: &Metrics) {
        let host = &mut self.counts[Self::index(to_down)];
        let (successes, refused) = (metrics.successes, budget_refusals(metrics));
        host.successes += successes - self.successes;
        host.refused += refused - self.refused;
        (self.successes, self.refused) = (successes, refused);
    }

    /// The row's figures: each host's, and whether the budget was one per host.
    pub(crate) fn fill(&self, row: &mut ResultRow, budget_per_host: bool) {
        row.budget_partition = Some(if budget_per_host {
            "partitioned"
        } else {
            "shared"
        });
        row.host_a = Some(self.counts[0].figures());
        row.host_b = Some(self.counts[1].figures());
    }
}

/// The attempts a budget refused so far, as the metrics count the give-ups: retries
/// (`budget-exhausted`) and, for a budget that refuses first attempts, those.
fn budget_refusals(metrics: &Metrics) -> u64 {
    metrics.gave_up_for(StopReason::BudgetExhausted)
        + metrics.gave_up_for(StopReason::BudgetRefusedFirstAttempt)
}
