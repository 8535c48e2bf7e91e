//! Two hosts behind one name ([`TwoHosts`]): their keys and each host's counts.

use stagger_core::engine::StopReason;

use crate::metrics::{HostFigures, Metrics};

/// The hosts' keys in a partitioned budget, host A (down) first.
pub const HOSTS: [&str; 2] = ["host-a.example:443", "host-b.example:443"];

/// The one destination's key in the gate.
pub(crate) const DESTINATION: &str = "dependency";

/// One host's counts, while a run with two hosts goes.
#[derive(Clone, Copy, Default)]
pub(crate) struct HostCounts {
    pub(crate) requests: u64,
    pub(crate) successes: u64,
    pub(crate) retries: u64,
    pub(crate) refused: u64,
}

impl HostCounts {
    pub(crate) fn figures(self) -> HostFigures {
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

/// The attempts a budget refused so far, as the metrics count the give-ups: retries
/// (`budget-exhausted`) and, for a budget that refuses first attempts, those.
pub(crate) fn budget_refusals(metrics: &Metrics) -> u64 {
    metrics.gave_up_for(StopReason::BudgetExhausted)
        + metrics.gave_up_for(StopReason::BudgetRefusedFirstAttempt)
}
