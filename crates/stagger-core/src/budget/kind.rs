//! The budgets by name, as the CLI, configuration files and the simulator use them.
//!
//! This is the registry of budget names: an unknown name is refused here, and the error
//! ([`ConfigError::UnknownBudget`]) is handed the budgets' names to list, so that the error
//! module need not know the budgets.

use std::fmt;
use std::str::FromStr;

use super::{
    Breaker, BreakerBudget, Budget, BudgetConfig, GrpcThrottle, GrpcThrottleBudget, Ratio,
    RatioBudget, Spent, SreAdaptive, SreAdaptiveBudget, TokenBucket, TokenBucketBudget,
};
use crate::clock::{Timeline, Timestamp};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::SeededRng;

/// A budget by name, at its published defaults.
///
/// ```
/// use stagger_core::budget::BudgetKind;
///
/// let kind: BudgetKind = "finagle".parse()?;
/// assert_eq!(kind, BudgetKind::Finagle);
/// assert_eq!(kind.to_string(), "finagle");
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BudgetKind {
    /// `aws-standard`: the AWS SDKs' retry quota.
    AwsStandard,
    /// `aws-2026`: its 2026 revision.
    Aws2026,
    /// `brooker`: Brooker's per-client token bucket.
    Brooker,
    /// `finagle`: Finagle's ratio budget.
    Finagle,
    /// `grpc-throttle`: gRFC A6 retry throttling.
    GrpcThrottle,
    /// `sre-adaptive`: Google SRE client-side adaptive throttling.
    SreAdaptive,
    /// `breaker`: Brooker's retry circuit breaker.
    Breaker,
}

impl BudgetKind {
    /// Every budget.
    pub const ALL: [Self; 7] = [
        Self::AwsStandard,
        Self::Aws2026,
        Self::Brooker,
        Self::Finagle,
        Self::GrpcThrottle,
        Self::SreAdaptive,
        Self::Breaker,
    ];

    /// The budget's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::AwsStandard => "aws-standard",
            Self::Aws2026 => "aws-2026",
            Self::Brooker => "brooker",
            Self::Finagle => "finagle",
            Self::GrpcThrottle => "grpc-throttle",
            Self::SreAdaptive => "sre-adaptive",
            Self::Breaker => "breaker",
        }
    }

    /// Every budget's name.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        Self::NAMES.to_vec()
    }

    /// Every budget's name, as an unknown name's error lists them.
    const NAMES: [&'static str; Self::ALL.len()] = names_of!(Self::ALL);

    /// What it bounds, in one line.
    #[must_use]
    pub const fn summary(self) -> &'static str {
        match self {
            Self::AwsStandard => "500 tokens, 5 per retry (10 per timeout), +1 per success",
            Self::Aws2026 => "500 tokens, 14 per retry (5 if throttled), +1 per success",
            Self::Brooker => "per client: 5 tokens, +0.1 per call, a retry needs > 1 and costs 1",
            Self::Finagle => "retries <= 20% of requests over 10 s, plus 10 per second",
            Self::GrpcThrottle => {
                "no retries while tokens <= 5 of 10; -1 per failure, +0.1 per success"
            }
            Self::SreAdaptive => "rejects any attempt, first ones too, beyond about 2 x accepts",
            Self::Breaker => "no retries while more than 10% of attempts fail",
        }
    }

    /// The budget's page: what it bounds, the source, the defaults, the steady state.
    #[must_use]
    pub const fn page(self) -> &'static str {
        match self {
            Self::AwsStandard | Self::Aws2026 | Self::Brooker => super::token_bucket::PAGE,
            Self::Finagle => super::ratio::PAGE,
            Self::GrpcThrottle => super::grpc_throttle::PAGE,
            Self::SreAdaptive => super::sre_adaptive::PAGE,
            Self::Breaker => super::breaker::PAGE,
        }
    }
}

impl fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BudgetKind {
    type Err = ConfigError;

    fn from_str(name: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| ConfigError::UnknownBudget {
                name: name.to_owned(),
                valid: &Self::NAMES,
            })
    }
}

/// Any budget, chosen at run time by name.
#[derive(Debug)]
#[non_exhaustive]
#[allow(missing_docs)] // Each variant is the budget of the same name.
pub enum AnyBudget {
    TokenBucket(TokenBucketBudget),
    Ratio(RatioBudget),
    GrpcThrottle(GrpcThrottleBudget),
    SreAdaptive(SreAdaptiveBudget),
    Breaker(BreakerBudget),
}

