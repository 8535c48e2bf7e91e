//! # `outage`: steady arrivals through a thirty-second outage
//!
//! Requests arrive as a Poisson process at `rate` per second (default 100) for `duration`
//! (default 60 s). The dependency is down from 15 s to 45 s: every attempt that reaches it then
//! fails with a retryable error; before and after, every attempt succeeds. The network is a
//! constant one-way delay of 1 ms.
//!
//! It measures what the catalog's `constant` page quotes: the success rate of the requests that met
//! the outage (those whose first attempt reached the dependency while it was down), and the
//! load on the dependency in the second after it recovered (attempts reaching it in
//! [45 s, 46 s)). A policy's patience decides the first: `constant` at its defaults waits
//! 700 ms in all, so only requests that met the last 0.7 s of the outage can succeed.
//!
//! Two overrides exercise the rest of the engine. `timeout` gives each request one end-to-end
//! deadline from its first attempt: a request whose next wait would cross it gives up (reason
//! `wait-exceeds-deadline`, or `deadline` if it is already past). `retry_after` turns the
//! outage into throttling: every answer while down carries that `Retry-After`, a floor the
//! engine never undercuts, and `dispersal` says what a request adds above it. Under
//! `floor`, `constant` at its defaults waits 7 x the floor rather than 700 ms (with 2 s,
//! about 14/30 of the requests that met the outage succeed, against 2 %); under the default
//! `uniform-asked`, each wait is drawn from 2 to 4 s, 3 s on average, and about 21/30 do.
//!
//! It runs on the composed model ([`Composed`]): one open source, a one-way network, an outage
//! window, the deadline ([`Outage::composed`]).

use std::time::Duration;

use serde::Deserialize;
use stagger_core::engine::Dispersal;

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::model::check_window;
use crate::model::{Clients, Composed, Network, Window};

/// The outage's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Outage {
    /// Requests per second.
    pub rate: f64,
    /// The whole run.
    pub duration: Duration,
    /// When the dependency goes down.
    #[serde(skip)]
    pub down_at: Duration,
    /// How long it stays down.
    #[serde(skip)]
    pub down_for: Duration,
    /// The one-way network delay.
    #[serde(skip)]
    pub network: Delay,
    /// The window of the peak share.
    pub window: Duration,
    /// One end-to-end deadline per request, measured from its first attempt; `None` for
    /// none. A request that would retry past it gives up with reason `deadline`.
    pub timeout: Option<Duration>,
    /// If set, the dependency throttles rather than fails while it is down: every answer
    /// is a 503 with this `Retry-After`, which the engine treats as a floor under the
    /// policy's next delay. `None` for plain retryable failures.
    pub retry_after: Option<Duration>,
    /// What a request adds above the `Retry-After` (default [`Dispersal::default`]); a request
    /// gets its generator for the spread when it first meets the wait, as the executors give
    /// one.
    #[serde(deserialize_with = "super::params::by_name")]
    pub dispersal: Dispersal,
}

impl Default for Outage {
    fn default() -> Self {
        Self {
            rate: 100.0,
            duration: Duration::from_secs(60),
            down_at: Duration::from_secs(15),
            down_for: Duration::from_secs(30),
            network: Delay::Constant { nanos: 1_000_000 },
            window: Duration::from_millis(10),
            timeout: None,
            retry_after: None,
            dispersal: Dispersal::default(),
        }
    }
}

impl Outage {
    /// The most requests a run may offer (`rate` x `duration`),
    /// [`limits::MAX_REQUESTS`](crate::limits::MAX_REQUESTS).
    pub const MAX_REQUESTS: f64 = crate::limits::MAX_REQUESTS;
}

impl Workload for Outage {
    const KIND: WorkloadKind = WorkloadKind::Outage;

