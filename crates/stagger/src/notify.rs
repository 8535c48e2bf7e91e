//! The retry hook: told about every retry that will actually happen, and about the give-up.

use std::time::Duration;

use stagger_core::Failure;
use stagger_core::engine::{PlannedRetry, Stopped};

/// A retry about to happen: after attempt `attempt` failed, the executor waits `delay` before
/// the next one.
///
/// `result` is what the failed attempt returned: `Err(error)`, or `Ok(value)` for a value the
/// value classifier refused (a response with a retryable status, in the HTTP layers).
#[derive(Debug)]
#[non_exhaustive]
pub struct RetryEvent<'a, T, E> {
    /// The attempt that failed, 1 for the first.
    pub attempt: u32,
    /// What it returned.
    pub result: Result<&'a T, &'a E>,
    /// How it was classified.
    pub failure: Failure,
    /// The wait before the next attempt.
    pub delay: Duration,
    /// The time since the run started.
    pub elapsed: Duration,
    /// The time left before the deadline, before waiting; `None` without a deadline.
    pub remaining: Option<Duration>,
}

impl<T, E> RetryEvent<'_, T, E> {
    /// The error the attempt returned, if it returned one rather than a refused value.
    pub fn error(&self) -> Option<&E> {
        self.result.err()
    }
}

/// Receives [`RetryEvent`]s, and hears why a run gave up.
///
/// Implemented for `()` (nothing) and every `FnMut(&RetryEvent<T, E>)`, which `.notify(...)`
/// takes with its argument inferred. A type of your own that also wants to hear of give-ups
/// implements [`gave_up`](Notify::gave_up) and goes to `.notifier(...)`, on every front end.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive retry events for values `{T}` and errors `{E}`",
    note = "pass `.notify(|event| ...)`"
)]
pub trait Notify<T, E> {
    /// Called once per retry, before the wait.
    fn notify(&mut self, event: &RetryEvent<'_, T, E>);

    /// Called once when the run gives up, with why (the budget's refusals included) and what
    /// the attempts left, as [`RetryError`](crate::RetryError) keeps it: the refused value the
    /// run ended on, or the most recent error, if any. The default does nothing; closures
    /// receive only retries.
    fn gave_up(&mut self, stopped: &Stopped, last: Option<Result<&T, &E>>) {
        let _ = (stopped, last);
    }
}

impl<T, E> Notify<T, E> for () {
    #[inline(always)]
    fn notify(&mut self, _event: &RetryEvent<'_, T, E>) {}
}

impl<T, E, F: FnMut(&RetryEvent<'_, T, E>)> Notify<T, E> for F {
    fn notify(&mut self, event: &RetryEvent<'_, T, E>) {
        self(event);
    }
}

/// Announces a retry about to happen, after `result` classified as `failure`: to the trace,
/// then to the hook.
#[inline]
pub(crate) fn retrying<T, E, N: Notify<T, E>>(
    notify: &mut N,
    retry: &PlannedRetry,
    result: Result<&T, &E>,
    failure: Failure,
) {
    crate::trace::retrying(retry, &failure);
    notify.notify(&RetryEvent {
        attempt: retry.attempt,
        result,
        failure,
        delay: retry.delay,
        elapsed: retry.elapsed,
        remaining: retry.remaining,
    });
}
