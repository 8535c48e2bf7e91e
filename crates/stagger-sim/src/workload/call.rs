//! One simulated request, driven by the real engine on the simulated clock.

use std::rc::Rc;

use stagger_core::budget::Budget;
use stagger_core::engine::{Run, Settings};
use stagger_core::{Failure, SeededRng, Timestamp};

use crate::error::SimError;
use crate::metrics::Metrics;
use crate::queue::{Nanos, nanos};
use crate::strategy::{RunningPolicy, Strategy};

/// A request in flight: its engine run, which holds its running policy, and when it started.
pub(crate) struct Call {
    run: Run<RunningPolicy, Rc<dyn Budget>>,
    started: Nanos,
}

/// What to do after an attempt.
pub(crate) enum Next {
    /// Send the next attempt at this time.
    RetryAt(Nanos),
    /// The request is over (success or give-up, already recorded).
    Done,
}

fn at(ns: Nanos) -> Timestamp {
    Timestamp::from_nanos(ns)
}

impl Call {
    /// The memory one call takes, wherever its owner keeps it; its policy is inside. Its
    /// budget is shared, or counted by its client.
    pub(crate) const fn bytes() -> u64 {
        size_of::<Self>() as u64
    }

    /// A request of `strategy` starting at `now`, with its own generator and its client's
    /// budget.
    pub(crate) fn start(
        strategy: &Strategy,
        rng: SeededRng,
        budget: Rc<dyn Budget>,
        options: Settings,
        now: Nanos,
    ) -> Result<Self, SimError> {
        let policy = strategy.policy.running(rng)?;
        Ok(Self {
            run: Run::with_budget(policy, budget, options, at(now)),
            started: now,
        })
    }

    /// Gives the request a generator of its own for the spread above a server's wait
    /// ([`Dispersal`](stagger_core::engine::Dispersal)), as the executors do.
    pub(crate) fn spread(mut self, rng: SeededRng) -> Self {
        self.run.set_rng(rng);
        self
    }

    /// The request's deadline, if it has one.
    pub(crate) fn deadline(&self) -> Option<Nanos> {
        self.run.deadline().map(|d| nanos(d.since_origin()))
    }

    /// Ends the request at `now`, before its next attempt, for `reason` (recorded); a retry
    /// its budget granted goes back.
    pub(crate) fn give_up(
        &mut self,
        now: Nanos,
        reason: stagger_core::engine::StopReason,
        metrics: &mut Metrics,
    ) {
        let stopped = self.run.abandon(at(now), reason);
        metrics.gave_up(stopped.reason);
    }

    /// Attempts begun so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.run.attempts()
    }

    /// Asks to send an attempt at `now`: its number, or `None` if the request gave up (recorded).
    pub(crate) fn begin(&mut self, now: Nanos, metrics: &mut Metrics) -> Option<u32> {
        match self.run.begin(at(now)) {
            Ok(attempt) => {
                metrics.attempt(now, attempt.number);
                Some(attempt.number)
            }
            Err(stopped) => {
                metrics.gave_up(stopped.reason);
                None
            }
        }
    }

    /// The attempt ended at `now` with `result`: records a success or a give-up, or says when
    /// to retry.
    pub(crate) fn end(
        &mut self,
        now: Nanos,
        result: Result<(), Failure>,
        metrics: &mut Metrics,
    ) -> Next {
        match result {
            Ok(()) => match self.run.succeeded(at(now)) {
                Ok(_) => {
                    metrics.success(now - self.started);
                    Next::Done
                }
                Err(stopped) => {
                    metrics.gave_up(stopped.reason);
                    Next::Done
                }
            },
            Err(failure) => match self.run.failed(at(now), failure) {
                Ok(retry) => Next::RetryAt(now.saturating_add(nanos(retry.delay))),
                Err(stopped) => {
                    metrics.gave_up(stopped.reason);
                    Next::Done
                }
            },
        }
    }
}
