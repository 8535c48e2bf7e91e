//! The one driver of the engine: what the async and the blocking executor (and through the
//! first, the tower layer and the reqwest middleware) do between the engine's decisions.
//!
//! The executors differ only in how they wait and how an attempt runs. Everything else lives
//! here once: starting the run (the policy checked, nesting detected), pacing the next attempt
//! (a sleeper that woke before the server's wait was over waits again), classifying what an
//! attempt returned (errors and values), the hook, the trace, what is kept of the last attempt,
//! and the outcome.

use std::time::Duration;

use stagger_core::budget::Budget;
use stagger_core::engine::{Attempt, PlannedRetry, Ready, Run, StopReason, Stopped};
use stagger_core::policy::NoRetryPolicy;
use stagger_core::{Clock, Failure, IntoPolicy, Policy, SeededRng, Timestamp};

use crate::classify::{Classifier, ClassifyOk};
use crate::hooks::{HookSet, Hooks, HooksFor, RunBudget};
use crate::nesting;
use crate::notify::{self, Notify};
use crate::operation::Operation;
use crate::parts::Parts;
use crate::retry_error::{Last, Outcome, RetryError};
use crate::setup::Setup;
use crate::trace;

/// The value a run's error keeps, for an operation `O` and value classifier `V`.
pub(crate) type Kept<O, V> = <V as ClassifyOk<<O as Operation>::Value>>::Kept;

/// The outcome of a run of `O` with hooks `H`.
pub(crate) type OutcomeOf<O, H> =
    Outcome<<O as Operation>::Value, <O as Operation>::Error, Kept<O, <H as HookSet>::Ok>>;

/// What `.await` or `call` gives for a run of `O` with hooks `H`.
pub(crate) type ResultOf<O, H> = Result<
    <O as Operation>::Value,
    RetryError<<O as Operation>::Error, Kept<O, <H as HookSet>::Ok>>,
>;

/// The budget of one run of a front end whose hooks are `H`.
pub(crate) type RunBudgetOf<H> = <<H as HookSet>::Budget as RunBudget>::Budget;

/// A started run and the parts that drive it.
pub(crate) struct Driver<O: Operation, Pol, H: HookSet<Budget: RunBudget>> {
    pub(crate) run: Run<Pol, RunBudgetOf<H>>,
    pub(crate) op: O,
    pub(crate) classifier: H::Classifier,
    pub(crate) ok: H::Ok,
    pub(crate) sleeper: H::Sleeper,
    pub(crate) clock: H::Clock,
    pub(crate) notify: H::Notify,
    /// When the next attempt starts, if known without reading the clock: the start of the run,
    /// or the end of the last attempt plus the wait since.
    resume_at: Option<Timestamp>,
    /// The last attempt's error, kept through the wait in case the next attempt is cut short.
    last_error: Option<O::Error>,
}

/// What the driver does next, between attempts.
pub(crate) enum Next<T> {
    /// Make this attempt.
    Attempt(Attempt),
    /// Not yet: the sleeper woke before the server's wait was over, or the attempt waits for
    /// the slot a gate gave it. Wait this much longer first.
    Wait(Duration),
    /// The run is over.
    Done(T),
}

/// Whether the next attempt may start: [`Driver::pace`].
pub(crate) enum Pace<T> {
    /// At this time.
    Go(Timestamp),
    /// Not yet: wait this much longer first.
    Wait(Duration),
    /// Never: the slot the attempt needs comes too late, and the run is over.
    Done(T),
}

/// What follows an attempt.
pub(crate) enum After<T> {
    /// Wait this long, then make the next attempt.
    Retry(Duration),
    /// The run is over.
    Done(T),
}

