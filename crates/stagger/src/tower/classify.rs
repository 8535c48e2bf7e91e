//! How the layer classifies the inner service's errors by default.

use std::error::Error;
use std::io;

use stagger_core::Failure;

use crate::classify::{Classifier, Classify};

/// The default classifier of the inner service's errors: by the [`std::io::Error`] that caused
/// it, if any, see [`io_cause`]. An error with no I/O cause is permanent.
///
/// Transport errors are only retried when they say what happened: a refused connection had no
/// effect ([`Failure::Rejected`], retried even for a POST); a reset or broken connection may
/// have delivered the request ([`Failure::Retryable`], retried for idempotent requests only); a
/// timed-out one too ([`Failure::Timeout`]). Anything else, including errors that wrap no I/O
/// error at all, is [`Failure::Permanent`]: retrying an error nobody classified is the blanket
/// catch-and-retry this library avoids. Pass your own classifier with
/// [`classify`](super::RetryLayer::classify) for what your client reports: with
/// hyper-util's client, for instance, `is_connect()` marks errors raised before the request was
/// sent, and hyper reports a connection closed before any response without an I/O cause.
///
/// It needs an error type that implements [`std::error::Error`]; for a boxed error (tower's
/// `BoxError`), pass `|e: &BoxError| io_cause(&**e)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByIoCause;

impl<E: Error + 'static> Classifier<E> for ByIoCause {
    #[inline]
    fn classify(&self, error: &E) -> Failure {
        io_cause(error)
    }
}

/// Classifies `error` by the first [`std::io::Error`] in its chain of sources (`error` itself
/// included), with that error's [`Classify`]: connection refused is
/// [`Rejected`](Failure::Rejected); reset, aborted, broken pipe, not connected, unexpected end
/// of file and interrupted are [`Retryable`](Failure::Retryable); timed out is
/// [`Timeout`](Failure::Timeout). An I/O error of kind `Other` that wraps another error is
/// looked through. Without an I/O cause, the error is [`Permanent`](Failure::Permanent).
///
/// ```
/// use std::io::{Error, ErrorKind};
/// use stagger::tower::io_cause;
/// use stagger::Failure;
///
/// #[derive(Debug)]
/// struct Wrapper(Error);
/// impl std::fmt::Display for Wrapper {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("request failed")
///     }
/// }
/// impl std::error::Error for Wrapper {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let refused = Wrapper(Error::from(ErrorKind::ConnectionRefused));
/// assert_eq!(io_cause(&refused), Failure::Rejected);
/// assert_eq!(io_cause(&Wrapper(Error::from(ErrorKind::ConnectionReset))), Failure::Retryable);
/// assert_eq!(io_cause(&std::fmt::Error), Failure::Permanent);
/// ```
#[must_use]
pub fn io_cause(error: &(dyn Error + 'static)) -> Failure {
    let mut current = Some(error);
    // A cycle of sources would be a bug elsewhere; do not follow one for ever.
    for _ in 0..32 {
        let Some(error) = current else { break };
        if let Some(io) = error.downcast_ref::<io::Error>() {
            match (io.kind(), io.get_ref()) {
                (io::ErrorKind::Other, Some(inner)) => {
                    current = Some(inner);
                    continue;
                }
                _ => return io.classify(),
            }
        }
        current = error.source();
    }
    Failure::Permanent
}
