//! What a retrying HTTP layer did for a response's request, and what it hands back.

use std::convert::Infallible;

use stagger_core::engine::{StopReason, Summary};

use crate::retry_error::{Last, Outcome, RetryError};

/// A response extension set by the HTTP integrations (the tower layer and the reqwest
/// middleware): what the layer did for this response's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryReport {
    /// Attempts made, time waited, time elapsed, and the last failure's kind.
    pub summary: Summary,
    /// Why the layer gave up and returned this (failed) response; `None` on success.
    pub gave_up: Option<StopReason>,
}

/// A response that carries extensions, so that it can carry its [`RetryReport`].
pub(crate) trait Reported {
    fn extensions_mut(&mut self) -> &mut http::Extensions;
}

impl<B> Reported for http::Response<B> {
    fn extensions_mut(&mut self) -> &mut http::Extensions {
        http::Response::extensions_mut(self)
    }
}

/// What an HTTP layer hands back for a run's outcome, the same in every integration.
///
/// - A response the classifier accepted, with its report.
/// - The last response when the run gave up for any reason but the deadline (the 503 after the
///   last attempt, a POST's 503, a wait too long to honour), as without the layer, with its
///   report saying why.
/// - Otherwise the error: the deadline passed (a response that arrived at or after it
///   included), the last attempt ended in the inner client's error, the request's
///   configuration was invalid, or no attempt could be made.
pub(crate) fn settle<R: Reported, E>(outcome: Outcome<R, E, R>) -> Result<R, RetryError<E>> {
    let summary = outcome.summary;
    let error = match outcome.result {
        Ok(response) => return Ok(report(response, summary, None)),
        Err(error) => error,
    };
    let (stopped, last) = error.into_parts();
    let last: Last<E, Infallible> = match last {
        Last::Value(response) if stopped.reason != StopReason::Deadline => {
            return Ok(report(response, summary, Some(stopped.reason)));
        }
        Last::Value(_) | Last::Nothing => Last::Nothing,
        Last::Error(error) => Last::Error(error),
        Last::Invalid(error) => Last::Invalid(error),
    };
    Err(RetryError::new(stopped, last))
}

/// `response` with its [`RetryReport`].
fn report<R: Reported>(mut response: R, summary: Summary, gave_up: Option<StopReason>) -> R {
    response
        .extensions_mut()
        .insert(RetryReport { summary, gave_up });
    response
}
