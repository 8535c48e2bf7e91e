//! # `partition`: one host's outage against a retry budget shared with another host
//!
//! A client that calls many hosts and holds one retry budget for all of them bounds its retries
//! as a whole. When one host goes down, every request to it fails and asks for retries: a token
//! bucket empties on them, and the retries a request to a healthy host needs are refused with
//! the rest. A budget per destination
//! ([`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination)) keeps each host's retries to itself.
//!
//! Model, a composition of the [model](crate::model)'s parts
//! ([`Partition::composed`]): one open source, a one-way network, and two hosts behind the
//! dependency ([`TwoHosts`]).
//!
//! - **Client:** one client. Its requests arrive as a Poisson process at `rate` per second
//!   (default 100) for `duration` (default 30 s), each to host A with probability
//!   `share_down` (default 0.5), to host B otherwise. Each runs the strategy's policy (or its
//!   hedging, `--hedge`); the requests in flight when arrivals stop run to completion.
//! - **Budget:** the strategy's budget (`--budget`), either one for both hosts
//!   ([`BudgetPartition::Shared`], the default) or one per host, from a
//!   [`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination) set keyed by the host
//!   ([`BudgetPartition::Partitioned`]): each request asks the set for its host's budget, as a
//!   layer serving many destinations does. Each host's budget starts full, so a partitioned
//!   client holds as many full budgets as hosts. Without a budget, every retry the policy
//!   allows goes ahead, in either mode: the ceiling.
//! - **Hosts:** host A is down for the whole run: every attempt fails with a retryable error.
//!   Host B fails each attempt independently with probability `failure_rate` (default 0.2),
//!   with a retryable error, and succeeds otherwise. The network is a one-way delay each way
//!   (default a constant 1 ms).
//!
//! Each request draws its host and its server's answers from a generator of its own, forked in
//! the order the requests arrive, so every mode sees the same requests and the same answers:
//! the modes differ only in the retries the budget grants.
//!
//! The figures, per host ([`HostFigures`](crate::metrics::HostFigures)): the requests, the
//! share that succeeded, the retries sent and the attempts the budget refused. The finding is
//! host B's success share: shared against partitioned, and the no-budget ceiling. A scenario
//! file's `[dependency] two_hosts` puts the two hosts beside any other part (a limiter or an
//! outage on host B, serial or fixed clients, a deadline).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::model::{Clients, Composed, Dependency, Network, TwoHosts};
use crate::model::{check_duration, check_failure_rate, check_window};
use crate::strategy::Strategy;

/// Whether the client holds one budget for every host, or one per host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetPartition {
    /// `shared`: one budget for both hosts.
    #[default]
    Shared,
    /// `partitioned`: one budget per host, from a [`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination) set.
    Partitioned,
}

impl BudgetPartition {
    /// Every mode.
    pub const ALL: [Self; 2] = [Self::Shared, Self::Partitioned];

    /// The name the CLI uses.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Shared => "shared",
            Self::Partitioned => "partitioned",
        }
    }
}

impl fmt::Display for BudgetPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BudgetPartition {
    type Err = SimError;

    fn from_str(name: &str) -> Result<Self, SimError> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or(SimError::Invalid {
                param: "budget_partition",
                allowed: "shared or partitioned",
            })
    }
}

/// The partition workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Partition {
    /// Requests per second, to both hosts together, in (0, 1e6].
    pub rate: f64,
    /// How long requests arrive, longer than 0 and at most a day.
    pub duration: Duration,
    /// The share of the requests that go to host A, the one that is down, in [0, 1].
    #[serde(skip)]
    pub share_down: f64,
    /// Host B's independent failure probability per attempt, in [0, 1].
    pub failure_rate: f64,
    /// The one-way network delay.
    #[serde(skip)]
    pub network: Delay,
    /// The window of the peak retry share.
    pub window: Duration,
    /// One budget for both hosts, or one per host.
    #[serde(deserialize_with = "super::params::by_name")]
    pub budget_partition: BudgetPartition,
}

impl Default for Partition {
    fn default() -> Self {
        Self {
            rate: 100.0,
            duration: Duration::from_secs(30),
            share_down: 0.5,
            failure_rate: 0.2,
            network: Delay::Constant { nanos: 1_000_000 },
            window: Duration::from_millis(10),
            budget_partition: BudgetPartition::Shared,
        }
    }
}

