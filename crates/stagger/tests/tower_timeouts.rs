//! The tower layers' attempt timeout and hedging: a hanging attempt cut at its timeout and
//! retried, and a hedge layer that sends a copy and drops the loser.

#![cfg(all(feature = "tower", feature = "tokio"))]

#[path = "support/stopwatch.rs"]
mod stopwatch;

use std::time::Duration;

use http::Request;

use stagger::tower::RetryLayer;
use tower_layer::Layer;

#[path = "support/server.rs"]
#[allow(dead_code)] // Not every helper of the shared server is used here.
mod server;

#[path = "support/tower_client.rs"]
#[allow(dead_code)] // Each file uses the helpers its tests need.
mod client;
use client::*;

#[tokio::test]
async fn an_attempt_that_hangs_is_cut_at_its_timeout_and_retried() {
    bounded(async {
        let service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(2))
            .attempt_timeout(Duration::from_millis(200))
            .layer(client());
        server::check_an_attempt_timeout(|url: String, method: &'static str| {
            let mut service = service.clone();
            let request = Request::builder()
                .method(method)
                .uri(url)
                .body(empty())
                .unwrap();
            async move {
                let response = send(&mut service, request).await;
                response.map_or(0, |r| r.status().as_u16())
            }
        })
        .await;
    })
    .await;
}

/// The hedging layer: a copy of a slow GET after 100 ms is served, the slow one dropped (the
/// server sees it), and a POST is never hedged.
#[tokio::test]
async fn a_hedge_layer_sends_a_copy_and_drops_the_loser() {
    bounded(async {
        let service = RetryLayer::new(stagger::policy::NoRetry::new())
            .unwrap()
            .timeout(Duration::from_secs(1))
            .hedge(stagger::engine::Hedging::fixed(
                Duration::from_millis(100),
                2,
            ))
            .layer(client());
        server::check_a_hedge(|url: String, method: &'static str| {
            let mut service = service.clone();
            let request = Request::builder()
                .method(method)
                .uri(url)
                .body(empty())
                .unwrap();
            async move {
                let response = send(&mut service, request).await;
                response.map_or(0, |r| r.status().as_u16())
            }
        })
        .await;
    })
    .await;
}
