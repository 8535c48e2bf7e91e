//! The canonical workloads: each is its parameters, their checks and one assembly of the
//! model's parts ([`Workload::model`]), so its figures are the model's. Each module's
//! documentation states its setup and its source; the spike and the ramp share a file, one
//! setup under two load shapes. [`Overrides`] are the command line's parameters, each
//! workload accepting those it names in [`Workload::ACCEPTS`].

pub mod contention;
pub mod herd;
pub mod open_loop;
pub mod outage;
pub mod partition;
pub mod serial;
pub mod spike;
pub mod tail;
pub mod throttle;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use stagger_core::engine::Dispersal;

use crate::error::SimError;
use crate::estimate::Estimate;
use crate::metrics::ResultRow;
use crate::model::{Composed, RunOptions};
use crate::strategy::Strategy;

/// Parameters a user may override from the command line. Each workload uses those that make
/// sense for it and refuses the others.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Clients (or, for open arrivals, the number of arrival sources).
    pub clients: Option<u64>,
    /// Rounds to average over.
    pub rounds: Option<u32>,
    /// The server's independent failure probability per attempt, in [0, 1].
    pub failure_rate: Option<f64>,
    /// The simulated duration.
    pub duration: Option<Duration>,
    /// The offered rate, in requests per second.
    pub rate: Option<f64>,
    /// The window of the peak retry share.
    pub window: Option<Duration>,
    /// One end-to-end deadline per request, from its first attempt (`outage`).
    pub timeout: Option<Duration>,
    /// The wait a throttling dependency asks for in every failed answer, as `Retry-After`
    /// (`outage`).
    pub retry_after: Option<Duration>,
    /// A rate limiter's rate, per second (`throttle`).
    pub limit_rate: Option<f64>,
    /// A rate limiter's tokens (`throttle`).
    pub limit_burst: Option<u32>,
    /// A concurrency limiter in place of the rate limiter (`throttle`).
    pub limit_concurrency: Option<u32>,
    /// How a refusal states its wait (`throttle`).
    pub retry_after_form: Option<crate::model::RetryAfterForm>,
    /// What clients add above a server's wait (`throttle`).
    pub dispersal: Option<Dispersal>,
    /// Whether the clients share a gate for the destination (`throttle`).
    pub gate: Option<bool>,
    /// Whether the client holds one budget for every host or one per host (`partition`).
    pub budget_partition: Option<partition::BudgetPartition>,
    /// A timeout for each attempt, besides the request's deadline (`tail`).
    pub attempt_timeout: Option<Duration>,
    /// The offered load, as a share of the servers' capacity (`tail`).
    pub load: Option<f64>,
    /// The replicas in the pool (`tail`).
    pub replicas: Option<u32>,
    /// The requests each replica serves at once (`tail`).
    pub concurrency: Option<u32>,
    /// How long a replica pauses (`tail`).
    pub pause: Option<Duration>,
    /// The mean time a replica runs between pauses (`tail`).
    pub pause_every: Option<Duration>,
    /// The sub-requests each request fans out to, all needed (`tail`).
    pub fanout: Option<u32>,
}

impl Overrides {
    /// The names of the overrides that are set, in declaration order.
    ///
    /// Every field is listed here (the destructuring does not compile otherwise), so a new
    /// override is refused by every workload that does not declare it in
    /// [`Workload::ACCEPTS`].
    #[must_use]
    pub fn given(&self) -> Vec<&'static str> {
        let Self {
            clients,
            rounds,
            failure_rate,
            duration,
            rate,
            window,
            timeout,
            retry_after,
            limit_rate,
            limit_burst,
            limit_concurrency,
            retry_after_form,
            dispersal,
            gate,
            budget_partition,
            attempt_timeout,
            load,
            replicas,
            concurrency,
            pause,
            pause_every,
            fanout,
        } = self;
        [
            ("clients", clients.is_some()),
            ("rounds", rounds.is_some()),
            ("failure_rate", failure_rate.is_some()),
            ("duration", duration.is_some()),
            ("rate", rate.is_some()),
            ("window", window.is_some()),
            ("timeout", timeout.is_some()),
            ("retry_after", retry_after.is_some()),
            ("limit_rate", limit_rate.is_some()),
            ("limit_burst", limit_burst.is_some()),
            ("limit_concurrency", limit_concurrency.is_some()),
            ("retry_after_form", retry_after_form.is_some()),
            ("dispersal", dispersal.is_some()),
            ("gate", gate.is_some()),
            ("budget_partition", budget_partition.is_some()),
            ("attempt_timeout", attempt_timeout.is_some()),
            ("load", load.is_some()),
            ("replicas", replicas.is_some()),
            ("concurrency", concurrency.is_some()),
            ("pause", pause.is_some()),
            ("pause_every", pause_every.is_some()),
            ("fanout", fanout.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    /// Refuses, with [`SimError::NotApplicable`], the first override set that `workload`
    /// does not accept.
    ///
    /// # Errors
    ///
    /// [`SimError::NotApplicable`] naming the override.
    pub fn check<W: Workload>(&self) -> Result<(), SimError> {
        match self.given().into_iter().find(|p| !W::ACCEPTS.contains(p)) {
            Some(param) => Err(SimError::NotApplicable {
                param,
                workload: W::KIND.name(),
            }),
            None => Ok(()),
        }
    }
}

/// A workload with its parameters.
pub trait Workload: Default {
    /// Its entry in the list of workloads.
    const KIND: WorkloadKind;

    /// The overrides this workload uses, by the names [`Overrides::given`] reports.
    const ACCEPTS: &'static [&'static str];

    /// Sets the overrides named in [`Workload::ACCEPTS`] and ignores the rest: call
    /// [`Workload::apply`], which refuses those first.
    fn set(&mut self, overrides: &Overrides);

    /// Applies the overrides, refusing any this workload does not accept.
    ///
    /// # Errors
    ///
    /// [`SimError::NotApplicable`] for an override this workload does not use.
    fn apply(&mut self, overrides: &Overrides) -> Result<(), SimError> {
        overrides.check::<Self>()?;
        self.set(overrides);
        Ok(())
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// A [`SimError`] naming the parameter.
    fn validate(&self) -> Result<(), SimError>;

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
            configured::<W>(o)?.run_within(s, seed, max)
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
            Ok(configured::<W>(o)?.estimate(s))
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

/// A workload at its defaults with `overrides` applied and checked.
fn configured<W: Workload>(overrides: &Overrides) -> Result<W, SimError> {
    let mut workload = W::default();
    workload.apply(overrides)?;
    workload.validate()?;
    Ok(workload)
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
