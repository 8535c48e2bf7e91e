//! The decorrelated family: each delay drawn from a band that follows where the previous retry
//! fell, under a cap.
//!
//! [`DecorrelatedJitter`](super::DecorrelatedJitter) and
//! [`DecorrelatedJitterV2`](super::DecorrelatedJitterV2) are both a [`Decorrelated`] with a
//! different [`Walk`]. They share their parameters (`base`, `cap`, `max_attempts`), their
//! validation and their running type, [`DecorrelatedPolicy`], which draws once per retry and
//! remembers where the walk stands; each policy's file holds only its walk, its bounds and its
//! page. The pair is named as the exponential family's is ([`Backoff`](super::Backoff) and
//! [`BackoffPolicy`](super::BackoffPolicy)); each member's alias follows suit
//! (`DecorrelatedJitter` builds a `DecorrelatedJitterPolicy`).

use std::fmt;
use std::time::Duration;

use super::curve::{Limit, nanos};
use super::param::accessors;
use super::{Bounds, Param, Policy, PolicyConfig, PolicyKind};
use crate::error::{self, ConfigError};
use crate::failure::Failure;
use crate::rng::Rng;

/// How a policy of the decorrelated family draws each delay from where its walk stands.
///
/// The trait is sealed: the catalog's walks are the ones this crate implements.
pub trait Walk: Copy + fmt::Debug + PartialEq + Eq + private::Sealed {
    /// The policy's entry in the catalog.
    const KIND: PolicyKind;

    /// The walk itself (a unit value).
    const WALK: Self;

    /// Where the walk stands before the first retry, for a base of `base_ns` nanoseconds.
    fn start(base_ns: f64) -> f64;

    /// The delay in nanoseconds before retry `attempt` (1 for the first), for a uniform draw
    /// `u` in `[0, 1)`, from where the walk stands, `at`, which it moves; `base_ns` and `cap_ns`
    /// are the parameters in nanoseconds. The caller clamps the delay to `[0, cap]`.
    fn step(at: &mut f64, attempt: u32, u: f64, base_ns: f64, cap_ns: f64) -> f64;

    /// The band of retry `retry`'s delay under `config`: see [`PolicyConfig::bounds`].
    fn bounds(config: &Decorrelated<Self>, retry: u32) -> Bounds;

    /// A band for the sum of the first `retries` delays: see [`PolicyConfig::window_bounds`].
    fn window_bounds(config: &Decorrelated<Self>, retries: u32) -> Option<Bounds> {
        let _ = (config, retries);
        None
    }
}

pub(crate) mod private {
    /// Keeps [`Walk`](super::Walk) implementable only by this crate.
    pub trait Sealed {}
}

/// The configuration of a decorrelated policy: its parameters and its walk.
///
/// Use it through the catalog's names, [`DecorrelatedJitter`](super::DecorrelatedJitter) and
/// [`DecorrelatedJitterV2`](super::DecorrelatedJitterV2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decorrelated<W> {
    base: Duration,
    cap: Duration,
    max_attempts: u32,
    walk: W,
}

impl<W: Walk> Decorrelated<W> {
    /// The defaults: a 100 ms base, a 20 s cap, 8 attempts.
    pub const DEFAULT: Self = Self {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(20),
        max_attempts: 8,
        walk: W::WALK,
    };

    /// The defaults, [`Decorrelated::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }
}

accessors!(Decorrelated<W: Walk> {
    /// The base (default 100 ms): the floor of every draw of `decorrelated-jitter`, roughly the
    /// median first delay of `decorrelated-jitter-v2`.
    base: Duration => with_base, Base;
    /// The ceiling on every delay (default 20 s); at least `base`.
    cap: Duration => with_cap, Cap;
    /// The most attempts, counting the first (default 8).
    max_attempts: u32 => with_max_attempts, MaxAttempts;
});

impl<W: Walk> Default for Decorrelated<W> {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl<W: Walk> PolicyConfig for Decorrelated<W> {
    type Policy<R: Rng> = DecorrelatedPolicy<W, R>;

    fn kind(&self) -> PolicyKind {
        W::KIND
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn validate(&self) -> Result<(), ConfigError> {
        error::check_cap(self.base, self.cap)?;
        error::check_attempts(self.max_attempts)
    }

    fn build<R: Rng>(self, rng: R) -> Result<DecorrelatedPolicy<W, R>, ConfigError> {
        self.validate()?;
        let base_ns = nanos(self.base);
        Ok(DecorrelatedPolicy {
            base_ns,
            cap_ns: nanos(self.cap),
            cap: Limit::new(self.cap),
            max_attempts: self.max_attempts,
            at: W::start(base_ns),
            walk: self.walk,
            rng,
        })
    }

    fn bounds(&self, retry: u32) -> Bounds {
        W::bounds(self, retry)
    }

    fn window_bounds(&self, retries: u32) -> Option<Bounds> {
        W::window_bounds(self, retries)
    }

    fn set(self, param: Param) -> Result<Self, ConfigError> {
        self.apply(param)
    }
}

/// A running decorrelated policy: where its walk stands, and the generator it draws from.
#[derive(Debug)]
pub struct DecorrelatedPolicy<W, R> {
    base_ns: f64,
    cap_ns: f64,
    cap: Limit,
    max_attempts: u32,
    /// Where the walk stands: what the previous retry left.
    at: f64,
    walk: W,
    rng: R,
}

impl<W: Walk, R> DecorrelatedPolicy<W, R> {
    /// The same policy drawing from `rng`, as built (its walk back at the start): see
    /// [`AnyPolicy::with_rng`](super::AnyPolicy::with_rng).
    #[must_use]
    #[inline]
    pub fn with_rng<R2: Rng>(&self, rng: R2) -> DecorrelatedPolicy<W, R2> {
        DecorrelatedPolicy {
            base_ns: self.base_ns,
            cap_ns: self.cap_ns,
            cap: self.cap,
            max_attempts: self.max_attempts,
            at: W::start(self.base_ns),
            walk: self.walk,
            rng,
        }
    }
}

impl<W: Walk, R: Rng> Policy for DecorrelatedPolicy<W, R> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        if attempt <= 1 {
            self.at = W::start(self.base_ns);
        }
        let u = self.rng.next_f64();
        let ns = W::step(&mut self.at, attempt, u, self.base_ns, self.cap_ns);
        Some(self.cap.duration(ns))
    }
}
