//! Any policy of the catalog, chosen at run time by name.

use std::time::Duration;

use super::{
    BackoffPolicy, Bounds, DecorrelatedJitter, DecorrelatedJitterPolicy, DecorrelatedJitterV2,
    DecorrelatedJitterV2Policy, Exponential, ExponentialEqualJitter, ExponentialFullJitter,
    ExponentialProportionalJitter, ExponentialSubtractiveJitter, Immediate, Linear, NoRetry, Param,
    Policy, PolicyConfig, PolicyKind, constant::Constant, constant::ConstantPolicy,
    exponential::NoJitter, exponential_equal_jitter::EqualJitter,
    exponential_full_jitter::FullJitter, exponential_proportional_jitter::ProportionalJitter,
    exponential_subtractive_jitter::SubtractiveJitter, immediate::ImmediatePolicy,
    linear::LinearPolicy, no_retry::NoRetryPolicy,
};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::Rng;

/// Applies `$body` to the configuration inside any variant of an enum over the catalog,
/// rewrapping the result with `$wrap` when it is given.
macro_rules! each_policy {
    ($enum:ident, $value:expr, $inner:ident => $body:expr) => {
        match $value {
            $enum::Constant($inner) => $body,
            $enum::Linear($inner) => $body,
            $enum::Exponential($inner) => $body,
            $enum::ExponentialFullJitter($inner) => $body,
            $enum::ExponentialEqualJitter($inner) => $body,
            $enum::DecorrelatedJitter($inner) => $body,
            $enum::DecorrelatedJitterV2($inner) => $body,
            $enum::ExponentialSubtractiveJitter($inner) => $body,
            $enum::ExponentialProportionalJitter($inner) => $body,
            $enum::Immediate($inner) => $body,
            $enum::NoRetry($inner) => $body,
        }
    };
    ($enum:ident, $value:expr, $inner:ident => $body:expr, wrap $out:ident) => {
        match $value {
            $enum::Constant($inner) => $out::Constant($body),
            $enum::Linear($inner) => $out::Linear($body),
            $enum::Exponential($inner) => $out::Exponential($body),
            $enum::ExponentialFullJitter($inner) => $out::ExponentialFullJitter($body),
            $enum::ExponentialEqualJitter($inner) => $out::ExponentialEqualJitter($body),
            $enum::DecorrelatedJitter($inner) => $out::DecorrelatedJitter($body),
            $enum::DecorrelatedJitterV2($inner) => $out::DecorrelatedJitterV2($body),
            $enum::ExponentialSubtractiveJitter($inner) => {
                $out::ExponentialSubtractiveJitter($body)
            }
            $enum::ExponentialProportionalJitter($inner) => {
                $out::ExponentialProportionalJitter($body)
            }
            $enum::Immediate($inner) => $out::Immediate($body),
            $enum::NoRetry($inner) => $out::NoRetry($body),
        }
    };
}

/// The configuration of any policy in the catalog.
///
/// Use it where the policy is chosen at run time: from a name, a preset, a command line or a
/// configuration file. Parameters are changed with [`set`](AnyConfig::set), which refuses a
/// parameter the policy does not have.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::{AnyConfig, Param, PolicyConfig, PolicyKind};
///
/// let config = AnyConfig::from(PolicyKind::ExponentialFullJitter)
///     .set(Param::Base(Duration::from_millis(50)))?
///     .set(Param::MaxAttempts(4))?;
/// config.validate()?;
/// assert_eq!(config.max_attempts(), 4);
/// assert_eq!(config.bounds(3).max, Duration::from_millis(200));
///
/// let refused = AnyConfig::from(PolicyKind::Constant).set(Param::Factor(3.0));
/// assert_eq!(
///     refused.unwrap_err().to_string(),
///     "factor does not apply to the constant policy"
/// );
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
#[allow(missing_docs)] // Each variant is the policy of the same name.
pub enum AnyConfig {
    Constant(Constant),
    Linear(Linear),
    Exponential(Exponential),
    ExponentialFullJitter(ExponentialFullJitter),
    ExponentialEqualJitter(ExponentialEqualJitter),
    DecorrelatedJitter(DecorrelatedJitter),
    DecorrelatedJitterV2(DecorrelatedJitterV2),
    ExponentialSubtractiveJitter(ExponentialSubtractiveJitter),
    ExponentialProportionalJitter(ExponentialProportionalJitter),
    Immediate(Immediate),
    NoRetry(NoRetry),
}

