#![doc = include_str!("exponential_subtractive_jitter.md")]

use std::time::Duration;

use super::PolicyKind;
use super::backoff::{Backoff, Jitter, private::Sealed};
use crate::error::{self, ConfigError};

/// The capped exponential ceiling, less a random fraction of at most `jitter`. It never
/// exceeds the published schedule. See the [module page](self).
pub type ExponentialSubtractiveJitter = Backoff<SubtractiveJitter>;

/// The running [`ExponentialSubtractiveJitter`] policy.
pub type ExponentialSubtractiveJitterPolicy<R> = super::BackoffPolicy<SubtractiveJitter, R>;

/// `v * (1 - jitter * U(0, 1))`: the band from `(1 - jitter) * v` up to `v`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubtractiveJitter {
    jitter: f64,
}

impl SubtractiveJitter {
    /// The fraction of each delay that may be removed.
    #[must_use]
    pub const fn jitter(&self) -> f64 {
        self.jitter
    }
}

impl Sealed for SubtractiveJitter {}

impl Jitter for SubtractiveJitter {
    const KIND: PolicyKind = PolicyKind::ExponentialSubtractiveJitter;
    const DEFAULT: ExponentialSubtractiveJitter = ExponentialSubtractiveJitter {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        factor: 2.0,
        max_attempts: 8,
        jitter: SubtractiveJitter { jitter: 0.2 },
    };
    const DRAWS: bool = true;

    #[inline(always)]
    fn jitter(&self, v: f64, u: f64) -> f64 {
        v * (1.0 - self.jitter * u)
    }

    #[inline(always)]
    fn validate(&self) -> Result<(), ConfigError> {
        error::check_jitter("jitter", self.jitter)
    }

    fn with_jitter(self, jitter: f64) -> Option<Self> {
        Some(Self { jitter })
    }
}

impl ExponentialSubtractiveJitter {
    /// Sets the fraction of each delay that may be removed (default 0.2), in `[0, 1]`; 0 turns
    /// jitter off and makes the schedule exact.
    #[must_use]
    pub const fn with_jitter(mut self, jitter: f64) -> Self {
        self.jitter = SubtractiveJitter { jitter };
        self
    }

    /// The fraction of each delay that may be removed.
    #[must_use]
    pub const fn jitter(&self) -> f64 {
        self.jitter.jitter
    }
}