impl<O, Pol, H> Driver<O, Pol, H>
where
    O: Operation,
    Pol: Policy,
    H: HooksFor<O>,
{
    /// The time at which the next attempt starts. Without a deadline or an attempt timeout,
    /// nothing depends on it but the reported elapsed times, so it is taken from the last
    /// reading plus the wait since instead of the clock: one clock read per attempt instead of
    /// two. With either, the clock is read, since the time the attempt has must be exact.
    #[inline(always)]
    fn attempt_time(&mut self) -> Timestamp {
        match (self.run.deadline(), self.resume_at.take()) {
            (None, Some(at)) if !self.run.times_attempts() => at,
            _ => self.clock.now(),
        }
    }

    /// What comes before the next attempt: the attempt itself, a wait, or the end of the run.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Next<OutcomeOf<O, H>> {
        match self.pace() {
            Pace::Go(now) => match self.begin(now) {
                Ok(attempt) => Next::Attempt(attempt),
                Err(outcome) => Next::Done(outcome),
            },
            Pace::Wait(rest) => Next::Wait(rest),
            Pace::Done(outcome) => Next::Done(outcome),
        }
    }

    /// Whether the next attempt may start ([`Run::ready`]): the time to start it at; how much
    /// longer to wait, if the sleeper woke before the server's wait was over or a gate holds
    /// the attempt to a later slot; or the end of the run, if that slot comes too late.
    #[inline(always)]
    pub(crate) fn pace(&mut self) -> Pace<OutcomeOf<O, H>> {
        let now = self.attempt_time();
        match self.run.ready(now) {
            Ready::Go => Pace::Go(now),
            Ready::Wait(rest) => Pace::Wait(rest),
            Ready::GiveUp(stopped) => Pace::Done(self.give_up_after_error(stopped)),
        }
    }

    /// Begins the next attempt at `now`, or ends the run.
    #[inline(always)]
    pub(crate) fn begin(&mut self, now: Timestamp) -> Result<Attempt, OutcomeOf<O, H>> {
        self.run
            .begin(now)
            .map_err(|stopped| self.give_up_after_error(stopped))
    }

    /// After an attempt returned `result`: success, a retry, or the end of the run.
    #[inline(always)]
    pub(crate) fn after(&mut self, result: Result<O::Value, O::Error>) -> After<OutcomeOf<O, H>> {
        let now = self.clock.now();
        match result {
            Ok(value) => {
                let Some(failure) = self.ok.classify_ok(&value) else {
                    return After::Done(match self.run.succeeded(now) {
                        Ok(summary) => {
                            trace::succeeded(&summary);
                            Outcome {
                                result: Ok(value),
                                summary,
                            }
                        }
                        // It came too late: the caller's time is spent, and the value with it.
                        Err(stopped) => self.give_up_after_error(stopped),
                    });
                };
                match self.failed(now, failure, Ok(&value)) {
                    Ok(retry) => {
                        // A refused value is dropped as soon as the retry is decided: an HTTP
                        // response then releases its connection during the wait.
                        drop(value);
                        self.last_error = None;
                        After::Retry(retry.delay)
                    }
                    Err(stopped) => {
                        self.notify.gave_up(&stopped, Some(Ok(&value)));
                        let last = H::Ok::keep(value).map_or(Last::Nothing, Last::Value);
                        After::Done(outcome_of(stopped, last))
                    }
                }
            }
            Err(error) => {
                let failure = self.classifier.classify(&error);
                match self.failed(now, failure, Err(&error)) {
                    Ok(retry) => {
                        self.last_error = Some(error);
                        After::Retry(retry.delay)
                    }
                    Err(stopped) => {
                        After::Done(give_up(&mut self.notify, stopped, Last::Error(error)))
                    }
                }
            }
        }
    }

    /// After the deadline, or the attempt's own timeout, passed during an attempt, at `now`:
    /// the attempt counts as a timeout. Past the deadline the engine always stops; after an
    /// attempt timeout it retries as after any timeout.
    pub(crate) fn timed_out(&mut self, now: Timestamp) -> After<OutcomeOf<O, H>> {
        match self.run.failed(now, Failure::Timeout) {
            Ok(retry) => After::Retry(retry.delay),
            Err(stopped) => After::Done(self.give_up_after_error(stopped)),
        }
    }

    /// The operation could not get ready for the next attempt: the run ends with `error`, and
    /// a retry granted for the attempt goes back to the budget.
    #[cold]
    pub(crate) fn unready(&mut self, error: O::Error) -> OutcomeOf<O, H> {
        let now = self.clock.now();
        if self.run.deadline().is_some_and(|d| now >= d) {
            // The time ran out first: that is why the run ends.
            return self.deadline_while_unready(now);
        }
        let stopped = self.run.abandon(now, StopReason::NotRetryable);
        give_up(&mut self.notify, stopped, Last::Error(error))
    }

    /// The deadline passed at `now` while the operation got ready for the next attempt: the run
    /// ends without it, and a retry granted for it goes back to the budget.
    #[cold]
    pub(crate) fn deadline_while_unready(&mut self, now: Timestamp) -> OutcomeOf<O, H> {
        let stopped = self.run.abandon(now, StopReason::Deadline);
        self.give_up_after_error(stopped)
    }

    /// Time passed without the driver knowing how much (the operation was not ready at once):
    /// the next attempt reads the clock.
    #[inline]
    pub(crate) fn lost_track_of_time(&mut self) {
        self.resume_at = None;
    }

    /// The deadline passed at `now` while the operation got ready for its first attempt: the
    /// run ends with no attempt.
    #[cold]
    pub(crate) fn deadline_before_the_first_attempt(&mut self, now: Timestamp) -> OutcomeOf<O, H> {
        let stopped = self.run.stop(now, StopReason::Deadline);
        give_up(&mut self.notify, stopped, Last::Nothing)
    }

    /// Asks the engine after a failed attempt; the hook hears of a retry before it happens.
    #[inline(always)]
    fn failed(
        &mut self,
        now: Timestamp,
        failure: Failure,
        result: Result<&O::Value, &O::Error>,
    ) -> Result<PlannedRetry, Stopped> {
        if self.run.wants_rng(&failure) {
            // The first server-directed wait of this run: its dispersal is drawn from a generator
            // of its own, so that a fleet told the same time does not come back in step.
            self.run.set_rng(SeededRng::from_entropy());
        }
        let retry = self.run.failed(now, failure)?;
        // After a server-directed wait the clock is read again: the floor must hold for real.
        if retry.server_wait.is_none() {
            self.resume_at = Some(now.saturating_add(retry.delay));
        }
        notify::retrying(&mut self.notify, &retry, result, failure);
        Ok(retry)
    }

    /// The outcome of a run that gave up between attempts, or with an attempt cut short: what
    /// is left is the last error, if the last attempt that ended returned one.
    #[inline(always)]
    fn give_up_after_error(&mut self, stopped: Stopped) -> OutcomeOf<O, H> {
        let last = self.last_error.take().map_or(Last::Nothing, Last::Error);
        give_up(&mut self.notify, stopped, last)
    }
}

