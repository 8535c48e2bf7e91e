//! The tower `RetryLayer` against real parts: a hyper server on loopback, started inside each
//! test with scripted endpoints, behind a hyper-util client wrapped by the layer.
//!
//! The server counts and logs every attempt it sees, in order, so the assertions are about
//! what reached the wire. Two tests wait for real (a server-directed wait of 1 s); the rest
//! take milliseconds. Every test is bounded by a timeout.
//!
//! This file: waits the server asked for, the deadline, idempotency, bodies, nesting, budgets
//! and hooks. Beside it: `tower_refunds.rs`, `tower_servers.rs`, `tower_timeouts.rs`.

#![cfg(all(feature = "tower", feature = "tokio"))]

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper_util::client::legacy::Error as ClientError;
use stagger::budget::Budget;
use stagger::budget::Spent;
use stagger::clock::{MonotonicClock, Timestamp};
use stagger::engine::{Nested, StopReason};
use stagger::policy::{Constant, ExponentialFullJitter, Immediate, PolicyConfig};
use stagger::tower::{RetryLayer, RetryOverrides};
use stagger::{Failure, RetryError};
use tokio::net::TcpListener;
use tower_layer::Layer;
use tower_service::Service;

#[path = "support/server.rs"]
mod server;
use server::start_server;

#[path = "support/tower_client.rs"]
#[allow(dead_code)] // Each file uses the helpers its tests need.
mod client;
use client::*;

#[tokio::test]
async fn a_503_with_retry_after_is_retried_no_sooner_than_asked() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(5))
            .layer(client());
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = send(&mut service, get(server.url("/busy"))).await.unwrap();
        let took = elapsed(&clock);

        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(server.log(), ["GET /busy", "GET /busy"]);
        assert!(took >= Duration::from_secs(1), "retried after {took:?}");
        let report = report(&response);
        assert_eq!(report.summary.attempts, 2);
        assert!(report.summary.waited >= Duration::from_secs(1));
        assert_eq!(report.gave_up, None);
    })
    .await;
}

#[tokio::test]
async fn a_429_with_an_http_date_retries_even_a_post_after_the_date() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(5))
            .buffer_bodies(1024)
            .layer(client());
        let clock = Stopwatch::start(MonotonicClock::new());
        // No Idempotency-Key: a 429 is known to have had no effect, so even a POST is retried.
        let request = Request::post(server.url("/throttled"))
            .body(full("order"))
            .unwrap();
        let response = send(&mut service, request).await.unwrap();
        let took = elapsed(&clock);

        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            server.log(),
            ["POST /throttled order", "POST /throttled order"]
        );
        // The date is 1 s after the response's own Date: the wait is 1 s, whichever the clocks.
        assert!(took >= Duration::from_secs(1), "retried after {took:?}");
        assert_eq!(
            report(&response).summary.last_failure,
            Some(Failure::Throttled(Some(Duration::from_secs(1))))
        );
    })
    .await;
}

#[tokio::test]
async fn a_server_wait_that_does_not_fit_the_deadline_gives_up_at_once() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_millis(500))
            .layer(client());
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = send(&mut service, get(server.url("/busy"))).await.unwrap();

        // The server's 503 goes back to the caller, at once, with why.
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(elapsed(&clock) < Duration::from_millis(400));
        assert_eq!(server.log(), ["GET /busy"]);
        let report = report(&response);
        assert_eq!(report.summary.attempts, 1);
        assert!(matches!(
            report.gave_up,
            Some(StopReason::WaitExceedsDeadline { .. })
        ));

        // A wait longer than the longest honoured stops too.
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .max_server_wait(Duration::from_millis(100))
            .layer(client());
        let response = send(&mut service, get(server.url("/busy"))).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(matches!(
            report_of(&response),
            Some(StopReason::ServerWaitTooLong { .. })
        ));
        assert_eq!(server.count("/busy"), 1);
    })
    .await;
}

fn report_of(response: &Response<Incoming>) -> Option<StopReason> {
    report(response).gave_up
}

