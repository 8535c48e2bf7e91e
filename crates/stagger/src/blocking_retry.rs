//! The blocking executor: the same builder and driver as the async one, run with
//! [`call`](Retry::call).
//!
//! A blocking attempt cannot be cancelled. The executor tells each attempt the time left, so it
//! can bound its own I/O, and checks the deadline as soon as the attempt returns.

use stagger_core::engine::Attempt;
use stagger_core::{IntoPolicy, MonotonicClock};

use crate::blocking_sleep::{BlockingSleeper, ThreadSleeper};
use crate::classify::ByKind;
use crate::driver::{After, Driver, Next, OutcomeOf, ResultOf};
use crate::hooks::{Hooks, HooksFor};
use crate::nesting;
use crate::operation::{BlockingFn, BlockingOperation};
use crate::retry::Retry;
use crate::trace;

/// The hooks of a blocking retry by default: the thread's sleep and the monotonic clock.
pub type BlockingHooks = Hooks<ByKind, (), ThreadSleeper, MonotonicClock>;

/// Retries the blocking operation `op` under `policy`: a configuration of the catalog, or a
/// policy already built. `op` receives each [`Attempt`]: its number and the time left before
/// the deadline.
///
/// ```
/// use std::time::Duration;
/// use stagger::policy::Constant;
/// use stagger::Failure;
///
/// let policy = Constant::new().with_base(Duration::ZERO).with_max_attempts(3);
/// let result = stagger::blocking::retry(policy, |attempt| {
///     if attempt.number < 2 { Err("flaky") } else { Ok(attempt.number) }
/// })
/// .classify(|_| Failure::Retryable)
/// .call();
/// assert_eq!(result.unwrap(), 2);
/// ```
pub fn retry<P, F, T, E>(policy: P, op: F) -> Retry<BlockingFn<F>, P, BlockingHooks>
where
    P: IntoPolicy,
    F: FnMut(Attempt) -> Result<T, E>,
{
    Retry::new(
        BlockingFn(op),
        policy,
        Hooks::with_time(ThreadSleeper, MonotonicClock::new()),
    )
}

/// `.retry(policy)` on any blocking operation that takes no arguments: the blocking twin of
/// [`Retryable`](crate::Retryable).
///
/// ```
/// use stagger::Failure;
/// use stagger::blocking::BlockingRetryable;
/// use stagger::policy::Immediate;
///
/// let mut calls = 0;
/// let value = (|| {
///     calls += 1;
///     if calls < 3 { Err("busy") } else { Ok(calls) }
/// })
/// .retry(Immediate::new())
/// .classify(|_| Failure::Retryable)
/// .call();
/// assert_eq!(value.unwrap(), 3);
/// ```
pub trait BlockingRetryable<T, E>: Sized {
    /// Retries this operation under `policy`; see [`retry`].
    fn retry<P: IntoPolicy>(
        self,
        policy: P,
    ) -> Retry<BlockingFn<impl FnMut(Attempt) -> Result<T, E>>, P, BlockingHooks>;
}

impl<F, T, E> BlockingRetryable<T, E> for F
where
    F: FnMut() -> Result<T, E>,
{
    fn retry<P: IntoPolicy>(
        mut self,
        policy: P,
    ) -> Retry<BlockingFn<impl FnMut(Attempt) -> Result<T, E>>, P, BlockingHooks> {
        retry(policy, move |_: Attempt| self())
    }
}

impl<O, P, H> Retry<O, P, H>
where
    O: BlockingOperation,
    P: IntoPolicy,
    H: HooksFor<O>,
    H::Sleeper: BlockingSleeper,
{
    /// Runs the operation, retrying as configured, and returns its value or why it gave up.
    ///
    /// # Errors
    ///
    /// A [`RetryError`](crate::RetryError) with the reason, the summary and what the last attempt returned.
    #[inline]
    pub fn call(self) -> ResultOf<O, H> {
        self.call_outcome().result
    }

    /// Like [`call`](Retry::call), and also reports what the executor did, on success too.
    #[inline]
    pub fn call_outcome(self) -> OutcomeOf<O, H> {
        let span = trace::RunSpan::new();
        let _span = span.enter();
        let mut driver = match Driver::start(self) {
            Ok(driver) => driver,
            Err(outcome) => return outcome,
        };
        loop {
            let attempt = match driver.next() {
                Next::Attempt(attempt) => attempt,
                Next::Wait(rest) => {
                    // The sleeper woke before the server's wait was over, or a gate holds the
                    // attempt to a later slot: wait.
                    driver.sleeper.sleep(rest);
                    continue;
                }
                Next::Done(outcome) => return outcome,
            };
            let result = {
                let _inside = nesting::enter();
                driver.op.attempt(attempt)
            };
            match driver.after(result) {
                // A zero delay does not touch the sleeper.
                After::Retry(delay) if delay.is_zero() => {}
                After::Retry(delay) => driver.sleeper.sleep(delay),
                After::Done(outcome) => return outcome,
            }
        }
    }
}