/// The outcome of a run that gave up: the hook and the trace hear of it first.
#[cold]
pub(crate) fn give_up<T, E, K, N: Notify<T, E>>(
    notify: &mut N,
    stopped: Stopped,
    last: Last<E, K>,
) -> Outcome<T, E, K> {
    let heard = match &last {
        Last::Error(error) => Some(Err(error)),
        _ => None,
    };
    notify.gave_up(&stopped, heard);
    outcome_of(stopped, last)
}

/// The outcome of a run that gave up, traced.
pub(crate) fn outcome_of<T, E, K>(stopped: Stopped, last: Last<E, K>) -> Outcome<T, E, K> {
    trace::gave_up(&stopped);
    Outcome {
        summary: stopped.summary,
        result: Err(RetryError::new(stopped, last)),
    }
}

impl<O, Pol, H> Driver<O, Pol, H>
where
    O: Operation,
    Pol: Policy,
    H: HookSet<Budget: RunBudget>,
{
    /// Starts the run of `parts` at `now` on its clock: the policy checked and made, nesting
    /// detected in the thread or task that runs it.
    ///
    /// # Errors
    ///
    /// The outcome of a run whose configuration is invalid, or whose clock is on another
    /// timeline than its shared budget's
    /// ([`ConfigError::TimelineMismatch`](stagger_core::ConfigError::TimelineMismatch)): no attempt,
    /// with [`StopReason::InvalidConfig`] and the error.
    #[inline(always)]
    pub(crate) fn start<P>(parts: Parts<O, P, H>) -> Result<Self, OutcomeOf<O, H>>
    where
        P: IntoPolicy<Policy = Pol>,
        H::Clock: Clock,
        H::Ok: ClassifyOk<O::Value>,
        H::Notify: Notify<O::Value, O::Error>,
    {
        let Parts {
            op,
            policy,
            setup: Setup { settings, hooks },
            attempt_limit,
            dispersal_rng,
        } = parts;
        let Hooks {
            classifier,
            ok,
            sleeper,
            clock,
            budget,
            mut notify,
        } = hooks.into_parts();
        let budget = budget.for_run();
        let now = clock.now();
        // A shared budget or gate compares times of one timeline: the run's clock must be on
        // the one it keeps (the first run's), checked before anything reaches it.
        let checked = budget
            .bind(clock.timeline())
            .and_then(|()| policy.into_policy());
        let policy = match checked {
            Ok(policy) => policy,
            Err(error) => {
                let stopped =
                    Run::new(NoRetryPolicy, settings, now).stop(now, StopReason::InvalidConfig);
                return Err(give_up(
                    &mut notify,
                    stopped,
                    Last::Invalid(Box::new(error)),
                ));
            }
        };
        let mut run = Run::with_budget(policy, budget, settings, now);
        run.limit_attempts(attempt_limit);
        if let Some(rng) = dispersal_rng {
            run.set_rng(rng);
        }
        if nesting::inside_an_attempt() {
            run.mark_nested();
        }
        Ok(Self {
            run,
            op,
            classifier,
            ok,
            sleeper,
            clock,
            notify,
            resume_at: Some(now),
            last_error: None,
        })
    }
}