#[tokio::test]
async fn the_deadline_cancels_the_attempt_in_flight_and_stops_everything() {
    bounded(async {
        let server = start_server().await;
        let policy = Constant::new()
            .with_base(Duration::from_millis(20))
            .with_max_attempts(5);
        let mut service = RetryLayer::new(policy)
            .unwrap()
            .timeout(Duration::from_secs(5))
            .layer(client());
        let clock = Stopwatch::start(MonotonicClock::new());
        // The request's own deadline replaces the layer's.
        let mut request = get(server.url("/slow"));
        request
            .extensions_mut()
            .insert(RetryOverrides::new().timeout(Duration::from_millis(300)));
        let error = send(&mut service, request).await.unwrap_err();
        let took = elapsed(&clock);

        assert_eq!(error.reason(), StopReason::Deadline);
        assert_eq!(error.summary().attempts, 2);
        assert!(
            Duration::from_millis(300) <= took && took < Duration::from_secs(1),
            "stopped after {took:?}"
        );
        // The second attempt was cancelled: the server sees its connection closed and drops
        // the response it was preparing. No third attempt is made.
        server.expect_cancelled_slow_attempt().await;
    })
    .await;
}

#[tokio::test]
async fn a_connection_reset_is_retried_for_a_get_but_not_for_a_post() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(5))
            .buffer_bodies(1024)
            .layer(client());

        // The default classifier finds the ECONNRESET under hyper's error: retryable.
        let response = send(&mut service, get(server.url("/reset"))).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(server.log(), ["GET /reset reset", "GET /reset"]);
        assert_eq!(report(&response).summary.attempts, 2);

        // A reset POST may have been processed: it is not repeated. (A fresh client, so
        // that the request opens a connection of its own, which the server resets.)
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(5))
            .buffer_bodies(1024)
            .layer(client());
        let request = Request::post(server.url("/reset-post"))
            .body(full("order"))
            .unwrap();
        let error = send(&mut service, request).await.unwrap_err();
        assert_eq!(error.reason(), StopReason::NotIdempotent);
        assert_eq!(error.summary().last_failure, Some(Failure::Retryable));
        assert!(error.last_error().is_some());
        assert_eq!(server.count("/reset-post"), 1);
    })
    .await;
}

