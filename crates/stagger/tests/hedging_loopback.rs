//! Hedged requests against a real server on loopback, through a real reqwest client driven by
//! the async executor: the server sees the hedge, and sees the loser dropped when the hedge
//! wins. (The tower layer's hedging runs the same check in `tower.rs`.)

#![cfg(feature = "reqwest")]

use std::time::Duration;

use stagger::Failure;
use stagger::engine::Hedging;
use stagger::policy::NoRetry;

#[allow(dead_code)] // Not every helper of the shared server is used here.
#[path = "support/server.rs"]
mod server;

#[tokio::test]
async fn the_server_sees_the_hedge_served_and_the_slow_attempt_dropped() {
    let client = reqwest::Client::new();
    let check = server::check_a_hedge(|url: String, method: &'static str| {
        let client = client.clone();
        async move {
            let run = stagger::retry(NoRetry::new(), |_| {
                let request = client.request(method.parse().unwrap(), &url).send();
                async move {
                    let response = request.await.map_err(|_| Failure::Retryable)?;
                    Ok::<_, Failure>(response.status().as_u16())
                }
            })
            .classify(|f: &Failure| *f)
            .timeout(Duration::from_secs(1))
            .idempotent(method == "GET")
            .hedge(Hedging::fixed(Duration::from_millis(100), 2));
            run.await.unwrap_or(0)
        }
    });
    tokio::time::timeout(Duration::from_secs(10), check)
        .await
        .expect("bounded");
}
