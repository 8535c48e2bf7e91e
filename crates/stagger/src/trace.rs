//! `tracing` events, when the `tracing` feature is on; nothing otherwise.

use stagger_core::Failure;
use stagger_core::engine::{PlannedRetry, Stopped, Summary};

/// A retry will happen.
#[inline]
pub(crate) fn retrying(retry: &PlannedRetry, failure: &Failure) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        target: "stagger",
        attempt = retry.attempt,
        failure = failure.name(),
        delay_ms = retry.delay.as_secs_f64() * 1e3,
        elapsed_ms = retry.elapsed.as_secs_f64() * 1e3,
        remaining_ms = retry.remaining.map(|r| r.as_secs_f64() * 1e3),
        "retrying"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (retry, failure);
}

/// A hedged run sent attempt `number`, `elapsed` after it started, beside those in flight.
#[inline]
pub(crate) fn hedging(number: u32, elapsed: std::time::Duration) {
    #[cfg(feature = "tracing")]
    if number > 1 {
        tracing::debug!(
            target: "stagger",
            attempt = number,
            elapsed_ms = elapsed.as_secs_f64() * 1e3,
            "hedging"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (number, elapsed);
}

/// Attempt `number` of a hedged run failed with `failure`, and the run goes on.
#[inline]
pub(crate) fn hedge_lost(number: u32, failure: &Failure) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        target: "stagger",
        attempt = number,
        failure = failure.name(),
        "hedged attempt failed"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (number, failure);
}

/// The run gave up.
#[inline]
pub(crate) fn gave_up(stopped: &Stopped) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        target: "stagger",
        reason = stopped.reason.name(),
        attempts = stopped.summary.attempts,
        elapsed_ms = stopped.summary.elapsed.as_secs_f64() * 1e3,
        "gave up: {}",
        stopped.reason
    );
    #[cfg(not(feature = "tracing"))]
    let _ = stopped;
}

/// The run succeeded.
#[inline]
pub(crate) fn succeeded(summary: &Summary) {
    #[cfg(feature = "tracing")]
    if summary.attempts > 1 {
        tracing::debug!(
            target: "stagger",
            attempts = summary.attempts,
            elapsed_ms = summary.elapsed.as_secs_f64() * 1e3,
            "succeeded after retries"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = summary;
}

/// The span of one retried operation: entered while it runs (for async, during each poll), so
/// the operation's own events nest under it.
#[derive(Debug)]
pub(crate) struct RunSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

/// What [`RunSpan::enter`] returns: the span's guard, or nothing without the feature.
#[cfg(feature = "tracing")]
pub(crate) type Entered<'a> = tracing::span::Entered<'a>;
/// What [`RunSpan::enter`] returns: the span's guard, or nothing without the feature.
#[cfg(not(feature = "tracing"))]
pub(crate) type Entered<'a> = std::marker::PhantomData<&'a ()>;

impl RunSpan {
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(feature = "tracing")]
            span: tracing::debug_span!(target: "stagger", "retry"),
        }
    }

    pub(crate) fn enter(&self) -> Entered<'_> {
        #[cfg(feature = "tracing")]
        return self.span.enter();
        #[cfg(not(feature = "tracing"))]
        std::marker::PhantomData
    }
}
