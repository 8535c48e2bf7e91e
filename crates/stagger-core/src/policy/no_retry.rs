#![doc = include_str!("no_retry.md")]

use std::time::Duration;

use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::Rng;

/// Never retry: one attempt, whatever the failure. See the [module page](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoRetry;

impl NoRetry {
    /// The only configuration there is.
    #[must_use]
    pub const fn new() -> Self {
        Self
    }
}

impl PolicyConfig for NoRetry {
    type Policy<R: Rng> = NoRetryPolicy;

    fn kind(&self) -> PolicyKind {
        PolicyKind::NoRetry
    }

    fn max_attempts(&self) -> u32 {
        1
    }

    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }

    fn build<R: Rng>(self, _rng: R) -> Result<NoRetryPolicy, ConfigError> {
        Ok(NoRetryPolicy)
    }

    fn bounds(&self, _retry: u32) -> Bounds {
        Bounds::exact(Duration::ZERO)
    }

    /// Only `max_attempts = 1`, its own value, is accepted; every other parameter does not
    /// apply.
    fn set(self, param: Param) -> Result<Self, ConfigError> {
        match param {
            Param::MaxAttempts(1) => Ok(self),
            other => Err(other.not_applicable(PolicyKind::NoRetry)),
        }
    }
}

/// The running [`NoRetry`] policy: it gives up after every failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoRetryPolicy;

impl Policy for NoRetryPolicy {
    #[inline]
    fn next_delay(&mut self, _attempt: u32, _failure: &Failure) -> Option<Duration> {
        None
    }
}
