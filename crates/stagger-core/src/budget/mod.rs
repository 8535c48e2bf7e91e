//! Retry budgets: bound the extra load a whole fleet of clients can add.
//!
//! A per-request attempt limit stops one request from retrying forever, but a large population
//! of failing clients can still multiply the load on a struggling dependency by the attempt
//! limit. A budget is shared by many runs (every request of a client, or of a service) and
//! refuses retries once they exceed what it allows, so that retries stay a small fraction of
//! the traffic when things go badly wrong, and cost nothing when they go well.
//!
//! | budget | what it bounds | source |
//! |---|---|---|
//! | [`TokenBucketBudget`] `aws-standard`, `aws-2026`, `brooker` | retries by a bucket that successes (or calls) refill | AWS SDKs' retry quota; Brooker 2022 |
//! | [`RatioBudget`] `finagle` | retries to a percentage of requests over a ttl, plus a floor | Finagle `RetryBudget` |
//! | [`GrpcThrottleBudget`] `grpc-throttle` | no retries while failures dominate | gRFC A6 retry throttling |
//! | [`SreAdaptiveBudget`] `sre-adaptive` | every attempt, first ones too, to about `K` × accepts | Google SRE book, ch. 21 |
//! | [`BreakerBudget`] `breaker` | no retries while the failure ratio is above a threshold | Brooker 2022 |
//!
//! [`Budget`] is a small trait that takes `&self`: one budget is shared through an `Arc` by
//! every request, across threads and tasks. Time comes from the engine's `now`, never from a
//! clock of the budget's own, so a budget is deterministic under a manual clock and in the
//! simulator. A budget that keeps times binds to the timeline of the first run's clock
//! ([`Budget::bind`]), so that runs on clocks that disagree cannot share it by accident.
//!
//! A budget may also pace attempts ([`Budget::slot`]), as a
//! [`GatedBudget`](crate::gate::GatedBudget) does: the [`Slot`] it answers with is defined here,
//! with the trait, so that the budgets depend on no pacer. Budgets by destination, for a layer
//! that serves many, are in [`per_destination`].

pub mod breaker;
pub mod grpc_throttle;
mod kind;
pub mod per_destination;
pub mod ratio;
pub mod sre_adaptive;
pub mod token_bucket;
mod window;

pub use breaker::{Breaker, BreakerBudget};
pub use grpc_throttle::{GrpcThrottle, GrpcThrottleBudget};
pub use kind::{AnyBudget, AnyBudgetConfig, BudgetKind};
pub use per_destination::{BudgetPerDestination, PerDestination};
pub use ratio::{Ratio, RatioBudget};
pub use sre_adaptive::{SreAdaptive, SreAdaptiveBudget};
pub use token_bucket::{TokenBucket, TokenBucketBudget};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Timeline, Timestamp};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::SeededRng;

/// The configuration of a budget: a small `Copy` value, checked and turned into the running
/// [`Budget`] by [`build`](BudgetConfig::build), as a [`PolicyConfig`](crate::PolicyConfig) is
/// turned into a running policy.
///
/// The names follow one convention across policies and budgets: the configuration bears the
/// plain name ([`TokenBucket`], [`ExponentialFullJitter`](crate::policy::ExponentialFullJitter)),
/// and what it builds, the running state, adds the kind ([`TokenBucketBudget`],
/// [`ExponentialFullJitterPolicy`](crate::policy::ExponentialFullJitterPolicy)).
///
/// ```
/// use std::sync::Arc;
/// use stagger_core::budget::{BudgetConfig, TokenBucket};
///
/// // One bucket, shared by every request of a service.
/// let shared = Arc::new(TokenBucket::AWS_STANDARD.with_capacity(100.0).budget()?);
/// assert_eq!(shared.tokens(), 100.0);
/// assert!(TokenBucket::AWS_STANDARD.with_capacity(-1.0).budget().is_err());
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
pub trait BudgetConfig: Copy + fmt::Debug {
    /// The running budget this configuration builds.
    type Budget: Budget;

    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first invalid parameter and its allowed range.
    fn validate(&self) -> Result<(), ConfigError>;

    /// Checks the configuration and builds the running budget. `rng` feeds the one budget that
    /// draws (`sre-adaptive`); the others ignore it.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](BudgetConfig::validate).
    fn build(self, rng: SeededRng) -> Result<Self::Budget, ConfigError>;

    /// Checks the configuration and builds the running budget, with a generator seeded from
    /// process entropy where it draws.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](BudgetConfig::validate).
    fn budget(self) -> Result<Self::Budget, ConfigError> {
        self.build(SeededRng::from_entropy())
    }
}

