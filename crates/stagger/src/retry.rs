//! The retry builder, and the async executor.
//!
//! [`retry`] (async) and [`blocking::retry`](crate::blocking::retry) return the same builder,
//! [`Retry`], with the same settings. An async retry runs when awaited; a blocking one runs
//! with [`call`](Retry::call). Both drive the core's [`Run`], so their semantics cannot differ.

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use stagger_core::engine::{
    Attempt, Budget, Retry as Planned, Run, RunOptions, Stopped, Summary, Unlimited,
};
use stagger_core::{Clock, Failure, Policy, Timestamp};

use crate::classify::{ByKind, Classifier};
use crate::clock::DefaultClock;
use crate::nesting;
use crate::notify::{self, Notify};
use crate::retry_error::RetryError;
use crate::sleep::{DefaultSleeper, Sleeper};
use crate::trace;

/// What an executor does when it runs inside another executor's attempt.
///
/// The mark is held only while an attempt's own code runs (its synchronous call, or a poll of
/// its future). One exception: an executor that runs other tasks *inside* an attempt (a
/// `block_on` within a blocking operation, say) runs them under the mark, and their retries
/// count as nested.
///
/// Retrying layers multiply: three layers of three attempts call a failing leaf 27 times. AWS
/// and Google SRE advise retrying at a single point in the stack, so by default a nested
/// executor makes one attempt and reports [`StopReason::OuterLayerOwnsRecovery`], leaving
/// recovery to the outermost layer. Detection covers an executor started while another's attempt
/// runs on the same thread, or is polled in the same async task, on any runtime; work spawned
/// onto another task or thread is not nested.
///
/// [`StopReason::OuterLayerOwnsRecovery`]: stagger_core::engine::StopReason::OuterLayerOwnsRecovery
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Nested {
    /// Make a single attempt and leave recovery to the outer layer (the default).
    #[default]
    SingleAttempt,
    /// Retry as if alone. Each layer's attempts multiply the others'.
    Retry,
}

/// A retried operation and its settings. Run it by awaiting it (async) or with
/// [`call`](Retry::call) (blocking).
///
/// A zero delay never touches the timer; the async executor yields between such retries, so an
/// operation that fails at once cannot hold its thread for all its attempts.
///
/// The defaults: no deadline, idempotent, the error classifies itself ([`ByKind`]), the longest
/// server-directed wait honoured is 5 minutes, a nested executor makes a single attempt, no
/// budget, no hook.
#[must_use = "a retry does nothing until it is awaited or called"]
pub struct Retry<F, P, C = ByKind, S = DefaultSleeper, K = DefaultClock, B = Unlimited, N = ()> {
    pub(crate) op: F,
    pub(crate) policy: P,
    pub(crate) options: RunOptions,
    pub(crate) nested: Nested,
    pub(crate) classifier: C,
    pub(crate) sleeper: S,
    pub(crate) clock: K,
    pub(crate) budget: B,
    pub(crate) notify: N,
}

/// Retries the async operation `op` under `policy`. `op` receives each [`Attempt`]: its number
/// and the time left before the deadline, to propagate downstream.
///
/// ```
/// # #[cfg(feature = "tokio")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use stagger::policy::ExponentialFullJitter;
/// use stagger::{Failure, PolicyConfig};
///
/// let policy = ExponentialFullJitter::new().with_base(Duration::from_millis(1)).policy()?;
/// let mut calls = 0;
/// let value = stagger::retry(policy, |attempt| {
///     calls += 1;
///     async move { if attempt.number < 3 { Err("busy") } else { Ok(attempt.number) } }
/// })
/// .timeout(Duration::from_secs(2))
/// .classify(|_: &&str| Failure::Retryable)
/// .await
/// .map_err(|e| e.to_string())?;
/// assert_eq!((value, calls), (3, 3));
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "tokio"))]
/// # fn main() {}
/// ```
pub fn retry<P, F, Fut, T, E>(policy: P, op: F) -> Retry<F, P>
where
    P: Policy,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    Retry::with_defaults(
        op,
        policy,
        DefaultSleeper::default(),
        DefaultClock::default(),
    )
}

