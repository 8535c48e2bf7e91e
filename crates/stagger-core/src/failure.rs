//! What went wrong, as a value.
//!
//! A policy is asked for a delay *after a failure*, and the kind of failure matters: nothing is
//! gained by retrying a failure the server calls permanent, a non-idempotent operation may only
//! be retried when the failed attempt is known to have had no effect, and a server's request to
//! wait is a floor under the next delay. Classification is deliberate: the caller (or a
//! classifier, such as the HTTP one) says which kind each error is, rather than retrying
//! everything.

use std::time::Duration;

/// The kind of a failed attempt.
///
/// | kind | retryable | known to have had no effect | server-directed wait |
/// |---|---|---|---|
/// | [`Retryable`](Failure::Retryable) | yes | no | no |
/// | [`Permanent`](Failure::Permanent) | no | - | no |
/// | [`Timeout`](Failure::Timeout) | yes | no | no |
/// | [`Rejected`](Failure::Rejected) | yes | yes | no |
/// | [`Throttled`](Failure::Throttled) | yes | yes | if given |
/// | [`RetryAfter`](Failure::RetryAfter) | yes | no | yes |
///
/// Policies give up on [`Failure::Permanent`] whatever their attempt budget, and treat every
/// other kind as retryable. The executor uses the rest: a server-directed wait is a floor under
/// the next delay, never undercut, and an operation declared non-idempotent is retried only after
/// a failure known to have had no effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Failure {
    /// A transient failure, such as an HTTP 500, 502 or 503, or a connection reset after the
    /// request was sent. Trying again may succeed; the attempt may have taken effect.
    Retryable,
    /// A failure that repetition will not fix, such as a validation error, or a server that
    /// said not to retry.
    Permanent,
    /// The attempt ran out of time. Its effect on the server is unknown: a client timeout is
    /// not proof that the server stopped or never committed.
    Timeout,
    /// The attempt was refused before it was processed: a connection refused, a request the
    /// server never read (HTTP 408), an explicit rejection. It had no effect.
    Rejected,
    /// The server shed the attempt to protect itself (HTTP 429, gRPC `RESOURCE_EXHAUSTED`)
    /// before processing it, with the wait it asked for, if any. It had no effect.
    Throttled(Option<Duration>),
    /// The server asked the client to wait at least this long before trying again (HTTP 503
    /// with `Retry-After`). The attempt may have taken effect.
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
    #[inline]
    #[must_use]
    pub const fn is_retryable(&self) -> bool {
        !matches!(self, Self::Permanent)
    }

    /// Whether the failed attempt is known to have had no effect, so that even a
    /// non-idempotent operation may be retried: [`Rejected`](Failure::Rejected) and
    /// [`Throttled`](Failure::Throttled).
    ///
    /// ```
    /// use stagger_core::Failure;
    /// assert!(Failure::Rejected.had_no_effect());
    /// assert!(Failure::Throttled(None).had_no_effect());
    /// assert!(!Failure::Timeout.had_no_effect()); // the server may have committed
    /// ```
    #[inline]
    #[must_use]
    pub const fn had_no_effect(&self) -> bool {
        matches!(self, Self::Rejected | Self::Throttled(_))
    }

    /// The wait the server asked for, if any: the floor under the next delay.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::Failure;
    /// let wait = Duration::from_secs(2);
    /// assert_eq!(Failure::RetryAfter(wait).retry_after(), Some(wait));
    /// assert_eq!(Failure::Throttled(Some(wait)).retry_after(), Some(wait));
    /// assert_eq!(Failure::Retryable.retry_after(), None);
    /// ```
    #[inline]
    #[must_use]
    pub const fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RetryAfter(wait) | Self::Throttled(Some(wait)) => Some(*wait),
            _ => None,
        }
    }

    /// The kind's name, as traces and reports write it.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Retryable => "retryable",
            Self::Permanent => "permanent",
            Self::Timeout => "timeout",
            Self::Rejected => "rejected",
            Self::Throttled(_) => "throttled",
            Self::RetryAfter(_) => "retry-after",
        }
    }
}

impl std::fmt::Display for Failure {
    /// The kind's name, with the server's wait when it asked for one: `throttled (retry after
    /// 2 s)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())?;
        match self.retry_after() {
            Some(wait) if !matches!(self, Self::RetryAfter(_)) => {
                write!(f, " (retry after {})", crate::duration::human(wait))
            }
            Some(wait) => write!(f, " {}", crate::duration::human(wait)),
            None => Ok(()),
        }
    }
}
