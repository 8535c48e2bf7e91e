//! The retry hook: told about every retry that will actually happen.

use std::time::Duration;

use stagger_core::Failure;
use stagger_core::engine::{Retry, Stopped};

/// A retry about to happen: after attempt `attempt` failed with `error`, the executor waits
/// `delay` before the next one.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetryEvent<'a, E> {
    /// The attempt that failed, 1 for the first.
    pub attempt: u32,
    /// The error it returned.
    pub error: &'a E,
    /// How the error was classified.
    pub failure: Failure,
    /// The wait before the next attempt.
    pub delay: Duration,
    /// The time since the run started.
    pub elapsed: Duration,
    /// The time left before the deadline, before waiting; `None` without a deadline.
    pub remaining: Option<Duration>,
}

/// Receives [`RetryEvent`]s. Implemented for `()` (nothing) and every `FnMut(&RetryEvent<E>)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive retry events for errors `{E}`",
    note = "pass `.notify(|event: &RetryEvent<'_, {E}>| ...)`"
)]
pub trait Notify<E> {
    /// Called once per retry, before the wait.
    fn notify(&mut self, event: &RetryEvent<'_, E>);

    /// Called once when the run gives up, with why (the budget's refusals included) and the
    /// last error. The default does nothing; closures receive only retries.
    fn gave_up(&mut self, stopped: &Stopped, last_error: Option<&E>) {
        let _ = (stopped, last_error);
    }
}

impl<E> Notify<E> for () {
    #[inline]
    fn notify(&mut self, _event: &RetryEvent<'_, E>) {}
}

impl<E, F: FnMut(&RetryEvent<'_, E>)> Notify<E> for F {
    fn notify(&mut self, event: &RetryEvent<'_, E>) {
        self(event);
    }
}

/// Announces a retry about to happen, after `error` classified as `failure`: to the trace,
/// then to the hook.
pub(crate) fn retrying<E, N: Notify<E>>(
    notify: &mut N,
    retry: &Retry,
    error: &E,
    failure: Failure,
) {
    crate::trace::retrying(retry, &failure);
    notify.notify(&RetryEvent {
        attempt: retry.attempt,
        error,
        failure,
        delay: retry.delay,
        elapsed: retry.elapsed,
        remaining: retry.remaining,
    });
}
