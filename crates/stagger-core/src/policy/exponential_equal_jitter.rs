#![doc = include_str!("exponential_equal_jitter.md")]

use std::time::Duration;

use super::PolicyKind;
use super::backoff::{Backoff, Jitter, private::Sealed};

/// Half the capped exponential ceiling, plus a uniform draw over the other half.
/// See the [module page](self).
pub type ExponentialEqualJitter = Backoff<EqualJitter>;

/// The running [`ExponentialEqualJitter`] policy.
pub type ExponentialEqualJitterPolicy<R> = super::BackoffPolicy<EqualJitter, R>;

/// `v/2 + U(0, v/2)`: the upper half of the ceiling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EqualJitter;

impl Sealed for EqualJitter {}

impl Jitter for EqualJitter {
    const KIND: PolicyKind = PolicyKind::ExponentialEqualJitter;
    const DEFAULT: ExponentialEqualJitter = ExponentialEqualJitter {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        factor: 2.0,
        max_attempts: 8,
        jitter: EqualJitter,
    };
    const DRAWS: bool = true;

    #[inline(always)]
    fn jitter(&self, v: f64, u: f64) -> f64 {
        let half = 0.5 * v;
        half + half * u
    }
}
