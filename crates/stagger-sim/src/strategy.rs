//! What is simulated: a retry policy and, optionally, a budget per client.

use std::rc::Rc;
use std::time::Duration;

use stagger_core::budget::{AnyBudget, AnyBudgetConfig, Budget, BudgetKind};

use crate::error::SimError;
use stagger_core::engine::Hedging;
use stagger_core::policy::AnyPolicy;
use stagger_core::{AnyConfig, Failure, Policy, PolicyConfig, Rng, SeededRng};

use crate::memory::block;

/// A policy as the simulator runs it: one of the catalog's, or a published variant that the
/// catalog deliberately does not offer.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SimPolicy {
    /// A catalog policy, exactly as the executors run it.
    Catalog(AnyConfig),
    /// The 2015 AWS simulator's decorrelated jitter, which clamps after the draw:
    /// `sleep = min(cap, U(base, 3 * sleep))`. Delays pile up on the cap; the catalog's
    /// `decorrelated-jitter` samples under it instead. Reproduced to show the difference.
    AwsDecorrelatedClamped {
        /// The floor of a draw and the first `sleep`.
        base: Duration,
        /// The clamp applied after the draw.
        cap: Duration,
    },
}

impl SimPolicy {
    /// The name results are reported under.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Self::Catalog(config) => config.kind().name().to_owned(),
            Self::AwsDecorrelatedClamped { .. } => "aws-2015-decorrelated-clamped".to_owned(),
        }
    }

    /// A running policy drawing from `rng`.
    ///
    /// # Errors
    ///
    /// The catalog configuration's error, if it is invalid.
    pub fn build(&self, rng: SeededRng) -> Result<Box<dyn Policy>, stagger_core::ConfigError> {
        Ok(Box::new(self.running(rng)?))
    }

    /// A running policy drawing from `rng`, held by value: what a simulated request keeps,
    /// with no allocation of its own.
    pub(crate) fn running(
        &self,
        rng: SeededRng,
    ) -> Result<RunningPolicy, stagger_core::ConfigError> {
        Ok(match *self {
            Self::Catalog(config) => RunningPolicy::Catalog(config.build(rng)?),
            Self::AwsDecorrelatedClamped { base, cap } => RunningPolicy::Clamped(
                ClampedDecorrelated::new(base.as_secs_f64(), cap.as_secs_f64(), rng),
            ),
        })
    }
}

/// A [`SimPolicy`] built once, from which each request takes a running copy with a generator
/// of its own ([`AnyPolicy::with_rng`](stagger_core::AnyPolicy::with_rng)). Building checks
/// the configuration and precomputes the curve: once per run, not once per request.
#[derive(Debug)]
pub(crate) struct PolicyTemplate(RunningPolicy);

impl PolicyTemplate {
    /// The template of `policy`.
    ///
    /// # Errors
    ///
    /// The catalog configuration's error, if it is invalid.
    pub(crate) fn new(policy: &SimPolicy) -> Result<Self, stagger_core::ConfigError> {
        Ok(Self(policy.running(SeededRng::new(0))?))
    }

    /// A running copy drawing from `rng`, as [`SimPolicy::running`] would build it.
    #[inline]
    pub(crate) fn start(&self, rng: SeededRng) -> RunningPolicy {
        match &self.0 {
            RunningPolicy::Catalog(policy) => RunningPolicy::Catalog(policy.with_rng(rng)),
            RunningPolicy::Clamped(policy) => {
                RunningPolicy::Clamped(ClampedDecorrelated::new(policy.base, policy.cap, rng))
            }
        }
    }
}

/// A running [`SimPolicy`].
#[derive(Debug)]
pub(crate) enum RunningPolicy {
    /// A catalog policy.
    Catalog(AnyPolicy<SeededRng>),
    /// The 2015 simulator's clamped decorrelated jitter.
    Clamped(ClampedDecorrelated),
}

impl Policy for RunningPolicy {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        match self {
            Self::Catalog(policy) => policy.next_delay(attempt, failure),
            Self::Clamped(policy) => policy.next_delay(attempt, failure),
        }
    }
}

