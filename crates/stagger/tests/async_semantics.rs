//! The async executor on any runtime: ownership of recovery inside one task, cancellation at
//! the deadline, zero delays without the timer.

mod support;

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::cell::Cell;
use std::future::{Future, IntoFuture};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use stagger::Failure;
use stagger::clock::ManualClock;
use stagger::engine::Nested;
use stagger::policy::{Constant, Immediate, PolicyConfig};
use stagger::rng::SeededRng;

/// A runtime of our own: polls one future to completion with a no-op waker. Timers are
/// futures that are ready at once.
fn block_on<F: IntoFuture>(future: F) -> F::Output {
    let mut future = pin!(future.into_future());
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

async fn ready_sleep(_: Duration) {}

#[derive(Debug)]
struct Unavailable;

type Layer<'a> = Pin<Box<dyn Future<Output = Result<(), Unavailable>> + 'a>>;

fn nested(depth: u32, mode: Nested, leaf_calls: &Cell<u32>) -> Layer<'_> {
    Box::pin(async move {
        if depth == 0 {
            leaf_calls.set(leaf_calls.get() + 1);
            return Err(Unavailable);
        }
        let policy = Constant::new()
            .with_base(Duration::from_millis(1))
            .with_max_attempts(3);
        stagger::retry(policy.build(SeededRng::new(0)).unwrap(), |_| {
            nested(depth - 1, mode, leaf_calls)
        })
        .classify(|_: &Unavailable| Failure::Retryable)
        .when_nested(mode)
        .sleeper(ready_sleep)
        .clock(ManualClock::new())
        .await
        .map_err(|_| Unavailable)
    })
}

