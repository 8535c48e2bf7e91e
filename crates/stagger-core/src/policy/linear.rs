#![doc = include_str!("linear.md")]

use std::time::Duration;

use super::param::accessors;
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// A delay that grows by `base` with each retry, up to `cap`. See the [module page](self).
///
/// It has no state and draws nothing: its running policy, [`LinearPolicy`], is the checked
/// configuration itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Linear {
    base: Duration,
    cap: Duration,
    max_attempts: u32,
}

impl Linear {
    /// The defaults: 100 ms steps, a 10 s cap, 8 attempts.
    pub const DEFAULT: Self = Self {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(10),
        max_attempts: 8,
    };

    /// The defaults, [`Linear::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    #[inline]
    fn delay(&self, retry: u32) -> Duration {
        let steps = if retry == 0 { 1 } else { retry };
        let d = self.base.saturating_mul(steps);
        if d < self.cap { d } else { self.cap }
    }
}

accessors!(Linear {
    /// The first delay and the step added per retry (default 100 ms).
    base: Duration => with_base, Base;
    /// The ceiling on a delay (default 10 s); at least `base`.
    cap: Duration => with_cap, Cap;
    /// The most attempts, counting the first (default 8).
    max_attempts: u32 => with_max_attempts, MaxAttempts;
});

impl Default for Linear {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PolicyConfig for Linear {
    type Policy<R: Rng> = LinearPolicy;

    fn kind(&self) -> PolicyKind {
        PolicyKind::Linear
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn validate(&self) -> Result<(), ConfigError> {
        error::check_cap(self.base, self.cap)?;
        error::check_attempts(self.max_attempts)
    }

    fn build<R: Rng>(self, _rng: R) -> Result<LinearPolicy, ConfigError> {
        self.validate()?;
        Ok(LinearPolicy { config: self })
    }

    fn bounds(&self, retry: u32) -> Bounds {
        Bounds::exact(self.delay(retry))
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        self.apply(param)
    }
}

/// The running [`Linear`] policy, built by [`PolicyConfig::build`]: the checked
/// configuration, with no state and no generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearPolicy {
    config: Linear,
}

impl LinearPolicy {
    /// The configuration it runs.
    #[must_use]
    pub const fn config(&self) -> Linear {
        self.config
    }
}

impl Policy for LinearPolicy {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.config.max_attempts {
            return None;
        }
        Some(self.config.delay(attempt))
    }
}