/// `.retry(policy)` on any async operation that takes no arguments.
pub trait Retryable<T, E, Fut>: Sized
where
    Fut: Future<Output = Result<T, E>>,
{
    /// Retries this operation under `policy`; see [`retry`].
    fn retry<P: Policy>(self, policy: P) -> Retry<impl FnMut(Attempt) -> Fut, P>;
}

impl<F, Fut, T, E> Retryable<T, E, Fut> for F
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    fn retry<P: Policy>(mut self, policy: P) -> Retry<impl FnMut(Attempt) -> Fut, P> {
        retry(policy, move |_: Attempt| self())
    }
}

impl<F, P, S, K> Retry<F, P, ByKind, S, K, Unlimited, ()> {
    pub(crate) fn with_defaults(op: F, policy: P, sleeper: S, clock: K) -> Self {
        Self {
            op,
            policy,
            options: RunOptions::new(),
            nested: Nested::SingleAttempt,
            classifier: ByKind,
            sleeper,
            clock,
            budget: Unlimited,
            notify: (),
        }
    }
}

impl<F, P, C, S, K, B, N> Retry<F, P, C, S, K, B, N> {
    /// One end-to-end deadline, `timeout` after the first attempt starts. It covers every
    /// attempt and every wait; each attempt is told the time left. An async attempt still
    /// running at the deadline is cancelled (its future dropped) and counts as a timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options = self.options.with_timeout(timeout);
        self
    }

    /// One end-to-end deadline at `deadline` on the executor's clock. The default clocks start
    /// at their first reading, which is the start of the run, so an absolute deadline needs a
    /// clock shared with whoever computed it: pass one with [`clock`](Retry::clock) (a
    /// [`ManualClock`](stagger_core::ManualClock) or a clock started earlier with
    /// `starting_now`). Otherwise, use [`timeout`](Retry::timeout).
    pub fn deadline(mut self, deadline: Timestamp) -> Self {
        self.options = self.options.with_deadline(deadline);
        self
    }

    /// Whether the operation may be repeated safely (default `true`). A non-idempotent one is
    /// retried only after a failure known to have had no effect, such as a refused connection
    /// or a 429: never after a timeout or a 5xx whose effect is uncertain.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.options = self.options.with_idempotent(idempotent);
        self
    }

    /// The longest server-directed wait honoured (default 5 minutes). A server asking for more
    /// stops the run; a shorter request is a floor under the next delay, never undercut.
    pub fn max_server_wait(mut self, limit: Duration) -> Self {
        self.options = self.options.with_max_server_wait(limit);
        self
    }

    /// What to do when running inside another executor's attempt (default
    /// [`Nested::SingleAttempt`]).
    pub fn when_nested(mut self, nested: Nested) -> Self {
        self.nested = nested;
        self
    }

    /// Decides which errors are worth retrying: any `Fn(&E) -> Failure`.
    pub fn classify<C2>(self, classifier: C2) -> Retry<F, P, C2, S, K, B, N> {
        let Retry {
            op,
            policy,
            options,
            nested,
            sleeper,
            clock,
            budget,
            notify,
            ..
        } = self;
        Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            budget,
            notify,
        }
    }

    /// Waits with `sleeper`: any `Fn(Duration) -> impl Future` for async, any `Fn(Duration)`
    /// for blocking.
    pub fn sleeper<S2>(self, sleeper: S2) -> Retry<F, P, C, S2, K, B, N> {
        let Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            clock,
            budget,
            notify,
            ..
        } = self;
        Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            budget,
            notify,
        }
    }

    /// Reads time from `clock`, for the deadline and the summary.
    pub fn clock<K2>(self, clock: K2) -> Retry<F, P, C, S, K2, B, N> {
        let Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            budget,
            notify,
            ..
        } = self;
        Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            budget,
            notify,
        }
    }

    /// Retries only as far as `budget` allows; share one budget (through an `Arc`) across a
    /// service to bound the extra load retries add.
    pub fn budget<B2>(self, budget: B2) -> Retry<F, P, C, S, K, B2, N> {
        let Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            notify,
            ..
        } = self;
        Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            budget,
            notify,
        }
    }

    /// Calls `hook` before every retry that will actually happen, with the attempt number, the
    /// error, the delay, the elapsed time and the time left. (If the wait then overruns the
    /// deadline, because the sleeper overslept, the next attempt does not start after all.)
    pub fn notify<N2>(self, hook: N2) -> Retry<F, P, C, S, K, B, N2> {
        let Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            budget,
            ..
        } = self;
        Retry {
            op,
            policy,
            options,
            nested,
            classifier,
            sleeper,
            clock,
            budget,
            notify: hook,
        }
    }

    /// The run's options with nesting resolved for the current thread.
    pub(crate) fn run_options(&self) -> RunOptions {
        let nested = self.nested == Nested::SingleAttempt && nesting::inside_an_attempt();
        self.options.with_nested(nested)
    }
}

