//! Classification: which failures are worth retrying, decided on purpose.
//!
//! A blanket catch-and-retry hides programming errors and can turn a small incident into an
//! overload. So the executors ask a [`Classifier`] what each error is. The default asks the
//! error itself, through [`Classify`]: implement it for your error type, or pass a closure to
//! `.classify(...)`. [`retry_any`] is the explicit way to retry everything.

use stagger_core::Failure;

/// An error type that knows what kind of failure it is.
pub trait Classify {
    /// The kind of failure this error is.
    fn classify(&self) -> Failure;
}

/// Decides what kind of failure an error is.
///
/// Implemented for every `Fn(&E) -> Failure`, so a closure is a classifier. Give the closure's
/// argument its type (`|e: &MyError| ...`): the builder does not know the error type yet.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot classify the operation's errors `{E}`",
    note = "pass `.classify(|e: &{E}| ...)` returning a `Failure`, or implement `Classify` for `{E}`"
)]
pub trait Classifier<E> {
    /// The kind of failure `error` is.
    fn classify(&self, error: &E) -> Failure;
}

impl<E, F: Fn(&E) -> Failure> Classifier<E> for F {
    #[inline]
    fn classify(&self, error: &E) -> Failure {
        self(error)
    }
}

/// The default classifier: asks the error, through its [`Classify`] implementation.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByKind;

impl<E: Classify> Classifier<E> for ByKind {
    #[inline]
    fn classify(&self, error: &E) -> Failure {
        error.classify()
    }
}

/// Treats every error as retryable: the blanket catch-and-retry, for when you mean it.
///
/// ```
/// use stagger::classify::retry_any;
/// use stagger::Failure;
/// assert_eq!(retry_any(&"anything"), Failure::Retryable);
/// ```
pub fn retry_any<E: ?Sized>(_error: &E) -> Failure {
    Failure::Retryable
}

/// I/O errors: a refused connection had no effect; a timeout's effect is unknown; resets and
/// interruptions are transient; everything else (not found, permission denied, invalid input,
/// ...) is permanent.
///
/// ```
/// use std::io::{Error, ErrorKind};
/// use stagger::classify::Classify;
/// use stagger::Failure;
///
/// assert_eq!(Error::from(ErrorKind::ConnectionRefused).classify(), Failure::Rejected);
/// assert_eq!(Error::from(ErrorKind::TimedOut).classify(), Failure::Timeout);
/// assert_eq!(Error::from(ErrorKind::NotFound).classify(), Failure::Permanent);
/// ```
impl Classify for std::io::Error {
    fn classify(&self) -> Failure {
        use std::io::ErrorKind as K;
        match self.kind() {
            K::ConnectionRefused | K::AddrNotAvailable => Failure::Rejected,
            K::TimedOut | K::WouldBlock => Failure::Timeout,
            K::ConnectionReset
            | K::ConnectionAborted
            | K::BrokenPipe
            | K::NotConnected
            | K::UnexpectedEof
            | K::Interrupted => Failure::Retryable,
            _ => Failure::Permanent,
        }
    }
}

/// A retry that gave up, seen by an outer layer: what its stop means for the layer above.
///
/// With the default ownership of recovery, an inner executor makes one attempt and gives up
/// with [`OuterLayerOwnsRecovery`](stagger_core::engine::StopReason::OuterLayerOwnsRecovery);
/// the outer layer then classifies the inner error by its last failure, and so retries exactly
/// when a single attempt would have been retried.
impl<E> Classify for crate::RetryError<E> {
    fn classify(&self) -> Failure {
        use stagger_core::engine::StopReason as R;
        match self.reason() {
            R::NotRetryable => Failure::Permanent,
            R::Deadline => Failure::Timeout,
            R::BudgetExhausted | R::BudgetRefusedFirstAttempt => Failure::Throttled(None),
            R::ServerWaitTooLong { asked, .. } => Failure::RetryAfter(asked),
            _ => self.summary().last_failure.unwrap_or(Failure::Retryable),
        }
    }
}
