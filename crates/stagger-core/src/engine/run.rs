//! [`Run`]: the state of one retried operation, and every decision about it.

use std::time::Duration;

use super::outcome::{Attempt, PlannedRetry, StopReason, Stopped, Summary, Verdict};
use super::settings::{Dispersal, Nested, Settings};
use crate::budget::{Budget, Slot, Spent, Unlimited};
use crate::clock::Timestamp;
use crate::failure::Failure;
use crate::policy::Policy;
use crate::rng::{Rng, SeededRng};

/// One retried operation: a policy, a budget and [`Settings`], advanced by the driver.
///
/// The driver calls [`begin`](Run::begin) before each attempt and [`end`](Run::end) after it,
/// passing the current time to both; between a [`Verdict::Retry`] and the next `begin` it
/// waits the retry's delay. `Run` reads no clock and does no I/O.
///
/// # Paying for retries
///
/// The budget grants a retry when the engine plans it ([`failed`](Run::failed) returns the
/// [`PlannedRetry`]), and the retry is paid for when its attempt [begins](Run::begin). A retry
/// that is granted but never sent is handed back ([`Budget::retry_abandoned`]): when the
/// deadline has passed by the time the next attempt would begin (a sleeper that overslept),
/// when the driver ends the run before the attempt ([`abandon`](Run::abandon)), and when the
/// driver is dropped during the wait (a future cancelled mid-sleep, a request dropped: it calls
/// [`cancel`](Run::cancel)).
///
/// # Pacing
///
/// A budget that paces ([`Budget::paces`], such as a [`GatedBudget`](crate::gate::GatedBudget))
/// gives each attempt a slot: the driver asks [`ready`](Run::ready) before [`begin`](Run::begin),
/// and waits as it says. A slot that cannot come before the deadline ends the run at once. A slot
/// reserved for an attempt that is never made goes back, as a granted retry does.
#[derive(Debug)]
pub struct Run<P, B = Unlimited> {
    policy: P,
    budget: B,
    max_server_wait: Duration,
    /// Whether a run marked nested makes a single attempt (the settings' [`Nested`] rule).
    single_when_nested: bool,
    idempotent: bool,
    nested: bool,
    started: Timestamp,
    deadline: Option<Timestamp>,
    attempt_timeout: Option<Duration>,
    attempts: u32,
    max_attempts: u32,
    waited: Duration,
    last_failure: Option<Failure>,
    last_spent: Option<Spent>,
    /// The retry the budget granted and no attempt has begun for yet: when, and what it cost.
    pending: Option<(Timestamp, Spent)>,
    /// [`Budget::retry_abandoned`] of `B`, taken where `B: Budget` is known, so that
    /// [`cancel`](Run::cancel) can be called where it is not (a future's `Drop`).
    abandon_fn: fn(&B, Timestamp, Spent),
    not_before: Option<Timestamp>,
    dispersal: Dispersal,
    /// Draws the dispersal above a server's wait ([`Dispersal::UniformAsked`]).
    rng: Option<SeededRng>,
}

impl<P, B> Run<P, B> {
    /// Hands a retry the budget granted, and that no attempt has begun for, back to the budget:
    /// a driver that can be dropped during the wait (a future) calls it when it is dropped.
    /// Nothing happens if no retry is pending, so calling it twice is harmless. It does not end
    /// the run: a driver that calls it must not begin another attempt, which would be a retry
    /// nobody paid for.
    ///
    /// (A `Drop` of the run itself would do it too, but would keep the run in memory across
    /// every call of a blocking loop that might unwind, at a cost of about as many instructions
    /// as the rest of the loop.)
    #[inline]
    pub fn cancel(&mut self) {
        if let Some((granted, spent)) = self.pending.take() {
            (self.abandon_fn)(&self.budget, granted, spent);
        }
    }
}

/// Whether the next attempt may begin: [`Run::ready`].
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub enum Ready {
    /// Now: call [`Run::begin`].
    Go,
    /// Not yet: wait this long, then ask again.
    Wait(Duration),
    /// Never: the slot the attempt needs comes too late. The run is over.
    GiveUp(Stopped),
}