impl AnyBudget {
    /// The budget `kind` at its published defaults. `rng` feeds the one budget that draws
    /// (`sre-adaptive`).
    ///
    /// # Errors
    ///
    /// None for the published defaults; the signature allows for configured ones.
    pub fn new(kind: BudgetKind, rng: SeededRng) -> Result<Self, ConfigError> {
        AnyBudgetConfig::published(kind).build(rng)
    }
}

/// A budget's configuration, of any kind: what an [`AnyBudget`] is built from, as plain data
/// (a configuration file's budget table reads into one). It is to the budgets'
/// [`BudgetConfig`]s what [`AnyConfig`](crate::AnyConfig) is to the policies'.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum AnyBudgetConfig {
    /// A token bucket: `aws-standard`, `aws-2026` or `brooker`.
    TokenBucket(TokenBucket),
    /// A ratio budget: `finagle`.
    Ratio(Ratio),
    /// gRPC's retry throttling: `grpc-throttle`.
    GrpcThrottle(GrpcThrottle),
    /// The SRE book's adaptive throttling: `sre-adaptive`.
    SreAdaptive(SreAdaptive),
    /// A circuit breaker: `breaker`.
    Breaker(Breaker),
}

impl AnyBudgetConfig {
    /// The budget `kind` at its published defaults.
    #[must_use]
    pub const fn published(kind: BudgetKind) -> Self {
        match kind {
            BudgetKind::AwsStandard => Self::TokenBucket(TokenBucket::AWS_STANDARD),
            BudgetKind::Aws2026 => Self::TokenBucket(TokenBucket::AWS_2026),
            BudgetKind::Brooker => Self::TokenBucket(TokenBucket::BROOKER),
            BudgetKind::Finagle => Self::Ratio(Ratio::FINAGLE),
            BudgetKind::GrpcThrottle => Self::GrpcThrottle(GrpcThrottle::DEFAULT),
            BudgetKind::SreAdaptive => Self::SreAdaptive(SreAdaptive::DEFAULT),
            BudgetKind::Breaker => Self::Breaker(Breaker::DEFAULT),
        }
    }

    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first invalid parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            Self::TokenBucket(c) => c.validate(),
            Self::Ratio(c) => c.validate(),
            Self::GrpcThrottle(c) => c.validate(),
            Self::SreAdaptive(c) => c.validate(),
            Self::Breaker(c) => c.validate(),
        }
    }

    /// Checks the configuration and builds the budget. `rng` feeds the one budget that draws
    /// (`sre-adaptive`).
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](AnyBudgetConfig::validate).
    pub fn build(self, rng: SeededRng) -> Result<AnyBudget, ConfigError> {
        Ok(match self {
            Self::TokenBucket(c) => AnyBudget::TokenBucket(TokenBucketBudget::new(c)?),
            Self::Ratio(c) => AnyBudget::Ratio(RatioBudget::new(c)?),
            Self::GrpcThrottle(c) => AnyBudget::GrpcThrottle(GrpcThrottleBudget::new(c)?),
            Self::SreAdaptive(c) => AnyBudget::SreAdaptive(SreAdaptiveBudget::new(c, rng)?),
            Self::Breaker(c) => AnyBudget::Breaker(BreakerBudget::new(c)?),
        })
    }
}

impl BudgetConfig for AnyBudgetConfig {
    type Budget = AnyBudget;

    fn validate(&self) -> Result<(), ConfigError> {
        Self::validate(self)
    }

    fn build(self, rng: SeededRng) -> Result<AnyBudget, ConfigError> {
        Self::build(self, rng)
    }
}

macro_rules! each_budget {
    ($value:expr, $b:ident => $body:expr) => {
        match $value {
            AnyBudget::TokenBucket($b) => $body,
            AnyBudget::Ratio($b) => $body,
            AnyBudget::GrpcThrottle($b) => $body,
            AnyBudget::SreAdaptive($b) => $body,
            AnyBudget::Breaker($b) => $body,
        }
    };
}

impl Budget for AnyBudget {
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        each_budget!(self, b => b.bind(timeline))
    }
    fn admit(&self, now: Timestamp) -> bool {
        each_budget!(self, b => b.admit(now))
    }
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent> {
        each_budget!(self, b => b.try_retry(now, failure))
    }
    fn retry_abandoned(&self, granted: Timestamp, spent: Spent) {
        each_budget!(self, b => b.retry_abandoned(granted, spent));
    }
    fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
        each_budget!(self, b => b.on_success(now, last_retry));
    }
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        each_budget!(self, b => b.on_failure(now, failure));
    }
}
