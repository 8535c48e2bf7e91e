#![doc = include_str!("decorrelated_jitter_v2.md")]

use std::time::Duration;

use super::curve::{Limit, nanos};
use super::param::accessors;
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// Polly's second decorrelated jitter: retry instants spread around 1, 2, 4, 8… × `base`
/// without the spikes of the first. See the [module page](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecorrelatedJitterV2 {
    base: Duration,
    cap: Duration,
    max_attempts: u32,
}

/// Polly's `RpScalingFactor`: scales the formula so the median first delay is near `base`.
const SCALE: f64 = 1.0 / 1.4;

/// The formula's shape: `2^t * tanh(sqrt(4t))`, increasing in `t`, with `shape(0) = 0`.
///
/// `pow` and `tanh` come from the pure-Rust `libm` crate rather than the platform's C library,
/// whose results may differ in the last bit, so a seed gives the same delays everywhere.
#[inline]
fn shape(t: f64) -> f64 {
    libm::pow(2.0, t) * libm::tanh((4.0 * t).sqrt())
}

impl DecorrelatedJitterV2 {
    /// The defaults: a median first delay near 100 ms, a 20 s cap, 8 attempts.
    pub const DEFAULT: Self = Self {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        max_attempts: 8,
    };

    /// The defaults, [`DecorrelatedJitterV2::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// `shape(t) * base / 1.4`, in nanoseconds, in the order Polly computes it.
    fn scaled(&self, shape: f64) -> f64 {
        shape * SCALE * nanos(self.base)
    }

    fn clamp(&self, ns: f64) -> Duration {
        Limit::new(self.cap).duration(ns)
    }
}

accessors!(DecorrelatedJitterV2 {
    /// The median first delay, roughly (default 100 ms).
    base: Duration => with_base, Base;
    /// The ceiling on a delay, applied after the formula as Polly's `MaxDelay` (default 20 s);
    /// at least `base`.
    cap: Duration => with_cap, Cap;
    /// The most attempts, counting the first (default 8).
    max_attempts: u32 => with_max_attempts, MaxAttempts;
});

impl Default for DecorrelatedJitterV2 {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PolicyConfig for DecorrelatedJitterV2 {
    type Policy<R: Rng> = DecorrelatedJitterV2Policy<R>;

    fn kind(&self) -> PolicyKind {
        PolicyKind::DecorrelatedJitterV2
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn validate(&self) -> Result<(), ConfigError> {
        error::check_cap(self.base, self.cap)?;
        error::check_attempts(self.max_attempts)
    }

    fn build<R: Rng>(self, rng: R) -> Result<DecorrelatedJitterV2Policy<R>, ConfigError> {
        self.validate()?;
        Ok(DecorrelatedJitterV2Policy {
            base_ns: nanos(self.base),
            cap: Limit::new(self.cap),
            max_attempts: self.max_attempts,
            prev: 0.0,
            rng,
        })
    }

    /// Retry `n` lies in `[0, (shape(n) - shape(n - 2)) * base / 1.4]` (the first retry in
    /// `[0, shape(1) * base / 1.4]`), capped. Far out (from retry 1025 on, where `2^n`
    /// overflows) the band's top is the cap, which is also what the policy answers there.
    fn bounds(&self, retry: u32) -> Bounds {
        let n = f64::from(retry.max(1));
        let top = self.scaled(shape(n) - shape((n - 2.0).max(0.0)));
        let top = if top.is_finite() {
            self.clamp(top)
        } else {
            self.cap
        };
        Bounds::new(Duration::ZERO, top)
    }

    /// The delays telescope: the first `N` add up to `shape(t_N) * base / 1.4` with `t_N` in
    /// `[N - 1, N)`. That band is exact while the cap never binds.
    fn window_bounds(&self, retries: u32) -> Option<Bounds> {
        if retries == 0 {
            return Some(Bounds::exact(Duration::ZERO));
        }
        let n = f64::from(retries);
        let largest = self.scaled(shape(n) - shape((n - 2.0).max(0.0)));
        if !largest.is_finite() || largest >= nanos(self.cap) {
            return None;
        }
        // Each delay is truncated to whole nanoseconds, so the sum may fall short by `retries`
        // ns; the floating-point sum may drift from the telescoped value by a few ulps per term.
        let slack = n + 4e-16 * n * self.scaled(shape(n));
        let lo = self.scaled(shape(n - 1.0)) - slack;
        let hi = self.scaled(shape(n)) + slack;
        let unbounded = Limit::new(Duration::MAX);
        Some(Bounds::new(unbounded.duration(lo), unbounded.duration(hi)))
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        self.apply(param)
    }
}

/// The running [`DecorrelatedJitterV2`] policy. It remembers where the previous retry fell on
/// the formula's curve.
#[derive(Debug)]
pub struct DecorrelatedJitterV2Policy<R> {
    base_ns: f64,
    cap: Limit,
    max_attempts: u32,
    prev: f64,
    rng: R,
}

impl<R> DecorrelatedJitterV2Policy<R> {
    /// The same policy drawing from `rng`, as built (back at the start of the curve): see
    /// [`AnyPolicy::with_rng`](super::AnyPolicy::with_rng).
    #[must_use]
    #[inline]
    pub fn with_rng<R2: Rng>(&self, rng: R2) -> DecorrelatedJitterV2Policy<R2> {
        DecorrelatedJitterV2Policy {
            base_ns: self.base_ns,
            cap: self.cap,
            max_attempts: self.max_attempts,
            prev: 0.0,
            rng,
        }
    }
}

impl<R: Rng> Policy for DecorrelatedJitterV2Policy<R> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        if attempt <= 1 {
            self.prev = 0.0;
        }
        let t = f64::from(attempt.max(1) - 1) + self.rng.next_f64();
        let next = shape(t);
        let delay = (next - self.prev) * SCALE * self.base_ns;
        self.prev = next;
        if delay.is_nan() {
            // Far out, `next` and `prev` are both infinite. Polly answers its maximum there;
            // so do we. (A zero base times an infinite difference lands here too.)
            return Some(if self.base_ns == 0.0 {
                Duration::ZERO
            } else {
                self.cap.max()
            });
        }
        Some(self.cap.duration(delay))
    }
}