macro_rules! budget_config {
    ($($config:ty => $budget:ty, |$c:ident, $rng:ident| $build:expr;)*) => {$(
        impl BudgetConfig for $config {
            type Budget = $budget;

            fn validate(&self) -> Result<(), ConfigError> {
                <$config>::validate(self)
            }

            fn build(self, $rng: SeededRng) -> Result<$budget, ConfigError> {
                let $c = self;
                $build
            }
        }
    )*};
}

budget_config! {
    TokenBucket => TokenBucketBudget, |c, _rng| TokenBucketBudget::new(c);
    Ratio => RatioBudget, |c, _rng| RatioBudget::new(c);
    GrpcThrottle => GrpcThrottleBudget, |c, _rng| GrpcThrottleBudget::new(c);
    SreAdaptive => SreAdaptiveBudget, |c, rng| SreAdaptiveBudget::new(c, rng);
    Breaker => BreakerBudget, |c, _rng| BreakerBudget::new(c);
}

/// What a granted retry cost, in thousandths of the budget's unit (a token, for a bucket).
///
/// The engine keeps the receipt of a run's latest retry and hands it back on success, so a
/// budget can refund it (the AWS retry quota does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Spent(pub u64);

/// A retry budget shared by many runs: asked before each attempt, told every outcome.
///
/// It takes `&self`, so one budget can be shared through an `Arc` by every request of a
/// service, across threads and tasks. Time comes from the engine's `now`.
///
/// # A retry is paid for when it is sent
///
/// The engine asks [`try_retry`](Budget::try_retry) when it plans a retry, before the wait, so
/// that a run the budget refuses gives up at once instead of after waiting in vain. The retry
/// is sent when its attempt begins. If it never is (the future is dropped during the wait, the
/// deadline passes first, the driver cannot make the attempt), the engine calls
/// [`retry_abandoned`](Budget::retry_abandoned) with the grant's time and receipt, once, and
/// the budget gives back what the grant took. (The one exception in this crate's drivers: a
/// sleeper or hook of the blocking executor that panics during the wait.) So a budget only
/// ever pays for retries that were sent, and its closed forms (a bucket of `C` tokens at `c` a
/// retry allows at most `C / c` retries) count sent retries. A grant still waiting to be sent
/// holds what it took until then, so other runs may be refused in the meantime. Every budget
/// of the catalog undoes its grant exactly: the token bucket deposits the cost again (up to its
/// capacity), the ratio budget and the SRE throttle remove the count they added, while it is
/// still in the window (the SRE throttle's random draw for the grant, if it made one, stays
/// drawn); the others charge nothing for a grant.
pub trait Budget {
    /// A run whose clock is on `timeline` is about to use this budget. A budget that keeps
    /// times (a window of outcomes, a gate's closing times) compares only times of one
    /// timeline: it binds to the first timeline it is given
    /// ([`TimelineBinding`](crate::clock::TimelineBinding)) and refuses
    /// any other, and the run stops before its first attempt with that error. The executors
    /// call it once per run, before anything else. The default, for a budget that keeps no
    /// time, accepts every timeline.
    ///
    /// # Errors
    ///
    /// [`ConfigError::TimelineMismatch`] if the budget keeps its times on another timeline.
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        let _ = timeline;
        Ok(())
    }

    /// May a first attempt go ahead? Client-side adaptive throttling may refuse even that. The
    /// default admits every first attempt.
    fn admit(&self, now: Timestamp) -> bool {
        let _ = now;
        true
    }

    /// May the run retry after `failure`? `Some` grants it, with what it cost; `None` refuses.
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent>;

    /// A retry granted at `granted`, whose receipt is `spent`, was never sent: undo what the
    /// grant took. Called at most once per grant, and never for a retry that was sent. The
    /// default does nothing, which is right for a budget whose grants cost nothing; a budget
    /// that charges in [`try_retry`](Budget::try_retry) must give the charge back here.
    fn retry_abandoned(&self, granted: Timestamp, spent: Spent) {
        let _ = (granted, spent);
    }

    /// An attempt succeeded. `last_retry` is the receipt of the run's latest retry, `None` if
    /// the run succeeded without retrying.
    fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
        let _ = (now, last_retry);
    }

    /// An attempt failed with `failure`.
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        let _ = (now, failure);
    }

    /// The server asked at `now` for no call before `wait` has passed (a 429 or 503 with a wait;
    /// `wait` is capped at the longest wait the run honours). A budget that paces the calls to a
    /// destination ([`GatedBudget`](crate::gate::GatedBudget)) learns from it; the default does
    /// nothing.
    fn server_wait(&self, now: Timestamp, wait: Duration) {
        let _ = (now, wait);
    }

    /// Whether the budget paces attempts ([`slot`](Budget::slot)). The engine asks for a slot
    /// only if it does, so a budget that does not costs nothing for it. The default is `false`.
    fn paces(&self) -> bool {
        false
    }

    /// When an attempt ready at `now` may be sent, if it must be sent before `limit`: now, at
    /// a slot reserved for it, or not before a time at or past `limit` (then nothing is
    /// reserved, and the run gives up). Asked once per attempt, only if
    /// [`paces`](Budget::paces). The default is [`Slot::Now`].
    fn slot(&self, now: Timestamp, limit: Option<Timestamp>) -> Slot {
        let _ = (now, limit);
        Slot::Now
    }

    /// The attempt the last [`slot`](Budget::slot) was for has begun. Called only if
    /// [`paces`](Budget::paces). The default does nothing.
    fn slot_taken(&self) {}

    /// The slot the last [`slot`](Budget::slot) reserved will not be used: the run ended before
    /// its attempt. Called only if [`paces`](Budget::paces). A run dropped while it waits for
    /// its slot does not call it: a pacing budget, which belongs to one run, hands the slot
    /// back when it is dropped. The default does nothing.
    fn slot_unused(&self) {}
}

