//! A timeout per attempt in the async executor: an attempt that outlives it is cancelled and
//! retried, and the run's deadline still bounds every attempt.

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::sync::Arc;
use std::time::Duration;

use stagger::Failure;
use stagger::clock::{Clock, Timestamp};
use stagger::engine::StopReason;
use stagger::policy::Immediate;

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn an_async_attempt_that_outlives_its_timeout_is_cancelled_and_retried() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let calls = AtomicU32::new(0);
    let started = Arc::new(std::sync::Mutex::new(Vec::new()));
    let outcome = stagger::retry(Immediate::new().with_max_attempts(3), |attempt| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        started
            .lock()
            .unwrap()
            .push((clock.now(), attempt.remaining));
        async move {
            // The first two hang for a minute; the third answers at once.
            if n < 2 {
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            Ok::<_, Failure>(n)
        }
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .timeout(Duration::from_secs(10))
    .attempt_timeout(Duration::from_millis(300))
    .outcome()
    .await;
    assert_eq!(outcome.result.unwrap(), 2);
    assert_eq!(outcome.summary.attempts, 3);
    let at = |ms: u64| Timestamp::from_duration(Duration::from_millis(ms));
    let each = Some(Duration::from_millis(300));
    assert_eq!(
        *started.lock().unwrap(),
        [(at(0), each), (at(300), each), (at(600), each)],
        "each cut at 300 ms and retried at once"
    );
    // The deadline still bounds them: with 500 ms left, an attempt is cut at the deadline.
    let cut = stagger::retry(Immediate::new().with_max_attempts(5), |_| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok::<(), Failure>(())
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .timeout(Duration::from_millis(500))
    .attempt_timeout(Duration::from_millis(300))
    .outcome()
    .await;
    assert_eq!(cut.summary.attempts, 2);
    assert_eq!(cut.summary.elapsed, Duration::from_millis(500));
    assert_eq!(cut.result.unwrap_err().reason(), StopReason::Deadline);
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn the_longest_attempt_timeout_is_no_timeout_and_no_panic() {
    let result = stagger::retry(Immediate::new(), |_| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok::<_, Failure>(7)
    })
    .classify(|f: &Failure| *f)
    .attempt_timeout(Duration::MAX)
    .await;
    assert_eq!(result.unwrap(), 7);
}

#[test]
fn a_blocking_attempt_is_told_its_time_to_honour() {
    let clock = stagger::clock::ManualClock::new();
    let mut told = Vec::new();
    let result = stagger::blocking::retry(Immediate::new().with_max_attempts(2), |attempt| {
        told.push(attempt.remaining);
        Err::<(), Failure>(Failure::Timeout)
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .sleeper(|_: Duration| {})
    .attempt_timeout(Duration::from_millis(250))
    .call();
    assert!(result.is_err());
    assert_eq!(told, [Some(Duration::from_millis(250)); 2]);
}
