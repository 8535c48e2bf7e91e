#![doc = include_str!("constant.md")]

use std::time::Duration;

use super::param::accessors;
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// The same delay before every retry. See the [module page](self).
///
/// It has no state and draws nothing: its running policy, [`ConstantPolicy`], is the checked
/// configuration itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constant {
    base: Duration,
    max_attempts: u32,
}

impl Constant {
    /// The catalog's defaults: 100 ms, 8 attempts (a patience of 700 ms).
    pub const DEFAULT: Self = Self {
        base: Duration::from_millis(100),
        max_attempts: 8,
    };

    /// The defaults, [`Constant::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// The total patience: `base * (max_attempts - 1)`, saturating.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::policy::Constant;
    /// assert_eq!(Constant::new().patience(), Duration::from_millis(700));
    /// ```
    #[must_use]
    pub const fn patience(&self) -> Duration {
        self.base
            .saturating_mul(self.max_attempts.saturating_sub(1))
    }
}

accessors!(Constant {
    /// The delay before every retry (default 100 ms). Zero is allowed: it retries at once.
    base: Duration => with_base, Base;
    /// The most attempts, counting the first (default 8).
    max_attempts: u32 => with_max_attempts, MaxAttempts;
});

impl Default for Constant {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PolicyConfig for Constant {
    type Policy<R: Rng> = ConstantPolicy;

    fn kind(&self) -> PolicyKind {
        PolicyKind::Constant
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn validate(&self) -> Result<(), ConfigError> {
        error::check_attempts(self.max_attempts)
    }

    fn build<R: Rng>(self, _rng: R) -> Result<ConstantPolicy, ConfigError> {
        self.validate()?;
        Ok(ConstantPolicy { config: self })
    }

    fn bounds(&self, _retry: u32) -> Bounds {
        Bounds::exact(self.base)
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        self.apply(param)
    }
}

/// The running [`Constant`] policy, built by [`PolicyConfig::build`]: the checked
/// configuration, with no state and no generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantPolicy {
    config: Constant,
}

impl ConstantPolicy {
    /// The configuration it runs.
    #[must_use]
    pub const fn config(&self) -> Constant {
        self.config
    }
}

impl Policy for ConstantPolicy {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.config.max_attempts {
            return None;
        }
        Some(self.config.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SeededRng;

    #[test]
    fn asking_twice_gives_the_same_answer() {
        let mut policy = Constant::new().build(SeededRng::new(1)).unwrap();
        for attempt in 1..8 {
            let first = policy.next_delay(attempt, &Failure::Retryable);
            let second = policy.next_delay(attempt, &Failure::Retryable);
            assert_eq!(first, Some(Duration::from_millis(100)));
            assert_eq!(first, second);
        }
        assert_eq!(policy.next_delay(8, &Failure::Retryable), None);
    }

    #[test]
    fn permanent_failures_give_up_whatever_the_budget() {
        let mut policy = Constant::new().build(SeededRng::new(0)).unwrap();
        assert_eq!(policy.next_delay(1, &Failure::Permanent), None);
    }
}
