//! The budget hook: a shared limit on how much extra load retries may add.

use std::sync::Arc;

use crate::clock::Timestamp;
use crate::failure::Failure;

/// A retry budget shared by many runs: asked before each retry, told every outcome.
///
/// It takes `&self`, so one budget can be shared through an `Arc` by every request of a
/// service, across threads and tasks. Time comes from the engine's `now`, never from a clock of
/// its own.
pub trait Budget {
    /// May a first attempt go ahead? Client-side adaptive throttling may refuse even that. The
    /// default admits every first attempt.
    fn admit(&self, now: Timestamp) -> bool {
        let _ = now;
        true
    }

    /// May the run retry after `failure`? A budget that says yes has spent whatever the retry
    /// costs.
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> bool;

    /// An attempt succeeded; `retried` says whether it was a retry.
    fn on_success(&self, now: Timestamp, retried: bool) {
        let _ = (now, retried);
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
    fn try_retry(&self, _now: Timestamp, _failure: &Failure) -> bool {
        true
    }
}

impl<B: Budget + ?Sized> Budget for &B {
    fn admit(&self, now: Timestamp) -> bool {
        (**self).admit(now)
    }
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> bool {
        (**self).try_retry(now, failure)
    }
    fn on_success(&self, now: Timestamp, retried: bool) {
        (**self).on_success(now, retried);
    }
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        (**self).on_failure(now, failure);
    }
}

impl<B: Budget + ?Sized> Budget for Arc<B> {
    fn admit(&self, now: Timestamp) -> bool {
        (**self).admit(now)
    }
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> bool {
        (**self).try_retry(now, failure)
    }
    fn on_success(&self, now: Timestamp, retried: bool) {
        (**self).on_success(now, retried);
    }
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        (**self).on_failure(now, failure);
    }
}