/// When an attempt may be sent: what a budget that paces ([`Budget::slot`]) answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Now: the destination is not being paced, or its next slot has come.
    Now,
    /// At this time, reserved for this call.
    At(Timestamp),
    /// Not before this time, which is past the caller's deadline: nothing was reserved.
    PastDeadline(Timestamp),
}

/// No budget: every retry the policy allows goes ahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unlimited;

impl Budget for Unlimited {
    #[inline]
    fn try_retry(&self, _now: Timestamp, _failure: &Failure) -> Option<Spent> {
        Some(Spent(0))
    }
}

/// An optional budget: `None` is [`Unlimited`]. A configuration file's budget is optional, so
/// a layer built from one holds an `Option<Arc<AnyBudget>>`.
impl<B: Budget> Budget for Option<B> {
    #[inline]
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        self.as_ref().map_or(Ok(()), |b| b.bind(timeline))
    }
    #[inline]
    fn admit(&self, now: Timestamp) -> bool {
        self.as_ref().is_none_or(|b| b.admit(now))
    }
    #[inline]
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent> {
        match self {
            Some(b) => b.try_retry(now, failure),
            None => Some(Spent(0)),
        }
    }
    #[inline]
    fn retry_abandoned(&self, granted: Timestamp, spent: Spent) {
        if let Some(b) = self {
            b.retry_abandoned(granted, spent);
        }
    }
    #[inline]
    fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
        if let Some(b) = self {
            b.on_success(now, last_retry);
        }
    }
    #[inline]
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        if let Some(b) = self {
            b.on_failure(now, failure);
        }
    }
    #[inline]
    fn server_wait(&self, now: Timestamp, wait: Duration) {
        if let Some(b) = self {
            b.server_wait(now, wait);
        }
    }
    #[inline]
    fn paces(&self) -> bool {
        self.as_ref().is_some_and(Budget::paces)
    }
    #[inline]
    fn slot(&self, now: Timestamp, limit: Option<Timestamp>) -> Slot {
        self.as_ref().map_or(Slot::Now, |b| b.slot(now, limit))
    }
    #[inline]
    fn slot_taken(&self) {
        if let Some(b) = self {
            b.slot_taken();
        }
    }
    #[inline]
    fn slot_unused(&self) {
        if let Some(b) = self {
            b.slot_unused();
        }
    }
}

macro_rules! forward_budget {
    ($($ty:ty),*) => {$(
        impl<B: Budget + ?Sized> Budget for $ty {
            #[inline]
            fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
                (**self).bind(timeline)
            }
            #[inline]
            fn admit(&self, now: Timestamp) -> bool {
                (**self).admit(now)
            }
            #[inline]
            fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent> {
                (**self).try_retry(now, failure)
            }
            #[inline]
            fn retry_abandoned(&self, granted: Timestamp, spent: Spent) {
                (**self).retry_abandoned(granted, spent);
            }
            #[inline]
            fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
                (**self).on_success(now, last_retry);
            }
            #[inline]
            fn on_failure(&self, now: Timestamp, failure: &Failure) {
                (**self).on_failure(now, failure);
            }
            #[inline]
            fn server_wait(&self, now: Timestamp, wait: Duration) {
                (**self).server_wait(now, wait);
            }
            #[inline]
            fn paces(&self) -> bool {
                (**self).paces()
            }
            #[inline]
            fn slot(&self, now: Timestamp, limit: Option<Timestamp>) -> Slot {
                (**self).slot(now, limit)
            }
            #[inline]
            fn slot_taken(&self) {
                (**self).slot_taken();
            }
            #[inline]
            fn slot_unused(&self) {
                (**self).slot_unused();
            }
        }
    )*};
}

forward_budget!(&B, Arc<B>, Box<B>, std::rc::Rc<B>);
