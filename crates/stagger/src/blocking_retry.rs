//! The blocking executor: [`BlockingRetry`], with the same settings and driver as the async
//! one, run with [`call`](BlockingRetry::call).
//!
//! A blocking attempt cannot be cancelled. The executor tells each attempt the time left, so it
//! can bound its own I/O, and checks the deadline as soon as the attempt returns.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use stagger_core::engine::Attempt;
use stagger_core::{IntoPolicy, MonotonicClock};

use crate::blocking_sleep::{BlockingSleeper, ThreadSleeper};
use crate::classify::ByKind;
use crate::driver::{After, Driver, Next, OutcomeOf, ResultOf};
use crate::hooks::{Hooks, HooksFor};
use crate::nesting;
use crate::operation::{AsyncOperation, BlockingFn, BlockingOperation, Operation};
use crate::parts::Parts;
use crate::setup::Setup;
use crate::surface::{Fails, Succeeds, call_settings, surface};
use crate::trace;

/// A blocking retry: the operation, its policy, its
/// [`Settings`](stagger_core::engine::Settings) and its [`Hooks`], run on the calling thread
/// with [`call`](BlockingRetry::call). Its settings are the async [`Retry`](crate::Retry)'s,
/// by the same names (see the [list](crate::surface)), except hedging, which needs attempts in
/// flight side by side.
#[must_use = "a blocking retry does nothing until it is called: `.call()`"]
pub struct BlockingRetry<O, P, H = BlockingHooks> {
    parts: Parts<O, P, H>,
}

impl<O, P, H> BlockingRetry<O, P, H> {
    /// The same retry with the setup `f` makes of its own: every setting is one call of this.
    #[inline]
    fn map_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> BlockingRetry<O, P, H2> {
        BlockingRetry {
            parts: self.parts.map_setup(f),
        }
    }
}

call_settings! {
    front: BlockingRetry<O, P>,
    generics: [O, P,],
    where: [],
    gated_where: [],
    parts: |this| this.parts,
}

impl<O, P, H> crate::surface::sealed::Front for BlockingRetry<O, P, H> {}

impl<O: Operation, P, H> Fails<O::Error> for BlockingRetry<O, P, H> {}

impl<O: Operation, P, H> Succeeds<O::Value> for BlockingRetry<O, P, H> {}

surface! {
    front: BlockingRetry<O, P>,
    generics: [O, P,],
    where: [],
    setup: |this| this.parts.setup,
    map: map_setup,
    sleeper: [BlockingSleeper],
    budget: [Sized],
    gate: [],
}

/// A blocking retry is not a future: awaiting one fails to compile with the message of
/// [`AsyncOperation`], which names [`call`](BlockingRetry::call). This impl exists for that
/// message alone: a blocking operation is never an async one, so it never applies.
impl<O, P, H> Future for BlockingRetry<O, P, H>
where
    O: AsyncOperation + BlockingOperation,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        unreachable!("no operation is both blocking and async")
    }
}

impl<O, P, H> std::fmt::Debug for BlockingRetry<O, P, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingRetry")
            .field("settings", &self.parts.setup.settings)
            .finish_non_exhaustive()
    }
}

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
pub fn retry<P, F, T, E>(policy: P, op: F) -> BlockingRetry<BlockingFn<F>, P, BlockingHooks>
where
    P: IntoPolicy,
    F: FnMut(Attempt) -> Result<T, E>,
{
    BlockingRetry {
        parts: Parts::new(
            BlockingFn(op),
            policy,
            Hooks::with_time(ThreadSleeper, MonotonicClock::new()),
        ),
    }
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
    ) -> BlockingRetry<BlockingFn<impl FnMut(Attempt) -> Result<T, E>>, P, BlockingHooks>;
}

impl<F, T, E> BlockingRetryable<T, E> for F
where
    F: FnMut() -> Result<T, E>,
{
    fn retry<P: IntoPolicy>(
        mut self,
        policy: P,
    ) -> BlockingRetry<BlockingFn<impl FnMut(Attempt) -> Result<T, E>>, P, BlockingHooks> {
        retry(policy, move |_: Attempt| self())
    }
}

impl<O, P, H> BlockingRetry<O, P, H>
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

    /// Like [`call`](BlockingRetry::call), and also reports what the executor did, on success too.
    #[inline]
    pub fn call_outcome(self) -> OutcomeOf<O, H> {
        let span = trace::RunSpan::new();
        let _span = span.enter();
        let mut driver = match Driver::start(self.parts) {
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