/// The 2015 simulator's decorrelated jitter, clamped after the draw, with no attempt limit.
#[derive(Debug)]
pub(crate) struct ClampedDecorrelated {
    base: f64,
    cap: f64,
    sleep: f64,
    rng: SeededRng,
}

impl ClampedDecorrelated {
    /// The policy between `base` and `cap` seconds, at its start, drawing from `rng`.
    fn new(base: f64, cap: f64, rng: SeededRng) -> Self {
        Self {
            base,
            cap,
            sleep: base,
            rng,
        }
    }
}

impl Policy for ClampedDecorrelated {
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() {
            return None;
        }
        if attempt <= 1 {
            self.sleep = self.base;
        }
        let draw = self.base + (3.0 * self.sleep - self.base) * self.rng.next_f64();
        self.sleep = draw.min(self.cap);
        Some(Duration::from_secs_f64(self.sleep))
    }
}

/// A policy and an optional budget, each client getting its own budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strategy {
    /// The retry policy.
    pub policy: SimPolicy,
    /// The budget each client holds, if any.
    pub budget: Option<BudgetKind>,
    /// Hedging instead of retrying, where the workload supports it (every workload but
    /// `contention` and `partition`): each
    /// request sends hedges by [`Hedging`] while its attempts are in flight, and the policy's
    /// delays are not used.
    pub hedging: Option<Hedging>,
    /// The budget's parameters where they are not `budget`'s published defaults: set only by
    /// [`Strategy::with_budget_config`], which checks them.
    budget_config: Option<AnyBudgetConfig>,
}

impl Strategy {
    /// A catalog policy, no budget.
    #[must_use]
    pub fn policy(config: AnyConfig) -> Self {
        Self::of(SimPolicy::Catalog(config))
    }

    /// `policy`, no budget, not hedged.
    #[must_use]
    pub const fn of(policy: SimPolicy) -> Self {
        Self {
            policy,
            budget: None,
            hedging: None,
            budget_config: None,
        }
    }

    /// This strategy hedging by `hedging` instead of retrying.
    #[must_use]
    pub fn with_hedging(mut self, hedging: Option<Hedging>) -> Self {
        self.hedging = hedging;
        self
    }

    /// The name its results are reported under: the policy's, or the hedging's
    /// (`hedge-p95x2`: at the 95th percentile, two attempts in all; `hedge-10msx3`).
    #[must_use]
    pub fn name(&self) -> String {
        match self.hedging {
            None => self.policy.name(),
            Some(hedging) => hedging_name(hedging),
        }
    }

    /// This strategy with a per-client budget at its published defaults.
    #[must_use]
    pub fn with_budget(mut self, budget: Option<BudgetKind>) -> Self {
        self.budget = budget;
        self.budget_config = None;
        self
    }

    /// This strategy with a per-client budget of `kind`, configured by `config` (a
    /// configuration file's budget, say) rather than at its published defaults.
    ///
    /// # Errors
    ///
    /// [`SimError::Config`] naming the parameter, if `config` is invalid.
    pub fn with_budget_config(
        mut self,
        kind: BudgetKind,
        config: AnyBudgetConfig,
    ) -> Result<Self, SimError> {
        if !same_kind(kind, config) {
            return Err(SimError::Invalid {
                param: "budget",
                allowed: "a configuration of the budget's own kind (a token bucket for \
                          aws-standard, aws-2026 and brooker, a ratio for finagle, ...)",
            });
        }
        config.validate()?;
        self.budget = Some(kind);
        self.budget_config = Some(config);
        Ok(self)
    }

    /// The configuration each client's budget is built from, if the strategy has a budget:
    /// the one [`Strategy::with_budget_config`] set, while [`Strategy::budget`] is still its
    /// kind, and the kind's published defaults otherwise.
    #[must_use]
    pub fn budget_config(&self) -> Option<AnyBudgetConfig> {
        let kind = self.budget?;
        Some(match self.budget_config {
            Some(config) if same_kind(kind, config) => config,
            _ => AnyBudgetConfig::published(kind),
        })
    }

