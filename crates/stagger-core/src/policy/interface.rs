//! The domain interface every policy implements.

use std::fmt;
use std::time::Duration;

use super::{Param, PolicyKind};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::{Rng, SeededRng};

/// A running retry policy: asked after each failure how long to wait before the next attempt.
///
/// `attempt` counts the attempts made so far, so it is 1 after the first failure. The answer is
/// the delay before attempt `attempt + 1`, or `None` to give up. Every policy gives up on a
/// [`Failure::Permanent`] whatever its budget (nothing is gained by retrying a failure the server
/// calls permanent), and when `attempt >= max_attempts`. With `max_attempts = 8` there are at
/// most seven retries.
///
/// An instance belongs to one operation: it may keep state between calls (the previous delay,
/// its random generator). Asking about `attempt = 1` resets that state, but the generator moves
/// on: a jittered policy draws once per call, so to replay a schedule (after a restart, say),
/// build a new instance from the same seed or key and ask about attempts `1..=n` in order. An
/// `attempt` of 0 is answered as if it were 1, and no value of `attempt` panics.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::{Failure, Policy, PolicyConfig, SeededRng};
/// use stagger_core::policy::Exponential;
///
/// let mut policy = Exponential::new().build(SeededRng::new(0))?;
/// assert_eq!(policy.next_delay(1, &Failure::Retryable), Some(Duration::from_millis(100)));
/// assert_eq!(policy.next_delay(3, &Failure::Timeout), Some(Duration::from_millis(400)));
/// assert_eq!(policy.next_delay(3, &Failure::Permanent), None);
/// assert_eq!(policy.next_delay(8, &Failure::Retryable), None); // eight attempts made
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
pub trait Policy {
    /// The delay before the next attempt, after `attempt` attempts have failed, the last one
    /// with `failure`; `None` to give up.
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration>;
}

impl<P: Policy + ?Sized> Policy for &mut P {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        (**self).next_delay(attempt, failure)
    }
}

impl<P: Policy + ?Sized> Policy for Box<P> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        (**self).next_delay(attempt, failure)
    }
}

/// The configuration of a policy: a small `Copy` value, checked and turned into a running
/// [`Policy`] by [`build`](PolicyConfig::build), which takes the policy's random generator.
///
/// Configurations are plain data with `const` setters, so they can be `const` presets. They also
/// describe their own schedule without running it: [`bounds`](PolicyConfig::bounds) gives the
/// band each retry's delay falls in.
pub trait PolicyConfig: Copy + fmt::Debug {
    /// The running policy this configuration builds.
    type Policy<R: Rng>: Policy;

    /// This policy's entry in the catalog.
    fn kind(&self) -> PolicyKind;

    /// The most attempts an operation makes, counting the first.
    fn max_attempts(&self) -> u32;

    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first invalid parameter and its allowed range.
    fn validate(&self) -> Result<(), ConfigError>;

    /// Checks the configuration and builds a running policy that draws from `rng`.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](PolicyConfig::validate).
    fn build<R: Rng>(self, rng: R) -> Result<Self::Policy<R>, ConfigError>;

    /// Checks the configuration and builds a running policy with its own generator, seeded
    /// from process entropy ([`SeededRng::from_entropy`]): what a production caller wants when
    /// no seed or key matters. No two policies built this way share a sequence.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](PolicyConfig::validate).
    fn policy(self) -> Result<Self::Policy<SeededRng>, ConfigError> {
        self.build(SeededRng::from_entropy())
    }

    /// The band the delay before retry `retry` (1-based) falls in, for a retryable failure.
    ///
    /// For a deterministic policy the band is a single point. Retry 0 is treated as retry 1.
    fn bounds(&self, retry: u32) -> Bounds;

    /// A tighter band for the sum of the first `retries` delays than the sum of their
    /// [`bounds`](PolicyConfig::bounds), where the policy knows one.
    fn window_bounds(&self, retries: u32) -> Option<Bounds> {
        let _ = retries;
        None
    }

    /// This configuration with one parameter changed.
    ///
    /// # Errors
    ///
    /// [`ConfigError::NotApplicable`] if the policy has no such parameter. The value itself is
    /// checked by [`validate`](PolicyConfig::validate), not here.
    fn set(self, param: Param) -> Result<Self, ConfigError>;
}

/// A closed band `[min, max]` of durations.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::Bounds;
///
/// let band = Bounds::new(Duration::from_millis(800), Duration::from_secs(1));
/// assert!(band.contains(Duration::from_millis(900)));
/// assert!(!band.is_exact());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// The shortest possible delay.
    pub min: Duration,
    /// The longest possible delay.
    pub max: Duration,
}

impl Bounds {
    /// The band `[min, max]`. `min` should not exceed `max`; a reversed pair is reordered.
    #[must_use]
    pub const fn new(min: Duration, max: Duration) -> Self {
        if min.as_nanos() <= max.as_nanos() {
            Self { min, max }
        } else {
            Self { min: max, max: min }
        }
    }

    /// The band holding `d` alone.
    #[must_use]
    pub const fn exact(d: Duration) -> Self {
        Self { min: d, max: d }
    }

    /// Whether `d` lies in the band, ends included.
    #[must_use]
    pub fn contains(&self, d: Duration) -> bool {
        self.min <= d && d <= self.max
    }

    /// Whether the band is a single point.
    #[must_use]
    pub fn is_exact(&self) -> bool {
        self.min == self.max
    }

    /// The band of `a + b` for `a` in `self` and `b` in `other`, saturating.
    #[must_use]
    pub const fn saturating_add(self, other: Self) -> Self {
        Self {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    /// The part of `self` that lies in `other`, or `self` if they do not meet (which would
    /// mean one of the two bands is wrong; debug builds assert it never happens).
    #[must_use]
    pub fn intersect(self, other: Self) -> Self {
        let min = self.min.max(other.min);
        let max = self.max.min(other.max);
        debug_assert!(min <= max, "disjoint bands {self:?} and {other:?}");
        if min <= max { Self { min, max } } else { self }
    }
}
