//! What the executors retry: an operation, one attempt at a time.
//!
//! [`retry`](crate::retry) and [`blocking::retry`](crate::blocking::retry) wrap a closure in
//! [`AsyncFn`] or [`BlockingFn`]; the tower layer and the reqwest middleware are operations of
//! their own, driven by the same executor. Implement these traits only to drive something other
//! than a closure (an integration, say); a closure needs none of this.

use std::future::Future;
use std::task::{Context, Poll};

use stagger_core::engine::Attempt;

/// An operation's outcome types: what one attempt returns.
pub trait Operation {
    /// What a successful attempt returns.
    type Value;
    /// What a failed attempt returns.
    type Error;
}

/// An operation whose attempts are futures, for the async executor.
#[diagnostic::on_unimplemented(
    message = "a blocking retry runs with `.call()`, not `.await`: `{Self}` is not an async operation",
    label = "this blocking retry is awaited",
    note = "run it with `.call()` (on a thread that may block), or retry an async operation with `stagger::retry`"
)]
pub trait AsyncOperation: Operation {
    /// The future of one attempt.
    type Attempt: Future<Output = Result<Self::Value, Self::Error>>;

    /// Starts attempt `attempt`: its number and the time left before the deadline.
    fn attempt(&mut self, attempt: Attempt) -> Self::Attempt;

    /// Gets ready before the first attempt, under the run's deadline (reading a request body
    /// into memory, say), and answers the most attempts the operation can make: `u32::MAX`, or
    /// 1 for one that cannot be repeated. `retries_possible` is false when the run will make a
    /// single attempt whatever happens (it is nested), so that the operation can skip work
    /// that only retries need. The default is ready at once, with no limit.
    fn poll_prepare(&mut self, cx: &mut Context<'_>, retries_possible: bool) -> Poll<u32> {
        let _ = (cx, retries_possible);
        Poll::Ready(u32::MAX)
    }

    /// Gets ready for the next attempt, under the run's deadline (a tower service made ready,
    /// say), after any wait and before the attempt begins, so that the attempt is stamped with
    /// the time it is actually sent. An error ends the run at once, with
    /// [`StopReason::NotRetryable`](stagger_core::engine::StopReason::NotRetryable) and this
    /// error as the last: the attempt was not made, so nothing is classified and a retry the
    /// budget granted for it goes back to the budget. The default is ready at once.
    #[inline(always)]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let _ = cx;
        Poll::Ready(Ok(()))
    }

    /// The next attempt must wait (a gate holds it to a later slot): give up any readiness
    /// gained so far, so that nothing is held during the wait (a tower service's permit), and
    /// get ready again with [`poll_ready`](AsyncOperation::poll_ready) after it. The default
    /// holds nothing.
    #[inline(always)]
    fn unready(&mut self) {}
}

/// An operation whose attempts block, for the blocking executor.
pub trait BlockingOperation: Operation {
    /// Makes attempt `attempt`.
    fn attempt(&mut self, attempt: Attempt) -> Result<Self::Value, Self::Error>;
}

/// An async closure as an operation: `FnMut(Attempt) -> impl Future<Output = Result<T, E>>`.
#[derive(Clone, Copy, Debug)]
pub struct AsyncFn<F>(pub F);

impl<F, Fut, T, E> Operation for AsyncFn<F>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Value = T;
    type Error = E;
}

impl<F, Fut, T, E> AsyncOperation for AsyncFn<F>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Attempt = Fut;

    #[inline(always)]
    fn attempt(&mut self, attempt: Attempt) -> Fut {
        (self.0)(attempt)
    }
}

/// A blocking closure as an operation: `FnMut(Attempt) -> Result<T, E>`.
#[derive(Clone, Copy, Debug)]
pub struct BlockingFn<F>(pub F);

impl<F, T, E> Operation for BlockingFn<F>
where
    F: FnMut(Attempt) -> Result<T, E>,
{
    type Value = T;
    type Error = E;
}

impl<F, T, E> BlockingOperation for BlockingFn<F>
where
    F: FnMut(Attempt) -> Result<T, E>,
{
    #[inline(always)]
    fn attempt(&mut self, attempt: Attempt) -> Result<T, E> {
        (self.0)(attempt)
    }
}
