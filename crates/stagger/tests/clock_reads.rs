//! How often the executors read the clock: twice per attempt (when it begins and when it
//! ends), with a deadline or an attempt timeout as without, on a real tokio runtime whose
//! attempts pend on its timer.

#![cfg(feature = "tokio")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use stagger::Failure;
use stagger::clock::{Clock, Timestamp, TokioClock};
use stagger::policy::Constant;

/// Tokio's clock, counting its reads.
#[derive(Clone)]
struct Counting {
    inner: TokioClock,
    reads: Arc<AtomicU64>,
}

impl Clock for Counting {
    fn now(&self) -> Timestamp {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.now()
    }
    fn timeline(&self) -> stagger::clock::Timeline {
        self.inner.timeline()
    }
}

/// The clock reads of one run of 4 attempts that each take 5 ms on the timer (the first three
/// fail), 1 ms apart, with `deadline` and `attempt_timeout` if given.
async fn reads(deadline: Option<Duration>, attempt_timeout: Option<Duration>) -> (u64, u32) {
    let clock = Counting {
        inner: TokioClock::new(),
        reads: Arc::new(AtomicU64::new(0)),
    };
    let calls = AtomicU64::new(0);
    let mut retry = stagger::retry(
        Constant::new()
            .with_base(Duration::from_millis(1))
            .with_max_attempts(4),
        |_| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                if n < 3 {
                    Err(Failure::Retryable)
                } else {
                    Ok(n)
                }
            }
        },
    )
    .classify(|f: &Failure| *f)
    .clock(clock.clone());
    if let Some(d) = deadline {
        retry = retry.timeout(d);
    }
    if let Some(t) = attempt_timeout {
        retry = retry.attempt_timeout(t);
    }
    let outcome = retry.outcome().await;
    assert_eq!(outcome.result.unwrap(), 3);
    (clock.reads.load(Ordering::SeqCst), outcome.summary.attempts)
}

#[tokio::test(start_paused = true)]
async fn an_attempt_reads_the_clock_twice_deadline_or_not() {
    for (deadline, attempt_timeout) in [
        (None, None),
        (Some(Duration::from_secs(10)), None),
        (None, Some(Duration::from_secs(1))),
        (Some(Duration::from_secs(10)), Some(Duration::from_secs(1))),
    ] {
        let (reads, attempts) = reads(deadline, attempt_timeout).await;
        assert_eq!(attempts, 4);
        // One reading starts the run. Without a deadline or an attempt timeout, an attempt's
        // start is the last reading plus the wait since: one read each. With either, the time
        // left must be exact: a read before and after each, and the timer is armed from the
        // first rather than from a read of its own.
        let per_attempt = if deadline.is_none() && attempt_timeout.is_none() {
            1
        } else {
            2
        };
        assert_eq!(
            reads,
            1 + per_attempt * u64::from(attempts),
            "{deadline:?} {attempt_timeout:?}"
        );
    }
}

#[test]
fn a_blocking_attempt_reads_the_clock_twice_with_a_deadline() {
    let clock = Counting {
        inner: TokioClock::new(),
        reads: Arc::new(AtomicU64::new(0)),
    };
    let mut calls = 0u32;
    let result = stagger::blocking::retry(
        Constant::new()
            .with_base(Duration::from_millis(1))
            .with_max_attempts(4),
        |_| {
            calls += 1;
            if calls < 4 {
                Err(Failure::Retryable)
            } else {
                Ok(calls)
            }
        },
    )
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .sleeper(|_: Duration| {})
    .timeout(Duration::from_secs(10))
    .call();
    assert_eq!(result.unwrap(), 4);
    assert_eq!(clock.reads.load(Ordering::SeqCst), 1 + 2 * 4);
}