    /// One "no budget" that every client of a run can share, if the strategy has no budget
    /// (so that a client forks no generator for one).
    pub(crate) fn shared_unlimited(&self) -> Option<SimBudget> {
        self.budget.is_none().then_some(None)
    }

    /// The memory one budget of `Strategy::client_budget` takes on the heap: nothing for no
    /// budget, otherwise its reference-counted block and, for the budgets that count over a
    /// sliding window, the window's slots.
    #[must_use]
    pub(crate) fn budget_bytes(&self) -> u64 {
        // An `Rc`'s block holds the strong and weak counts before the value.
        let counts = 2 * size_of::<usize>();
        match self.budget_config() {
            // No budget is `None`: nothing on the heap.
            None => 0,
            Some(config) => {
                block(counts + size_of::<AnyBudget>())
                    + block(window_slots(config) * size_of::<[u64; 2]>())
            }
        }
    }

    /// A new client's budget, drawing (for `sre-adaptive`) from `rng`.
    pub(crate) fn client_budget(&self, rng: SeededRng) -> SimBudget {
        match self.budget_config() {
            // The published defaults are valid, and a configured budget was checked when it
            // was set; a failure here would be a bug in them.
            Some(config) => match config.build(rng) {
                Ok(budget) => Some(Rc::new(budget)),
                Err(_) => None,
            },
            None => None,
        }
    }
}

/// A simulated client's budget: `None` for no budget, which the engine then asks nothing
/// (an `Option`'s budget checks for `None` inline, where a shared "no budget" behind the
/// pointer would cost a dynamic call for every question the engine asks of it).
pub(crate) type SimBudget = Option<Rc<dyn Budget>>;

/// Whether `config` configures a budget of `kind`'s form.
fn same_kind(kind: BudgetKind, config: AnyBudgetConfig) -> bool {
    std::mem::discriminant(&AnyBudgetConfig::published(kind)) == std::mem::discriminant(&config)
}

/// The name of a hedging strategy: `hedge-`, its delay (`p95`, `p99.9`, `10ms`), `x` and its
/// attempts in all.
#[must_use]
pub fn hedging_name(hedging: Hedging) -> String {
    format!("hedge-{}x{}", hedging.delay(), hedging.max_attempts())
}

/// The memory of each client's budget where clients share one "no budget"
/// ([`Strategy::shared_unlimited`]) and each holds its own otherwise.
pub(crate) fn client_budget_bytes(strategy: &Strategy) -> f64 {
    if strategy.budget.is_some() {
        strategy.budget_bytes() as f64
    } else {
        0.0
    }
}

/// The slots of the sliding window a budget counts over, each two counters (stagger-core's
/// `budget::window`, whose slot counts are not public; the tests check these against each
/// budget's `Debug` form).
fn window_slots(config: AnyBudgetConfig) -> usize {
    match config {
        // Ten slots of its TTL.
        AnyBudgetConfig::Ratio(_) => 10,
        // 120 slots of its window.
        AnyBudgetConfig::SreAdaptive(_) => 120,
        // Sixty slots of its window, if it counts over one; by default it counts since
        // creation.
        AnyBudgetConfig::Breaker(b) if b.window().is_some() => 60,
        // Token buckets and the throttle keep counters.
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_slots_are_the_budgets_own() {
        let windowed = stagger_core::budget::Breaker::DEFAULT
            .with_window(Some(std::time::Duration::from_secs(30)));
        let configs = BudgetKind::ALL
            .map(AnyBudgetConfig::published)
            .into_iter()
            .chain([AnyBudgetConfig::Breaker(windowed)]);
        for config in configs {
            let budget = config.build(SeededRng::new(1)).expect("valid");
            let text = format!("{budget:?}");
            // An empty window prints each slot as `[0, 0]`, and its totals once more.
            let empty = text.matches("[0, 0]").count();
            let slots = window_slots(config);
            assert_eq!(empty, slots + usize::from(slots > 0), "{config:?}: {text}");
        }
    }
}
