//! The exponential family: one capped curve, `min(cap, base * factor^(n-1))`, and a choice of
//! how to jitter each delay below or around it.
//!
//! [`Exponential`](super::Exponential), [`ExponentialFullJitter`](super::ExponentialFullJitter),
//! [`ExponentialEqualJitter`](super::ExponentialEqualJitter),
//! [`ExponentialSubtractiveJitter`](super::ExponentialSubtractiveJitter) and
//! [`ExponentialProportionalJitter`](super::ExponentialProportionalJitter) are all a
//! [`Backoff`] with a different [`Jitter`]. They share their parameters, their validation and
//! their running type, [`BackoffPolicy`]; each policy's file holds only its jitter, its defaults
//! and its page. The pair is named as every policy's is: the configuration bears the plain name
//! ([`Backoff`], as [`Constant`](super::Constant)), the running policy adds `Policy`
//! ([`BackoffPolicy`], as [`ConstantPolicy`](super::ConstantPolicy)); each member's alias
//! follows suit (`ExponentialFullJitter` builds an `ExponentialFullJitterPolicy`).

use std::fmt;
use std::time::Duration;

use super::curve::{Curve, Limit};
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// How a policy of the exponential family jitters a delay around the curve's ceiling `v`: the
/// randomness of a backoff schedule (the dispersal above a server's wait is
/// [`Dispersal`](crate::engine::Dispersal)).
///
/// The trait is sealed: the catalog's jitters are the ones this crate implements.
pub trait Jitter: Copy + fmt::Debug + PartialEq + private::Sealed {
    /// The policy's entry in the catalog.
    const KIND: PolicyKind;

    /// The policy's default configuration.
    const DEFAULT: Backoff<Self>;

    /// Whether [`jitter`](Jitter::jitter) uses its draw. A jitter that does not is the identity:
    /// its policy never touches its generator and computes the ceiling exactly.
    const DRAWS: bool;

    /// Whether a jittered delay may exceed the cap (proportional jitter multiplies after capping).
    const MAY_EXCEED_CAP: bool = false;

    /// The delay in nanoseconds for ceiling `v` (nanoseconds) and a uniform draw `u` in `[0, 1)`.
    ///
    /// It is monotonic in `u`, so `u = 0` and `u = 1` give the ends of the band.
    fn jitter(&self, v: f64, u: f64) -> f64;

    /// Checks the jitter's own parameter, if it has one.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] for an out-of-range jitter fraction.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }

    /// This jitter with its fraction changed, or `None` if it has none.
    fn with_jitter(self, jitter: f64) -> Option<Self> {
        let _ = jitter;
        None
    }
}

pub(crate) mod private {
    /// Keeps [`Jitter`](super::Jitter) implementable only by this crate.
    pub trait Sealed {}
}

/// The configuration of an exponential-family policy: the curve's parameters and the jitter.
///
/// Use it through the catalog's names, such as
/// [`ExponentialFullJitter`](super::ExponentialFullJitter).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff<S> {
    pub(crate) base: Duration,
    pub(crate) cap: Duration,
    pub(crate) factor: f64,
    pub(crate) max_attempts: u32,
    pub(crate) jitter: S,
}

impl<S: Jitter> Backoff<S> {
    /// The policy's defaults, as its page lists them.
    #[must_use]
    pub const fn new() -> Self {
        S::DEFAULT
    }

    /// Sets the ceiling before the first retry. Zero is allowed: every delay is then zero.
    #[must_use]
    pub const fn with_base(mut self, base: Duration) -> Self {
        self.base = base;
        self
    }

    /// Sets the cap on the ceiling. It must be at least `base`.
    #[must_use]
    pub const fn with_cap(mut self, cap: Duration) -> Self {
        self.cap = cap;
        self
    }

    /// Sets the growth of the ceiling per retry. It must be finite and above 0.
    #[must_use]
    pub const fn with_factor(mut self, factor: f64) -> Self {
        self.factor = factor;
        self
    }

    /// Sets the most attempts, counting the first. It must be at least 1.
    #[must_use]
    pub const fn with_max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// The ceiling before the first retry.
    #[must_use]
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// The cap on the ceiling.
    #[must_use]
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// The growth of the ceiling per retry.
    #[must_use]
    pub const fn factor(&self) -> f64 {
        self.factor
    }

