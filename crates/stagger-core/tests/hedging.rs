//! The hedged run: gRFC A6's hedging semantics, on the engine alone, with a manual clock.

use std::cell::Cell;
use std::time::Duration;

use stagger_core::budget::{Budget, BudgetConfig, Spent, TokenBucket};
use stagger_core::engine::{
    Answer, Hedge, HedgedRun, Hedging, MAX_HEDGED_ATTEMPTS, Run, Settings, StopReason,
};
use stagger_core::policy::NoRetryPolicy;
use stagger_core::{Failure, Timestamp};

fn ms(n: u64) -> Timestamp {
    Timestamp::from_nanos(n * 1_000_000)
}

fn d(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn hedged(
    settings: Settings,
    hedging: Hedging,
) -> HedgedRun<NoRetryPolicy, stagger_core::budget::Unlimited> {
    HedgedRun::new(Run::new(NoRetryPolicy, settings, ms(0)), hedging, None)
}

fn sent(next: Hedge) -> u32 {
    match next {
        Hedge::Send(attempt) => attempt.number,
        other => panic!("expected an attempt, got {other:?}"),
    }
}

/// A budget that counts what it is asked and told, and grants `grants` retries.
#[derive(Default)]
struct Counting {
    grants: Cell<u32>,
    granted: Cell<u32>,
    abandoned: Cell<u32>,
    successes: Cell<u32>,
    failures: Cell<u32>,
    refund: Cell<Option<Spent>>,
}

impl Counting {
    fn granting(n: u32) -> Self {
        let b = Self::default();
        b.grants.set(n);
        b
    }
}

impl Budget for &Counting {
    fn try_retry(&self, _now: Timestamp, _failure: &Failure) -> Option<Spent> {
        if self.grants.get() == 0 {
            return None;
        }
        self.grants.set(self.grants.get() - 1);
        self.granted.set(self.granted.get() + 1);
        Some(Spent(u64::from(self.granted.get())))
    }
    fn retry_abandoned(&self, _granted: Timestamp, _spent: Spent) {
        self.abandoned.set(self.abandoned.get() + 1);
    }
    fn on_success(&self, _now: Timestamp, last: Option<Spent>) {
        self.successes.set(self.successes.get() + 1);
        self.refund.set(last);
    }
    fn on_failure(&self, _now: Timestamp, _failure: &Failure) {
        self.failures.set(self.failures.get() + 1);
    }
}

#[test]
fn hedges_go_out_at_each_delay_up_to_max_attempts_in_all() {
    let mut h = hedged(Settings::new(), Hedging::fixed(d(10), 3));
    assert_eq!(sent(h.next(ms(0))), 1);
    assert_eq!(h.next(ms(4)), Hedge::Wait(d(6)));
    assert_eq!(sent(h.next(ms(10))), 2);
    assert_eq!(h.next(ms(15)), Hedge::Wait(d(5)));
    assert_eq!(sent(h.next(ms(20))), 3);
    assert_eq!(h.in_flight(), 3);
    // Three in all: nothing more, whatever the time.
    assert_eq!(h.next(ms(1_000)), Hedge::Idle);
    // The third wins.
    let Answer::Won(summary) = h.answered(3, ms(1_001), Ok(())) else {
        panic!("a win");
    };
    assert_eq!(summary.attempts, 3);
}

#[test]
fn the_first_success_wins_and_late_answers_change_nothing() {
    let mut h = hedged(Settings::new(), Hedging::fixed(d(10), 2));
    sent(h.next(ms(0)));
    sent(h.next(ms(10)));
    let Answer::Won(summary) = h.answered(2, ms(12), Ok(())) else {
        panic!("a win");
    };
    assert_eq!(summary.attempts, 2);
    assert_eq!(summary.elapsed, d(12));
    assert_eq!(h.in_flight(), 0);
    // The loser, cancelled by the driver, may still be reported: it is not in flight.
    assert_eq!(h.answered(1, ms(13), Ok(())), Answer::Lost);
    assert_eq!(h.answered(7, ms(13), Ok(())), Answer::Lost);
    assert_eq!(h.answered(0, ms(13), Ok(())), Answer::Lost);
}

#[test]
fn a_non_fatal_failure_sends_the_next_hedge_at_once_and_the_timer_resumes() {
    let mut h = hedged(Settings::new(), Hedging::fixed(d(100), 4));
    sent(h.next(ms(0)));
    assert_eq!(h.answered(1, ms(5), Err(Failure::Retryable)), Answer::Lost);
    assert_eq!(sent(h.next(ms(5))), 2);
    // The next one follows at the delay from then.
    assert_eq!(h.next(ms(5)), Hedge::Wait(d(100)));
    assert_eq!(sent(h.next(ms(105))), 3);
}

#[test]
fn a_fatal_failure_ends_the_run_at_once() {
    let mut h = hedged(Settings::new(), Hedging::fixed(d(10), 3));
    sent(h.next(ms(0)));
    sent(h.next(ms(10)));
    let Answer::Stop(stopped) = h.answered(2, ms(11), Err(Failure::Permanent)) else {
        panic!("a stop");
    };
    assert_eq!(stopped.reason, StopReason::NotRetryable);
    assert_eq!(stopped.summary.last_failure, Some(Failure::Permanent));
    assert_eq!(h.in_flight(), 0);
}

#[test]
fn when_every_attempt_has_failed_the_run_stops_with_the_last_failure() {
    let mut h = hedged(Settings::new(), Hedging::fixed(d(10), 2));
    sent(h.next(ms(0)));
    sent(h.next(ms(10)));
    assert_eq!(h.answered(1, ms(11), Err(Failure::Retryable)), Answer::Lost);
    assert_eq!(h.next(ms(11)), Hedge::Idle);
    let Answer::Stop(stopped) = h.answered(2, ms(12), Err(Failure::Timeout)) else {
        panic!("a stop");
    };
    assert_eq!(stopped.reason, StopReason::AttemptLimit);
    assert_eq!(stopped.summary.attempts, 2);
    assert_eq!(stopped.summary.last_failure, Some(Failure::Timeout));
}

#[test]
fn server_pushback_delays_the_next_hedge_and_a_refusal_stops_them() {
    let mut h = hedged(Settings::new(), Hedging::fixed(d(10), 4));
    sent(h.next(ms(0)));
    // "Retry in 50 ms": the next hedge waits for it, then the delay resumes.
    assert_eq!(
        h.answered(1, ms(2), Err(Failure::RetryAfter(d(50)))),
        Answer::Lost
    );
    assert_eq!(h.next(ms(2)), Hedge::Wait(d(50)));
    assert_eq!(sent(h.next(ms(52))), 2);
    assert_eq!(h.next(ms(52)), Hedge::Wait(d(10)));
    sent(h.next(ms(62)));
    // A wait longer than the run honours: no more hedges, those in flight go on.
    let long = Failure::RetryAfter(Duration::from_secs(3_600));
    assert_eq!(h.answered(2, ms(63), Err(long)), Answer::Lost);
    assert_eq!(h.next(ms(1_000)), Hedge::Idle);
    assert_eq!(h.in_flight(), 1);
    let Answer::Stop(stopped) = h.answered(3, ms(1_001), Err(Failure::Retryable)) else {
        panic!("a stop");
    };
    assert!(matches!(
        stopped.reason,
        StopReason::ServerWaitTooLong { .. }
    ));
}

#[test]
fn no_hedge_outlives_the_deadline() {
    let settings = Settings::new().with_timeout(d(25));
    let mut h = hedged(settings, Hedging::fixed(d(10), 5));
    sent(h.next(ms(0)));
    sent(h.next(ms(10)));
    sent(h.next(ms(20)));
    // The next hedge would be due at 30 ms, past the deadline: wake at the deadline.
    assert_eq!(h.next(ms(20)), Hedge::Wait(d(5)));
    let Hedge::Stop(stopped) = h.next(ms(25)) else {
        panic!("a stop at the deadline");
    };
    assert_eq!(stopped.reason, StopReason::Deadline);
    assert_eq!(stopped.summary.attempts, 3);
    assert_eq!(stopped.summary.last_failure, Some(Failure::Timeout));
    assert_eq!(h.in_flight(), 0);
    // Each attempt is told the time left.
    let mut h = hedged(settings, Hedging::fixed(d(10), 5));
    let Hedge::Send(first) = h.next(ms(0)) else {
        panic!()
    };
    let Hedge::Send(second) = h.next(ms(10)) else {
        panic!()
    };
    assert_eq!(
        (first.remaining, second.remaining),
        (Some(d(25)), Some(d(15)))
    );
    // A success at the deadline is too late.
    let Answer::Stop(stopped) = h.answered(2, ms(25), Ok(())) else {
        panic!("too late");
    };
    assert_eq!(stopped.reason, StopReason::Deadline);
}

#[test]
fn an_attempt_timeout_is_each_attempts_own_and_a_cut_attempt_hedges_at_once() {
    let settings = Settings::new()
        .with_timeout(d(1_000))
        .with_attempt_timeout(d(30));
    let mut h = hedged(settings, Hedging::fixed(d(100), 3));
    let Hedge::Send(first) = h.next(ms(0)) else {
        panic!()
    };
    assert_eq!(first.remaining, Some(d(30)));
    // Cut at its timeout: a timeout, not fatal.
    assert_eq!(h.answered(1, ms(30), Err(Failure::Timeout)), Answer::Lost);
    assert_eq!(sent(h.next(ms(30))), 2);
}

#[test]
fn an_operation_that_is_not_idempotent_is_never_in_flight_twice() {
    let settings = Settings::new().with_idempotent(false);
    let mut h = hedged(settings, Hedging::fixed(d(10), 3));
    sent(h.next(ms(0)));
    // No hedge, whatever the time.
    assert_eq!(h.next(ms(10)), Hedge::Idle);
    assert_eq!(h.next(ms(10_000)), Hedge::Idle);
    // A failure that may have taken effect ends it.
    let Answer::Stop(stopped) = h.answered(1, ms(10_001), Err(Failure::Timeout)) else {
        panic!("a stop");
    };
    assert_eq!(stopped.reason, StopReason::NotIdempotent);
    assert_eq!(stopped.summary.attempts, 1);
    // One known to have had no effect sends the next attempt, alone.
    let mut h = hedged(settings, Hedging::fixed(d(10), 3));
    sent(h.next(ms(0)));
    assert_eq!(h.answered(1, ms(1), Err(Failure::Rejected)), Answer::Lost);
    assert_eq!(sent(h.next(ms(1))), 2);
    assert_eq!(h.next(ms(50)), Hedge::Idle);
    assert_eq!(h.in_flight(), 1);
}

#[test]
fn a_nested_run_makes_one_attempt() {
    let mut run = Run::new(NoRetryPolicy, Settings::new(), ms(0));
    run.mark_nested();
    let mut h = HedgedRun::new(run, Hedging::fixed(d(10), 3), None);
    sent(h.next(ms(0)));
    assert_eq!(h.next(ms(100)), Hedge::Idle);
    let Answer::Stop(stopped) = h.answered(1, ms(101), Err(Failure::Retryable)) else {
        panic!("a stop");
    };
    assert_eq!(stopped.reason, StopReason::OuterLayerOwnsRecovery);
}

#[test]
fn the_budget_pays_for_every_hedge_sent_and_may_refuse_them() {
    let budget = Counting::granting(1);
    let run = Run::with_budget(NoRetryPolicy, &budget, Settings::new(), ms(0));
    let mut h = HedgedRun::new(run, Hedging::fixed(d(10), 4), None);
    sent(h.next(ms(0)));
    sent(h.next(ms(10)));
    assert_eq!(budget.granted.get(), 1);
    // Refused: no more hedges, and the ones in flight go on.
    assert_eq!(h.next(ms(20)), Hedge::Idle);
    assert_eq!(h.in_flight(), 2);
    assert_eq!(h.answered(2, ms(21), Err(Failure::Retryable)), Answer::Lost);
    assert_eq!(budget.failures.get(), 1);
    let Answer::Won(summary) = h.answered(1, ms(30), Ok(())) else {
        panic!("a win");
    };
    assert_eq!(summary.attempts, 2);
    // The hedge's receipt comes back with the success; nothing was abandoned: it was sent.
    assert_eq!(budget.successes.get(), 1);
    assert_eq!(budget.refund.get(), Some(Spent(1)));
    assert_eq!(budget.abandoned.get(), 0);

    // With no attempt in flight, a refusal ends the run.
    let budget = Counting::granting(0);
    let run = Run::with_budget(NoRetryPolicy, &budget, Settings::new(), ms(0));
    let mut h = HedgedRun::new(run, Hedging::fixed(d(10), 4), None);
    sent(h.next(ms(0)));
    assert_eq!(h.answered(1, ms(1), Err(Failure::Retryable)), Answer::Lost);
    let Hedge::Stop(stopped) = h.next(ms(1)) else {
        panic!("a stop");
    };
    assert_eq!(stopped.reason, StopReason::BudgetExhausted);
    assert_eq!(stopped.summary.attempts, 1);
}

#[test]
fn a_token_bucket_bounds_the_hedges_of_a_fleet() {
    // A bucket of 10 tokens at 5 a retry grants two hedges, then refuses while nothing
    // succeeds.
    let bucket = TokenBucket::AWS_STANDARD
        .with_capacity(10.0)
        .budget()
        .expect("valid");
    let mut hedges = 0;
    for i in 0..10 {
        let run = Run::with_budget(NoRetryPolicy, &bucket, Settings::new(), ms(i));
        let mut h = HedgedRun::new(run, Hedging::fixed(Duration::ZERO, 3), None);
        loop {
            match h.next(ms(i)) {
                Hedge::Send(a) if a.number > 1 => hedges += 1,
                Hedge::Send(_) => {}
                _ => break,
            }
        }
    }
    assert_eq!(hedges, 2);
}

#[test]
fn a_zero_delay_sends_every_attempt_at_once() {
    let mut h = hedged(Settings::new(), Hedging::fixed(Duration::ZERO, 4));
    let numbers: Vec<u32> = (0..4).map(|_| sent(h.next(ms(0)))).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    assert_eq!(h.next(ms(0)), Hedge::Idle);
}

#[test]
fn a_quantile_delay_waits_for_a_measurement() {
    let run = Run::new(NoRetryPolicy, Settings::new(), ms(0));
    let mut h = HedgedRun::new(run, Hedging::quantile(9500, 2), None);
    sent(h.next(ms(0)));
    // No estimate yet: no hedge on a timer, but a failure still sends the next attempt.
    assert_eq!(h.next(ms(10_000)), Hedge::Idle);
    assert_eq!(
        h.answered(1, ms(10_001), Err(Failure::Retryable)),
        Answer::Lost
    );
    assert_eq!(sent(h.next(ms(10_001))), 2);
    let run = Run::new(NoRetryPolicy, Settings::new(), ms(0));
    let mut h = HedgedRun::new(run, Hedging::quantile(9500, 2), Some(d(7)));
    sent(h.next(ms(0)));
    assert_eq!(h.next(ms(0)), Hedge::Wait(d(7)));
}

#[test]
fn huge_and_odd_parameters_do_not_panic() {
    for hedging in [
        Hedging::fixed(Duration::MAX, u32::MAX),
        Hedging::fixed(Duration::ZERO, 0),
        Hedging::quantile(0, 1),
        Hedging::quantile(u16::MAX, MAX_HEDGED_ATTEMPTS),
    ] {
        let mut h = hedged(Settings::new().with_timeout(Duration::MAX), hedging);
        sent(h.next(Timestamp::ZERO));
        let _ = h.next(Timestamp::from_nanos(u64::MAX));
        let _ = h.answered(1, Timestamp::from_nanos(u64::MAX), Err(Failure::Retryable));
        let _ = h.next(Timestamp::from_nanos(u64::MAX));
    }
    assert!(
        Hedging::fixed(Duration::ZERO, MAX_HEDGED_ATTEMPTS + 1)
            .validate()
            .is_err()
    );
}

#[test]
fn hedges_never_exceed_max_attempts_whatever_the_answers() {
    // Every order of answers and times, on a small grid, for each limit.
    for max in 1..=MAX_HEDGED_ATTEMPTS {
        for pattern in 0u32..64 {
            let mut h = hedged(
                Settings::new().with_timeout(d(500)),
                Hedging::fixed(d(7), max),
            );
            let mut in_flight = Vec::new();
            let mut sends = 0;
            for step in 0..60u64 {
                let now = ms(step * 3);
                match h.next(now) {
                    Hedge::Send(a) => {
                        sends += 1;
                        in_flight.push(a.number);
                    }
                    Hedge::Stop(_) => break,
                    _ => {}
                }
                if pattern >> (step % 6) & 1 == 1
                    && let Some(n) = in_flight.pop()
                {
                    let failure = if step % 5 == 0 {
                        Failure::Timeout
                    } else {
                        Failure::Retryable
                    };
                    if !matches!(h.answered(n, now, Err(failure)), Answer::Lost) {
                        break;
                    }
                }
                assert!(h.in_flight() <= max);
            }
            assert!(sends <= max, "{max} {pattern}: {sends}");
        }
    }
}
