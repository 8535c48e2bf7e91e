//! The canonical workloads: each is its parameters, their checks and one assembly of the
//! model's parts ([`Workload::model`]), so its figures are the model's. Each module's
//! documentation states its setup and its source; the spike and the ramp share a file, one
//! setup under two load shapes. [`Overrides`] are the command line's parameters: a
//! workload's struct is read from those given with serde, as a scenario file is, and refuses
//! the others as unknown fields ([`Workload::from_overrides`]).

pub mod contention;
pub mod herd;
pub mod open_loop;
pub mod outage;
mod params;
pub mod partition;
pub mod serial;
pub mod spike;
pub mod tail;
pub mod throttle;

use std::fmt;
use std::str::FromStr;

use serde::de::DeserializeOwned;

use crate::error::SimError;
use crate::estimate::Estimate;
use crate::metrics::ResultRow;
use crate::model::{Composed, RunOptions};
use crate::strategy::Strategy;

pub use params::Overrides;

/// A workload with its parameters: its [`Default`] is its published setup, and it derives
/// `serde::Deserialize` with `#[serde(default, deny_unknown_fields)]`, its fields named as
/// the overrides that set them and the others skipped.
pub trait Workload: Default + DeserializeOwned {
    /// Its entry in the list of workloads.
    const KIND: WorkloadKind;

    /// This workload at its published setup with `overrides` applied: its parameters read,
    /// with serde, from the overrides given, refusing any that is not one of its fields.
    ///
    /// # Errors
    ///
    /// [`SimError::NotApplicable`] for the first override given, in the declaration order of
    /// [`Overrides`], that this workload does not use.
    fn from_overrides(overrides: &Overrides) -> Result<Self, SimError> {
        params::read(overrides).map_err(|param| SimError::NotApplicable {
            param,
            workload: Self::KIND.name(),
        })
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// A [`SimError`] naming the parameter.
    fn validate(&self) -> Result<(), SimError>;

    /// [`Workload::from_overrides`], then [`Workload::validate`]: the workload a run takes.
    ///
    /// # Errors
    ///
    /// Either's [`SimError`].
    fn configured(overrides: &Overrides) -> Result<Self, SimError> {
        let workload = Self::from_overrides(overrides)?;
        workload.validate()?;
        Ok(workload)
    }

    /// The model this workload runs, its parameters in place: a composition of the model's
    /// parts, or a model of its own. The estimate and the run below come from it, so a
    /// workload is its parameters, their checks and this one assembly.
    fn model(&self) -> Model;

    /// What a run of `strategy` will cost: the events it processes and the memory its data
    /// holds at the peak, worked out from the parameters without running it (see
    /// [`estimate`](crate::estimate)). The parameters should be valid
    /// ([`Workload::validate`]); the figures of invalid ones mean nothing.
    fn estimate(&self, strategy: &Strategy) -> Estimate {
        self.model().estimate(strategy)
    }

    /// Runs `strategy`, every generator derived from `seed`, and stops it with
    /// [`SimError::EventLimit`] once it has processed more than `max_events` events.
    ///
    /// # Errors
    ///
    /// The parameters' or the policy's [`SimError`], or [`SimError::EventLimit`].
    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        self.validate()?;
        self.model().run_within(strategy, seed, max_events)
    }

    /// Runs `strategy`, every generator derived from `seed`, with no limit but the
    /// workload's own.
    ///
    /// # Errors
    ///
    /// The parameters' or the policy's [`SimError`].
    fn run(&self, strategy: &Strategy, seed: u64) -> Result<ResultRow, SimError> {
        self.run_within(strategy, seed, u64::MAX)
    }
}

/// What a workload runs ([`Workload::model`]).
// Made once per run and never stored: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Model {
    /// A composition of the model's parts.
    Composed(Composed),
    /// The contention workload's model of its own: rounds of conditional writes.
    Contention(contention::Contention),
}

impl Model {
    /// What a run of `strategy` will cost.
    #[must_use]
    pub fn estimate(&self, strategy: &Strategy) -> Estimate {
        match self {
            Self::Composed(model) => model.estimate(strategy, &[]),
            Self::Contention(contention) => contention.estimate_writes(strategy),
        }
    }

    /// Runs `strategy` from `seed`, stopped past `max_events` events.
    ///
    /// # Errors
    ///
    /// The model's or the policy's [`SimError`], or [`SimError::EventLimit`].
    pub fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        match self {
            Self::Composed(model) => {
                model.run(strategy, &RunOptions::seed(seed).max_events(max_events))
            }
            Self::Contention(contention) => contention.run_rounds(strategy, seed, max_events),
        }
    }
}

