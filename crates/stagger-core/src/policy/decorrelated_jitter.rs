#![doc = include_str!("decorrelated_jitter.md")]

use super::curve::{Limit, nanos};
use super::decorrelated::{Decorrelated, DecorrelatedPolicy, Walk, private::Sealed};
use super::{Bounds, PolicyKind};

/// Each delay drawn between `base` and three times the previous one, under the cap.
/// See the [module page](self).
pub type DecorrelatedJitter = Decorrelated<Tripling>;

/// The running [`DecorrelatedJitter`] policy. It remembers the previous delay.
pub type DecorrelatedJitterPolicy<R> = DecorrelatedPolicy<Tripling, R>;

/// `U(base, min(cap, 3 * prev))`: the band's top triples the previous delay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tripling;

/// How much the band's top grows per retry: three times the previous delay.
const GROWTH: f64 = 3.0;

impl Sealed for Tripling {}

impl Walk for Tripling {
    const KIND: PolicyKind = PolicyKind::DecorrelatedJitter;
    const WALK: Self = Self;

    /// The first "previous delay" is the base.
    fn start(base_ns: f64) -> f64 {
        base_ns
    }

    #[inline]
    fn step(prev: &mut f64, _attempt: u32, u: f64, base_ns: f64, cap_ns: f64) -> f64 {
        let top = GROWTH * *prev;
        let top = if top < cap_ns { top } else { cap_ns };
        let sleep = base_ns + (top - base_ns) * u;
        *prev = sleep;
        sleep
    }

    /// Retry `n` draws from `[base, min(cap, base * 3^n)]`: the top is reached when every
    /// earlier draw was at the top of its band. Both ends are computed with the same
    /// floating-point steps as the draws, so a base too large to be exact in `f64` nanoseconds
    /// (over 104 days) still bounds its draws.
    fn bounds(config: &DecorrelatedJitter, retry: u32) -> Bounds {
        let (base, cap) = (nanos(config.base()), nanos(config.cap()));
        let mut top = base;
        let mut n = 0;
        // Each step triples a positive top until the cap: at most about 60 steps.
        while n < retry.max(1) && top > 0.0 && top < cap {
            top *= GROWTH;
            top = if top < cap { top } else { cap };
            n += 1;
        }
        let limit = Limit::new(config.cap());
        Bounds::new(limit.duration(base), limit.duration(top))
    }
}