    /// The jitter and its parameter.
    #[must_use]
    pub const fn jitter_kind(&self) -> S {
        self.jitter
    }

    #[inline(always)]
    fn curve(&self) -> Curve {
        Curve::new(self.base, self.factor, self.cap)
    }
}

impl<S: Jitter> Default for Backoff<S> {
    fn default() -> Self {
        S::DEFAULT
    }
}

impl<S: Jitter> PolicyConfig for Backoff<S> {
    type Policy<R: Rng> = BackoffPolicy<S, R>;

    fn kind(&self) -> PolicyKind {
        S::KIND
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    #[inline(always)]
    fn validate(&self) -> Result<(), ConfigError> {
        error::check_cap(self.base, self.cap)?;
        error::check_factor("factor", self.factor)?;
        self.jitter.validate()?;
        error::check_attempts(self.max_attempts)
    }

    #[inline(always)]
    fn build<R: Rng>(self, rng: R) -> Result<BackoffPolicy<S, R>, ConfigError> {
        self.validate()?;
        Ok(BackoffPolicy::new(
            self.curve(),
            self.max_attempts,
            self.jitter,
            rng,
        ))
    }

    fn bounds(&self, retry: u32) -> Bounds {
        let policy = BackoffPolicy::new(self.curve(), 1, self.jitter, ());
        let at_zero = policy.delay(retry, 0.0);
        let at_one = policy.delay(retry, 1.0);
        Bounds::new(at_zero.min(at_one), at_zero.max(at_one))
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        Ok(match param {
            Param::Base(base) => self.with_base(base),
            Param::Cap(cap) => self.with_cap(cap),
            Param::Factor(factor) => self.with_factor(factor),
            Param::MaxAttempts(n) => self.with_max_attempts(n),
            Param::Jitter(jitter) => Self {
                jitter: self
                    .jitter
                    .with_jitter(jitter)
                    .ok_or_else(|| param.not_applicable(S::KIND))?,
                ..self
            },
        })
    }
}

/// A running exponential-family policy: a capped curve, jittered by `S`, drawing from `R`.
///
/// Building it precomputes the curve in floating point, so a delay costs one power by
/// square-and-multiply, one draw and one conversion, with no allocation and no lock.
#[derive(Debug)]
pub struct BackoffPolicy<S, R> {
    curve: Curve,
    max_attempts: u32,
    jitter: S,
    rng: R,
}

impl<S: Jitter, R> BackoffPolicy<S, R> {
    #[inline(always)]
    fn new(curve: Curve, max_attempts: u32, jitter: S, rng: R) -> Self {
        Self {
            curve,
            max_attempts,
            jitter,
            rng,
        }
    }

    /// The delay before `retry` for the draw `u`: the jittered ceiling, in whole nanoseconds,
    /// clamped to the cap unless the jitter may exceed it. Without a draw and with a factor
    /// of 2, the ceiling is computed exactly in integers.
    #[inline(always)]
    fn delay(&self, retry: u32, u: f64) -> Duration {
        if !S::DRAWS && self.curve.doubles() {
            return self.curve.doubling(retry);
        }
        let ns = self.jitter.jitter(self.curve.ceiling_ns(retry), u);
        if S::MAY_EXCEED_CAP {
            return Limit::UNBOUNDED.duration(ns);
        }
        let delay = self.curve.cap().duration(ns);
        if self.curve.float_may_round() {
            // Past 2^53 ns the float ceiling can round above the exact schedule; a jitter that
            // promises never to exceed the ceiling is held to the exact one.
            return delay.min(self.curve.doubling(retry));
        }
        delay
    }
}

impl<S: Jitter, R> BackoffPolicy<S, R> {
    /// The same policy drawing from `rng`: see [`AnyPolicy::with_rng`](super::AnyPolicy::with_rng).
    #[must_use]
    #[inline]
    pub fn with_rng<R2: Rng>(&self, rng: R2) -> BackoffPolicy<S, R2> {
        BackoffPolicy::new(self.curve, self.max_attempts, self.jitter, rng)
    }
}

impl<S: Jitter, R: Rng> Policy for BackoffPolicy<S, R> {
    #[inline(always)]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        let u = if S::DRAWS { self.rng.next_f64() } else { 0.0 };
        Some(self.delay(attempt, u))
    }
}