/// The result of a retried operation together with what the executor did, on success too.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome<T, E> {
    /// The operation's value, or why the executor gave up.
    pub result: Result<T, RetryError<E>>,
    /// Attempts made, time waited, time elapsed.
    pub summary: Summary,
}

impl<F, P, C, S, K, B, N, Fut, T, E> Retry<F, P, C, S, K, B, N>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    P: Policy,
    C: Classifier<E>,
    S: Sleeper,
    K: Clock,
    B: Budget,
    N: Notify<E>,
{
    /// Runs the retries and yields the [`Outcome`]: the result and the run's summary, which
    /// `.await` alone does not report.
    pub fn outcome(self) -> RetryFuture<F, Fut, P, C, S, K, B, N, T, E> {
        RetryFuture {
            start: Some(self),
            run: None,
            span: trace::RunSpan::new(),
            last_error: None,
            state: State::Idle,
            _output: PhantomData,
        }
    }
}

impl<F, P, C, S, K, B, N, Fut, T, E> IntoFuture for Retry<F, P, C, S, K, B, N>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    P: Policy,
    C: Classifier<E>,
    S: Sleeper,
    K: Clock,
    B: Budget,
    N: Notify<E>,
{
    type Output = Result<T, RetryError<E>>;
    type IntoFuture = ResultFuture<F, Fut, P, C, S, K, B, N, T, E>;

    fn into_future(self) -> Self::IntoFuture {
        ResultFuture {
            inner: self.outcome(),
        }
    }
}

pin_project! {
    /// The future of `.await` on a [`Retry`]: the operation's result.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResultFuture<F, Fut, P, C, S: Sleeper, K, B, N, T, E> {
        #[pin]
        inner: RetryFuture<F, Fut, P, C, S, K, B, N, T, E>,
    }
}

impl<F, P, C, S, K, B, N, Fut, T, E> Future for ResultFuture<F, Fut, P, C, S, K, B, N, T, E>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    P: Policy,
    C: Classifier<E>,
    S: Sleeper,
    K: Clock,
    B: Budget,
    N: Notify<E>,
{
    type Output = Result<T, RetryError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx).map(|outcome| outcome.result)
    }
}