#[tokio::test]
async fn a_post_is_not_retried_after_a_503_unless_it_has_an_idempotency_key() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(5))
            .buffer_bodies(1024)
            .layer(client());

        let request = Request::post(server.url("/orders"))
            .body(full("order-1"))
            .unwrap();
        let response = send(&mut service, request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(report_of(&response), Some(StopReason::NotIdempotent));

        let request = Request::post(server.url("/orders-keyed"))
            .header("idempotency-key", "order-1")
            .body(full("order-1"))
            .unwrap();
        let response = send(&mut service, request).await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);

        // The request's overrides decide as well.
        let mut request = Request::post(server.url("/orders-marked"))
            .body(full("order-2"))
            .unwrap();
        request
            .extensions_mut()
            .insert(RetryOverrides::new().idempotent(true));
        let response = send(&mut service, request).await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);

        assert_eq!(
            server.log(),
            [
                "POST /orders order-1",
                "POST /orders-keyed order-1",
                "POST /orders-keyed order-1",
                "POST /orders-marked order-2",
                "POST /orders-marked order-2",
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn a_body_that_cannot_be_replayed_is_sent_once_and_buffering_allows_a_retry() {
    bounded(async {
        let server = start_server().await;
        let keyed = |path: &str, body: TestBody| {
            Request::post(server.url(path))
                .header("idempotency-key", path)
                .body(body)
                .unwrap()
        };

        // Without buffering, a streamed body is sent once, whatever the failure.
        let mut service = RetryLayer::new(quick()).unwrap().layer(client());
        let response = send(&mut service, keyed("/orders-a", stream(&["ab", "cd"])))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(report_of(&response), Some(StopReason::AttemptLimit));
        assert_eq!(report(&response).summary.attempts, 1);

        // Buffered, it is replayed.
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .buffer_bodies(16)
            .layer(client());
        let response = send(&mut service, keyed("/orders-b", stream(&["ab", "cd"])))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);

        // Larger than the limit, it is sent once, whole: what was read, then the rest.
        let response = send(
            &mut service,
            keyed("/orders-c", stream(&["0123456789", "abcdefghij", "XYZ"])),
        )
        .await
        .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(report(&response).summary.attempts, 1);

        assert_eq!(
            server.log(),
            [
                "POST /orders-a abcd",
                "POST /orders-b abcd",
                "POST /orders-b abcd",
                "POST /orders-c 0123456789abcdefghijXYZ",
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn a_nested_service_leaves_recovery_to_the_outer_executor() {
    bounded(async {
        // An outer executor of 2 attempts around a layer of 3 attempts, on an endpoint that
        // always fails: by default the layer makes one attempt per outer attempt.
        for (nested, expected) in [(Nested::SingleAttempt, 2), (Nested::Retry, 6)] {
            let server = start_server().await;
            let service = RetryLayer::new(Immediate::new().with_max_attempts(3))
                .unwrap()
                .when_nested(nested)
                .layer(client());
            let outer = Immediate::new().with_max_attempts(2).policy().unwrap();
            let url = server.url("/always503");
            let result = stagger::retry(outer, |_| {
                let mut service = service.clone();
                let request = get(url.clone());
                async move {
                    let response = send(&mut service, request).await.map_err(|_| None)?;
                    if response.status().is_success() {
                        Ok(())
                    } else {
                        Err(report(&response).gave_up)
                    }
                }
            })
            .classify(|_: &Option<StopReason>| Failure::Retryable)
            .await;
            let error = result.unwrap_err();
            assert_eq!(server.count("/always503"), expected, "{nested:?}");
            let inner_reason = error.last_error().copied().flatten();
            match nested {
                Nested::SingleAttempt => {
                    assert_eq!(inner_reason, Some(StopReason::OuterLayerOwnsRecovery));
                }
                _ => assert_eq!(inner_reason, Some(StopReason::AttemptLimit)),
            }
        }
    })
    .await;
}

/// A budget that refuses every retry and counts what it is told.
#[derive(Default)]
struct Refusing {
    failures: AtomicU32,
    refused: AtomicU32,
}

impl Budget for Refusing {
    fn try_retry(&self, _now: Timestamp, _failure: &Failure) -> Option<Spent> {
        self.refused.fetch_add(1, Ordering::Relaxed);
        None
    }

    fn on_failure(&self, _now: Timestamp, _failure: &Failure) {
        self.failures.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test]
async fn one_budget_is_shared_by_every_request_of_the_service() {
    bounded(async {
        let server = start_server().await;
        let budget = Arc::new(Refusing::default());
        let shared: Arc<dyn Budget + Send + Sync> = budget.clone();
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .budget(shared)
            .layer(client());
        let mut other = service.clone();
        for service in [&mut service, &mut other] {
            let response = send(service, get(server.url("/always503"))).await.unwrap();
            assert_eq!(report_of(&response), Some(StopReason::BudgetExhausted));
        }
        assert_eq!(server.count("/always503"), 2);
        assert_eq!(budget.failures.load(Ordering::Relaxed), 2);
        assert_eq!(budget.refused.load(Ordering::Relaxed), 2);
    })
    .await;
}

#[tokio::test]
async fn zero_delays_retry_at_once_and_the_hook_hears_each_retry() {
    bounded(async {
        let server = start_server().await;
        let heard = Arc::new(Mutex::new(Vec::new()));
        let hook = {
            let heard = heard.clone();
            move |event: &stagger::notify::RetryEvent<'_, Response<Incoming>, ClientError>| {
                let status = match event.result {
                    Ok(response) => response.status().as_u16(),
                    Err(_) => 0,
                };
                heard
                    .lock()
                    .unwrap()
                    .push((event.attempt, status, event.delay));
            }
        };
        let mut service = RetryLayer::new(Immediate::new().with_max_attempts(4))
            .unwrap()
            .notify(hook)
            .layer(client());
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = send(&mut service, get(server.url("/always503")))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(report_of(&response), Some(StopReason::AttemptLimit));
        assert_eq!(server.count("/always503"), 4);
        assert!(elapsed(&clock) < Duration::from_millis(500));
        assert_eq!(
            *heard.lock().unwrap(),
            [
                (1, 503, Duration::ZERO),
                (2, 503, Duration::ZERO),
                (3, 503, Duration::ZERO)
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn a_refused_connection_is_retried_until_the_attempts_run_out() {
    bounded(async {
        // A port nothing listens on: bind one, note it, close it.
        let addr = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap();
        let mut service = RetryLayer::new(quick()).unwrap().layer(client());
        let request = Request::post(format!("http://{addr}/orders"))
            .body(full("order"))
            .unwrap();
        let error = send(&mut service, request).await.unwrap_err();
        // Refused: no effect, so even a POST is retried, up to the limit. But its body is not
        // buffered, so it is sent once.
        assert_eq!(error.summary().attempts, 1);
        assert_eq!(error.summary().last_failure, Some(Failure::Rejected));

        let mut service = RetryLayer::new(quick())
            .unwrap()
            .buffer_bodies(64)
            .layer(client());
        let request = Request::post(format!("http://{addr}/orders"))
            .body(full("order"))
            .unwrap();
        let error = send(&mut service, request).await.unwrap_err();
        assert_eq!(error.reason(), StopReason::AttemptLimit);
        assert_eq!(error.summary().attempts, 4);
        assert!(error.last_error().is_some_and(ClientError::is_connect));
    })
    .await;
}

#[tokio::test]
async fn the_future_is_send_and_the_layer_is_clone() {
    fn assert_send<T: Send>(_: &T) {}
    let layer = RetryLayer::new(quick()).unwrap();
    let mut service = layer.clone().layer(client());
    let future = service.call(get("http://127.0.0.1:9/".to_owned()));
    assert_send(&future);
    drop(future);
}

#[tokio::test]
async fn every_request_draws_its_jitter_from_a_generator_of_its_own() {
    bounded(async {
        // Full jitter over [0, 10 s): with a sleeper that returns at once, the hook sees the
        // delay each request drew before its one retry. A generator shared across requests
        // (tower's identical-jitter bug) would repeat the same draw.
        let server = start_server().await;
        let delays = Arc::new(Mutex::new(Vec::new()));
        let heard = delays.clone();
        let policy = ExponentialFullJitter::new()
            .with_base(Duration::from_secs(10))
            .with_max_attempts(2);
        let mut service = RetryLayer::new(policy)
            .unwrap()
            .sleeper(|_| std::future::ready(()))
            .notify(
                move |event: &stagger::notify::RetryEvent<'_, Response<Incoming>, ClientError>| {
                    heard.lock().unwrap().push(event.delay);
                },
            )
            .layer(client());
        for _ in 0..3 {
            let response = send(&mut service, get(server.url("/always503")))
                .await
                .unwrap();
            assert_eq!(report(&response).summary.attempts, 2);
        }
        let delays = delays.lock().unwrap().clone();
        assert_eq!(delays.len(), 3);
        assert!(
            delays[0] != delays[1] && delays[1] != delays[2] && delays[0] != delays[2],
            "{delays:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn an_invalid_policy_of_one_request_fails_that_request_before_any_attempt() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick()).unwrap().layer(client());
        let mut request = get(server.url("/never"));
        request
            .extensions_mut()
            .insert(RetryOverrides::new().policy(Immediate::new().with_max_attempts(0)));
        let error = send(&mut service, request).await.unwrap_err();
        assert_eq!(error.reason(), StopReason::InvalidConfig);
        assert_eq!(
            error.config_error().and_then(stagger::ConfigError::param),
            Some("max_attempts")
        );
        assert_eq!(error.summary().attempts, 0);
        assert_eq!(server.count("/never"), 0);
    })
    .await;
}

/// A body that never yields a frame.
struct Stalled;

impl hyper::body::Body for Stalled {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

#[tokio::test]
async fn the_deadline_covers_reading_the_body_before_the_first_attempt() {
    bounded(async {
        let server = start_server().await;
        let mut service = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_millis(200))
            .buffer_bodies(1024)
            .layer(client());
        let clock = Stopwatch::start(MonotonicClock::new());
        let request = Request::put(server.url("/orders-stalled"))
            .body(Stalled.boxed())
            .unwrap();
        let error = send(&mut service, request).await.unwrap_err();
        let took = elapsed(&clock);
        assert_eq!(error.reason(), StopReason::Deadline);
        assert_eq!(
            error.summary().attempts,
            0,
            "no attempt: the body never arrived"
        );
        assert!(
            Duration::from_millis(200) <= took && took < Duration::from_secs(1),
            "{took:?}"
        );
        assert_eq!(server.count("/orders-stalled"), 0);
    })
    .await;
}

#[tokio::test]
async fn an_outer_executor_does_not_repeat_a_post_the_layer_refused_to_repeat() {
    bounded(async {
        // The reset POST may have been processed: the layer stops with NotIdempotent, and its
        // error classifies itself as permanent for the `stagger::retry` around it.
        let server = start_server().await;
        let service = RetryLayer::new(quick())
            .unwrap()
            .buffer_bodies(1024)
            .layer(client());
        let url = server.url("/reset-post");
        let outer = Immediate::new().with_max_attempts(2);
        let error = stagger::retry(outer, |_| {
            let mut service = service.clone();
            let request = Request::post(url.clone()).body(full("order")).unwrap();
            async move { send(&mut service, request).await }
        })
        .await
        .unwrap_err();
        assert_eq!(error.reason(), StopReason::NotRetryable);
        assert_eq!(
            error.last_error().map(RetryError::reason),
            Some(StopReason::NotIdempotent)
        );
        assert_eq!(server.log(), ["POST /reset-post reset"]);
    })
    .await;
}
