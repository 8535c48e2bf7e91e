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
//! | [`TokenBucket`] `aws-standard`, `aws-2026`, `brooker` | retries by a bucket that successes (or calls) refill | AWS SDKs' retry quota; Brooker 2022 |
//! | [`Ratio`] `finagle` | retries to a percentage of requests over a ttl, plus a floor | Finagle `RetryBudget` |
//! | [`GrpcThrottle`] `grpc-throttle` | no retries while failures dominate | gRFC A6 retry throttling |
//! | [`SreAdaptive`] `sre-adaptive` | every attempt, first ones too, to about `K` × accepts | Google SRE book, ch. 21 |
//! | [`Breaker`] `breaker` | no retries while the failure ratio is above a threshold | Brooker 2022 |
//!
//! [`Budget`] is a small trait that takes `&self`: one budget is shared through an `Arc` by
//! every request, across threads and tasks. Time comes from the engine's `now`, never from a
//! clock of the budget's own, so a budget is deterministic under a manual clock and in the
//! simulator.

pub mod breaker;
pub mod grpc_throttle;
mod kind;
pub mod ratio;
pub mod sre_adaptive;
pub mod token_bucket;
mod window;

pub use breaker::{Breaker, BreakerConfig};
pub use grpc_throttle::{GrpcThrottle, GrpcThrottleConfig};
pub use kind::{AnyBudget, BudgetKind};
pub use ratio::{Ratio, RatioConfig};
pub use sre_adaptive::{SreAdaptive, SreAdaptiveConfig};
pub use token_bucket::{TokenBucket, TokenBucketConfig};

use std::sync::Arc;

use crate::clock::Timestamp;
use crate::failure::Failure;

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
pub trait Budget {
    /// May a first attempt go ahead? Client-side adaptive throttling may refuse even that. The
    /// default admits every first attempt.
    fn admit(&self, now: Timestamp) -> bool {
        let _ = now;
        true
    }

    /// May the run retry after `failure`? `Some` grants it, with what it cost; `None` refuses.
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent>;

    /// An attempt succeeded. `last_retry` is the receipt of the run's latest retry, `None` if
    /// the run succeeded without retrying.
    fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
        let _ = (now, last_retry);
    }

    /// An attempt failed with `failure`.
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        let _ = (now, failure);
    }
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

macro_rules! forward_budget {
    ($($ty:ty),*) => {$(
        impl<B: Budget + ?Sized> Budget for $ty {
            #[inline]
            fn admit(&self, now: Timestamp) -> bool {
                (**self).admit(now)
            }
            #[inline]
            fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent> {
                (**self).try_retry(now, failure)
            }
            #[inline]
            fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
                (**self).on_success(now, last_retry);
            }
            #[inline]
            fn on_failure(&self, now: Timestamp, failure: &Failure) {
                (**self).on_failure(now, failure);
            }
        }
    )*};
}

forward_budget!(&B, Arc<B>, Box<B>, std::rc::Rc<B>);
