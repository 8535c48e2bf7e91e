#![doc = include_str!("token_bucket.md")]

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Budget, Spent};
use crate::clock::Timestamp;
use crate::error::ConfigError;
use crate::failure::Failure;

/// This budget's page, as `stagger explain` prints it.
pub(crate) const PAGE: &str = include_str!("token_bucket.md");

/// Thousandths of a token.
const MILLI: f64 = 1000.0;

/// The configuration of a [`TokenBucketBudget`], in tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenBucket {
    capacity: f64,
    retry_cost: f64,
    timeout_cost: f64,
    throttle_cost: f64,
    success_reward: f64,
    call_deposit: f64,
    reserve: f64,
    refund: bool,
}

impl TokenBucket {
    /// The AWS SDKs' standard retry quota: 500 tokens, 5 per retry, 10 per timeout retry, +1
    /// per success without retry, the last cost refunded after a retried success.
    pub const AWS_STANDARD: Self = Self {
        capacity: 500.0,
        retry_cost: 5.0,
        timeout_cost: 10.0,
        throttle_cost: 5.0,
        success_reward: 1.0,
        call_deposit: 0.0,
        reserve: 0.0,
        refund: true,
    };

    /// The 2026 revision of the AWS retry quota: 14 tokens per retry, 5 for a throttled one.
    pub const AWS_2026: Self = Self {
        retry_cost: 14.0,
        timeout_cost: 14.0,
        throttle_cost: 5.0,
        ..Self::AWS_STANDARD
    };

    /// Brooker's per-client bucket: 5 tokens, +0.1 per call, a retry needs more than 1 token
    /// and costs 1.
    pub const BROOKER: Self = Self {
        capacity: 5.0,
        retry_cost: 1.0,
        timeout_cost: 1.0,
        throttle_cost: 1.0,
        success_reward: 0.0,
        call_deposit: 0.1,
        reserve: 1.0,
        refund: false,
    };

    /// Sets the capacity, in tokens (the bucket starts full).
    #[must_use]
    pub const fn with_capacity(mut self, capacity: f64) -> Self {
        self.capacity = capacity;
        self
    }

    /// Sets the cost of a retry, and of a timeout and a throttled retry, in tokens.
    #[must_use]
    pub const fn with_costs(mut self, retry: f64, timeout: f64, throttle: f64) -> Self {
        self.retry_cost = retry;
        self.timeout_cost = timeout;
        self.throttle_cost = throttle;
        self
    }

    /// Sets the tokens a success without retry adds.
    #[must_use]
    pub const fn with_success_reward(mut self, reward: f64) -> Self {
        self.success_reward = reward;
        self
    }

    /// Sets the tokens every first attempt (call) adds.
    #[must_use]
    pub const fn with_call_deposit(mut self, deposit: f64) -> Self {
        self.call_deposit = deposit;
        self
    }

    /// Sets the balance a retry must exceed, besides affording its cost (0, the default for
    /// AWS, means only the cost matters).
    #[must_use]
    pub const fn with_reserve(mut self, reserve: f64) -> Self {
        self.reserve = reserve;
        self
    }

    /// Sets whether a retried success refunds what its last retry cost.
    #[must_use]
    pub const fn with_refund(mut self, refund: bool) -> Self {
        self.refund = refund;
        self
    }

    /// The capacity, in tokens.
    #[must_use]
    pub const fn capacity(&self) -> f64 {
        self.capacity
    }

    /// What a retry after an ordinary failure costs, in tokens.
    ///
    /// ```
    /// use stagger_core::budget::TokenBucket;
    /// let aws = TokenBucket::AWS_STANDARD;
    /// assert_eq!((aws.capacity(), aws.retry_cost(), aws.timeout_cost()), (500.0, 5.0, 10.0));
    /// assert_eq!((aws.throttle_cost(), aws.success_reward(), aws.call_deposit()), (5.0, 1.0, 0.0));
    /// assert_eq!((aws.reserve(), aws.refund()), (0.0, true));
    /// let brooker = TokenBucket::BROOKER;
    /// assert_eq!((brooker.capacity(), brooker.call_deposit(), brooker.reserve()), (5.0, 0.1, 1.0));
    /// ```
    #[must_use]
    pub const fn retry_cost(&self) -> f64 {
        self.retry_cost
    }

    /// What a retry after a timeout costs, in tokens.
    #[must_use]
    pub const fn timeout_cost(&self) -> f64 {
        self.timeout_cost
    }

    /// What a retry after a throttled answer costs, in tokens.
    #[must_use]
    pub const fn throttle_cost(&self) -> f64 {
        self.throttle_cost
    }

    /// What a success without retry deposits, in tokens.
    #[must_use]
    pub const fn success_reward(&self) -> f64 {
        self.success_reward
    }

    /// What every first attempt (call) deposits, in tokens.
    #[must_use]
    pub const fn call_deposit(&self) -> f64 {
        self.call_deposit
    }