impl Partition {
    /// The most requests a run may expect (`rate x duration`),
    /// [`limits::MAX_REQUESTS`](crate::limits::MAX_REQUESTS).
    pub const MAX_REQUESTS: f64 = crate::limits::MAX_REQUESTS;
    /// The most events a run may process; a run that needs more (a policy with no attempt
    /// limit against host A, say) stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = crate::limits::MAX_EVENTS;
}

/// The strategy the scoreboard measures: the AWS SDKs' standard retry mode (3 attempts, full
/// jitter under a ceiling of 1 s doubling to 20 s) with their retry quota (the `aws-standard`
/// token bucket).
#[must_use]
pub fn trial_strategy() -> Strategy {
    Strategy::policy(stagger_core::Preset::AWS_STANDARD.config())
        .with_budget(Some(stagger_core::budget::BudgetKind::AwsStandard))
}

impl Partition {
    /// The composition this workload runs: one open source, the one-way network, and two
    /// hosts behind the dependency, host B failing at the failure rate.
    #[must_use]
    pub fn composed(&self) -> Composed {
        let clients = Clients::one_source(self.rate);
        let mut model = Composed::new(clients, self.duration, Network::OneWay(self.network));
        model.dependency = Dependency {
            failure_rate: self.failure_rate,
            two_hosts: Some(TwoHosts {
                share_down: self.share_down,
                budget_per_host: self.budget_partition == BudgetPartition::Partitioned,
            }),
            ..Dependency::HEALTHY
        };
        model.window = self.window;
        model
    }
}

impl Workload for Partition {
    const KIND: WorkloadKind = WorkloadKind::Partition;

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
        check_duration(self.duration)?;
        check_failure_rate(self.failure_rate)?;
        check_window(self.window)?;
        if !(0.0..=1.0).contains(&self.share_down) {
            return Err(SimError::Invalid {
                param: "share_down",
                allowed: "a share in [0, 1]",
            });
        }
        if self.rate * self.duration.as_secs_f64() > Self::MAX_REQUESTS {
            return Err(SimError::TooLarge {
                what: "rate x duration",
                limit: format!("{:e} requests", Self::MAX_REQUESTS),
            });
        }
        Ok(())
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::ResultRow;
    use stagger_core::budget::BudgetKind;
    use stagger_core::{AnyConfig, PolicyConfig, Preset};

    use crate::metrics::HostFigures;

    use super::*;
    use crate::workload::Overrides;

    /// The AWS SDKs' standard retry mode, with or without their retry quota.
    fn aws(budget: Option<BudgetKind>) -> Strategy {
        Strategy::policy(Preset::AWS_STANDARD.config()).with_budget(budget)
    }

    fn mode(budget_partition: BudgetPartition) -> Partition {
        Partition {
            budget_partition,
            ..Partition::default()
        }
    }

    fn host_b(row: &ResultRow) -> HostFigures {
        row.host_b.expect("the partition workload reports host B")
    }

    fn host_a(row: &ResultRow) -> HostFigures {
        row.host_a.expect("the partition workload reports host A")
    }

    #[test]
    fn a_shared_budget_lets_the_outage_drain_host_bs_retries_and_a_partitioned_one_does_not() {
        let quota = aws(Some(BudgetKind::AwsStandard));
        for seed in 1..=3 {
            let shared = mode(BudgetPartition::Shared).run(&quota, seed).unwrap();
            let parted = mode(BudgetPartition::Partitioned)
                .run(&quota, seed)
                .unwrap();
            let ceiling = mode(BudgetPartition::Shared).run(&aws(None), seed).unwrap();
            let (s, p, c) = (host_b(&shared), host_b(&parted), host_b(&ceiling));
            // The same requests to each host in every mode.
            assert_eq!((s.requests, p.requests), (c.requests, c.requests));
            assert_eq!(host_a(&shared).requests, host_a(&ceiling).requests);
            // Shared, host A's outage empties the bucket: most of B's retries are refused and
            // B keeps about the share its first tries win (1 - 0.2).
            assert!(s.refused > s.retries, "seed {seed}: {s:?}");
            assert!(s.success_share < 0.85, "seed {seed}: {s:?}");
            // Partitioned, B's own bucket never runs dry and B reaches the no-budget ceiling.
            assert_eq!(p.refused, 0, "seed {seed}: {p:?}");
            assert_eq!(p.success_share, c.success_share, "seed {seed}");
            assert!(
                p.success_share > s.success_share + 0.1,
                "seed {seed}: {p:?} against {s:?}"
            );
            // Host A's retries are refused in both modes once its budget is empty.
            assert!(host_a(&shared).refused > 0 && host_a(&parted).refused > 0);
            assert_eq!(host_a(&ceiling).refused, 0);
        }
    }

