#![doc = include_str!("grpc_throttle.md")]

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Budget, Spent};
use crate::clock::Timestamp;
use crate::error::ConfigError;
use crate::failure::Failure;

/// This budget's page, as `stagger explain` prints it.
pub(crate) const PAGE: &str = include_str!("grpc_throttle.md");

/// `value` in thousandths, its decimals beyond the third ignored (A6): computed through
/// millionths, so that a value such as 1.005, stored as 1.00499999..., keeps its third decimal.
fn thousandths(value: f64) -> u64 {
    (value * 1e6).round() as u64 / 1000
}

/// The configuration of a [`GrpcThrottleBudget`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrpcThrottle {
    max_tokens: f64,
    token_ratio: f64,
}

impl GrpcThrottle {
    /// A6's example: `maxTokens` 10, `tokenRatio` 0.1.
    pub const DEFAULT: Self = Self {
        max_tokens: 10.0,
        token_ratio: 0.1,
    };

    /// Sets `maxTokens`, in (0, 1000].
    #[must_use]
    pub const fn with_max_tokens(mut self, max_tokens: f64) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets `tokenRatio`, above 0; decimals beyond the third are ignored.
    #[must_use]
    pub const fn with_token_ratio(mut self, token_ratio: f64) -> Self {
        self.token_ratio = token_ratio;
        self
    }

    /// `maxTokens`.
    #[must_use]
    pub const fn max_tokens(&self) -> f64 {
        self.max_tokens
    }

    /// `tokenRatio`.
    #[must_use]
    pub const fn token_ratio(&self) -> f64 {
        self.token_ratio
    }

    /// Checks A6's rules: `maxTokens` in (0, 1000], `tokenRatio` above 0 (at least 0.001 once
    /// its extra decimals are ignored).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (param, value) in [
            ("max_tokens", self.max_tokens),
            ("token_ratio", self.token_ratio),
        ] {
            if !value.is_finite() {
                return Err(ConfigError::NotFinite { param, value });
            }
        }
        if !(self.max_tokens >= crate::limits::TOKEN_RESOLUTION
            && self.max_tokens <= crate::limits::GRPC_MAX_TOKENS)
        {
            return Err(ConfigError::OutOfRange {
                param: "max_tokens",
                value: self.max_tokens,
                allowed: "in (0, 1000], at least 0.001",
            });
        }
        if self.token_ratio > crate::limits::MAX_TOKENS || thousandths(self.token_ratio) < 1 {
            return Err(ConfigError::OutOfRange {
                param: "token_ratio",
                value: self.token_ratio,
                allowed: "at least 0.001 (decimals beyond the third are ignored)",
            });
        }
        Ok(())
    }
}

impl Default for GrpcThrottle {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// gRPC's retry throttle, shared and lock-free. See the [module page](self).
///
/// ```
/// use stagger_core::budget::{Budget, GrpcThrottleBudget, GrpcThrottle};
/// use stagger_core::{Failure, Timestamp};
///
/// let throttle = GrpcThrottleBudget::new(GrpcThrottle::DEFAULT)?;
/// let now = Timestamp::ZERO;
/// for _ in 0..4 {
///     throttle.on_failure(now, &Failure::Retryable);
/// }
/// assert!(throttle.try_retry(now, &Failure::Retryable).is_some()); // 6 > 5
/// throttle.on_failure(now, &Failure::Retryable);
/// assert!(throttle.try_retry(now, &Failure::Retryable).is_none()); // 5 <= 5
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Debug)]
pub struct GrpcThrottleBudget {
    config: GrpcThrottle,
    max: u64,
    ratio: u64,
    tokens: AtomicU64,
}

impl GrpcThrottleBudget {
    /// A throttle with a full token count.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`].
    pub fn new(config: GrpcThrottle) -> Result<Self, ConfigError> {
        config.validate()?;
        let max = (config.max_tokens * 1000.0).round() as u64;
        Ok(Self {
            config,
            max,
            ratio: thousandths(config.token_ratio),
            tokens: AtomicU64::new(max),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> GrpcThrottle {
        self.config
    }

    /// The token count now.
    #[must_use]
    pub fn tokens(&self) -> f64 {
        self.tokens.load(Ordering::Acquire) as f64 / 1000.0
    }
}

impl Budget for GrpcThrottleBudget {
    #[inline]
    fn try_retry(&self, _now: Timestamp, _failure: &Failure) -> Option<Spent> {
        // Retries are off while tokens <= max / 2, compared exactly in thousandths.
        (self.tokens.load(Ordering::Acquire) * 2 > self.max).then_some(Spent(0))
    }

    #[inline]
    fn on_success(&self, _now: Timestamp, _last_retry: Option<Spent>) {
        let (max, ratio) = (self.max, self.ratio);
        // The closure always returns `Some`, so the update cannot fail.
        let _ = self
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some(t.saturating_add(ratio).min(max))
            });
    }

    #[inline]
    fn on_failure(&self, _now: Timestamp, failure: &Failure) {
        if failure.is_retryable() {
            // The closure always returns `Some`, so the update cannot fail.
            let _ = self
                .tokens
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                    Some(t.saturating_sub(1000))
                });
        }
    }
}
