//! A retry is a future with stagger's default features alone: spawned on tokio and joined,
//! with no `.into_future()`.

use std::time::Duration;

use stagger::Failure;
use stagger::policy::ExponentialFullJitter;

/// `future`, asserted `Send` where it is spawned.
fn send<F: std::future::Future + Send>(future: F) -> F {
    future
}

#[tokio::main]
async fn main() {
    let policy = ExponentialFullJitter::new().with_base(Duration::from_millis(1));
    let retry = stagger::retry(policy, |attempt| async move {
        if attempt.number < 3 {
            Err("busy")
        } else {
            Ok(attempt.number)
        }
    })
    .classify(|_| Failure::Retryable);
    let size = std::mem::size_of_val(&retry);
    let value = tokio::spawn(send(retry)).await.expect("the task ran");
    assert_eq!(value.expect("the third attempt succeeds"), 3);
    println!("spawned and joined: the third attempt succeeded; the retry is {size} bytes");
}