/// A running policy of any kind in the catalog, built from an [`AnyConfig`].
#[derive(Debug)]
#[non_exhaustive]
#[allow(missing_docs)] // Each variant is the running policy of the same name.
pub enum AnyPolicy<R> {
    Constant(ConstantPolicy),
    Linear(LinearPolicy),
    Exponential(BackoffPolicy<NoJitter, R>),
    ExponentialFullJitter(BackoffPolicy<FullJitter, R>),
    ExponentialEqualJitter(BackoffPolicy<EqualJitter, R>),
    DecorrelatedJitter(DecorrelatedJitterPolicy<R>),
    DecorrelatedJitterV2(DecorrelatedJitterV2Policy<R>),
    ExponentialSubtractiveJitter(BackoffPolicy<SubtractiveJitter, R>),
    ExponentialProportionalJitter(BackoffPolicy<ProportionalJitter, R>),
    Immediate(ImmediatePolicy),
    NoRetry(NoRetryPolicy),
}

/// Every policy of the catalog is a [`PolicyConfig`], and so is the choice between them.
impl PolicyConfig for AnyConfig {
    type Policy<R: Rng> = AnyPolicy<R>;

    fn kind(&self) -> PolicyKind {
        each_policy!(Self, self, c => c.kind())
    }

    fn max_attempts(&self) -> u32 {
        each_policy!(Self, self, c => c.max_attempts())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        each_policy!(Self, self, c => c.validate())
    }

    fn build<R: Rng>(self, rng: R) -> Result<AnyPolicy<R>, ConfigError> {
        Ok(each_policy!(Self, self, c => c.build(rng)?, wrap AnyPolicy))
    }

    fn bounds(&self, retry: u32) -> Bounds {
        each_policy!(Self, self, c => c.bounds(retry))
    }

    fn window_bounds(&self, retries: u32) -> Option<Bounds> {
        each_policy!(Self, self, c => c.window_bounds(retries))
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        Ok(each_policy!(Self, self, c => c.set(param)?, wrap Self))
    }
}

impl Default for AnyConfig {
    /// `exponential-full-jitter` at its defaults: the catalog's default for a fleet.
    fn default() -> Self {
        Self::from(PolicyKind::ExponentialFullJitter)
    }
}

impl std::fmt::Display for AnyConfig {
    /// The catalog name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind().name())
    }
}

impl From<PolicyKind> for AnyConfig {
    /// The policy's default configuration.
    fn from(kind: PolicyKind) -> Self {
        match kind {
            PolicyKind::Constant => Self::Constant(Constant::new()),
            PolicyKind::Linear => Self::Linear(Linear::new()),
            PolicyKind::Exponential => Self::Exponential(Exponential::new()),
            PolicyKind::ExponentialFullJitter => {
                Self::ExponentialFullJitter(ExponentialFullJitter::new())
            }
            PolicyKind::ExponentialEqualJitter => {
                Self::ExponentialEqualJitter(ExponentialEqualJitter::new())
            }
            PolicyKind::DecorrelatedJitter => Self::DecorrelatedJitter(DecorrelatedJitter::new()),
            PolicyKind::DecorrelatedJitterV2 => {
                Self::DecorrelatedJitterV2(DecorrelatedJitterV2::new())
            }
            PolicyKind::ExponentialSubtractiveJitter => {
                Self::ExponentialSubtractiveJitter(ExponentialSubtractiveJitter::new())
            }
            PolicyKind::ExponentialProportionalJitter => {
                Self::ExponentialProportionalJitter(ExponentialProportionalJitter::new())
            }
            PolicyKind::Immediate => Self::Immediate(Immediate::new()),
            PolicyKind::NoRetry => Self::NoRetry(NoRetry::new()),
        }
    }
}

macro_rules! from_config {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(
            impl From<$ty> for AnyConfig {
                fn from(config: $ty) -> Self {
                    Self::$variant(config)
                }
            }
        )*
    };
}

from_config!(
    Constant(Constant),
    Linear(Linear),
    Exponential(Exponential),
    ExponentialFullJitter(ExponentialFullJitter),
    ExponentialEqualJitter(ExponentialEqualJitter),
    DecorrelatedJitter(DecorrelatedJitter),
    DecorrelatedJitterV2(DecorrelatedJitterV2),
    ExponentialSubtractiveJitter(ExponentialSubtractiveJitter),
    ExponentialProportionalJitter(ExponentialProportionalJitter),
    Immediate(Immediate),
    NoRetry(NoRetry),
);