impl<P: Policy> Run<P, Unlimited> {
    /// A run of `policy` starting at `now`, with no retry budget.
    pub fn new(policy: P, settings: Settings, now: Timestamp) -> Self {
        Self::with_budget(policy, Unlimited, settings, now)
    }
}

impl<P: Policy, B: Budget> Run<P, B> {
    /// A run of `policy` starting at `now`, whose retries `budget` must allow.
    pub fn with_budget(policy: P, budget: B, settings: Settings, now: Timestamp) -> Self {
        Self {
            policy,
            budget,
            max_server_wait: settings.max_server_wait(),
            single_when_nested: settings.nested() == Nested::SingleAttempt,
            idempotent: settings.idempotent().unwrap_or(true),
            nested: false,
            started: now,
            deadline: settings.deadline_from(now),
            attempt_timeout: settings.attempt_timeout(),
            attempts: 0,
            max_attempts: u32::MAX,
            waited: Duration::ZERO,
            last_failure: None,
            last_spent: None,
            pending: None,
            abandon_fn: B::retry_abandoned,
            not_before: None,
            dispersal: settings.dispersal(),
            rng: None,
        }
    }

    /// Gives the run a generator for the random dispersal above a server-directed wait
    /// ([`Dispersal`]). Without one, the dispersal is the policy's delay.
    #[must_use]
    pub fn with_rng(mut self, rng: SeededRng) -> Self {
        self.rng = Some(rng);
        self
    }

    /// Whether the run would draw from a generator it does not have yet, after `failure`: a
    /// driver that gives each run a generator only when needed calls it before
    /// [`failed`](Run::failed), and [`set_rng`](Run::set_rng) if so, so that runs that never
    /// meet a server-directed wait cost no generator.
    #[inline(always)]
    pub fn wants_rng(&self, failure: &Failure) -> bool {
        self.rng.is_none() && self.dispersal != Dispersal::Floor && failure.retry_after().is_some()
    }

    /// Gives the run a generator, as [`with_rng`](Run::with_rng) does.
    #[cold]
    pub fn set_rng(&mut self, rng: SeededRng) {
        self.rng = Some(rng);
    }

    /// The delay of a retry after a server-directed wait of `asked`, when the policy's delay
    /// is `delay` and `remaining` is left: never less than `asked`; the dispersal above it shrinks
    /// to fit the time left.
    #[inline]
    fn above_floor(
        &mut self,
        asked: Duration,
        delay: Duration,
        remaining: Option<Duration>,
    ) -> Duration {
        let dispersal = match (self.dispersal, self.rng.as_mut()) {
            (Dispersal::Floor, _) => return delay.max(asked),
            // Never less than the policy's own delay either: the server's wait is a floor, not
            // an override.
            (Dispersal::UniformAsked, Some(rng)) => {
                fraction(asked, rng.next_f64()).max(delay.saturating_sub(asked))
            }
            (Dispersal::PolicyAbove | Dispersal::UniformAsked, _) => delay,
        };
        let room = remaining.map_or(Duration::MAX, |r| r.saturating_sub(asked));
        let extra = if dispersal < room {
            dispersal
        } else {
            // The floor fits and the dispersal does not: disperse inside the time left instead.
            match self.rng.as_mut() {
                Some(rng) => fraction(room, rng.next_f64()),
                None => Duration::from_nanos(
                    u64::try_from(dispersal.as_nanos() % room.as_nanos().max(1)).unwrap_or(0),
                ),
            }
        };
        asked.saturating_add(extra)
    }

    /// The run's deadline, if it has one.
    #[inline]
    pub fn deadline(&self) -> Option<Timestamp> {
        self.deadline
    }

    /// Whether each attempt has a timeout of its own, besides the run's deadline.
    #[inline]
    pub fn times_attempts(&self) -> bool {
        self.attempt_timeout.is_some()
    }

    /// Tells the run that it started inside another retrying layer's attempt. Under
    /// [`Nested::SingleAttempt`] (the default) it then makes a single attempt and leaves
    /// recovery to the outer layer ([`StopReason::OuterLayerOwnsRecovery`]); under
    /// [`Nested::Retry`] nothing changes. The executors call it when they detect nesting.
    pub fn mark_nested(&mut self) {
        self.nested = self.single_when_nested;
    }

