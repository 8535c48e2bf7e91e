#![doc = include_str!("exponential_full_jitter.md")]

use std::time::Duration;

use super::PolicyKind;
use super::backoff::{Backoff, Jitter, private::Sealed};

/// A uniform draw between zero and the capped exponential ceiling. See the [module page](self).
pub type ExponentialFullJitter = Backoff<FullJitter>;

/// The running [`ExponentialFullJitter`] policy.
pub type ExponentialFullJitterPolicy<R> = super::BackoffPolicy<FullJitter, R>;

/// `U(0, v)`: anywhere from zero to the ceiling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FullJitter;

impl Sealed for FullJitter {}

impl Jitter for FullJitter {
    const KIND: PolicyKind = PolicyKind::ExponentialFullJitter;
    const DEFAULT: ExponentialFullJitter = ExponentialFullJitter {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        factor: 2.0,
        max_attempts: 8,
        jitter: FullJitter,
    };
    const DRAWS: bool = true;

    #[inline(always)]
    fn jitter(&self, v: f64, u: f64) -> f64 {
        v * u
    }
}
