//! What went wrong, as a value.
//!
//! A policy is asked for a delay *after a failure*, and the kind of failure matters: nothing is
//! gained by retrying a failure the server calls permanent. Classification is deliberate: the
//! caller (or a classifier) says which kind each error is, rather than retrying everything.

use std::time::Duration;

/// The kind of a failed attempt.
///
/// Policies give up on [`Failure::Permanent`] whatever their attempt budget, and treat every
/// other kind as retryable. The executor uses the finer kinds for the rest of the contract: a
/// [`RetryAfter`](Failure::RetryAfter) is a floor under the next delay, and a
/// [`Timeout`](Failure::Timeout) may have taken effect on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Failure {
    /// A transient failure: trying again may succeed.
    Retryable,
    /// A failure that repetition will not fix, such as a validation error.
    Permanent,
    /// The server rejected the attempt to shed load, before processing it.
    Throttled,
    /// The attempt ran out of time. Its effect on the server is unknown.
    Timeout,
    /// The server asked the client to wait at least this long before trying again.
    RetryAfter(Duration),
}

impl Failure {
    /// Whether a retry may help: every kind but [`Failure::Permanent`].
    ///
    /// ```
    /// use stagger_core::Failure;
    /// assert!(Failure::Timeout.is_retryable());
    /// assert!(!Failure::Permanent.is_retryable());
    /// ```
    #[must_use]
    pub const fn is_retryable(&self) -> bool {
        !matches!(self, Self::Permanent)
    }
}
