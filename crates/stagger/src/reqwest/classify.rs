//! The middleware's classifiers: client errors by reqwest's own tests ([`ByTransport`]), and
//! responses by the HTTP rules ([`HttpClassifier`]).

use ::reqwest::Response;
use reqwest_middleware::Error;
use stagger_core::Failure;

use crate::classify::{Classifier, ClassifyOk};
use crate::clock::WallClock;
use crate::http::HttpClassifier;

/// The reqwest middleware's error classifier: a client error by reqwest's own tests, as the
/// [module docs](super) list them. A connection that could not be made had no effect
/// ([`Failure::Rejected`]), a timed-out request is a [`Failure::Timeout`], a builder error or a
/// redirect loop is permanent, another middleware's error is not second-guessed (permanent),
/// and any other error is [`Failure::Retryable`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ByTransport;

impl Classifier<Error> for ByTransport {
    #[inline]
    fn classify(&self, error: &Error) -> Failure {
        match error {
            Error::Reqwest(e) if e.is_builder() || e.is_redirect() => Failure::Permanent,
            Error::Reqwest(e) if e.is_connect() => Failure::Rejected,
            Error::Reqwest(e) if e.is_timeout() => Failure::Timeout,
            Error::Reqwest(_) => Failure::Retryable,
            // Another middleware's error: not ours to second-guess.
            Error::Middleware(_) => Failure::Permanent,
        }
    }
}

/// The classifier a middleware's response rules are, by default: the HTTP rules, at the time
/// the classifier's wall clock reads.
impl<W: WallClock> ClassifyOk<Response> for HttpClassifier<W> {
    type Kept = Response;

    #[inline]
    fn classify_ok(&self, response: &Response) -> Option<Failure> {
        self.classify_answer(response.status(), response.headers())
    }

    #[inline]
    fn keep(response: Response) -> Option<Response> {
        Some(response)
    }
}

/// A request's response classifier: the middleware's, borrowed.
pub(super) struct Borrowed<'a, V>(pub(super) &'a V);

impl<V: ClassifyOk<Response>> ClassifyOk<Response> for Borrowed<'_, V> {
    type Kept = V::Kept;

    #[inline]
    fn classify_ok(&self, response: &Response) -> Option<Failure> {
        self.0.classify_ok(response)
    }

    #[inline]
    fn keep(response: Response) -> Option<V::Kept> {
        V::keep(response)
    }
}
