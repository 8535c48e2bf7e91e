//! One simulated request, driven by the real engine on the simulated clock.

use std::time::Duration;

use stagger_core::engine::{
    Answer, Attempt, Hedge, HedgedRun, Hedging, Ready, Run, Settings, Stopped,
};
use stagger_core::{Failure, SeededRng, Timestamp};

use crate::error::SimError;
use crate::metrics::Metrics;
use crate::queue::{Nanos, nanos};
use crate::strategy::{RunningPolicy, SimBudget};

/// A request in flight: its engine run, which holds its running policy, and when it started.
pub(crate) struct Call {
    run: Run<RunningPolicy, SimBudget>,
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

    /// A request running `policy` (with its own generator) from `now`, with its client's
    /// budget.
    #[inline]
    pub(crate) fn start(
        policy: RunningPolicy,
        budget: SimBudget,
        options: Settings,
        now: Nanos,
    ) -> Self {
        Self {
            run: Run::with_budget(policy, budget, options, at(now)),
            started: now,
        }
    }

    /// Whether the request would draw the dispersal above a server's wait
    /// ([`Dispersal`](stagger_core::engine::Dispersal)) after `failure` from a generator it
    /// does not have yet ([`Run::wants_rng`]): a driver then gives it one with
    /// [`Call::give_dispersal_rng`], as the executors do, so that only requests that meet a wait
    /// cost a generator.
    pub(crate) fn wants_dispersal_rng(&self, failure: &Failure) -> bool {
        self.run.wants_rng(failure)
    }

    /// Gives the request its generator for the dispersal above a server's wait.
    #[inline]
    pub(crate) fn give_dispersal_rng(&mut self, rng: SeededRng) {
        self.run.set_rng(rng);
    }

    /// Whether the request may send its next attempt at `now`, recording nothing: `Ok(None)`
    /// to go now, `Ok(Some(at))` to wait for the slot a budget that paces (a gate) holds for
    /// it, or how the run stopped (the slot came too late).
    pub(crate) fn pace(&mut self, now: Nanos) -> Result<Option<Nanos>, Stopped> {
        match self.run.ready(at(now)) {
            Ready::Go => Ok(None),
            Ready::Wait(rest) => Ok(Some(now.saturating_add(nanos(rest)))),
            Ready::GiveUp(stopped) => Err(stopped),
        }
    }

    /// The attempt the engine allows at `now`, or how the run stopped, recording nothing.
    #[inline]
    pub(crate) fn try_begin(&mut self, now: Nanos) -> Result<Attempt, Stopped> {
        self.run.begin(at(now))
    }

    /// Tells the run that it runs inside another layer's attempt ([`Run::mark_nested`]): under
    /// its settings' default it then makes one attempt and leaves recovery to that layer.
    pub(crate) fn nest(&mut self) {
        self.run.mark_nested();
    }

    /// Asks to send an attempt at `now`: its number, or `None` if the request gave up (recorded).
    pub(crate) fn begin(&mut self, now: Nanos, metrics: &mut Metrics) -> Option<u32> {
        self.begin_attempt(now, metrics)
            .map(|attempt| attempt.number)
    }

    /// Asks to send an attempt at `now`, as [`Call::begin`], and returns the time the attempt
    /// has ([`Attempt::remaining`]: the shorter of the attempt timeout and the time left before
    /// the deadline), or `None` if the request gave up (recorded). The outer `None` is a
    /// give-up; the inner one an attempt with no limit.
    #[allow(clippy::option_option)]
    pub(crate) fn begin_timed(
        &mut self,
        now: Nanos,
        metrics: &mut Metrics,
    ) -> Option<Option<std::time::Duration>> {
        self.begin_attempt(now, metrics)
            .map(|attempt| attempt.remaining)
    }