#[test]
fn nested_async_layers_in_one_task_leave_recovery_to_the_outermost_on_any_runtime() {
    let calls = Cell::new(0);
    assert!(block_on(nested(3, Nested::SingleAttempt, &calls)).is_err());
    assert_eq!(calls.get(), 3);
    let calls = Cell::new(0);
    assert!(block_on(nested(3, Nested::Retry, &calls)).is_err());
    assert_eq!(calls.get(), 27);
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn nested_async_layers_on_tokio() {
    let calls = Cell::new(0);
    assert!(nested(3, Nested::SingleAttempt, &calls).await.is_err());
    assert_eq!(calls.get(), 3);
    let calls = Cell::new(0);
    assert!(nested(3, Nested::Retry, &calls).await.is_err());
    assert_eq!(calls.get(), 27);
}

#[test]
fn zero_delays_do_not_touch_the_timer() {
    let sleeps = Rc::new(Cell::new(0));
    let counter = sleeps.clone();
    let policy = Immediate::new()
        .with_max_attempts(8)
        .build(SeededRng::new(0))
        .unwrap();
    let outcome = block_on(
        stagger::retry(policy, |attempt| async move {
            if attempt.number < 8 {
                Err(Unavailable)
            } else {
                Ok(attempt.number)
            }
        })
        .classify(|_: &Unavailable| Failure::Retryable)
        .sleeper(move |_| {
            counter.set(counter.get() + 1);
            ready_sleep(Duration::ZERO)
        })
        .clock(ManualClock::new())
        .outcome(),
    );
    assert_eq!(outcome.result.unwrap(), 8);
    assert_eq!(outcome.summary.attempts, 8);
    assert_eq!(
        sleeps.get(),
        0,
        "no timer for a zero delay, and none for a run without deadline"
    );
}

/// Sets a flag when dropped: shows that the executor cancels (drops) the attempt.
#[cfg(feature = "tokio")]
struct DropFlag(Rc<Cell<bool>>);

#[cfg(feature = "tokio")]
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn the_deadline_cancels_the_attempt_in_flight_and_counts_it_as_a_timeout() {
    let dropped = Rc::new(Cell::new(false));
    let flag = dropped.clone();
    let policy = Constant::new().build(SeededRng::new(0)).unwrap();
    let err = stagger::retry(policy, move |_| {
        let guard = DropFlag(flag.clone());
        async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<(), Unavailable>(())
        }
    })
    .classify(|_: &Unavailable| Failure::Retryable)
    .timeout(Duration::from_millis(300))
    .await
    .unwrap_err();
    assert!(dropped.get(), "the in-flight attempt was dropped");
    assert_eq!(err.reason(), stagger::engine::StopReason::Deadline);
    assert_eq!(err.summary().attempts, 1);
    assert_eq!(err.summary().last_failure, Some(Failure::Timeout));
    assert_eq!(err.summary().elapsed, Duration::from_millis(300));
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn the_no_argument_form_reads_like_the_peers() {
    use stagger::Retryable;
    let calls = Cell::new(0);
    let op = || async {
        calls.set(calls.get() + 1);
        if calls.get() < 3 {
            Err(Unavailable)
        } else {
            Ok(calls.get())
        }
    };
    let policy = Constant::new()
        .with_base(Duration::from_millis(5))
        .policy()
        .unwrap();
    let value = op
        .retry(policy)
        .classify(|_: &Unavailable| Failure::Retryable)
        .await
        .unwrap();
    assert_eq!(value, 3);
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn a_deadline_timer_that_fires_early_is_rearmed_by_the_clock() {
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    let policy = Constant::new().build(SeededRng::new(0)).unwrap();
    let err = stagger::retry(policy, |_| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok::<(), Unavailable>(())
    })
    .classify(|_: &Unavailable| Failure::Retryable)
    .timeout(Duration::from_millis(300))
    // Wakes 10 % early, every time.
    .sleeper(|d: Duration| tokio::time::sleep(d.mul_f64(0.9)))
    .await
    .unwrap_err();
    use stagger::clock::Clock;
    assert_eq!(err.reason(), stagger::engine::StopReason::Deadline);
    assert_eq!(clock.now().since_origin(), Duration::from_millis(300));
    assert_eq!(err.summary().elapsed, Duration::from_millis(300));
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn a_timeout_of_duration_max_neither_panics_nor_fires() {
    let policy = Constant::new().build(SeededRng::new(0)).unwrap();
    // Forty years of virtual time: past the tokio sleeper's 30-year horizon, re-armed once.
    let value = stagger::retry(policy, |_| async {
        tokio::time::sleep(Duration::from_secs(40 * 365 * 86_400)).await;
        Ok::<u8, Unavailable>(7)
    })
    .classify(|_: &Unavailable| Failure::Retryable)
    .timeout(Duration::MAX)
    .await
    .unwrap();
    assert_eq!(value, 7);
}

#[cfg(feature = "tokio")]
#[tokio::test]
async fn zero_delay_retries_yield_so_a_timeout_can_interrupt_them() {
    let attempts = Rc::new(Cell::new(0u32));
    let counter = attempts.clone();
    let policy = Immediate::new()
        .with_max_attempts(u32::MAX)
        .build(SeededRng::new(0))
        .unwrap();
    let retry = stagger::retry(policy, move |_| {
        counter.set(counter.get() + 1);
        async { Err::<(), _>(Unavailable) }
    })
    .classify(|_: &Unavailable| Failure::Retryable);
    let outcome = tokio::time::timeout(Duration::from_millis(20), retry).await;
    assert!(outcome.is_err(), "the timeout interrupted the retries");
    assert!(attempts.get() > 1 && attempts.get() < u32::MAX);
}

#[test]
fn a_refused_value_is_retried_dropped_at_the_retry_and_handed_back_at_the_give_up() {
    // Each value counts its drops: a refused one must be dropped as soon as the retry is
    // decided (an HTTP response then frees its connection during the wait), and the last one
    // comes back with the reason.
    struct Page(u32, Rc<Cell<u32>>);
    impl Drop for Page {
        fn drop(&mut self) {
            self.1.set(self.1.get() + 1);
        }
    }
    let drops = Rc::new(Cell::new(0));
    let counter = drops.clone();
    let dropped_before_next = Rc::new(Cell::new(true));
    let check = (drops.clone(), dropped_before_next.clone());
    let policy = Immediate::new().with_max_attempts(3);
    let Err(error) = block_on(
        stagger::retry(policy, move |attempt| {
            // Attempt n starts after n - 1 refused pages were dropped.
            if check.0.get() != attempt.number - 1 {
                check.1.set(false);
            }
            let page = Page(attempt.number, counter.clone());
            async move { Ok::<_, Unavailable>(page) }
        })
        .classify(|_| Failure::Retryable)
        .classify_ok(|page| (page.0 < 10).then_some(Failure::Retryable))
        .sleeper(ready_sleep)
        .clock(ManualClock::new()),
    ) else {
        panic!("every page is refused");
    };
    assert!(
        dropped_before_next.get(),
        "each refused page is dropped before the next attempt"
    );
    assert_eq!(error.reason(), stagger::engine::StopReason::AttemptLimit);
    assert_eq!(error.summary().attempts, 3);
    assert_eq!(error.last_value().map(|page| page.0), Some(3));
    assert_eq!(drops.get(), 2, "the last page is kept");
    assert!(error.last_error().is_none());
    drop(error);
    assert_eq!(drops.get(), 3);
}

#[test]
fn a_value_accepted_after_refusals_is_the_result_and_the_hook_saw_the_refused_ones() {
    let heard = Rc::new(Cell::new(0));
    let counter = heard.clone();
    let outcome = block_on(
        stagger::retry(Immediate::new(), |attempt| async move {
            Ok::<_, Unavailable>(if attempt.number < 3 { "" } else { "page" })
        })
        .classify(|_| Failure::Retryable)
        .classify_ok(|page| page.is_empty().then_some(Failure::Retryable))
        .notify(move |event| {
            assert_eq!(event.result.ok(), Some(&""));
            counter.set(counter.get() + 1);
        })
        .sleeper(ready_sleep)
        .clock(ManualClock::new())
        .outcome(),
    );
    assert_eq!(outcome.result.unwrap(), "page");
    assert_eq!((outcome.summary.attempts, heard.get()), (3, 2));
}

#[test]
fn an_invalid_configuration_is_a_typed_error_when_the_run_starts() {
    let calls = Cell::new(0);
    let error = block_on(
        stagger::retry(Constant::new().with_max_attempts(0), |_| {
            calls.set(calls.get() + 1);
            async { Ok::<(), &str>(()) }
        })
        .classify(|_| Failure::Retryable)
        .sleeper(ready_sleep)
        .clock(ManualClock::new()),
    )
    .unwrap_err();
    assert_eq!(error.reason(), stagger::engine::StopReason::InvalidConfig);
    assert_eq!(
        error.config_error().and_then(stagger::ConfigError::param),
        Some("max_attempts")
    );
    assert_eq!((error.summary().attempts, calls.get()), (0, 0));
    assert_eq!(
        error.to_string(),
        "gave up after 0 attempts in 0 ms (0 ms waiting): the configuration is invalid; \
         max_attempts must be at least 1 (it counts the first attempt), got 0"
    );
}

#[test]
fn a_configuration_builds_a_policy_of_its_own_for_each_run() {
    // Two runs of one full-jitter configuration draw from generators of their own: the first
    // retries' delays differ (with probability 1 - 2^-64 per pair).
    use stagger::policy::ExponentialFullJitter;
    let config = ExponentialFullJitter::new().with_base(Duration::from_secs(1));
    let first_delay = || {
        let delay = Cell::new(Duration::ZERO);
        let _ = block_on(
            stagger::retry(config, |_| async { Err::<(), _>(Unavailable) })
                .classify(|_| Failure::Retryable)
                .notify(|event| delay.set(event.delay))
                .sleeper(ready_sleep)
                .clock(ManualClock::new()),
        );
        delay.get()
    };
    assert_ne!(first_delay(), first_delay());
}
