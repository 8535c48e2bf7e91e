#![doc = include_str!("immediate.md")]

use std::time::Duration;

use super::param::accessors;
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// Retry at once, with no delay. See the [module page](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Immediate {
    max_attempts: u32,
}

impl Immediate {
    /// The defaults: 3 attempts, the most Google SRE advises per request.
    pub const DEFAULT: Self = Self { max_attempts: 3 };

    /// The defaults, [`Immediate::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }
}

accessors!(Immediate {
    /// The most attempts, counting the first (default 3).
    max_attempts: u32 => with_max_attempts, MaxAttempts;
});

impl Default for Immediate {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PolicyConfig for Immediate {
    type Policy<R: Rng> = ImmediatePolicy;

    fn kind(&self) -> PolicyKind {
        PolicyKind::Immediate
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn validate(&self) -> Result<(), ConfigError> {
        error::check_attempts(self.max_attempts)
    }

    fn build<R: Rng>(self, _rng: R) -> Result<ImmediatePolicy, ConfigError> {
        self.validate()?;
        Ok(ImmediatePolicy { config: self })
    }

    fn bounds(&self, _retry: u32) -> Bounds {
        Bounds::exact(Duration::ZERO)
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        self.apply(param)
    }
}

/// The running [`Immediate`] policy, built by [`PolicyConfig::build`]: the checked
/// configuration, with no state and no generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImmediatePolicy {
    config: Immediate,
}

impl ImmediatePolicy {
    /// The configuration it runs.
    #[must_use]
    pub const fn config(&self) -> Immediate {
        self.config
    }
}

impl Policy for ImmediatePolicy {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.config.max_attempts {
            return None;
        }
        Some(Duration::ZERO)
    }
}
