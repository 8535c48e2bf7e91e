//! The future of an async retry's [`outcome`](crate::Retry::outcome): a
//! [`RetryOutcomeFuture`], yielding the [`Outcome`](crate::Outcome) with the run's summary.
//! A [`Retry`](crate::Retry) is a future itself, yielding the operation's result; a hedged
//! run's are in [`hedge`](crate::hedge).

// The async executor: a `Retry` polled, and the one async driver every integration runs on.
// The tower layer and the reqwest middleware are operations driven by this same future, so the
// re-sleep after an early wake and the yield after a zero delay are written here once; the
// deadline's timer and its guard against timers that fire early are `timer`'s, shared with the
// hedging driver.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use stagger_core::{IntoPolicy, Timestamp};

use crate::driver::{After, Driver, OutcomeOf, Pace};
use crate::hooks::{HookSet, HooksFor, RunBudget};
use crate::nesting;
use crate::operation::{AsyncOperation, Operation};
use crate::parts::Parts;
use crate::sleep::{MaybeSleeper, Sleeper};
use crate::timer::{self, EarlyFires};
use crate::trace;

pin_project! {
    #[project = StateProj]
    enum State<Fut, Sl> {
        // Not polled yet: the run starts on the first poll.
        Start,
        // The operation gets ready for its first attempt.
        Preparing,
        // Between attempts: the next one starts on this poll, once the operation is ready.
        Idle,
        // An attempt runs, raced against the deadline.
        // `started` is the time the attempt began, read for it: the timer is armed from it.
        Running { #[pin] attempt: Fut, expires: Option<Timestamp>, started: Timestamp },
        // Waiting before the next attempt.
        Sleeping { #[pin] wait: Sl },
        // The outcome was delivered.
        Done,
    }
}

pin_project! {
    /// The future of a [`Retry`]'s [`outcome`](Retry::outcome), and of every HTTP request the
    /// tower layer and the reqwest middleware retry.
    #[must_use = "futures do nothing unless polled"]
    pub struct RetryOutcomeFuture<O, P, H>
    where
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    {
        start: Option<Parts<O, P, H>>,
        driver: Option<Started<O, P::Policy, H>>,
        span: trace::RunSpan,
        // The deadline's timer, armed when an attempt first has to wait: for the run's
        // deadline, or, with an attempt timeout, afresh for each attempt's own expiry.
        #[pin]
        timer: Option<<H::Sleeper as MaybeSleeper>::Sleep>,
        #[pin]
        state: State<O::Attempt, <H::Sleeper as MaybeSleeper>::Sleep>,
    }
}

impl<O, P, H> RetryOutcomeFuture<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
    /// The future of a run of `parts`, started on its first poll.
    #[inline(always)]
    pub(crate) fn new(parts: Parts<O, P, H>) -> Self {
        Self {
            start: Some(parts),
            driver: None,
            span: trace::RunSpan::new(),
            timer: None,
            state: State::Start,
        }
    }

    /// The parts of a run not started yet.
    #[inline(always)]
    pub(crate) fn into_parts(self) -> Parts<O, P, H> {
        let Self { start, .. } = self;
        match start {
            Some(parts) => parts,
            None => unreachable!("a retry's settings are set before it is polled"),
        }
    }

    /// The parts of a run not started yet, to set in place.
    #[inline(always)]
    pub(crate) fn parts_mut(&mut self) -> &mut Parts<O, P, H> {
        match self.start.as_mut() {
            Some(parts) => parts,
            None => unreachable!("a retry's settings are set before it is polled"),
        }
    }
}

impl<O, P, H> Future for RetryOutcomeFuture<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HooksFor<O>,
    H::Sleeper: Sleeper,
{
    type Output = OutcomeOf<O, H>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _span = this.span.enter();
        // Times the deadline's timer fired before the deadline in this poll.
        let mut early_fires = EarlyFires::new();
        if let Some(parts) = this.start.take() {
            match Driver::start(parts) {
                Ok(driver) => *this.driver = Some(Started(driver)),
                Err(outcome) => {
                    this.state.set(State::Done);
                    return Poll::Ready(outcome);
                }
            }
            this.state.set(State::Preparing);
        }
        let Some(driver) = this.driver.as_mut() else {
            panic!("RetryOutcomeFuture polled after it completed");
        };
        loop {
            let after = match this.state.as_mut().project() {
                StateProj::Start | StateProj::Done => {
                    panic!("RetryOutcomeFuture polled after it completed")
                }
                StateProj::Preparing => {
                    let retries_possible = !driver.run.is_nested();
                    match driver.op.poll_prepare(cx, retries_possible) {
                        Poll::Ready(max) => {
                            driver.run.limit_attempts(max);
                            this.state.set(State::Idle);
                            continue;
                        }
                        Poll::Pending => {
                            let now = ready!(timer::poll_until(
                                this.timer.as_mut(),
                                driver.run.deadline(),
                                None,
                                &driver.sleeper,
                                &driver.clock,
                                &mut early_fires,
                                cx
                            ));
                            // The deadline passed before the operation was ready: the run
                            // stops now, with no attempt.
                            After::Done(driver.deadline_before_the_first_attempt(now))
                        }
                    }
                }
                StateProj::Idle => match driver.pace() {
                    Pace::Wait(rest) => {
                        // The sleeper woke before the server's wait was over, or a gate holds
                        // the attempt to a later slot: wait, holding nothing, and yield, so
                        // that a sleeper that keeps waking early cannot spin here.
                        driver.op.unready();
                        let wait = driver.sleeper.sleep(rest);
                        this.state.set(State::Sleeping { wait });
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    // The operation gets ready after the wait, so that it holds nothing (a
                    // tower service's permit) while it waits.
                    Pace::Done(outcome) => After::Done(outcome),
                    Pace::Go(now) => match driver.op.poll_ready(cx) {
                        Poll::Ready(Ok(())) => match driver.begin(now) {
                            Ok(attempt) => {
                                // The deadline, or sooner with an attempt timeout.
                                let expires = attempt.remaining.map(|r| now.saturating_add(r));
                                if driver.run.times_attempts() {
                                    // The timer is armed afresh for each attempt's own expiry.
                                    this.timer.set(None);
                                }
                                let attempt = {
                                    let _inside = nesting::enter();
                                    driver.op.attempt(attempt)
                                };
                                this.state.set(State::Running {
                                    attempt,
                                    expires,
                                    started: now,
                                });
                                continue;
                            }
                            Err(outcome) => After::Done(outcome),
                        },
                        Poll::Ready(Err(error)) => After::Done(driver.unready(error)),
                        Poll::Pending => {
                            // The attempt begins on a later poll, at a time read then.
                            driver.lost_track_of_time();
                            let now = ready!(timer::poll_until(
                                this.timer.as_mut(),
                                driver.run.deadline(),
                                Some(now),
                                &driver.sleeper,
                                &driver.clock,
                                &mut early_fires,
                                cx
                            ));
                            // The deadline passed before the operation was ready again: the
                            // run stops without the attempt.
                            After::Done(driver.deadline_while_unready(now))
                        }
                    },
                },
                StateProj::Running {
                    attempt,
                    expires,
                    started,
                } => {
                    let polled = {
                        let _inside = nesting::enter();
                        attempt.poll(cx)
                    };
                    match polled {
                        Poll::Ready(result) => driver.after(result),
                        Poll::Pending => {
                            let now = ready!(timer::poll_until(
                                this.timer.as_mut(),
                                *expires,
                                Some(*started),
                                &driver.sleeper,
                                &driver.clock,
                                &mut early_fires,
                                cx
                            ));
                            // The deadline, or the attempt's own timeout, passed mid-attempt:
                            // the attempt's future is dropped below, which cancels it, and it
                            // counts as a timeout.
                            driver.timed_out(now)
                        }
                    }
                }
                StateProj::Sleeping { wait } => {
                    ready!(wait.poll(cx));
                    this.state.set(State::Idle);
                    continue;
                }
            };
            match after {
                After::Retry(delay) if delay.is_zero() => {
                    // A zero delay does not touch the timer, but it yields: an operation that
                    // fails at once must not hold the thread for all its attempts.
                    this.state.set(State::Idle);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                After::Retry(delay) => {
                    let wait = driver.sleeper.sleep(delay);
                    this.state.set(State::Sleeping { wait });
                }
                After::Done(outcome) => {
                    this.state.set(State::Done);
                    *this.driver = None;
                    return Poll::Ready(outcome);
                }
            }
        }
    }
}

/// A run the async executor started. Dropped during a wait (a caller's timeout, a cancelled
/// request), the retry the budget granted for the next attempt is not sent, so it goes back.
/// (A slot a gate reserved for the attempt goes back when the gated budget is dropped with the
/// run.) Kept apart from the future, so that a retry not yet started is a plain value, which its
/// settings take apart and rebuild at no cost.
struct Started<O: Operation, Pol, H: HookSet<Budget: RunBudget>>(Driver<O, Pol, H>);

impl<O: Operation, Pol, H: HookSet<Budget: RunBudget>> Drop for Started<O, Pol, H> {
    fn drop(&mut self) {
        self.0.run.cancel();
    }
}

impl<O: Operation, Pol, H: HookSet<Budget: RunBudget>> std::ops::Deref for Started<O, Pol, H> {
    type Target = Driver<O, Pol, H>;

    #[inline(always)]
    fn deref(&self) -> &Driver<O, Pol, H> {
        &self.0
    }
}

impl<O: Operation, Pol, H: HookSet<Budget: RunBudget>> std::ops::DerefMut for Started<O, Pol, H> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Driver<O, Pol, H> {
        &mut self.0
    }
}
