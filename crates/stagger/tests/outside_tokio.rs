//! The async executor with the default features (tokio's timer and clock), polled by an executor
//! of our own, outside any tokio runtime: a retry that has to wait panics with a message that
//! names the fixes, instead of tokio's "there is no reactor running"; a retry that never waits,
//! or waits with a sleeper of its own, runs; tokio's clock reads without a runtime.

#![cfg(feature = "tokio")]

use std::cell::Cell;
use std::future::{Future, IntoFuture};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use stagger::clock::{Clock, MonotonicClock, TokioClock};
use stagger::engine::StopReason;
use stagger::policy::Constant;
use stagger::{Failure, Retryable};

/// Polls `future` on this thread with a no-op waker until it is ready: no tokio runtime is
/// running here.
fn block_on<F: IntoFuture>(future: F) -> F::Output {
    let mut future = pin!(future.into_future());
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..10_000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the future was still pending after 10,000 polls");
}

#[derive(Debug)]
struct Unavailable;

/// Three attempts, 10 ms apart: the first failure has to wait.
fn policy() -> Constant {
    Constant::new()
        .with_base(Duration::from_millis(10))
        .with_max_attempts(3)
}

/// The text of a caught panic.
fn message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .expect("a panic with a text message")
}

#[test]
fn a_retry_that_waits_outside_tokio_names_the_fixes() {
    assert!(tokio::runtime::Handle::try_current().is_err(), "no runtime");
    let calls = Cell::new(0);
    let run = (|| {
        calls.set(calls.get() + 1);
        async { Err::<(), _>(Unavailable) }
    })
    .retry(policy())
    .classify(|_: &Unavailable| Failure::Retryable);

    let panic = catch_unwind(AssertUnwindSafe(|| block_on(run))).expect_err("it cannot wait");
    let message = message(panic.as_ref());
    assert!(
        message.contains("tokio's timer") && message.contains("outside a tokio runtime"),
        "{message}"
    );
    // Each fix, by the name a user types.
    for fix in [
        "#[tokio::main]",
        "Runtime::block_on",
        ".sleeper(",
        "stagger::blocking",
    ] {
        assert!(message.contains(fix), "{fix:?} in {message:?}");
    }
    // It failed at the first wait, after one attempt, not before.
    assert_eq!(calls.get(), 1);
}

#[test]
fn a_retry_that_never_waits_runs_outside_tokio() {
    let ok = (|| async { Ok::<_, Unavailable>(7) })
        .retry(policy())
        .classify(|_: &Unavailable| Failure::Retryable);
    assert_eq!(block_on(ok).unwrap(), 7);

    // A permanent failure gives up without a wait.
    let calls = Cell::new(0);
    let permanent = (|| {
        calls.set(calls.get() + 1);
        async { Err::<(), _>(Unavailable) }
    })
    .retry(policy())
    .classify(|_: &Unavailable| Failure::Permanent);
    let error = block_on(permanent).unwrap_err();
    assert_eq!(error.reason(), StopReason::NotRetryable);
    assert_eq!(calls.get(), 1);
}

#[test]
fn a_sleeper_of_its_own_runs_outside_tokio_on_tokios_clock() {
    // The fix the message names for another runtime: its sleep (here one that is ready at
    // once). The clock stays the default, tokio's, which reads without a runtime.
    let slept = Cell::new(Duration::ZERO);
    let calls = Cell::new(0);
    let run = (|| {
        calls.set(calls.get() + 1);
        async { Err::<(), _>(Unavailable) }
    })
    .retry(policy())
    .classify(|_: &Unavailable| Failure::Retryable)
    .sleeper(|wait: Duration| {
        slept.set(slept.get() + wait);
        async {}
    });
    let error = block_on(run).unwrap_err();
    assert_eq!(error.reason(), StopReason::AttemptLimit);
    assert_eq!(error.summary().attempts, 3);
    assert_eq!(calls.get(), 3);
    assert_eq!(slept.get(), Duration::from_millis(20));
}

#[test]
fn tokios_clock_reads_outside_a_runtime() {
    assert!(tokio::runtime::Handle::try_current().is_err(), "no runtime");
    let clock = TokioClock::new();
    let first = clock.now();
    let os = MonotonicClock::new().now();
    let second = clock.now();
    assert!(second >= first);
    // Outside a runtime tokio's clock is the operating system's, on the process timeline.
    assert!(
        os >= first && second >= os,
        "{first:?} <= {os:?} <= {second:?}"
    );
    assert_eq!(clock.timeline(), MonotonicClock::new().timeline());
}