/// Refuses a strategy that hedges ([`Strategy::hedging`]) for a workload that does not model
/// hedging, rather than running it as if it retried.
///
/// # Errors
///
/// [`SimError::NotApplicable`] naming `hedge`.
pub(crate) fn refuse_hedging<W: Workload>(strategy: &Strategy) -> Result<(), SimError> {
    match strategy.hedging {
        Some(_) => Err(SimError::NotApplicable {
            param: "hedge",
            workload: W::KIND.name(),
        }),
        None => Ok(()),
    }
}

/// A workload by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WorkloadKind {
    /// [`herd`]: every client fails at once, the dependency stays down.
    Herd,
    /// [`outage`]: steady arrivals through a 30-second outage.
    Outage,
    /// [`contention`]: the 2015 AWS optimistic-concurrency simulation.
    Contention,
    /// [`open_loop`]: open arrivals against independent failures (Brooker 2022).
    OpenLoop,
    /// [`serial`]: serial clients against independent failures (Brooker 2022).
    Serial,
    /// [`spike`]: a load spike into a server with no admission control (metastable collapse).
    Spike,
    /// [`spike`]: the same server under a ramp.
    Ramp,
    /// [`throttle`]: a 429 storm against a rate limiter.
    Throttle,
    /// [`partition`]: one host's outage against a budget shared with a healthy host.
    Partition,
    /// [`tail`]: replicas that pause now and then make a long tail; a timeout per attempt
    /// cuts it.
    Tail,
}

impl WorkloadKind {
    /// Every workload.
    pub const ALL: [Self; 10] = [
        Self::Herd,
        Self::Outage,
        Self::Contention,
        Self::OpenLoop,
        Self::Serial,
        Self::Spike,
        Self::Ramp,
        Self::Throttle,
        Self::Partition,
        Self::Tail,
    ];

