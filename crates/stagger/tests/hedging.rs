//! Hedged requests on the async executor, in paused time: when each hedge goes out, that the
//! losers are cancelled, that the budget pays for hedges, and that nothing is hedged that
//! must not be.

#![cfg(feature = "tokio")]

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stagger::Failure;
use stagger::budget::{BudgetConfig, TokenBucket};
use stagger::clock::{Clock, Timestamp};
use stagger::engine::{Hedging, StopReason};
use stagger::policy::NoRetry;
use stagger::sketch::LatencySketch;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(n: u64) -> Timestamp {
    Timestamp::from_duration(ms(n))
}

/// Sets a flag when dropped before it finished: an attempt that was cancelled.
struct Cancelled(Arc<AtomicU32>, bool);

impl Drop for Cancelled {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// An operation whose attempt `n` answers after `latency(n)` with `result(n)`, logging when
/// each was sent and counting those dropped before they answered.
struct Script {
    sent: Arc<Mutex<Vec<(u32, Timestamp)>>>,
    cancelled: Arc<AtomicU32>,
}

impl Script {
    fn new() -> Self {
        Self {
            sent: Arc::default(),
            cancelled: Arc::default(),
        }
    }

    fn sent(&self) -> Vec<(u32, Timestamp)> {
        self.sent.lock().unwrap().clone()
    }
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_attempt_is_hedged_and_cancelled_when_the_hedge_wins() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let script = Script::new();
    let outcome = stagger::retry(NoRetry::new(), |attempt| {
        script
            .sent
            .lock()
            .unwrap()
            .push((attempt.number, clock.now()));
        let guard = Cancelled(script.cancelled.clone(), false);
        async move {
            let mut guard = guard;
            // The first takes a second; each hedge 30 ms.
            let latency = if attempt.number == 1 { 1_000 } else { 30 };
            tokio::time::sleep(ms(latency)).await;
            guard.1 = true;
            Ok::<_, Failure>(attempt.number)
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .hedge(Hedging::fixed(ms(50), 3))
    .outcome()
    .await;
    // The first hedge at 50 ms answers at 80 ms, before the second is due at 100 ms.
    assert_eq!(outcome.result.unwrap(), 2);
    assert_eq!(outcome.summary.attempts, 2);
    assert_eq!(outcome.summary.elapsed, ms(80));
    assert_eq!(script.sent(), [(1, at(0)), (2, at(50))]);
    assert_eq!(
        script.cancelled.load(Ordering::SeqCst),
        1,
        "the first is cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn hedges_never_exceed_max_attempts_nor_outlive_the_deadline() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let script = Script::new();
    let outcome = stagger::retry(NoRetry::new(), |attempt| {
        script
            .sent
            .lock()
            .unwrap()
            .push((attempt.number, clock.now()));
        let guard = Cancelled(script.cancelled.clone(), false);
        async move {
            let _guard = guard;
            std::future::pending::<Result<(), Failure>>().await
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .timeout(ms(1_000))
    .hedge(Hedging::fixed(ms(100), 4))
    .outcome()
    .await;
    assert_eq!(
        script.sent(),
        [(1, at(0)), (2, at(100)), (3, at(200)), (4, at(300))],
        "four in all"
    );
    let error = outcome.result.unwrap_err();
    assert_eq!(error.reason(), StopReason::Deadline);
    assert_eq!(outcome.summary.elapsed, ms(1_000), "ended at the deadline");
    assert_eq!(
        script.cancelled.load(Ordering::SeqCst),
        4,
        "all four cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_that_is_not_idempotent_is_never_hedged() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let script = Script::new();
    let outcome = stagger::retry(NoRetry::new(), |attempt| {
        script
            .sent
            .lock()
            .unwrap()
            .push((attempt.number, clock.now()));
        async move {
            tokio::time::sleep(ms(500)).await;
            Err::<(), _>(Failure::Timeout)
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .idempotent(false)
    .hedge(Hedging::fixed(ms(10), 3))
    .outcome()
    .await;
    assert_eq!(script.sent(), [(1, at(0))]);
    assert_eq!(
        outcome.result.unwrap_err().reason(),
        StopReason::NotIdempotent
    );
}

#[tokio::test(start_paused = true)]
async fn an_attempt_timeout_cuts_an_attempt_and_hedges_at_once() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let script = Script::new();
    let outcome = stagger::retry(NoRetry::new(), |attempt| {
        script
            .sent
            .lock()
            .unwrap()
            .push((attempt.number, clock.now()));
        let guard = Cancelled(script.cancelled.clone(), false);
        async move {
            let mut guard = guard;
            if attempt.number == 1 {
                std::future::pending::<()>().await;
            }
            guard.1 = true;
            Ok::<_, Failure>(attempt.number)
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .attempt_timeout(ms(40))
    .hedge(Hedging::fixed(ms(100), 2))
    .outcome()
    .await;
    assert_eq!(outcome.result.unwrap(), 2);
    assert_eq!(
        script.sent(),
        [(1, at(0)), (2, at(40))],
        "cut at 40 ms, hedged then"
    );
    assert_eq!(script.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn the_budget_pays_for_every_hedge_and_bounds_them() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    // Ten tokens at five a retry: two hedges in all, across runs, while nothing succeeds.
    let bucket = Arc::new(
        TokenBucket::AWS_STANDARD
            .with_capacity(10.0)
            .budget()
            .unwrap(),
    );
    let calls = Arc::new(AtomicU32::new(0));
    for _ in 0..5 {
        let calls = calls.clone();
        let outcome = stagger::retry(NoRetry::new(), move |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(ms(1_000)).await;
                Err::<(), _>(Failure::Retryable)
            }
        })
        .classify(|f: &Failure| *f)
        .clock(clock.clone())
        .budget(bucket.clone())
        .hedge(Hedging::fixed(ms(10), 3))
        .outcome()
        .await;
        assert!(outcome.result.is_err());
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        5 + 2,
        "five first attempts and two hedges"
    );
    assert_eq!(bucket.tokens(), 0.0);
}

#[tokio::test(start_paused = true)]
async fn a_fatal_answer_ends_the_run_and_cancels_the_rest() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let script = Script::new();
    let outcome = stagger::retry(NoRetry::new(), |attempt| {
        script
            .sent
            .lock()
            .unwrap()
            .push((attempt.number, clock.now()));
        let guard = Cancelled(script.cancelled.clone(), false);
        async move {
            let mut guard = guard;
            if attempt.number == 1 {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(ms(5)).await;
            guard.1 = true;
            Err::<(), _>(Failure::Permanent)
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .hedge(Hedging::fixed(ms(20), 3))
    .outcome()
    .await;
    let error = outcome.result.unwrap_err();
    assert_eq!(error.reason(), StopReason::NotRetryable);
    assert_eq!(error.last_error(), Some(&Failure::Permanent));
    assert_eq!(outcome.summary.elapsed, ms(25));
    assert_eq!(script.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_delay_at_a_quantile_follows_the_measured_latencies() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let sketch = Arc::new(LatencySketch::with_window(100).unwrap());
    // Without latencies a quantile is refused, typed, before any attempt.
    let refused = stagger::retry(NoRetry::new(), |_| async { Ok::<_, Failure>(()) })
        .classify(|f: &Failure| *f)
        .clock(clock.clone())
        .hedge(Hedging::quantile(9000, 2))
        .outcome()
        .await;
    assert_eq!(refused.summary.attempts, 0);
    assert_eq!(
        refused.result.unwrap_err().reason(),
        StopReason::InvalidConfig
    );
    // 100 calls of 10 ms teach the sketch; none is hedged before it knows.
    for _ in 0..100 {
        let outcome = stagger::retry(NoRetry::new(), |_| async {
            tokio::time::sleep(ms(10)).await;
            Ok::<_, Failure>(())
        })
        .classify(|f: &Failure| *f)
        .clock(clock.clone())
        .hedge(Hedging::quantile(9000, 2))
        .latencies(sketch.clone())
        .outcome()
        .await;
        assert_eq!(outcome.summary.attempts, 1);
    }
    let p90 = sketch.quantile(9000).unwrap();
    assert!(p90.abs_diff(ms(10)) < ms(1), "{p90:?}");
    // Now a slow call is hedged at the 90th percentile, about 10 ms.
    let script = Script::new();
    let outcome = stagger::retry(NoRetry::new(), |attempt| {
        script
            .sent
            .lock()
            .unwrap()
            .push((attempt.number, clock.now()));
        async move {
            let latency = if attempt.number == 1 { 1_000 } else { 10 };
            tokio::time::sleep(ms(latency)).await;
            Ok::<_, Failure>(attempt.number)
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .hedge(Hedging::quantile(9000, 2))
    .latencies(sketch.clone())
    .outcome()
    .await;
    assert_eq!(outcome.result.unwrap(), 2);
    let sent = script.sent();
    let hedge_at = sent[1].1.saturating_duration_since(sent[0].1);
    // Sent at the estimate, on a timer of millisecond grain.
    assert!(
        hedge_at >= p90 && hedge_at <= p90 + ms(1),
        "{hedge_at:?} {p90:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_same_script_gives_the_same_schedule() {
    async fn once() -> Vec<(u32, Timestamp)> {
        let clock = Stopwatch::start(stagger::clock::TokioClock::new());
        let script = Script::new();
        let _ = stagger::retry(NoRetry::new(), |attempt| {
            script
                .sent
                .lock()
                .unwrap()
                .push((attempt.number, clock.now()));
            async move {
                tokio::time::sleep(ms(u64::from(attempt.number) * 37 % 90)).await;
                Err::<(), _>(Failure::RetryAfter(ms(15)))
            }
        })
        .classify(|f: &Failure| *f)
        .clock(clock.clone())
        .timeout(ms(400))
        .hedge(Hedging::fixed(ms(25), 5))
        .outcome()
        .await;
        script.sent()
    }
    let first = once().await;
    assert!(first.len() > 1, "{first:?}");
    assert_eq!(first, once().await);
}
