//! Classification: which failures are worth retrying, decided on purpose.
//!
//! A blanket catch-and-retry hides programming errors and can turn a small incident into an
//! overload. So the executors ask a [`Classifier`] what each error is. The default asks the
//! error itself, through [`Classify`]: implement it for your error type, or pass a closure to
//! `.classify(...)`. [`retry_any`] is the explicit way to retry everything.
//!
//! A success can be a failure too: a 200 whose body says "try later", an empty page. A
//! [`ClassifyOk`] (any `Fn(&T) -> Option<Failure>`, passed to `.classify_ok(...)`) looks at every
//! `Ok` value; `None` accepts it, a [`Failure`] retries it like an error. When such a run gives
//! up, the caller gets the last value back in the [`RetryError`](crate::RetryError), with the
//! reason, as the HTTP layers hand back the last response.

use std::convert::Infallible;

use stagger_core::Failure;

/// An error type that knows what kind of failure it is.
pub trait Classify {
    /// The kind of failure this error is.
    fn classify(&self) -> Failure;
}

/// Decides what kind of failure an error is.
///
/// Implemented for every `Fn(&E) -> Failure`, so a closure or a function is a classifier:
/// `.classify(|e| ...)` infers the closure's argument. A classifier of another type (a struct
/// with settings of its own) goes to `.classifier(...)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot classify the operation's errors `{E}`",
    note = "pass `.classify(|e| ...)` returning a `Failure`, or implement `Classify` for `{E}`"
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

/// Decides whether a successful attempt's value is a failure after all, and of what kind:
/// `None` accepts it.
///
/// Implemented for `()` (every value is a success: the default) and every
/// `Fn(&T) -> Option<Failure>`, such as `.classify_ok(|page| page.is_empty().then_some(
/// Failure::Retryable))`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot classify the operation's values `{T}`",
    note = "pass `.classify_ok(|value| ...)` returning an `Option<Failure>`"
)]
pub trait ClassifyOk<T> {
    /// What a [`RetryError`](crate::RetryError) keeps of a value the run gave up on: the value
    /// itself for a classifier that can refuse one, [`Infallible`] for `()`, which never does.
    type Kept;

    /// The kind of failure `value` is, or `None` if it is a success.
    fn classify_ok(&self, value: &T) -> Option<Failure>;

    /// The value as the error keeps it, once the run gave up on it.
    fn keep(value: T) -> Option<Self::Kept>;
}

/// Every value is a success.
impl<T> ClassifyOk<T> for () {
    type Kept = Infallible;

    #[inline(always)]
    fn classify_ok(&self, _value: &T) -> Option<Failure> {
        None
    }

    #[inline(always)]
    fn keep(_value: T) -> Option<Infallible> {
        None
    }
}

impl<T, F: Fn(&T) -> Option<Failure>> ClassifyOk<T> for F {
    type Kept = T;

    #[inline]
    fn classify_ok(&self, value: &T) -> Option<Failure> {
        self(value)
    }

    #[inline]
    fn keep(value: T) -> Option<T> {
        Some(value)
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
impl<E, T> Classify for crate::RetryError<E, T> {
    fn classify(&self) -> Failure {
        use stagger_core::engine::StopReason as R;
        match self.reason() {
            // Not to be repeated, by this layer or any other: a permanent failure, an
            // operation whose failure may have taken effect, an invalid configuration.
            R::NotRetryable | R::NotIdempotent | R::InvalidConfig => Failure::Permanent,
            R::Deadline => Failure::Timeout,
            R::BudgetExhausted | R::BudgetRefusedFirstAttempt => Failure::Throttled(None),
            R::ServerWaitTooLong { asked, .. } => Failure::RetryAfter(asked),
            _ => self.summary().last_failure.unwrap_or(Failure::Retryable),
        }
    }
}
