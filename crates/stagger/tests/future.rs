//! A retry is a future: spawned, joined and raced as any future is, without `.into_future()`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use stagger::Failure;
use stagger::engine::Hedging;
use stagger::policy::{ExponentialFullJitter, NoRetry};

fn quick() -> ExponentialFullJitter {
    ExponentialFullJitter::new().with_base(Duration::from_millis(1))
}

fn assert_send<F: Future + Send>(future: F) -> F {
    future
}

/// An operation that fails `failures` times, then answers its attempt's number.
fn flaky(
    failures: u32,
) -> impl FnMut(stagger::engine::Attempt) -> std::future::Ready<Result<u32, &'static str>> {
    let calls = Arc::new(AtomicU32::new(0));
    move |attempt| {
        let call = calls.fetch_add(1, Ordering::Relaxed);
        std::future::ready(if call < failures {
            Err("busy")
        } else {
            Ok(attempt.number)
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_is_spawned_as_it_is() {
    let retry = stagger::retry(quick(), flaky(2)).classify(|_| Failure::Retryable);
    let handle = tokio::spawn(assert_send(retry));
    assert_eq!(handle.await.unwrap().unwrap(), 3);
    // A hedged retry too.
    let hedged = stagger::retry(NoRetry::new(), flaky(0))
        .classify(|_| Failure::Retryable)
        .hedge(Hedging::fixed(Duration::from_millis(5), 2));
    assert_eq!(tokio::spawn(assert_send(hedged)).await.unwrap().unwrap(), 1);
}

#[tokio::test(start_paused = true)]
async fn retries_are_joined_as_they_are() {
    let retries = (0..3)
        .map(|failures| stagger::retry(quick(), flaky(failures)).classify(|_| Failure::Retryable));
    let values: Vec<_> = futures_util::future::join_all(retries)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(values, [1, 2, 3]);
}

#[tokio::test(start_paused = true)]
async fn a_retry_is_an_arm_of_select() {
    // A retry that waits a minute between attempts loses to a timer of a second; one that
    // succeeds at once wins.
    let slow = stagger::retry(
        stagger::policy::Constant::new().with_base(Duration::from_secs(60)),
        flaky(1),
    )
    .classify(|_| Failure::Retryable);
    let winner = tokio::select! {
        value = slow => format!("retry: {value:?}"),
        () = tokio::time::sleep(Duration::from_secs(1)) => "timer".to_owned(),
    };
    assert_eq!(winner, "timer");
    let fast = stagger::retry(quick(), flaky(0)).classify(|_| Failure::Retryable);
    let winner = tokio::select! {
        value = fast => format!("retry: {value:?}"),
        () = tokio::time::sleep(Duration::from_secs(1)) => "timer".to_owned(),
    };
    assert_eq!(winner, "retry: Ok(1)");
}
