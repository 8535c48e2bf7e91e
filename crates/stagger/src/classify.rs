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
use stagger_core::engine::StopReason as R;
#[cfg(doc)]
use stagger_core::engine::Stopped;

/// An error type that knows what kind of failure it is.
#[diagnostic::on_unimplemented(
    message = "no classifier for `{Self}`: pass `.classify(|e| ...)` returning a `Failure`, or implement `Classify` for `{Self}`",
    label = "the retry's errors are `{Self}`, which does not classify itself",
    note = "a retry asks what each error is before retrying it: `.classify(|e| ...)` decides, or `.classify(stagger::classify::retry_any)` to retry them all"
)]
pub trait Classify {
    /// The kind of failure this error is.
    fn classify(&self) -> Failure;
}

/// Decides what kind of failure an error is.
///
/// Implemented for every `Fn(&E) -> Failure`, so a closure or a function is a classifier:
/// `.classify(|e| ...)` infers the closure's argument. A classifier of another type (a struct
/// with settings of its own) is called from one: `.classify(move |e| mine.classify(e))`.
#[diagnostic::on_unimplemented(
    message = "no classifier for `{E}`: pass `.classify(|e| ...)` returning a `Failure`; `{Self}` cannot classify the operation's errors `{E}`",
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

/// A retry that gave up, seen by an outer layer: the facts of the inner run's last failure.
///
/// The outer layer sees what a single attempt would have shown it, and nothing the inner
/// layer's give-up reason would invent:
///
/// - **A give-up for safety stays final at every depth.** [`NotRetryable`](R::NotRetryable)
///   (a permanent failure), [`NotIdempotent`](R::NotIdempotent) (a failure that may have taken
///   effect, in an operation that must not be repeated) and an invalid configuration are
///   [`Failure::Permanent`], and so is any give-up of a run that is not idempotent and whose
///   last attempt may have taken effect ([`Stopped::may_repeat`]: a timeout at its deadline, a
///   success that came too late). So the stricter of the two layers' idempotency rules holds:
///   an inner layer that must not repeat a POST after a 503 stops an outer one from repeating
///   it.
/// - **Any other give-up is the last failure, exactly**: its class, whether it had an effect,
///   and the server's wait. A 503 after which the inner budget was exhausted is still a 503
///   that may have taken effect (a non-idempotent outer layer does not repeat it); a 429 whose
///   `Retry-After` was longer than the inner layer would wait is still a 429 with that wait,
///   which had no effect (the outer layer retries it if its own limit allows the wait). With
///   the default ownership of recovery, an inner executor makes one attempt and gives up with
///   [`OuterLayerOwnsRecovery`](R::OuterLayerOwnsRecovery), so the outer layer retries exactly
///   when a single attempt would have been retried.
/// - **An attempt that ran out the inner deadline**, cut short or succeeding too late, is a
///   [`Failure::Timeout`]: it may have taken effect.
/// - **A run that sent nothing** (its deadline passed before the first attempt, or its budget
///   refused it) has no failure to show, and nothing it did can have taken effect: a deadline
///   is [`Failure::Rejected`], the budget's refusal [`Failure::Throttled`]`(None)`.
///
/// ```
/// use stagger::budget::{BudgetConfig, TokenBucket};
/// use stagger::classify::Classify;
/// use stagger::engine::StopReason;
/// use stagger::policy::Constant;
/// use stagger::Failure;
///
/// // An inner run whose budget is empty gives up after one 503-like failure...
/// let empty = TokenBucket::AWS_STANDARD.with_capacity(1.0).budget()?;
/// let inner = stagger::blocking::retry(Constant::new(), |_| Err::<(), _>("503"))
///     .classify(|_: &&str| Failure::Retryable)
///     .budget(&empty)
///     .call();
/// let error = inner.unwrap_err();
/// assert_eq!(error.reason(), StopReason::BudgetExhausted);
/// // ...and an outer layer sees that 503, not a throttle that "had no effect".
/// assert_eq!(error.classify(), Failure::Retryable);
/// # Ok::<(), stagger::ConfigError>(())
/// ```
impl<E, T> Classify for crate::RetryError<E, T> {
    fn classify(&self) -> Failure {
        match self.reason() {
            R::NotRetryable | R::NotIdempotent | R::InvalidConfig => Failure::Permanent,
            // An operation that is not idempotent, whose last attempt may have taken effect, is
            // not repeated by any layer, whatever ended the inner run (its deadline, say).
            _ if !self.stopped().may_repeat() => Failure::Permanent,
            reason => match self.summary().last_failure {
                Some(failure) => failure,
                // Nothing was sent: every attempt that began ended with a failure on record.
                None if reason == R::BudgetRefusedFirstAttempt => Failure::Throttled(None),
                None => Failure::Rejected,
            },
        }
    }
}
