#![doc = include_str!("exponential.md")]

use std::time::Duration;

use super::PolicyKind;
use super::backoff::{Backoff, Jitter, private::Sealed};

/// A delay that doubles (by default) with each retry, up to `cap`, with no randomness.
/// See the [module page](self).
pub type Exponential = Backoff<NoJitter>;

/// The running [`Exponential`] policy.
pub type ExponentialPolicy<R> = super::BackoffPolicy<NoJitter, R>;

/// The ceiling itself: no jitter, no draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoJitter;

impl Sealed for NoJitter {}

impl Jitter for NoJitter {
    const KIND: PolicyKind = PolicyKind::Exponential;
    const DEFAULT: Exponential = Exponential {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        factor: 2.0,
        max_attempts: 8,
        jitter: NoJitter,
    };
    const DRAWS: bool = false;

    #[inline(always)]
    fn jitter(&self, v: f64, _u: f64) -> f64 {
        v
    }
}