    /// The workload's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Herd => "herd",
            Self::Outage => "outage",
            Self::Contention => "contention",
            Self::OpenLoop => "open-loop",
            Self::Serial => "serial",
            Self::Spike => "spike",
            Self::Ramp => "ramp",
            Self::Throttle => "throttle",
            Self::Partition => "partition",
            Self::Tail => "tail",
        }
    }

    /// Every workload's name.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        Self::NAMES.to_vec()
    }

    /// Every workload's name, in the order of [`WorkloadKind::ALL`].
    pub const NAMES: [&'static str; 10] = {
        let mut names = [""; 10];
        let mut i = 0;
        while i < Self::ALL.len() {
            names[i] = Self::ALL[i].name();
            i += 1;
        }
        names
    };

    /// Runs this workload at its defaults with `overrides`, for `strategy` and `seed`.
    ///
    /// # Errors
    ///
    /// A [`SimError`] for an override that does not apply, an invalid parameter or policy.
    pub fn run(
        self,
        overrides: &Overrides,
        strategy: &Strategy,
        seed: u64,
    ) -> Result<ResultRow, SimError> {
        self.run_within(overrides, strategy, seed, u64::MAX)
    }

    /// [`WorkloadKind::run`], stopped with [`SimError::EventLimit`] once it has processed
    /// more than `max_events` events.
    ///
    /// # Errors
    ///
    /// A [`SimError`] for an override that does not apply, an invalid parameter or policy, or
    /// [`SimError::EventLimit`].
    pub fn run_within(
        self,
        overrides: &Overrides,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        fn go<W: Workload>(
            o: &Overrides,
            s: &Strategy,
            seed: u64,
            max: u64,
        ) -> Result<ResultRow, SimError> {
            W::configured(o)?.run_within(s, seed, max)
        }
        match self {
            Self::Herd => go::<herd::Herd>(overrides, strategy, seed, max_events),
            Self::Outage => go::<outage::Outage>(overrides, strategy, seed, max_events),
            Self::Contention => go::<contention::Contention>(overrides, strategy, seed, max_events),
            Self::OpenLoop => go::<open_loop::OpenLoop>(overrides, strategy, seed, max_events),
            Self::Serial => go::<serial::Serial>(overrides, strategy, seed, max_events),
            Self::Spike => go::<spike::Spike>(overrides, strategy, seed, max_events),
            Self::Ramp => go::<spike::Ramp>(overrides, strategy, seed, max_events),
            Self::Throttle => go::<throttle::Throttle>(overrides, strategy, seed, max_events),
            Self::Partition => go::<partition::Partition>(overrides, strategy, seed, max_events),
            Self::Tail => go::<tail::Tail>(overrides, strategy, seed, max_events),
        }
    }

    /// What a run of this workload at its defaults with `overrides` will cost for
    /// `strategy` (see [`Workload::estimate`]), without running it.
    ///
    /// # Errors
    ///
    /// A [`SimError`] for an override that does not apply, an invalid parameter or policy:
    /// the ones [`WorkloadKind::run`] would refuse up front.
    pub fn estimate(
        self,
        overrides: &Overrides,
        strategy: &Strategy,
    ) -> Result<Estimate, SimError> {
        fn go<W: Workload>(o: &Overrides, s: &Strategy) -> Result<Estimate, SimError> {
            // An invalid policy is refused here, as the run would refuse it.
            s.policy.build(stagger_core::SeededRng::new(0))?;
            Ok(W::configured(o)?.estimate(s))
        }
        match self {
            Self::Herd => go::<herd::Herd>(overrides, strategy),
            Self::Outage => go::<outage::Outage>(overrides, strategy),
            Self::Contention => go::<contention::Contention>(overrides, strategy),
            Self::OpenLoop => go::<open_loop::OpenLoop>(overrides, strategy),
            Self::Serial => go::<serial::Serial>(overrides, strategy),
            Self::Spike => go::<spike::Spike>(overrides, strategy),
            Self::Ramp => go::<spike::Ramp>(overrides, strategy),
            Self::Throttle => go::<throttle::Throttle>(overrides, strategy),
            Self::Partition => go::<partition::Partition>(overrides, strategy),
            Self::Tail => go::<tail::Tail>(overrides, strategy),
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WorkloadKind {
    type Err = SimError;

    fn from_str(name: &str) -> Result<Self, SimError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| SimError::UnknownWorkload {
                name: name.to_owned(),
                workloads: &Self::NAMES,
            })
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Debug;
    use std::time::Duration;

    use stagger_core::engine::Dispersal;

    use super::*;
    use crate::model::RetryAfterForm;

    /// Every override, set alone, to a value no workload has by default.
    fn each_alone() -> Vec<Overrides> {
        let d = Overrides::default();
        let secs = Duration::from_secs;
        vec![
            Overrides {
                clients: Some(3),
                ..d
            },
            Overrides {
                rounds: Some(7),
                ..d
            },
            Overrides {
                failure_rate: Some(0.125),
                ..d
            },
            Overrides {
                duration: Some(secs(17)),
                ..d
            },
            Overrides {
                rate: Some(3.5),
                ..d
            },
            Overrides {
                window: Some(Duration::from_millis(7)),
                ..d
            },
            Overrides {
                timeout: Some(secs(7)),
                ..d
            },
            Overrides {
                retry_after: Some(Duration::from_millis(2500)),
                ..d
            },
            Overrides {
                limit_rate: Some(3.0),
                ..d
            },
            Overrides {
                limit_burst: Some(2),
                ..d
            },
            Overrides {
                limit_concurrency: Some(2),
                ..d
            },
            Overrides {
                retry_after_form: Some(RetryAfterForm::ExactRounded),
                ..d
            },
            Overrides {
                dispersal: Some(Dispersal::Floor),
                ..d
            },
            Overrides {
                gate: Some(true),
                ..d
            },
            Overrides {
                budget_partition: Some(partition::BudgetPartition::Partitioned),
                ..d
            },
            Overrides {
                attempt_timeout: Some(Duration::from_millis(50)),
                ..d
            },
            Overrides {
                load: Some(0.3),
                ..d
            },
            Overrides {
                replicas: Some(3),
                ..d
            },
            Overrides {
                concurrency: Some(2),
                ..d
            },
            Overrides {
                pause: Some(secs(2)),
                ..d
            },
            Overrides {
                pause_every: Some(secs(10)),
                ..d
            },
            Overrides {
                fanout: Some(2),
                ..d
            },
        ]
    }

    /// The overrides `W` reads, each checked to change it: the others are refused by name.
    fn accepted<W: Workload + PartialEq + Debug>() -> Vec<&'static str> {
        let mut accepted = Vec::new();
        for one in each_alone() {
            let [name] = one.given()[..] else {
                panic!("one override: {one:?}")
            };
            match W::from_overrides(&one) {
                Ok(w) => {
                    assert_ne!(w, W::default(), "{name} is read into {}", W::KIND);
                    accepted.push(name);
                }
                Err(err) => assert_eq!(
                    err,
                    SimError::NotApplicable {
                        param: name,
                        workload: W::KIND.name(),
                    }
                ),
            }
        }
        accepted
    }

    #[test]
    fn each_workload_reads_its_overrides_and_refuses_the_others() {
        assert_eq!(each_alone().len(), 22, "every override");
        // What each workload accepts, as its parameters were listed by hand before serde
        // read them.
        let open = ["clients", "rate", "duration", "failure_rate", "window"];
        let load = ["rate", "duration", "window"];
        for (accepted, declared) in [
            (accepted::<herd::Herd>(), &["clients", "window"][..]),
            (
                accepted::<outage::Outage>(),
                &[
                    "rate",
                    "duration",
                    "window",
                    "timeout",
                    "retry_after",
                    "dispersal",
                ],
            ),
            (accepted::<contention::Contention>(), &["clients", "rounds"]),
            (accepted::<open_loop::OpenLoop>(), &open),
            (accepted::<serial::Serial>(), &open),
            (accepted::<spike::Spike>(), &load),
            (accepted::<spike::Ramp>(), &load),
            (
                accepted::<throttle::Throttle>(),
                &[
                    "clients",
                    "rate",
                    "duration",
                    "timeout",
                    "retry_after",
                    "window",
                    "limit_rate",
                    "limit_burst",
                    "limit_concurrency",
                    "retry_after_form",
                    "dispersal",
                    "gate",
                ],
            ),
            (
                accepted::<partition::Partition>(),
                &[
                    "rate",
                    "duration",
                    "failure_rate",
                    "window",
                    "budget_partition",
                ],
            ),
            (
                accepted::<tail::Tail>(),
                &[
                    "duration",
                    "timeout",
                    "window",
                    "attempt_timeout",
                    "load",
                    "replicas",
                    "concurrency",
                    "pause",
                    "pause_every",
                    "fanout",
                ],
            ),
        ] {
            let mut declared = declared.to_vec();
            declared.sort_unstable();
            let mut accepted = accepted;
            accepted.sort_unstable();
            assert_eq!(accepted, declared);
        }
    }

    #[test]
    fn the_first_override_refused_is_named_in_declaration_order() {
        let all = each_alone().into_iter().fold(Overrides::default(), merge);
        assert_eq!(all.given().len(), 22);
        for (kind, first) in [
            (WorkloadKind::Herd, "rounds"),
            (WorkloadKind::Outage, "clients"),
            (WorkloadKind::Contention, "failure_rate"),
            (WorkloadKind::OpenLoop, "rounds"),
            (WorkloadKind::Serial, "rounds"),
            (WorkloadKind::Spike, "clients"),
            (WorkloadKind::Ramp, "clients"),
            (WorkloadKind::Throttle, "rounds"),
            (WorkloadKind::Partition, "clients"),
            (WorkloadKind::Tail, "clients"),
        ] {
            let strategy = Strategy::policy(stagger_core::AnyConfig::from(
                stagger_core::PolicyKind::Constant,
            ));
            assert_eq!(
                kind.estimate(&all, &strategy),
                Err(SimError::NotApplicable {
                    param: first,
                    workload: kind.name(),
                })
            );
        }
    }

    /// `a` with `b`'s overrides set over it.
    fn merge(a: Overrides, b: Overrides) -> Overrides {
        Overrides {
            clients: b.clients.or(a.clients),
            rounds: b.rounds.or(a.rounds),
            failure_rate: b.failure_rate.or(a.failure_rate),
            duration: b.duration.or(a.duration),
            rate: b.rate.or(a.rate),
            window: b.window.or(a.window),
            timeout: b.timeout.or(a.timeout),
            retry_after: b.retry_after.or(a.retry_after),
            limit_rate: b.limit_rate.or(a.limit_rate),
            limit_burst: b.limit_burst.or(a.limit_burst),
            limit_concurrency: b.limit_concurrency.or(a.limit_concurrency),
            retry_after_form: b.retry_after_form.or(a.retry_after_form),
            dispersal: b.dispersal.or(a.dispersal),
            gate: b.gate.or(a.gate),
            budget_partition: b.budget_partition.or(a.budget_partition),
            attempt_timeout: b.attempt_timeout.or(a.attempt_timeout),
            load: b.load.or(a.load),
            replicas: b.replicas.or(a.replicas),
            concurrency: b.concurrency.or(a.concurrency),
            pause: b.pause.or(a.pause),
            pause_every: b.pause_every.or(a.pause_every),
            fanout: b.fanout.or(a.fanout),
        }
    }
}
