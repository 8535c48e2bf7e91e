//! Seed 001's checks through the blocking executor, on a manual clock with a recording
//! sleeper: the same numbers as the script.

mod support;

use std::time::Duration;

use stagger::clock::{Clock, ManualClock, Timestamp};
use stagger::engine::StopReason;
use support::{RecordingSleeper, ScriptPolicy, Status, classify, secs};

/// Runs the script's `retry` with the blocking executor. Each step is (status, duration): the
/// call takes `min(duration, remaining)` of the clock and times out if that is the shorter.
fn run(
    steps: &[(u16, f64)],
    budget: f64,
    sample: f64,
    method: &str,
    max_attempts: u32,
) -> (Result<u16, StopReason>, u32, Timestamp, Vec<Duration>) {
    let clock = ManualClock::new();
    let sleeper = RecordingSleeper::new(&clock);
    let mut steps = steps.iter().copied();
    let mut timeouts = Vec::new();
    let outcome = stagger::blocking::retry(
        ScriptPolicy {
            sample,
            max_attempts,
        },
        |attempt| {
            let remaining = attempt.remaining.expect("a deadline");
            timeouts.push(remaining);
            let (status, duration) = steps.next().expect("a scripted step");
            clock.advance(secs(duration).min(remaining));
            if secs(duration) >= remaining {
                Err(Status::TimedOut)
            } else if status == 200 {
                Ok(status)
            } else {
                Err(Status::Code(status))
            }
        },
    )
    .timeout(secs(budget))
    .idempotent(matches!(method, "GET" | "HEAD"))
    .classify(classify)
    .sleeper(sleeper.sleeper())
    .clock(clock.clone())
    .call_outcome();
    let result = outcome.result.map_err(|e| e.reason());
    (result, outcome.summary.attempts, clock.now(), timeouts)
}

fn at(s: f64) -> Timestamp {
    Timestamp::from_duration(secs(s))
}

#[test]
fn three_attempts_finish_at_2_25_with_shrinking_propagated_timeouts() {
    let (result, attempts, now, timeouts) =
        run(&[(503, 0.25), (503, 0.25), (200, 0.25)], 5.0, 0.5, "GET", 3);
    assert_eq!((result, attempts), (Ok(200), 3));
    assert_eq!(now, at(2.25));
    assert_eq!(timeouts, [secs(5.0), secs(4.25), secs(3.0)]);
}

#[test]
fn post_503_and_get_400_are_not_retryable_and_the_cap_holds() {
    // A POST's 503 may have taken effect; a GET's 400 is permanent: one attempt each.
    for (method, status, reason) in [
        ("POST", 503, StopReason::NotIdempotent),
        ("GET", 400, StopReason::NotRetryable),
    ] {
        let (result, attempts, ..) = run(&[(status, 0.25)], 5.0, 0.5, method, 3);
        assert_eq!((result, attempts), (Err(reason), 1), "{method} {status}");
    }
    let (result, attempts, _, timeouts) = run(&[(503, 0.25); 4], 5.0, 0.5, "GET", 3);
    assert_eq!((result, attempts), (Err(StopReason::AttemptLimit), 3));
    assert_eq!(timeouts.len(), 3);
}

#[test]
fn the_ceiling_stops_at_8_and_finishes_at_32_75() {
    let (result, attempts, now, _) = run(&[(503, 0.25); 7], 100.0, 1.0, "GET", 7);
    assert_eq!((result, attempts), (Err(StopReason::AttemptLimit), 7));
    assert_eq!(now, at(32.75));
}

#[test]
fn waits_that_cannot_fit_slow_calls_and_zero_budgets_stop_the_run() {
    let (result, _, now, timeouts) = run(&[(503, 0.1)], 0.5, 1.0, "GET", 3);
    assert!(matches!(
        result,
        Err(StopReason::WaitExceedsDeadline { .. })
    ));
    assert_eq!((now, timeouts.len()), (at(0.1), 1));

    let (result, attempts, now, _) = run(&[(503, 99.0)], 0.5, 0.5, "GET", 3);
    assert_eq!(
        (result, attempts, now),
        (Err(StopReason::Deadline), 1, at(0.5))
    );

    let (result, attempts, _, timeouts) = run(&[], 0.0, 0.5, "GET", 3);
    assert_eq!((result, attempts), (Err(StopReason::Deadline), 0));
    assert!(timeouts.is_empty());
}