    fn validate(&self) -> Result<(), SimError> {
        if !(self.rate.is_finite()
            && self.rate > 0.0
            && self.rate <= crate::limits::MAX_SOURCE_RATE)
        {
            return Err(SimError::Invalid {
                param: "rate",
                allowed: crate::limits::SOURCE_RATE_ALLOWED,
            });
        }
        // The outage and the second after it (the recovery load) must fit in the run.
        let needed = self
            .down_at
            .saturating_add(self.down_for)
            .saturating_add(Duration::from_secs(1));
        if self.duration < needed || self.duration > crate::limits::MAX_DURATION {
            return Err(SimError::Invalid {
                param: "duration",
                allowed: "at least the outage's end plus 1 s (46 s by default) and at most a day",
            });
        }
        if self.rate * self.duration.as_secs_f64() > Self::MAX_REQUESTS {
            return Err(SimError::TooLarge {
                what: "rate x duration",
                limit: format!("{:e} requests", Self::MAX_REQUESTS),
            });
        }
        if self.timeout.is_some_and(|t| t.is_zero()) {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0",
            });
        }
        if self
            .retry_after
            .is_some_and(|w| w > crate::limits::MAX_DURATION)
        {
            return Err(SimError::Invalid {
                param: "retry_after",
                allowed: crate::limits::AT_MOST_A_DAY,
            });
        }
        check_window(self.window)?;
        Ok(())
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

impl Outage {
    /// This workload as the composed model runs it: one open source, a one-way network, a
    /// dependency that is down for the window (throttling with the `Retry-After`, if set),
    /// the deadline.
    #[must_use]
    pub fn composed(&self) -> Composed {
        let clients = Clients::one_source(self.rate);
        let mut model = Composed::new(clients, self.duration, Network::OneWay(self.network));
        model.dependency.outage = Some(Window {
            at: self.down_at,
            lasts: self.down_for,
            retry_after: self.retry_after,
        });
        model.deadline = self.timeout;
        model.dispersal = self.dispersal;
        model.window = self.window;
        model
    }
}

#[cfg(test)]
mod tests {
    use stagger_core::AnyConfig;
    use stagger_core::budget::{AnyBudgetConfig, BudgetKind};

    use super::*;
    use crate::strategy::Strategy;

    #[test]
    fn a_configured_budget_is_used_refused_when_of_another_kind_and_dropped_with_its_kind() {
        use stagger_core::budget::TokenBucket;
        let small = AnyBudgetConfig::TokenBucket(TokenBucket::AWS_STANDARD.with_capacity(5.0));
        let s = Strategy::policy(AnyConfig::from(stagger_core::PolicyKind::Constant));
        let configured = s
            .with_budget_config(BudgetKind::AwsStandard, small)
            .unwrap();
        assert_eq!(configured.budget_config(), Some(small));
        // The runs build each client's budget from it: 5 tokens, one retry, not the
        // published 500.
        let outage = Outage::default();
        let published = s.with_budget(Some(BudgetKind::AwsStandard));
        let few = outage.run(&configured, 1).unwrap();
        let many = outage.run(&published, 1).unwrap();
        assert!(
            few.attempts < many.attempts,
            "{} vs {}",
            few.attempts,
            many.attempts
        );
        // A token bucket is not a ratio budget.
        assert!(s.with_budget_config(BudgetKind::Finagle, small).is_err());
        // An invalid one is refused by name.
        let bad = AnyBudgetConfig::TokenBucket(TokenBucket::AWS_STANDARD.with_capacity(-1.0));
        assert!(s.with_budget_config(BudgetKind::AwsStandard, bad).is_err());
        // Set the kind again, or none: the configuration goes with the old kind.
        let mut changed = configured;
        changed.budget = Some(BudgetKind::Finagle);
        assert_eq!(
            changed.budget_config(),
            Some(AnyBudgetConfig::published(BudgetKind::Finagle))
        );
        changed.budget = None;
        assert_eq!(changed.budget_config(), None);
        assert_eq!(
            configured
                .with_budget(Some(BudgetKind::AwsStandard))
                .budget_config(),
            Some(AnyBudgetConfig::published(BudgetKind::AwsStandard))
        );
    }
}
