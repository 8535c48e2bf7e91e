//! [`Run`]: the state of one retried operation, and every decision about it.

use std::time::Duration;

use super::outcome::{Attempt, Retry, StopReason, Stopped, Summary, Verdict};
use crate::budget::{Budget, Spent, Unlimited};
use crate::clock::Timestamp;
use crate::failure::Failure;
use crate::policy::Policy;

/// The longest server-directed wait a run honours unless told otherwise: 5 minutes.
///
/// Envoy discards `Retry-After` values above 300 s; urllib3 caps them at 6 hours; AWS clamps
/// theirs. A run never retries earlier than the server asked, so a longer request means giving
/// up now ([`StopReason::ServerWaitTooLong`]) rather than waiting for minutes on end. Raise it
/// with [`RunOptions::with_max_server_wait`] for work that can wait, such as webhook delivery.
pub const DEFAULT_MAX_SERVER_WAIT: Duration = Duration::from_secs(300);

/// When the run must end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// This long after the run starts.
    Timeout(Duration),
    /// At this instant on the run's clock.
    At(Timestamp),
}

/// How a run behaves beyond its policy: its deadline, whether the operation is idempotent,
/// the longest server-directed wait it honours, and whether it is nested in another retrying
/// layer.
///
/// A small `Copy` value with `const` setters. The defaults: no deadline, idempotent,
/// [`DEFAULT_MAX_SERVER_WAIT`], not nested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    limit: Option<Limit>,
    idempotent: bool,
    max_server_wait: Duration,
    nested: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl RunOptions {
    /// The defaults.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            limit: None,
            idempotent: true,
            max_server_wait: DEFAULT_MAX_SERVER_WAIT,
            nested: false,
        }
    }

    /// One end-to-end deadline, `timeout` after the run starts: it covers every attempt and
    /// every wait. `Duration::ZERO` allows no attempt at all.
    #[must_use]
    pub const fn with_timeout(mut self, timeout: Duration) -> Self {
        self.limit = Some(Limit::Timeout(timeout));
        self
    }

    /// One end-to-end deadline at `deadline` on the run's clock, for a caller that received a
    /// deadline rather than a timeout.
    #[must_use]
    pub const fn with_deadline(mut self, deadline: Timestamp) -> Self {
        self.limit = Some(Limit::At(deadline));
        self
    }

    /// Whether the operation may be repeated without changing the outcome (default `true`).
    /// A non-idempotent operation is retried only after a failure known to have had no effect
    /// ([`Failure::had_no_effect`]).
    #[must_use]
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// The longest server-directed wait the run honours (default
    /// [`DEFAULT_MAX_SERVER_WAIT`]). A longer request stops the run.
    #[must_use]
    pub const fn with_max_server_wait(mut self, limit: Duration) -> Self {
        self.max_server_wait = limit;
        self
    }

    /// Marks the run as nested in another retrying layer's attempt: it then makes a single
    /// attempt and leaves recovery to the outer layer ([`StopReason::OuterLayerOwnsRecovery`]).
    #[must_use]
    pub const fn with_nested(mut self, nested: bool) -> Self {
        self.nested = nested;
        self
    }

    /// Whether the operation is idempotent.
    #[must_use]
    pub const fn idempotent(&self) -> bool {
        self.idempotent
    }

    /// Whether the run is nested in another retrying layer.
    #[must_use]
    pub const fn nested(&self) -> bool {
        self.nested
    }

    /// The longest server-directed wait honoured.
    #[must_use]
    pub const fn max_server_wait(&self) -> Duration {
        self.max_server_wait
    }

    /// The end-to-end timeout, if the deadline was given as one ([`RunOptions::with_timeout`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::engine::RunOptions;
    /// let options = RunOptions::new().with_timeout(Duration::from_secs(3));
    /// assert_eq!(options.timeout(), Some(Duration::from_secs(3)));
    /// assert_eq!(RunOptions::new().timeout(), None);
    /// ```
    #[must_use]
    pub const fn timeout(&self) -> Option<Duration> {
        match self.limit {
            Some(Limit::Timeout(timeout)) => Some(timeout),
            _ => None,
        }
    }

    /// The absolute deadline, if it was given as one ([`RunOptions::with_deadline`]).
    #[must_use]
    pub const fn deadline(&self) -> Option<Timestamp> {
        match self.limit {
            Some(Limit::At(at)) => Some(at),
            _ => None,
        }
    }
}

/// One retried operation: a policy, a budget and options, advanced by the driver.
///
/// The driver calls [`begin`](Run::begin) before each attempt and [`end`](Run::end) after it,
/// passing the current time to both; between a [`Verdict::Retry`] and the next `begin` it
/// waits the retry's delay. `Run` reads no clock and does no I/O.
#[derive(Debug)]
pub struct Run<P, B = Unlimited> {
    policy: P,
    budget: B,
    options: RunOptions,
    started: Timestamp,
    deadline: Option<Timestamp>,
    attempts: u32,
    waited: Duration,
    last_failure: Option<Failure>,
    last_spent: Option<Spent>,
    not_before: Option<Timestamp>,
}

impl<P: Policy> Run<P, Unlimited> {
    /// A run of `policy` starting at `now`, with no retry budget.
    pub fn new(policy: P, options: RunOptions, now: Timestamp) -> Self {
        Self::with_budget(policy, Unlimited, options, now)
    }
}

