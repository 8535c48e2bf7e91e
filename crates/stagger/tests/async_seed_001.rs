//! Seed 001's checks through the async executor on tokio's paused clock. Here the deadline is
//! enforced by cancellation: a call still running when it passes is dropped.

#![cfg(feature = "tokio")]

mod support;

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::cell::RefCell;
use std::time::Duration;

use stagger::clock::{Clock, TokioClock};
use stagger::engine::StopReason;
use support::{ScriptPolicy, Status, classify, secs};

/// The script's `retry`, async: each call sleeps `duration` on tokio's clock, then answers.
async fn run(
    steps: &[(u16, f64)],
    budget: f64,
    sample: f64,
    method: &str,
    max_attempts: u32,
) -> (Result<u16, StopReason>, u32, Duration, Vec<Duration>) {
    let start = Stopwatch::start(TokioClock::new());
    let steps = RefCell::new(steps.iter().copied());
    let timeouts = RefCell::new(Vec::new());
    let outcome = stagger::retry(
        ScriptPolicy {
            sample,
            max_attempts,
        },
        |attempt| {
            timeouts
                .borrow_mut()
                .push(attempt.remaining.expect("a deadline"));
            let (status, duration) = steps.borrow_mut().next().expect("a scripted step");
            async move {
                tokio::time::sleep(secs(duration)).await;
                if status == 200 {
                    Ok(status)
                } else {
                    Err(Status::Code(status))
                }
            }
        },
    )
    .timeout(secs(budget))
    .idempotent(matches!(method, "GET" | "HEAD"))
    .classify(classify)
    .outcome()
    .await;
    let result = outcome.result.map_err(|e| e.reason());
    (
        result,
        outcome.summary.attempts,
        start.now().since_origin(),
        timeouts.into_inner(),
    )
}

#[tokio::test(start_paused = true)]
async fn three_attempts_finish_at_2_25_with_shrinking_propagated_timeouts() {
    let (result, attempts, elapsed, timeouts) =
        run(&[(503, 0.25), (503, 0.25), (200, 0.25)], 5.0, 0.5, "GET", 3).await;
    assert_eq!((result, attempts), (Ok(200), 3));
    assert_eq!(elapsed, secs(2.25));
    assert_eq!(timeouts, [secs(5.0), secs(4.25), secs(3.0)]);
}

#[tokio::test(start_paused = true)]
async fn an_early_timeout_recovers_within_the_shared_deadline() {
    let start = Stopwatch::start(TokioClock::new());
    let calls = RefCell::new(Vec::new());
    let result = stagger::retry(
        ScriptPolicy {
            sample: 0.5,
            max_attempts: 3,
        },
        |attempt| {
            calls.borrow_mut().push(attempt.remaining.unwrap());
            let first = attempt.number == 1;
            async move {
                tokio::time::sleep(secs(0.25)).await;
                if first {
                    Err(Status::TimedOut)
                } else {
                    Ok(200)
                }
            }
        },
    )
    .timeout(secs(5.0))
    .classify(classify)
    .await;
    assert_eq!(result.unwrap(), 200);
    assert_eq!(start.now().since_origin(), secs(1.0));
    assert_eq!(calls.into_inner(), [secs(5.0), secs(4.25)]);
}

#[tokio::test(start_paused = true)]
async fn post_503_get_400_and_the_cap_stop_further_work() {
    // A POST's 503 may have taken effect; a GET's 400 is permanent: one attempt each.
    for (method, status, reason) in [
        ("POST", 503, StopReason::NotIdempotent),
        ("GET", 400, StopReason::NotRetryable),
    ] {
        let (result, attempts, ..) = run(&[(status, 0.25)], 5.0, 0.5, method, 3).await;
        assert_eq!((result, attempts), (Err(reason), 1), "{method} {status}");
    }
    let (result, attempts, _, timeouts) = run(&[(503, 0.25); 4], 5.0, 0.5, "GET", 3).await;
    assert_eq!(
        (result, attempts, timeouts.len()),
        (Err(StopReason::AttemptLimit), 3, 3)
    );
    let (result, attempts, elapsed, _) = run(&[(503, 0.25); 7], 100.0, 1.0, "GET", 7).await;
    assert_eq!(
        (result, attempts, elapsed),
        (Err(StopReason::AttemptLimit), 7, secs(32.75))
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_cancels_a_slow_call_and_a_zero_budget_makes_none() {
    let (result, _, elapsed, timeouts) = run(&[(503, 0.1)], 0.5, 1.0, "GET", 3).await;
    assert!(matches!(
        result,
        Err(StopReason::WaitExceedsDeadline { .. })
    ));
    assert_eq!((elapsed, timeouts.len()), (secs(0.1), 1));

    // The call would take 99 s; the executor drops it at the 0.5 s deadline.
    let (result, attempts, elapsed, _) = run(&[(503, 99.0)], 0.5, 0.5, "GET", 3).await;
    assert_eq!(
        (result, attempts, elapsed),
        (Err(StopReason::Deadline), 1, secs(0.5))
    );

    let (result, attempts, _, timeouts) = run(&[], 0.0, 0.5, "GET", 3).await;
    assert_eq!((result, attempts), (Err(StopReason::Deadline), 0));
    assert!(timeouts.is_empty());
}