impl std::str::FromStr for AnyConfig {
    type Err = ConfigError;

    /// The default configuration of the policy with this catalog name.
    fn from_str(name: &str) -> Result<Self, ConfigError> {
        name.parse::<PolicyKind>().map(Self::from)
    }
}

impl<R> AnyPolicy<R> {
    /// The same policy, as built from its configuration, drawing from `rng` instead.
    ///
    /// This is how many clients of one configuration each get a policy of their own without
    /// building it again for every client: build one with [`PolicyConfig::build`], which
    /// checks the configuration and precomputes the curve, then hand each client a copy with
    /// its own generator. A copy starts afresh: the state a decorrelated policy keeps between
    /// attempts (its previous delay) is the built one, not the state `self` reached. The
    /// generator is the only thing that differs, so two copies given generators seeded alike
    /// draw the same delays, and copies given the same generator's clones would move in
    /// lockstep: give each its own.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::{AnyConfig, Failure, Policy, PolicyConfig, PolicyKind, SeededRng};
    ///
    /// let config = AnyConfig::from(PolicyKind::DecorrelatedJitter);
    /// let template = config.build(SeededRng::new(0))?;
    /// let mut copy = template.with_rng(SeededRng::new(7));
    /// let mut built = config.build(SeededRng::new(7))?;
    /// for attempt in 1..6 {
    ///     let failure = Failure::Timeout;
    ///     assert_eq!(copy.next_delay(attempt, &failure), built.next_delay(attempt, &failure));
    /// }
    /// # Ok::<(), stagger_core::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_rng<R2: Rng>(&self, rng: R2) -> AnyPolicy<R2> {
        match self {
            Self::Constant(p) => AnyPolicy::Constant(*p),
            Self::Linear(p) => AnyPolicy::Linear(*p),
            Self::Exponential(p) => AnyPolicy::Exponential(p.with_rng(rng)),
            Self::ExponentialFullJitter(p) => AnyPolicy::ExponentialFullJitter(p.with_rng(rng)),
            Self::ExponentialEqualJitter(p) => AnyPolicy::ExponentialEqualJitter(p.with_rng(rng)),
            Self::DecorrelatedJitter(p) => AnyPolicy::DecorrelatedJitter(p.with_rng(rng)),
            Self::DecorrelatedJitterV2(p) => AnyPolicy::DecorrelatedJitterV2(p.with_rng(rng)),
            Self::ExponentialSubtractiveJitter(p) => {
                AnyPolicy::ExponentialSubtractiveJitter(p.with_rng(rng))
            }
            Self::ExponentialProportionalJitter(p) => {
                AnyPolicy::ExponentialProportionalJitter(p.with_rng(rng))
            }
            Self::Immediate(p) => AnyPolicy::Immediate(*p),
            Self::NoRetry(p) => AnyPolicy::NoRetry(*p),
        }
    }
}

impl<R: Rng> Policy for AnyPolicy<R> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        each_policy!(Self, self, p => p.next_delay(attempt, failure))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// A copy made with [`AnyPolicy::with_rng`] draws what a policy built from the same
    /// configuration with the same generator draws, even when the template has been used
    /// (and a decorrelated one has moved away from its start).
    #[test]
    fn a_copy_with_a_generator_is_the_policy_built_with_it() {
        let failures = [Failure::Timeout, Failure::Retryable, Failure::Timeout];
        for kind in PolicyKind::ALL {
            // Past the default attempt limits, where no-retry (which has none) allows it. The
            // copies start at attempt 3, where a decorrelated policy uses the state it kept.
            let config = AnyConfig::from(kind);
            let config = config.set(Param::MaxAttempts(12)).unwrap_or(config);
            let mut template = config.build(SeededRng::new(1)).expect("valid");
            for attempt in 1..8 {
                let _ = template.next_delay(attempt, &Failure::Timeout);
            }
            for seed in [0, 7, u64::MAX] {
                let mut copy = template.with_rng(SeededRng::new(seed));
                let mut built = config.build(SeededRng::new(seed)).expect("valid");
                for (i, attempt) in (3..14).chain(1..5).enumerate() {
                    let failure = &failures[i % failures.len()];
                    assert_eq!(
                        copy.next_delay(attempt, failure),
                        built.next_delay(attempt, failure),
                        "{kind:?}, seed {seed}, attempt {attempt}"
                    );
                }
            }
        }
    }
}