    /// The attempt the engine allows at `now`, recorded, or `None` if the request gave up
    /// (recorded).
    fn begin_attempt(&mut self, now: Nanos, metrics: &mut Metrics) -> Option<Attempt> {
        match self.try_begin(now) {
            Ok(attempt) => {
                metrics.attempt(now, attempt.number);
                Some(attempt)
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
        match self.settle(now, result) {
            Settled::RetryAt(at) => Next::RetryAt(at),
            Settled::Succeeded { latency } => {
                metrics.success(latency);
                Next::Done
            }
            Settled::GaveUp(stopped) => {
                metrics.gave_up(stopped.reason);
                Next::Done
            }
        }
    }

    /// [`Call::end`], recording nothing: when to retry, or how the request ended.
    #[inline]
    pub(crate) fn settle(&mut self, now: Nanos, result: Result<(), Failure>) -> Settled {
        match result {
            Ok(()) => match self.run.succeeded(at(now)) {
                Ok(_) => Settled::Succeeded {
                    latency: now - self.started,
                },
                Err(stopped) => Settled::GaveUp(stopped),
            },
            Err(failure) => match self.run.failed(at(now), failure) {
                Ok(retry) => Settled::RetryAt(now.saturating_add(nanos(retry.delay))),
                Err(stopped) => Settled::GaveUp(stopped),
            },
        }
    }
}

/// How an attempt's answer leaves a request: [`Call::settle`].
pub(crate) enum Settled {
    /// Send the next attempt at this time.
    RetryAt(Nanos),
    /// It succeeded, this long after it started.
    Succeeded {
        /// From the request's start to its success.
        latency: Nanos,
    },
    /// It gave up.
    GaveUp(Stopped),
}

/// A request that hedges: its engine run, which sends attempts beside those in flight
/// ([`HedgedRun`]), and when it started.
pub(crate) struct HedgedCall {
    hedged: HedgedRun<RunningPolicy, SimBudget>,
    started: Nanos,
}

/// What a hedged request does next: [`HedgedCall::next`].
pub(crate) enum Step {
    /// Send this attempt now (recorded): its number, and the time it has.
    Send(u32, Option<Duration>),
    /// Ask again at this time, or when an attempt answers.
    WakeAt(Nanos),
    /// Ask again when an attempt answers.
    Idle,
    /// The request is over (a give-up, recorded): what is in flight is cancelled.
    Done,
}

impl HedgedCall {
    /// A request running `policy` hedging by `hedging` from `now`, with its client's budget;
    /// `measured` is the hedge delay its client measured, for a delay at a quantile; `spread`,
    /// if given, the generator for the spread above a server's wait.
    pub(crate) fn start(
        policy: RunningPolicy,
        hedging: Hedging,
        measured: Option<Duration>,
        dispersal_rng: Option<SeededRng>,
        budget: SimBudget,
        options: Settings,
        now: Nanos,
    ) -> Result<Self, SimError> {
        hedging.validate()?;
        let mut run = Run::with_budget(policy, budget, options, at(now));
        if let Some(rng) = dispersal_rng {
            run.set_rng(rng);
        }
        Ok(Self {
            hedged: HedgedRun::new(run, hedging, measured),
            started: now,
        })
    }

    /// What to do at `now`.
    pub(crate) fn next(&mut self, now: Nanos, metrics: &mut Metrics) -> Step {
        match self.hedged.next(at(now)) {
            Hedge::Send(attempt) => {
                metrics.attempt(now, attempt.number);
                Step::Send(attempt.number, attempt.remaining)
            }
            Hedge::Wait(rest) => Step::WakeAt(now.saturating_add(nanos(rest))),
            Hedge::Idle => Step::Idle,
            Hedge::Stop(stopped) => {
                metrics.gave_up(stopped.reason);
                Step::Done
            }
        }
    }

    /// Attempt `number` answered at `now` with `result`: whether the request is over (a
    /// success or a give-up, recorded).
    pub(crate) fn answered(
        &mut self,
        number: u32,
        now: Nanos,
        result: Result<(), Failure>,
        metrics: &mut Metrics,
    ) -> bool {
        match self.hedged.answered(number, at(now), result) {
            Answer::Won(_) => {
                metrics.success(now - self.started);
                true
            }
            Answer::Lost => false,
            Answer::Stop(stopped) => {
                metrics.gave_up(stopped.reason);
                true
            }
        }
    }
}