    /// The balance a retry must exceed, besides affording its cost.
    #[must_use]
    pub const fn reserve(&self) -> f64 {
        self.reserve
    }

    /// Whether a retried success refunds what its last retry cost.
    #[must_use]
    pub const fn refund(&self) -> bool {
        self.refund
    }

    /// Checks every parameter: all finite, between 0 and a billion tokens, the capacity at
    /// least 0.001, and every other amount either 0 or at least 0.001 (tokens are counted in
    /// thousandths).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fields = [
            ("capacity", self.capacity),
            ("retry_cost", self.retry_cost),
            ("timeout_cost", self.timeout_cost),
            ("throttle_cost", self.throttle_cost),
            ("success_reward", self.success_reward),
            ("call_deposit", self.call_deposit),
            ("reserve", self.reserve),
        ];
        for (param, value) in fields {
            if !value.is_finite() {
                return Err(ConfigError::NotFinite { param, value });
            }
            if !(0.0..=crate::limits::MAX_TOKENS).contains(&value) {
                return Err(ConfigError::OutOfRange {
                    param,
                    value,
                    allowed: "between 0 and 1e9 tokens",
                });
            }
        }
        if self.capacity < crate::limits::TOKEN_RESOLUTION {
            return Err(ConfigError::OutOfRange {
                param: "capacity",
                value: self.capacity,
                allowed: "at least 0.001 tokens",
            });
        }
        // Tokens are counted in thousandths: a non-zero amount below one would round to zero
        // and, for a cost, make retries free.
        for (param, value) in &fields[1..] {
            if *value != 0.0 && *value < crate::limits::TOKEN_RESOLUTION {
                return Err(ConfigError::OutOfRange {
                    param,
                    value: *value,
                    allowed: "0, or at least 0.001 tokens",
                });
            }
        }
        Ok(())
    }
}

/// A shared, lock-free token bucket. See the [module page](self).
///
/// ```
/// use stagger_core::budget::{Budget, TokenBucketBudget, TokenBucket};
/// use stagger_core::{Failure, Timestamp};
///
/// let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD)?;
/// let now = Timestamp::ZERO;
/// let granted = (0..1000).filter(|_| bucket.try_retry(now, &Failure::Retryable).is_some()).count();
/// assert_eq!(granted, 100); // 500 tokens, 5 per retry
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Debug)]
pub struct TokenBucketBudget {
    config: TokenBucket,
    capacity: u64,
    costs: [u64; 3],
    success_reward: u64,
    call_deposit: u64,
    reserve: u64,
    tokens: AtomicU64,
}

fn milli(tokens: f64) -> u64 {
    (tokens * MILLI).round() as u64
}

impl TokenBucketBudget {
    /// A full bucket.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`].
    pub fn new(config: TokenBucket) -> Result<Self, ConfigError> {
        config.validate()?;
        let capacity = milli(config.capacity);
        Ok(Self {
            config,
            capacity,
            costs: [
                milli(config.retry_cost),
                milli(config.timeout_cost),
                milli(config.throttle_cost),
            ],
            success_reward: milli(config.success_reward),
            call_deposit: milli(config.call_deposit),
            reserve: milli(config.reserve),
            tokens: AtomicU64::new(capacity),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> TokenBucket {
        self.config
    }

    /// The tokens in the bucket now.
    #[must_use]
    pub fn tokens(&self) -> f64 {
        self.tokens.load(Ordering::Acquire) as f64 / MILLI
    }

    fn deposit(&self, amount: u64) {
        if amount == 0 {
            return;
        }
        let capacity = self.capacity;
        // The closure always returns `Some`, so the update cannot fail.
        let _ = self
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some(t.saturating_add(amount).min(capacity))
            });
    }
}

impl Budget for TokenBucketBudget {
    #[inline]
    fn admit(&self, _now: Timestamp) -> bool {
        self.deposit(self.call_deposit);
        true
    }

    #[inline]
    fn try_retry(&self, _now: Timestamp, failure: &Failure) -> Option<Spent> {
        let cost = match failure {
            Failure::Timeout => self.costs[1],
            Failure::Throttled(_) => self.costs[2],
            _ => self.costs[0],
        };
        let reserve = self.reserve;
        self.tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                (t >= cost && (reserve == 0 || t > reserve)).then(|| t - cost)
            })
            .ok()
            .map(|_| Spent(cost))
    }

    #[inline]
    fn retry_abandoned(&self, _granted: Timestamp, spent: Spent) {
        self.deposit(spent.0);
    }

    #[inline]
    fn on_success(&self, _now: Timestamp, last_retry: Option<Spent>) {
        match last_retry {
            Some(Spent(cost)) if self.config.refund => self.deposit(cost),
            Some(_) => {}
            None => self.deposit(self.success_reward),
        }
    }
}