impl<P: Policy, B: Budget> Run<P, B> {
    /// A run of `policy` starting at `now`, whose retries `budget` must allow.
    pub fn with_budget(policy: P, budget: B, options: RunOptions, now: Timestamp) -> Self {
        let deadline = options.limit.map(|limit| match limit {
            Limit::Timeout(timeout) => now.saturating_add(timeout),
            Limit::At(at) => at,
        });
        Self {
            policy,
            budget,
            options,
            started: now,
            deadline,
            attempts: 0,
            waited: Duration::ZERO,
            last_failure: None,
            last_spent: None,
            not_before: None,
        }
    }

    /// The run's deadline, if it has one.
    #[inline]
    pub fn deadline(&self) -> Option<Timestamp> {
        self.deadline
    }

    /// How much longer the driver must wait before the next attempt, if it is early: the
    /// server asked for a wait that has not passed yet (a sleeper may wake early). A driver
    /// checks this before [`begin`](Run::begin) and waits again if needed, so that no attempt
    /// ever starts earlier than the server asked.
    #[inline(always)]
    pub fn too_early(&self, now: Timestamp) -> Option<Duration> {
        self.not_before
            .filter(|at| now < *at)
            .map(|at| at.saturating_duration_since(now))
    }

    /// Attempts begun so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// What the run has done up to `now`.
    #[inline(always)]
    pub fn summary(&self, now: Timestamp) -> Summary {
        Summary {
            attempts: self.attempts,
            waited: self.waited,
            elapsed: now.saturating_duration_since(self.started),
            last_failure: self.last_failure,
        }
    }

    #[cold]
    fn stop(&self, now: Timestamp, reason: StopReason) -> Stopped {
        Stopped {
            reason,
            summary: self.summary(now),
        }
    }

    #[inline(always)]
    fn remaining(&self, now: Timestamp) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(now))
    }

    /// Asks to start the next attempt at `now`.
    ///
    /// # Errors
    ///
    /// [`Stopped`] if the deadline has passed (before the first attempt, that means no attempt
    /// at all), or if the budget refuses the first attempt.
    #[inline(always)]
    pub fn begin(&mut self, now: Timestamp) -> Result<Attempt, Stopped> {
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(self.stop(now, StopReason::Deadline));
        }
        if self.attempts == 0 && !self.budget.admit(now) {
            return Err(self.stop(now, StopReason::BudgetRefusedFirstAttempt));
        }
        self.attempts = self.attempts.saturating_add(1);
        Ok(Attempt {
            number: self.attempts,
            remaining: self.remaining(now),
            deadline: self.deadline,
            elapsed: now.saturating_duration_since(self.started),
        })
    }

    /// Reports how the current attempt ended at `now`, and decides what comes next.
    ///
    /// The checks run in seed 001's order: the deadline, success, a failure that is not
    /// retryable (or not safe to repeat), the attempt limit, then the delay, which must fit in
    /// the time left and must be allowed by the budget. [`succeeded`](Run::succeeded) and
    /// [`failed`](Run::failed) are the same decision for a driver that already knows which.
    pub fn end(&mut self, now: Timestamp, result: Result<(), Failure>) -> Verdict {
        match result {
            Ok(()) => match self.succeeded(now) {
                Ok(summary) => Verdict::Success(summary),
                Err(stopped) => Verdict::Stop(stopped),
            },
            Err(failure) => match self.failed(now, failure) {
                Ok(retry) => Verdict::Retry(retry),
                Err(stopped) => Verdict::Stop(stopped),
            },
        }
    }

    /// Reports that the current attempt succeeded at `now`.
    ///
    /// # Errors
    ///
    /// [`StopReason::Deadline`] if it succeeded at or after the deadline: the caller's time is
    /// spent, as seed 001 specifies.
    #[inline(always)]
    pub fn succeeded(&mut self, now: Timestamp) -> Result<Summary, Stopped> {
        self.budget.on_success(now, self.last_spent);
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(self.stop(now, StopReason::Deadline));
        }
        Ok(self.summary(now))
    }

    /// Reports that the current attempt failed at `now` with `failure`, and returns the retry
    /// to make.
    ///
    /// # Errors
    ///
    /// [`Stopped`] with the reason to give up, checked in seed 001's order.
    #[inline(always)]
    pub fn failed(&mut self, now: Timestamp, failure: Failure) -> Result<Retry, Stopped> {
        self.budget.on_failure(now, &failure);
        self.last_failure = Some(failure);
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(self.stop(now, StopReason::Deadline));
        }
        if !failure.is_retryable() || !(self.options.idempotent || failure.had_no_effect()) {
            return Err(self.stop(now, StopReason::NotRetryable));
        }
        if self.options.nested {
            return Err(self.stop(now, StopReason::OuterLayerOwnsRecovery));
        }
        let Some(mut delay) = self.policy.next_delay(self.attempts, &failure) else {
            return Err(self.stop(now, StopReason::AttemptLimit));
        };
        let server_wait = failure.retry_after();
        if let Some(asked) = server_wait {
            let limit = self.options.max_server_wait;
            if asked > limit {
                return Err(self.stop(now, StopReason::ServerWaitTooLong { asked, limit }));
            }
            delay = delay.max(asked);
        }
        let remaining = self.remaining(now);
        if let Some(remaining) = remaining {
            if delay >= remaining {
                let reason = StopReason::WaitExceedsBudget {
                    wait: delay,
                    remaining,
                };
                return Err(self.stop(now, reason));
            }
        }
        let Some(spent) = self.budget.try_retry(now, &failure) else {
            return Err(self.stop(now, StopReason::BudgetExhausted));
        };
        self.last_spent = Some(spent);
        self.waited = self.waited.saturating_add(delay);
        self.not_before = server_wait.map(|_| now.saturating_add(delay));
        Ok(Retry {
            attempt: self.attempts,
            delay,
            server_wait,
            elapsed: now.saturating_duration_since(self.started),
            remaining,
        })
    }
}