    #[test]
    fn without_a_budget_both_modes_are_the_same_run() {
        let s = aws(None);
        let shared = mode(BudgetPartition::Shared).run(&s, 4).unwrap();
        let mut parted = mode(BudgetPartition::Partitioned).run(&s, 4).unwrap();
        assert_eq!(parted.budget_partition, Some("partitioned"));
        parted.budget_partition = shared.budget_partition;
        assert_eq!(shared, parted);
        // Three attempts for every request to A, all failed.
        let a = host_a(&shared);
        assert_eq!((a.successes, a.retries), (0, 2 * a.requests));
    }

    #[test]
    fn the_same_seed_gives_the_same_row_and_another_seed_another() {
        let s = aws(Some(BudgetKind::AwsStandard));
        for m in BudgetPartition::ALL {
            let w = mode(m);
            assert_eq!(w.run(&s, 7).unwrap(), w.run(&s, 7).unwrap());
            assert_ne!(w.run(&s, 7).unwrap(), w.run(&s, 8).unwrap());
        }
    }

    #[test]
    fn bad_parameters_are_refused_with_their_names() {
        let s = aws(None);
        let param = |w: Partition| w.run(&s, 1).unwrap_err().param();
        let d = Partition::default();
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e6] {
            assert_eq!(param(Partition { rate, ..d }), Some("rate"), "{rate}");
        }
        for failure_rate in [-0.1, 1.5, f64::NAN] {
            let w = Partition { failure_rate, ..d };
            assert_eq!(param(w), Some("failure_rate"));
        }
        assert_eq!(
            param(Partition {
                duration: Duration::ZERO,
                ..d
            }),
            Some("duration")
        );
        assert_eq!(
            param(Partition {
                window: Duration::ZERO,
                ..d
            }),
            Some("window")
        );
        assert_eq!(
            param(Partition {
                share_down: 1.5,
                ..d
            }),
            Some("share_down")
        );
        let huge = Partition {
            rate: 1e6,
            duration: Duration::from_secs(100),
            ..d
        };
        assert!(matches!(huge.validate(), Err(SimError::TooLarge { .. })));
        // An override the workload does not use is refused, not ignored.
        let clients = Overrides {
            clients: Some(3),
            ..Overrides::default()
        };
        assert_eq!(
            Partition::from_overrides(&clients),
            Err(SimError::NotApplicable {
                param: "clients",
                workload: "partition",
            })
        );
        let w = Partition::from_overrides(&Overrides {
            budget_partition: Some(BudgetPartition::Partitioned),
            rate: Some(10.0),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(
            (w.budget_partition, w.rate),
            (BudgetPartition::Partitioned, 10.0)
        );
        assert_eq!("partitioned".parse(), Ok(BudgetPartition::Partitioned));
        assert_eq!(
            "both".parse::<BudgetPartition>().unwrap_err().param(),
            Some("budget_partition")
        );
        // A policy's invalid configuration is the policy's error.
        let bad = Strategy::policy(
            AnyConfig::from(stagger_core::PolicyKind::Immediate)
                .set(stagger_core::Param::MaxAttempts(0))
                .expect("checked when built"),
        );
        assert!(matches!(
            Partition::default().run(&bad, 1),
            Err(SimError::Config(_))
        ));
    }

    #[test]
    fn the_estimate_bounds_the_run() {
        for budget in [None, Some(BudgetKind::AwsStandard)] {
            for m in BudgetPartition::ALL {
                let s = aws(budget);
                let w = mode(m);
                let e = w.estimate(&s);
                let row = w.run(&s, 1).unwrap();
                assert!(
                    row.events <= e.events,
                    "{budget:?} {m}: {} > {}",
                    row.events,
                    e.events
                );
                if budget.is_none() {
                    let ratio = row.events as f64 / e.events as f64;
                    assert!(ratio > 0.9, "{m}: {ratio}");
                }
            }
        }
    }
}
