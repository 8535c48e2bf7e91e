//! What the layer needs to be told: the policy to build for each request, and how to classify
//! responses and the inner service's errors.

use std::error::Error;
use std::io;

use http::Response;
use stagger_core::policy::{
    AnyConfig, AnyPolicy, Backoff, Constant, DecorrelatedJitter, DecorrelatedJitterV2, Immediate,
    Linear, NoRetry, Spread,
};
use stagger_core::{ConfigError, Failure, Policy, PolicyConfig, SeededRng};

use crate::classify::{Classifier, Classify};
use crate::clock::WallClock;
use crate::http::HttpClassifier;

/// A policy configuration from which the layer builds a fresh running policy for each request.
///
/// Implemented for every configuration in the catalog and for [`AnyConfig`] (a policy loaded
/// from a configuration file). Each request gets its own policy with its own generator, seeded
/// from process entropy, so no two requests share a jitter sequence. It is built only when the
/// request's first attempt fails: a request that succeeds at once builds nothing.
///
/// For a policy of your own, implement this for its configuration.
pub trait MakePolicy {
    /// The running policy.
    type Policy: Policy;

    /// The most attempts a request makes, counting the first.
    fn max_attempts(&self) -> u32;

    /// Checks the configuration; [`RetryLayer::new`](super::RetryLayer::new) calls it once.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] naming the first invalid parameter.
    fn validate(&self) -> Result<(), ConfigError>;

    /// A fresh running policy, with its own generator seeded from process entropy
    /// ([`SeededRng::from_entropy`]).
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](MakePolicy::validate).
    fn make_policy(&self) -> Result<Self::Policy, ConfigError>;
}

macro_rules! make_catalog_policy {
    ($($ty:ty),* $(,)?) => {$(
        impl MakePolicy for $ty {
            type Policy = <$ty as PolicyConfig>::Policy<SeededRng>;

            fn max_attempts(&self) -> u32 {
                PolicyConfig::max_attempts(self)
            }

            fn validate(&self) -> Result<(), ConfigError> {
                PolicyConfig::validate(self)
            }

            fn make_policy(&self) -> Result<Self::Policy, ConfigError> {
                PolicyConfig::policy(*self)
            }
        }
    )*};
}

make_catalog_policy!(
    Constant,
    Linear,
    DecorrelatedJitter,
    DecorrelatedJitterV2,
    Immediate,
    NoRetry
);

/// The exponential family: `Exponential`, `ExponentialFullJitter`, `ExponentialEqualJitter`,
/// `ExponentialSubtractiveJitter`, `ExponentialProportionalJitter`.
impl<S: Spread> MakePolicy for Backoff<S> {
    type Policy = <Self as PolicyConfig>::Policy<SeededRng>;

    fn max_attempts(&self) -> u32 {
        PolicyConfig::max_attempts(self)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        PolicyConfig::validate(self)
    }

    fn make_policy(&self) -> Result<Self::Policy, ConfigError> {
        PolicyConfig::policy(*self)
    }
}

impl MakePolicy for AnyConfig {
    type Policy = AnyPolicy<SeededRng>;

    fn max_attempts(&self) -> u32 {
        AnyConfig::max_attempts(self)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        AnyConfig::validate(self)
    }

    fn make_policy(&self) -> Result<Self::Policy, ConfigError> {
        self.policy()
    }
}

/// Decides whether a response is a failure, and of what kind: `None` for a response to hand
/// back to the caller as it is.
///
/// Implemented for [`HttpClassifier`] (the default, see [`crate::http`]) and for every
/// `Fn(&Response<B>) -> Option<Failure>`, so a closure can classify responses, for instance to
/// defer to the HTTP classifier except for one status.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot classify responses `http::Response<{B}>`",
    note = "pass `.classify_responses(|r: &http::Response<{B}>| ...)` returning `Option<Failure>`"
)]
pub trait ClassifyResponse<B> {
    /// The kind of failure `response` is, or `None` if it is not one.
    fn classify_response(&self, response: &Response<B>) -> Option<Failure>;
}

impl<B, W: WallClock> ClassifyResponse<B> for HttpClassifier<W> {
    #[inline]
    fn classify_response(&self, response: &Response<B>) -> Option<Failure> {
        // Below 400 nothing is a failure: answer without reading the wall clock.
        if response.status().as_u16() < 400 {
            return None;
        }
        HttpClassifier::classify_response(self, response)
    }
}

impl<B, F: Fn(&Response<B>) -> Option<Failure>> ClassifyResponse<B> for F {
    #[inline]
    fn classify_response(&self, response: &Response<B>) -> Option<Failure> {
        self(response)
    }
}

/// The default classifier of the inner service's errors: by the [`std::io::Error`] that caused
/// it, if any, see [`io_cause`]. An error with no I/O cause is permanent.
///
/// Transport errors are only retried when they say what happened: a refused connection had no
/// effect ([`Failure::Rejected`], retried even for a POST); a reset or broken connection may
/// have delivered the request ([`Failure::Retryable`], retried for idempotent requests only); a
/// timed-out one too ([`Failure::Timeout`]). Anything else, including errors that wrap no I/O
/// error at all, is [`Failure::Permanent`]: retrying an error nobody classified is the blanket
/// catch-and-retry this library avoids. Pass your own classifier with
/// [`classify_errors`](super::RetryLayer::classify_errors) for what your client reports: with
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