    /// Whether the run makes a single attempt because it is nested ([`Run::mark_nested`]).
    #[must_use]
    pub fn is_nested(&self) -> bool {
        self.nested
    }

    /// Allows no attempt after the `max`-th, whatever the policy says: for an operation that
    /// cannot be repeated (a request whose body was streamed), or a driver that enforces a
    /// configuration's own limit. A failure of the last allowed attempt stops the run with
    /// [`StopReason::AttemptLimit`], after the checks that come before the policy's.
    pub fn limit_attempts(&mut self, max: u32) {
        self.max_attempts = self.max_attempts.min(max);
    }

    /// Ends the run at `now`, for `reason`, without another attempt: before the first, if the
    /// driver finds it cannot go on (its configuration is invalid, say). Nothing is charged to
    /// the budget. Between a planned retry and its attempt, use [`abandon`](Run::abandon),
    /// which also hands the granted retry back.
    #[inline(always)]
    pub fn stop(&self, now: Timestamp, reason: StopReason) -> Stopped {
        // Built in place from copies of the counters: a call taking `&self` on the paths that
        // give up would keep the whole run in memory on the paths that do not.
        Stopped {
            reason,
            summary: self.summary(now),
            idempotent: self.idempotent,
        }
    }

    /// Ends the run at `now`, for `reason`, between a planned retry and its attempt: the
    /// driver cannot make the attempt (the service it would go to failed, say). The retry was
    /// not sent, so the budget gets it back. Before the first attempt, the same as
    /// [`stop`](Run::stop).
    #[cold]
    pub fn abandon(&mut self, now: Timestamp, reason: StopReason) -> Stopped {
        self.cancel();
        if self.budget.paces() {
            self.budget.slot_unused();
        }
        self.stop(now, reason)
    }

    /// Whether the next attempt may begin at `now`: a driver asks before each
    /// [`begin`](Run::begin), and if told to wait, waits and asks again.
    ///
    /// It says to wait while the server's wait has not passed ([`too_early`](Run::too_early))
    /// and, with a budget that [paces](Budget::paces), until the slot the budget reserves for
    /// the attempt (asked again at the slot, a budget may move it later, if the server has
    /// asked for a longer wait since). If that slot would come at or after the deadline, or at
    /// or beyond the longest server wait the run honours from now, the run gives up at once
    /// ([`StopReason::WaitExceedsDeadline`]; [`StopReason::ServerWaitTooLong`], whose `asked`
    /// is then the gate's wait), and a retry the budget granted goes back. The time waited for
    /// a slot counts in the summary's `waited`.
    ///
    /// A driver that never asks gets no pacing: [`begin`](Run::begin) does not ask for a slot.
    #[inline(always)]
    pub fn ready(&mut self, now: Timestamp) -> Ready {
        if let Some(rest) = self.too_early(now) {
            return Ready::Wait(rest);
        }
        if self.budget.paces() {
            return self.take_slot(now);
        }
        Ready::Go
    }

    /// Asks the pacing budget for the next attempt's slot at `now`.
    #[inline(never)]
    fn take_slot(&mut self, now: Timestamp) -> Ready {
        let longest = now.saturating_add(self.max_server_wait);
        let limit = self.deadline.map_or(longest, |d| d.min(longest));
        match self.budget.slot(now, Some(limit)) {
            Slot::At(at) if at > now => {
                let wait = at.saturating_duration_since(now);
                // Asked again before the same slot (a clock that went back), it is not waited
                // for twice.
                if self.not_before != Some(at) {
                    self.waited = self.waited.saturating_add(wait);
                }
                self.not_before = Some(at);
                Ready::Wait(wait)
            }
            Slot::Now | Slot::At(_) => Ready::Go,
            Slot::PastDeadline(at) => {
                // The attempt is not made: a retry granted for it goes back.
                self.cancel();
                let wait = at.saturating_duration_since(now);
                let reason = match self.deadline {
                    Some(deadline) if at >= deadline => StopReason::WaitExceedsDeadline {
                        wait,
                        remaining: deadline.saturating_duration_since(now),
                    },
                    _ => StopReason::ServerWaitTooLong {
                        asked: wait,
                        limit: self.max_server_wait,
                    },
                };
                Ready::GiveUp(self.stop(now, reason))
            }
        }
    }

