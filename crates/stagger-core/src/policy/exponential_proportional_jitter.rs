#![doc = include_str!("exponential_proportional_jitter.md")]

use std::time::Duration;

use super::PolicyKind;
use super::backoff::{Backoff, Jitter, private::Sealed};
use crate::error::{self, ConfigError};

/// The capped exponential ceiling, scaled by a uniform factor in `[1 - r, 1 + r]`.
/// See the [module page](self).
pub type ExponentialProportionalJitter = Backoff<ProportionalJitter>;

/// The running [`ExponentialProportionalJitter`] policy.
pub type ExponentialProportionalJitterPolicy<R> = super::BackoffPolicy<ProportionalJitter, R>;

/// `v * U(1 - r, 1 + r)`: a symmetric band around the ceiling, applied after the cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProportionalJitter {
    r: f64,
}

impl ProportionalJitter {
    /// The half-width `r` of the band, as a fraction of the ceiling.
    #[must_use]
    pub const fn jitter(&self) -> f64 {
        self.r
    }
}

impl Sealed for ProportionalJitter {}

impl Jitter for ProportionalJitter {
    const KIND: PolicyKind = PolicyKind::ExponentialProportionalJitter;
    const DEFAULT: ExponentialProportionalJitter = ExponentialProportionalJitter {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        factor: 2.0,
        max_attempts: 8,
        jitter: ProportionalJitter { r: 0.2 },
    };
    const DRAWS: bool = true;
    const MAY_EXCEED_CAP: bool = true;

    #[inline(always)]
    fn jitter(&self, v: f64, u: f64) -> f64 {
        v * ((1.0 - self.r) + 2.0 * self.r * u)
    }

    #[inline(always)]
    fn validate(&self) -> Result<(), ConfigError> {
        error::check_jitter("jitter", self.r)
    }

    fn with_jitter(self, r: f64) -> Option<Self> {
        Some(Self { r })
    }
}

impl ExponentialProportionalJitter {
    /// Sets the half-width `r` of the band (default 0.2, as gRPC), in `[0, 1]`; 0 turns jitter
    /// off.
    #[must_use]
    pub const fn with_jitter(mut self, r: f64) -> Self {
        self.jitter = ProportionalJitter { r };
        self
    }

    /// The half-width `r` of the band.
    #[must_use]
    pub const fn jitter(&self) -> f64 {
        self.jitter.r
    }
}
