//! The blocking executor: the same builder and names as the async one, run with
//! [`call`](Retry::call).
//!
//! A blocking attempt cannot be cancelled. The executor tells each attempt the time left, so it
//! can bound its own I/O, and checks the deadline as soon as the attempt returns.

use stagger_core::engine::{Attempt, Budget};
use stagger_core::{Clock, MonotonicClock, Policy};

use crate::blocking_sleep::{BlockingSleeper, ThreadSleeper};
use crate::classify::Classifier;
use crate::nesting;
use crate::notify::Notify;
use crate::retry::{Driver, Outcome, Retry};
use crate::trace;

/// Retries the blocking operation `op` under `policy`. `op` receives each [`Attempt`]: its
/// number and the time left before the deadline.
///
/// ```
/// use std::time::Duration;
/// use stagger::policy::Constant;
/// use stagger::{Failure, PolicyConfig};
///
/// let policy = Constant::new().with_base(Duration::ZERO).with_max_attempts(3).policy()?;
/// let result = stagger::blocking::retry(policy, |attempt| {
///     if attempt.number < 2 { Err("flaky") } else { Ok(attempt.number) }
/// })
/// .classify(|_: &&str| Failure::Retryable)
/// .call();
/// assert_eq!(result.unwrap(), 2);
/// # Ok::<(), stagger::ConfigError>(())
/// ```
pub fn retry<P, F, T, E>(
    policy: P,
    op: F,
) -> Retry<F, P, crate::classify::ByKind, ThreadSleeper, MonotonicClock>
where
    P: Policy,
    F: FnMut(Attempt) -> Result<T, E>,
{
    Retry::with_defaults(op, policy, ThreadSleeper, MonotonicClock::new())
}

/// `.retry(policy)` on any blocking operation that takes no arguments.
pub trait Retryable<T, E>: Sized {
    /// Retries this operation under `policy`; see [`retry`].
    fn retry<P: Policy>(
        self,
        policy: P,
    ) -> Retry<
        impl FnMut(Attempt) -> Result<T, E>,
        P,
        crate::classify::ByKind,
        ThreadSleeper,
        MonotonicClock,
    >;
}

impl<F, T, E> Retryable<T, E> for F
where
    F: FnMut() -> Result<T, E>,
{
    fn retry<P: Policy>(
        mut self,
        policy: P,
    ) -> Retry<
        impl FnMut(Attempt) -> Result<T, E>,
        P,
        crate::classify::ByKind,
        ThreadSleeper,
        MonotonicClock,
    > {
        retry(policy, move |_: Attempt| self())
    }
}

impl<F, P, C, S, K, B, N, T, E> Retry<F, P, C, S, K, B, N>
where
    F: FnMut(Attempt) -> Result<T, E>,
    P: Policy,
    C: Classifier<E>,
    S: BlockingSleeper,
    K: Clock,
    B: Budget,
    N: Notify<E>,
{
    /// Runs the operation, retrying as configured, and returns its value or why it gave up.
    ///
    /// # Errors
    ///
    /// A [`RetryError`](crate::RetryError) with the reason, the summary and the last error.
    #[inline]
    pub fn call(self) -> Result<T, crate::RetryError<E>> {
        self.call_outcome().result
    }

    /// Like [`call`](Retry::call), and also reports what the executor did, on success too.
    #[inline]
    pub fn call_outcome(self) -> Outcome<T, E> {
        let mut driver = Driver::start(self);
        let span = trace::RunSpan::new();
        let _span = span.enter();
        let mut last_error = None;
        loop {
            let now = driver.attempt_time();
            if let Some(rest) = driver.run.too_early(now) {
                // The sleeper woke before the server's wait was over: wait again.
                driver.sleeper.sleep(rest);
                continue;
            }
            let attempt = match driver.run.begin(now) {
                Ok(attempt) => attempt,
                Err(stop) => return driver.stopped(stop, last_error),
            };
            let result = {
                let _inside = nesting::enter();
                (driver.op)(attempt)
            };
            let now = driver.clock.now();
            let next = match result {
                Ok(value) => match driver.run.succeeded(now) {
                    Ok(summary) => {
                        trace::succeeded(&summary);
                        return Outcome {
                            result: Ok(value),
                            summary,
                        };
                    }
                    Err(stop) => Err(stop),
                },
                Err(error) => {
                    let next = driver.failed(now, &error);
                    last_error = Some(error);
                    next
                }
            };
            match next {
                // A zero delay does not touch the sleeper.
                Ok(retry) if retry.delay.is_zero() => {}
                Ok(retry) => driver.sleeper.sleep(retry.delay),
                Err(stop) => return driver.stopped(stop, last_error),
            }
        }
    }
}