    /// How much longer the driver must wait before the next attempt, if it is early: the
    /// server asked for a wait that has not passed yet (a sleeper may wake early). A driver
    /// checks this (or [`ready`](Run::ready), which checks it too) before
    /// [`begin`](Run::begin) and waits again if needed, so that no attempt ever starts earlier
    /// than the server asked.
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

    #[inline(always)]
    fn remaining(&self, now: Timestamp) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(now))
    }

    /// Asks to start the next attempt at `now`. With a budget that paces, ask
    /// [`ready`](Run::ready) first: `begin` tells the budget the slot was used (or not), but
    /// does not ask for one.
    ///
    /// # Errors
    ///
    /// [`Stopped`] if the deadline has passed (before the first attempt, that means no attempt
    /// at all; after a planned retry, the retry goes back to the budget), or if the budget
    /// refuses the first attempt.
    #[inline(always)]
    pub fn begin(&mut self, now: Timestamp) -> Result<Attempt, Stopped> {
        if self.deadline.is_some_and(|d| now >= d) {
            // The retry planned for this attempt is not sent, nor its slot used.
            self.cancel();
            if self.budget.paces() {
                self.budget.slot_unused();
            }
            return Err(self.stop(now, StopReason::Deadline));
        }
        // The planned retry is sent: it is paid for, and its slot used.
        self.pending = None;
        if self.attempts == 0 && !self.budget.admit(now) {
            // Not sent after all: the slot goes back.
            if self.budget.paces() {
                self.budget.slot_unused();
            }
            return Err(self.stop(now, StopReason::BudgetRefusedFirstAttempt));
        }
        if self.budget.paces() {
            self.budget.slot_taken();
        }
        self.attempts = self.attempts.saturating_add(1);
        let mut remaining = self.remaining(now);
        if let Some(timeout) = self.attempt_timeout {
            remaining = shorter(remaining, timeout);
        }
        Ok(Attempt {
            number: self.attempts,
            remaining,
            deadline: self.deadline,
            elapsed: now.saturating_duration_since(self.started),
        })
    }

    /// Reports how the current attempt ended at `now`, and decides what comes next.
    ///
    /// The checks run in this order: the deadline, success, a failure that is not retryable, a
    /// failure that may have taken effect in an operation that is not idempotent, nesting, the
    /// attempt limit, then the delay, which must fit in the time left and must be allowed by
    /// the budget. [`succeeded`](Run::succeeded) and
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
    /// spent.
    #[inline(always)]
    pub fn succeeded(&mut self, now: Timestamp) -> Result<Summary, Stopped> {
        self.budget.on_success(now, self.last_spent);
        if self.deadline.is_some_and(|d| now >= d) {
            // The attempt ran out the caller's time: to the caller (and to an outer layer that
            // reads the summary) it timed out, whatever an earlier attempt failed with. It may
            // have taken effect.
            self.last_failure = Some(Failure::Timeout);
            return Err(self.stop(now, StopReason::Deadline));
        }
        Ok(self.summary(now))
    }

    /// Reports that the current attempt failed at `now` with `failure`, and returns the retry
    /// to make.
    ///
    /// # Errors
    ///
    /// [`Stopped`] with the reason to give up, checked in the order of [`end`](Run::end).
    #[inline(always)]
    pub fn failed(&mut self, now: Timestamp, failure: Failure) -> Result<PlannedRetry, Stopped> {
        self.heard(now, failure);
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(self.stop(now, StopReason::Deadline));
        }
        if !failure.is_retryable() {
            return Err(self.stop(now, StopReason::NotRetryable));
        }
        if !(self.idempotent || failure.had_no_effect()) {
            return Err(self.stop(now, StopReason::NotIdempotent));
        }
        if self.nested {
            return Err(self.stop(now, StopReason::OuterLayerOwnsRecovery));
        }
        if self.attempts >= self.max_attempts {
            return Err(self.stop(now, StopReason::AttemptLimit));
        }
        let Some(mut delay) = self.policy.next_delay(self.attempts, &failure) else {
            return Err(self.stop(now, StopReason::AttemptLimit));
        };
        let server_wait = failure.retry_after();
        if let Some(asked) = server_wait {
            let limit = self.max_server_wait;
            if asked > limit {
                return Err(self.stop(now, StopReason::ServerWaitTooLong { asked, limit }));
            }
            delay = self.above_floor(asked, delay, self.remaining(now));
        }
        let remaining = self.remaining(now);
        if let Some(remaining) = remaining
            && delay >= remaining
        {
            let reason = StopReason::WaitExceedsDeadline {
                wait: delay,
                remaining,
            };
            return Err(self.stop(now, reason));
        }
        let Some(spent) = self.budget.try_retry(now, &failure) else {
            return Err(self.stop(now, StopReason::BudgetExhausted));
        };
        self.last_spent = Some(spent);
        self.pending = Some((now, spent));
        self.waited = self.waited.saturating_add(delay);
        self.not_before = server_wait.map(|_| now.saturating_add(delay));
        Ok(PlannedRetry {
            attempt: self.attempts,
            delay,
            server_wait,
            elapsed: now.saturating_duration_since(self.started),
            remaining,
        })
    }
}

