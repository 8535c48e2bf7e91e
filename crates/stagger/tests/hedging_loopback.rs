//! Hedged requests against a real server on loopback, through a real reqwest client: the
//! server sees the hedge, and sees the loser dropped when the hedge wins.

#![cfg(feature = "reqwest")]

use std::time::Duration;

use stagger::engine::Hedging;
use stagger::policy::NoRetry;
use stagger::{Clock, Failure};

#[allow(dead_code)] // Not every helper of the shared server is used here.
#[path = "support/server.rs"]
mod server;
use server::start_server;

#[tokio::test]
async fn the_server_sees_the_hedge_served_and_the_slow_attempt_dropped() {
    let server = start_server().await;
    let client = reqwest::Client::new();
    let url = server.url("/hang-once-hedged");
    let clock = stagger::clock::MonotonicClock::starting_now();
    let work = stagger::retry(NoRetry::new(), |_| {
        let request = client.get(&url).send();
        async move {
            let response = request.await.map_err(|_| Failure::Retryable)?;
            Ok::<_, Failure>(response.status().as_u16())
        }
    })
    .classify(|f: &Failure| *f)
    .timeout(Duration::from_secs(3))
    .hedge(Hedging::fixed(Duration::from_millis(100), 2))
    .outcome();
    let outcome = tokio::time::timeout(Duration::from_secs(10), work)
        .await
        .expect("bounded");
    let took = clock.now().since_origin();
    assert_eq!(outcome.result.unwrap(), 200);
    assert_eq!(outcome.summary.attempts, 2);
    // The first attempt hangs for 5 s; the hedge at 100 ms is served at once.
    assert!(
        took >= Duration::from_millis(100) && took < Duration::from_millis(1_500),
        "{took:?}"
    );
    // The server saw the loser dropped once the hedge won.
    let dropped = async {
        while server.log().len() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(2), dropped)
        .await
        .expect("the loser is dropped");
    assert_eq!(
        server.log(),
        [
            "GET /hang-once-hedged",
            "GET /hang-once-hedged",
            "GET /hang-once-hedged dropped"
        ]
    );
}
