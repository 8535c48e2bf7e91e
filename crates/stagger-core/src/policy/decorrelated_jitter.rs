#![doc = include_str!("decorrelated_jitter.md")]

use std::time::Duration;

use super::curve::{Limit, nanos};
use super::param::accessors;
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// Each delay drawn between `base` and three times the previous one, under the cap.
/// See the [module page](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecorrelatedJitter {
    base: Duration,
    cap: Duration,
    max_attempts: u32,
}

/// How much the band's top grows per retry: three times the previous delay.
const GROWTH: f64 = 3.0;

impl DecorrelatedJitter {
    /// The defaults: a 100 ms floor, a 20 s cap, 8 attempts.
    pub const DEFAULT: Self = Self {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        max_attempts: 8,
    };

    /// The defaults, [`DecorrelatedJitter::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }
}

accessors!(DecorrelatedJitter {
    /// The floor of every draw, and the first "previous delay" (default 100 ms).
    base: Duration => with_base, Base;
    /// The top of every draw's band (default 20 s); at least `base`.
    cap: Duration => with_cap, Cap;
    /// The most attempts, counting the first (default 8).
    max_attempts: u32 => with_max_attempts, MaxAttempts;
});

impl Default for DecorrelatedJitter {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PolicyConfig for DecorrelatedJitter {
    type Policy<R: Rng> = DecorrelatedJitterPolicy<R>;

    fn kind(&self) -> PolicyKind {
        PolicyKind::DecorrelatedJitter
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn validate(&self) -> Result<(), ConfigError> {
        error::check_cap(self.base, self.cap)?;
        error::check_attempts(self.max_attempts)
    }

    fn build<R: Rng>(self, rng: R) -> Result<DecorrelatedJitterPolicy<R>, ConfigError> {
        self.validate()?;
        let base_ns = nanos(self.base);
        Ok(DecorrelatedJitterPolicy {
            base_ns,
            cap_ns: nanos(self.cap),
            cap: Limit::new(self.cap),
            max_attempts: self.max_attempts,
            prev_ns: base_ns,
            rng,
        })
    }

    /// Retry `n` draws from `[base, min(cap, base * 3^n)]`: the top is reached when every
    /// earlier draw was at the top of its band. Both ends are computed with the same
    /// floating-point steps as the draws, so a base too large to be exact in `f64` nanoseconds
    /// (over 104 days) still bounds its draws.
    fn bounds(&self, retry: u32) -> Bounds {
        let (base, cap) = (nanos(self.base), nanos(self.cap));
        let mut top = base;
        let mut n = 0;
        // Each step triples a positive top until the cap: at most about 60 steps.
        while n < retry.max(1) && top > 0.0 && top < cap {
            top *= GROWTH;
            top = if top < cap { top } else { cap };
            n += 1;
        }
        let limit = Limit::new(self.cap);
        Bounds::new(limit.duration(base), limit.duration(top))
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        self.apply(param)
    }
}

/// The running [`DecorrelatedJitter`] policy. It remembers the previous delay.
#[derive(Debug)]
pub struct DecorrelatedJitterPolicy<R> {
    base_ns: f64,
    cap_ns: f64,
    cap: Limit,
    max_attempts: u32,
    prev_ns: f64,
    rng: R,
}

impl<R> DecorrelatedJitterPolicy<R> {
    /// The same policy drawing from `rng`, as built (its previous delay back at the base):
    /// see [`AnyPolicy::with_rng`](super::AnyPolicy::with_rng).
    #[must_use]
    #[inline]
    pub fn with_rng<R2: Rng>(&self, rng: R2) -> DecorrelatedJitterPolicy<R2> {
        DecorrelatedJitterPolicy {
            base_ns: self.base_ns,
            cap_ns: self.cap_ns,
            cap: self.cap,
            max_attempts: self.max_attempts,
            prev_ns: self.base_ns,
            rng,
        }
    }
}

impl<R: Rng> Policy for DecorrelatedJitterPolicy<R> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        if attempt <= 1 {
            self.prev_ns = self.base_ns;
        }
        let top = GROWTH * self.prev_ns;
        let top = if top < self.cap_ns { top } else { self.cap_ns };
        let sleep = self.base_ns + (top - self.base_ns) * self.rng.next_f64();
        self.prev_ns = sleep;
        Some(self.cap.duration(sleep))
    }
}