impl<P, B: Budget> Run<P, B> {
    /// Tells the budget of a failed attempt at `now`, and keeps the failure as the last.
    #[inline(always)]
    pub(super) fn heard(&mut self, now: Timestamp, failure: Failure) {
        self.budget.on_failure(now, &failure);
        if self.budget.paces()
            && let Some(asked) = failure.retry_after()
        {
            // A pacing budget learns of every server wait, whether or not the run retries, at
            // most as long as the run honours: a hostile server cannot shut a destination for
            // longer.
            self.budget
                .server_wait(now, asked.min(self.max_server_wait));
        }
        self.last_failure = Some(failure);
    }

    /// A hedge was granted at the cost of `spent`: the receipt the budget gets on success.
    pub(super) fn charged(&mut self, spent: Spent) {
        self.last_spent = Some(spent);
    }

    /// No attempt before `at`, as a server asked (the later of it and an earlier such wait).
    pub(super) fn not_before(&mut self, at: Timestamp) {
        self.not_before = Some(self.not_before.map_or(at, |t| t.max(at)));
    }

    /// The run's budget.
    pub(super) fn budget(&self) -> &B {
        &self.budget
    }

    /// The most attempts allowed ([`limit_attempts`](Run::limit_attempts)).
    pub(super) fn attempt_limit(&self) -> u32 {
        self.max_attempts
    }
}

impl<P, B> Run<P, B> {
    /// Whether the operation may be repeated: declared so, or left to the operation (then it
    /// is assumed).
    #[inline]
    #[must_use]
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// The longest server-directed wait the run honours.
    #[inline]
    #[must_use]
    pub fn max_server_wait(&self) -> Duration {
        self.max_server_wait
    }
}

/// The time an attempt has: `remaining` before the deadline, or its own `timeout` if shorter.
#[cold]
#[inline(never)]
fn shorter(remaining: Option<Duration>, timeout: Duration) -> Option<Duration> {
    Some(remaining.map_or(timeout, |remaining| remaining.min(timeout)))
}

/// `u` of `d`, for `u` in `[0, 1)`: strictly less than `d` unless `d` is zero, and never more
/// whatever rounding does.
#[inline]
fn fraction(d: Duration, u: f64) -> Duration {
    let nanos = d.as_nanos();
    // A float-to-integer cast saturates; the result is at most `nanos`.
    let part = ((nanos as f64) * u.clamp(0.0, 1.0)) as u128;
    let part = part.min(nanos.saturating_sub(1));
    // `part` is below `d`, so its whole seconds fit in a u64.
    Duration::new((part / 1_000_000_000) as u64, (part % 1_000_000_000) as u32)
}