pin_project! {
    #[project = StateProj]
    enum State<Fut, Sl> {
        // Between attempts: the next one starts on the next poll.
        Idle,
        // An attempt runs, raced against the deadline.
        Running { #[pin] attempt: Fut, #[pin] deadline: Option<Sl> },
        // Waiting before the next attempt.
        Sleeping { #[pin] wait: Sl },
        // The outcome was delivered.
        Done,
    }
}

pin_project! {
    /// The future of a [`Retry`]'s [`outcome`](Retry::outcome).
    #[must_use = "futures do nothing unless polled"]
    pub struct RetryFuture<F, Fut, P, C, S: Sleeper, K, B, N, T, E> {
        start: Option<Retry<F, P, C, S, K, B, N>>,
        run: Option<Driver<F, P, C, S, K, B, N>>,
        span: trace::RunSpan,
        last_error: Option<E>,
        #[pin]
        state: State<Fut, S::Sleep>,
        _output: PhantomData<fn() -> T>,
    }
}

/// A started run and the parts that drive it.
pub(crate) struct Driver<F, P, C, S, K, B, N> {
    pub(crate) run: Run<P, B>,
    /// When the next attempt starts, if known without reading the clock: the start of the run,
    /// or the end of the last attempt plus the wait since.
    resume_at: Option<Timestamp>,
    pub(crate) op: F,
    classifier: C,
    pub(crate) sleeper: S,
    pub(crate) clock: K,
    notify: N,
}

impl<F, P, C, S, K, B, N> Driver<F, P, C, S, K, B, N>
where
    P: Policy,
    K: Clock,
    B: Budget,
{
    #[inline(always)]
    pub(crate) fn start(retry: Retry<F, P, C, S, K, B, N>) -> Self {
        let options = retry.run_options();
        let now = retry.clock.now();
        Self {
            run: Run::with_budget(retry.policy, retry.budget, options, now),
            resume_at: Some(now),
            op: retry.op,
            classifier: retry.classifier,
            sleeper: retry.sleeper,
            clock: retry.clock,
            notify: retry.notify,
        }
    }

    /// The time at which the next attempt starts. Without a deadline, nothing depends on it
    /// but the reported elapsed times, so it is taken from the last reading plus the wait since
    /// instead of the clock: one clock read per attempt instead of two. With a deadline, the
    /// clock is read, since the time left must be exact.
    #[inline(always)]
    pub(crate) fn attempt_time(&mut self) -> Timestamp {
        match (self.run.deadline(), self.resume_at.take()) {
            (None, Some(at)) => at,
            _ => self.clock.now(),
        }
    }

    /// Decides after an attempt failed with `error`: the hook hears of a retry before it
    /// happens.
    #[inline(always)]
    pub(crate) fn failed<E>(&mut self, now: Timestamp, error: &E) -> Result<Planned, Stopped>
    where
        C: Classifier<E>,
        N: Notify<E>,
    {
        let failure = self.classifier.classify(error);
        let retry = self.run.failed(now, failure)?;
        // After a server-directed wait the clock is read again: the floor must hold for real.
        if retry.server_wait.is_none() {
            self.resume_at = Some(now.saturating_add(retry.delay));
        }
        notify::retrying(&mut self.notify, &retry, error, failure);
        Ok(retry)
    }
}

impl<F, P, C, S, K, B, N> Driver<F, P, C, S, K, B, N> {
    /// The outcome of a run that gave up: the hook and the trace hear of it first.
    pub(crate) fn stopped<T, E>(&mut self, stopped: Stopped, last_error: Option<E>) -> Outcome<T, E>
    where
        N: Notify<E>,
    {
        self.notify.gave_up(&stopped, last_error.as_ref());
        outcome_of(stopped, last_error)
    }
}

fn outcome_of<T, E>(stopped: Stopped, last_error: Option<E>) -> Outcome<T, E> {
    trace::gave_up(&stopped);
    Outcome {
        summary: stopped.summary,
        result: Err(RetryError::new(stopped, last_error)),
    }
}

impl<F, P, C, S, K, B, N, Fut, T, E> Future for RetryFuture<F, Fut, P, C, S, K, B, N, T, E>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    P: Policy,
    C: Classifier<E>,
    S: Sleeper,
    K: Clock,
    B: Budget,
    N: Notify<E>,
{
    type Output = Outcome<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome<T, E>> {
        let mut this = self.project();
        if let Some(retry) = this.start.take() {
            *this.run = Some(Driver::start(retry));
        }
        let Some(driver) = this.run.as_mut() else {
            panic!("RetryFuture polled after it completed");
        };
        let _span = this.span.enter();
        let mut early_fires = 0u32;
        loop {
            match this.state.as_mut().project() {
                StateProj::Idle => {
                    let now = driver.attempt_time();
                    if let Some(rest) = driver.run.too_early(now) {
                        // The sleeper woke before the server's wait was over: wait again, and
                        // yield, so that a sleeper that keeps waking early cannot spin here.
                        let wait = driver.sleeper.sleep(rest);
                        this.state.set(State::Sleeping { wait });
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    let attempt = match driver.run.begin(now) {
                        Ok(attempt) => attempt,
                        Err(stop) => {
                            this.state.set(State::Done);
                            return Poll::Ready(driver.stopped(stop, this.last_error.take()));
                        }
                    };
                    let future = {
                        let _inside = nesting::enter();
                        (driver.op)(attempt)
                    };
                    // Armed after the operation's synchronous part, for the time really left.
                    let deadline = driver.run.deadline().map(|at| {
                        let left = at.saturating_duration_since(driver.clock.now());
                        driver.sleeper.sleep(left)
                    });
                    this.state.set(State::Running {
                        attempt: future,
                        deadline,
                    });
                }
                StateProj::Running {
                    attempt,
                    mut deadline,
                } => {
                    let polled = {
                        let _inside = nesting::enter();
                        attempt.poll(cx)
                    };
                    let next = match polled {
                        Poll::Ready(Ok(value)) => match driver.run.succeeded(driver.clock.now()) {
                            Ok(summary) => {
                                this.state.set(State::Done);
                                trace::succeeded(&summary);
                                return Poll::Ready(Outcome {
                                    result: Ok(value),
                                    summary,
                                });
                            }
                            Err(stop) => Err(stop),
                        },
                        Poll::Ready(Err(error)) => {
                            let next = driver.failed(driver.clock.now(), &error);
                            *this.last_error = Some(error);
                            next
                        }
                        Poll::Pending => {
                            let Some(timer) = deadline.as_mut().as_pin_mut() else {
                                return Poll::Pending;
                            };
                            if timer.poll(cx).is_pending() {
                                return Poll::Pending;
                            }
                            // The timer fired; the clock decides. Early: re-arm for the rest.
                            let now = driver.clock.now();
                            if let Some(left) = driver.run.deadline().and_then(|at| {
                                (now < at).then(|| at.saturating_duration_since(now))
                            }) {
                                deadline.set(Some(driver.sleeper.sleep(left)));
                                early_fires += 1;
                                if early_fires > 3 {
                                    // A timer that keeps firing at once: yield, do not spin.
                                    cx.waker().wake_by_ref();
                                    return Poll::Pending;
                                }
                                continue;
                            }
                            // The deadline passed mid-attempt: drop the attempt's future, which
                            // cancels it, and count it as a timeout.
                            driver.run.failed(now, Failure::Timeout)
                        }
                    };
                    match next {
                        Ok(retry) if retry.delay.is_zero() => {
                            // A zero delay does not touch the timer, but it yields: an
                            // operation that fails at once must not hold the thread for all
                            // its attempts.
                            this.state.set(State::Idle);
                            cx.waker().wake_by_ref();
                            return Poll::Pending;
                        }
                        Ok(retry) => {
                            let wait = driver.sleeper.sleep(retry.delay);
                            this.state.set(State::Sleeping { wait });
                        }
                        Err(stop) => {
                            this.state.set(State::Done);
                            return Poll::Ready(driver.stopped(stop, this.last_error.take()));
                        }
                    }
                }
                StateProj::Sleeping { wait } => {
                    ready!(wait.poll(cx));
                    this.state.set(State::Idle);
                }
                StateProj::Done => panic!("RetryFuture polled after it completed"),
            }
        }
    }
}

impl<F, P, C, S, K, B, N> std::fmt::Debug for Retry<F, P, C, S, K, B, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retry")
            .field("options", &self.options)
            .field("nested", &self.nested)
            .finish_non_exhaustive()
    }
}
