//! The tower `RetryLayer` against real parts: a hyper server on loopback, started inside each
//! test with scripted endpoints, behind a hyper-util client wrapped by the layer.
//!
//! The server counts and logs every attempt it sees, in order, so the assertions are about
//! what reached the wire. Two tests wait for real (a server-directed wait of 1 s); the rest
//! take milliseconds. Every test is bounded by a timeout.

#![cfg(all(feature = "tower", feature = "tokio"))]

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::{Client, Error as ClientError};
use hyper_util::rt::TokioExecutor;
use stagger::budget::{Budget, BudgetPerDestination, TokenBucketBudget};
use stagger::clock::{Clock, MonotonicClock, Timestamp};
use stagger::engine::{Nested, Spent, StopReason};
use stagger::policy::{Constant, ExponentialFullJitter, Immediate, PolicyConfig};
use stagger::tower::{RetryBody, RetryLayer, RetryOverrides, RetryReport};
use stagger::{Failure, RetryError};
use tokio::net::TcpListener;
use tower_layer::Layer;
use tower_service::Service;

/// Every test ends within this, whatever happens.
const BOUND: Duration = Duration::from_secs(10);

#[path = "support/server.rs"]
mod server;
use server::start_server;

/// The request body the tests send: any body, boxed.
type TestBody = BoxBody<Bytes, Infallible>;
type TestClient = Client<HttpConnector, RetryBody<TestBody>>;
type Outcome = Result<Response<Incoming>, RetryError<ClientError>>;

// ---------------------------------------------------------------------------------------------
// The client.

fn client() -> TestClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// A policy with short delays, so that the tests' time is the server's.
fn quick() -> ExponentialFullJitter {
    ExponentialFullJitter::new()
        .with_base(Duration::from_millis(5))
        .with_max_attempts(4)
}

fn empty() -> TestBody {
    Full::new(Bytes::new()).boxed()
}

fn full(text: &'static str) -> TestBody {
    Full::new(Bytes::from_static(text.as_bytes())).boxed()
}

/// A body that yields its chunks one by one: a stream, which no service can rewind.
struct Stream(VecDeque<Bytes>);

impl hyper::body::Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|chunk| Ok(Frame::data(chunk))))
    }
}

fn stream(chunks: &[&'static str]) -> TestBody {
    let chunks = chunks.iter().map(|c| Bytes::from_static(c.as_bytes()));
    Stream(chunks.collect()).boxed()
}

/// Sends `request` through `service`, as tower requires: ready first, then call.
async fn send<Svc>(service: &mut Svc, request: Request<TestBody>) -> Outcome
where
    Svc: Service<Request<TestBody>, Response = Response<Incoming>, Error = RetryError<ClientError>>,
{
    std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
    service.call(request).await
}

fn get(url: String) -> Request<TestBody> {
    Request::get(url).body(empty()).unwrap()
}

fn report(response: &Response<Incoming>) -> RetryReport {
    *response
        .extensions()
        .get::<RetryReport>()
        .expect("a retry report")
}

/// Runs `test` on a started server, bounded by [`BOUND`].
async fn bounded<F: Future<Output = ()>>(test: F) {
    tokio::time::timeout(BOUND, test)
        .await
        .expect("the test finished within its bound");
}

/// The time since `clock` started.
fn elapsed(clock: &Stopwatch<MonotonicClock>) -> Duration {
    clock.elapsed()
}

// ---------------------------------------------------------------------------------------------
// The tests.

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

// ---------------------------------------------------------------------------------------------
// Nothing lost: a retry the budget granted and that was never sent goes back to it, and a
// service whose readiness failed is never called.

/// 10 tokens at 5 a retry.
fn small_bucket() -> Arc<stagger::budget::TokenBucketBudget> {
    use stagger::budget::{TokenBucket, TokenBucketBudget};
    Arc::new(TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap())
}

#[tokio::test]
async fn a_request_dropped_during_its_wait_gives_its_retry_back_to_the_budget() {
    bounded(async {
        let server = start_server().await;
        let bucket = small_bucket();
        let policy = Constant::new()
            .with_base(Duration::from_secs(1))
            .with_max_attempts(3);
        let planned = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&planned);
        let mut service = RetryLayer::new(policy)
            .unwrap()
            .budget(Arc::clone(&bucket))
            .notify(
                move |_: &stagger::notify::RetryEvent<'_, Response<Incoming>, ClientError>| {
                    counted.fetch_add(1, Ordering::Relaxed);
                },
            )
            .layer(client());
        for _ in 0..3 {
            let request = send(&mut service, get(server.url("/always503")));
            // The caller drops the request during its first one-second wait.
            let cut = tokio::time::timeout(Duration::from_millis(300), request).await;
            assert!(cut.is_err());
        }
        server::assert_unsent_retries_refunded(&server, &planned, &bucket);
    })
    .await;
}

/// What the gate saw: calls by instance, and the time left each attempt was told.
#[derive(Default)]
struct GateLog {
    clones: AtomicU32,
    calls: Mutex<Vec<(u32, Option<Duration>, Timestamp)>>,
    clock: MonotonicClock,
}

/// A service in front of the real client whose clones get ready as `readiness` says: instance
/// 0 is the caller's, instance `n` the `n`-th clone.
struct Gate {
    inner: TestClient,
    id: u32,
    log: Arc<GateLog>,
    readiness: Readiness,
    /// This instance's slow readiness, once it started.
    getting_ready: Option<Pin<Box<tokio::time::Sleep>>>,
}

#[derive(Clone, Copy)]
enum Readiness {
    /// Every clone after the first fails to get ready.
    ClonesFail,
    /// Every clone takes this long to get ready.
    ClonesTake(Duration),
}

#[derive(Debug)]
enum GateError {
    Unready(u32),
    Client(#[allow(dead_code)] ClientError),
}

impl Gate {
    fn new(readiness: Readiness) -> (Self, Arc<GateLog>) {
        let log = Arc::new(GateLog::default());
        let gate = Self {
            inner: client(),
            id: 0,
            log: Arc::clone(&log),
            readiness,
            getting_ready: None,
        };
        (gate, log)
    }
}

impl Service<Request<RetryBody<TestBody>>> for Gate {
    type Response = Response<Incoming>;
    type Error = GateError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Incoming>, GateError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), GateError>> {
        if self.id > 0 {
            match self.readiness {
                Readiness::ClonesFail => return Poll::Ready(Err(GateError::Unready(self.id))),
                Readiness::ClonesTake(wait) => {
                    let sleep = self
                        .getting_ready
                        .get_or_insert_with(|| Box::pin(tokio::time::sleep(wait)));
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                }
            }
        }
        self.inner.poll_ready(cx).map_err(GateError::Client)
    }

    fn call(&mut self, request: Request<RetryBody<TestBody>>) -> Self::Future {
        let remaining = request
            .extensions()
            .get::<stagger::engine::Attempt>()
            .and_then(|a| a.remaining);
        self.log
            .calls
            .lock()
            .unwrap()
            .push((self.id, remaining, self.log.clock.now()));
        let call = self.inner.call(request);
        Box::pin(async move { call.await.map_err(GateError::Client) })
    }
}

/// Every clone is a new instance, with a number of its own.
impl Clone for Gate {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            id: self.log.clones.fetch_add(1, Ordering::Relaxed) + 1,
            log: Arc::clone(&self.log),
            readiness: self.readiness,
            getting_ready: None,
        }
    }
}

#[tokio::test]
async fn a_service_whose_readiness_failed_is_dropped_never_called_and_its_retry_refunded() {
    bounded(async {
        let server = start_server().await;
        let bucket = small_bucket();
        let (gate, log) = Gate::new(Readiness::ClonesFail);
        let mut service = RetryLayer::new(quick())
            .unwrap()
            // Even a classifier that retries every error does not retry a readiness error.
            .classify_errors(|_: &GateError| Failure::Retryable)
            .budget(Arc::clone(&bucket))
            .layer(gate);
        std::future::poll_fn(|cx| service.poll_ready(cx))
            .await
            .unwrap();
        let error = service
            .call(get(server.url("/always503")))
            .await
            .expect_err("the readiness error ends the run");
        assert_eq!(error.reason(), StopReason::NotRetryable);
        assert_eq!(
            error.summary().attempts,
            1,
            "the attempt that was not sent is not counted"
        );
        let unready = match error.last_error() {
            Some(GateError::Unready(id)) => *id,
            other => panic!("the readiness error is the last error: {other:?}"),
        };
        let called: Vec<u32> = log.calls.lock().unwrap().iter().map(|c| c.0).collect();
        assert!(
            !called.contains(&unready),
            "instance {unready} was called: {called:?}"
        );
        assert_eq!(called.len(), 1);
        assert_eq!(server.count("/always503"), 1);
        assert_eq!(
            bucket.tokens(),
            10.0,
            "the retry was not sent, so it was not paid for"
        );
    })
    .await;
}

#[tokio::test]
async fn each_attempt_is_told_the_time_left_when_it_is_sent_after_a_slow_readiness() {
    bounded(async {
        let server = start_server().await;
        let (gate, log) = Gate::new(Readiness::ClonesTake(Duration::from_millis(400)));
        let policy = Immediate::new().with_max_attempts(2);
        let timeout = Duration::from_secs(5);
        let mut service = RetryLayer::new(policy)
            .unwrap()
            .timeout(timeout)
            .classify_errors(|_: &GateError| Failure::Retryable)
            .layer(gate);
        std::future::poll_fn(|cx| service.poll_ready(cx))
            .await
            .unwrap();
        let response = service.call(get(server.url("/always503"))).await.unwrap();
        assert_eq!(report(&response).summary.attempts, 2);
        let calls = log.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 2);
        let (first, second) = (calls[0], calls[1]);
        let first_left = first.1.expect("a deadline");
        let second_left = second.1.expect("a deadline");
        // The second attempt was sent 400 ms or more after the first, and was told so.
        let between = second.2.saturating_duration_since(first.2);
        assert!(between >= Duration::from_millis(400), "{between:?}");
        let told = first_left.saturating_sub(second_left);
        let slack = Duration::from_millis(50);
        assert!(
            told + slack >= between && told <= between + slack,
            "told {told:?} less, {between:?} passed"
        );
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// A real rate limiter: the 429 storm of nginx's `limit_req` at 5 r/s with `Retry-After: 1`
// (a slot every 200 ms, a wait of 1 s), 20 concurrent requests, without and with a gate.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_storm_disperses_above_the_floor_and_never_retries_early() {
    storm_bounded(server::check_a_429_storm(|dispersal, timeout, gate| {
        let (policy, settings) = server::storm_client(dispersal, timeout);
        let layer = RetryLayer::new(policy).unwrap().settings(settings);
        match gate {
            Some(gate) => storm_caller(layer.gate(gate).layer(client())),
            None => storm_caller(layer.layer(client())),
        }
    }))
    .await;
}

/// One call of the 429 storm through `service`: whether it was served.
fn storm_caller<Svc>(service: Svc) -> Box<dyn Fn(String, u32) -> Served>
where
    Svc: Service<Request<TestBody>, Response = Response<Incoming>, Error = RetryError<ClientError>>
        + Clone
        + Send
        + 'static,
    Svc::Future: Send,
{
    let call = status_caller(service);
    Box::new(move |url: String, i: u32| -> Served {
        let status = call(url, i);
        Box::pin(async move { status.await == 200 })
    })
}

/// A boxed future of whether a storm's call was served.
type Served = std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>;

/// Like [`bounded`], with room for the storm's seven rounds.
async fn storm_bounded<F: Future<Output = ()>>(test: F) {
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("the storm finished within its bound");
}

#[tokio::test]
async fn one_hosts_outage_does_not_spend_another_hosts_retries_with_a_budget_per_host() {
    bounded(async {
        let policy = quick().with_max_attempts(2);
        let send = |service: Box<dyn Fn(String, u32) -> Status>| move |url: String| service(url, 0);
        // One bucket for both hosts: the outage spends it.
        let shared = Arc::new(TokenBucketBudget::new(server::two_retries()).unwrap());
        let layer = RetryLayer::new(policy).unwrap().budget(shared);
        server::check_a_shared_budget_is_spent(send(status_caller(layer.layer(client())))).await;
        // A bucket per host and port: the healthy host's request is retried, and served.
        let per_host = Arc::new(
            BudgetPerDestination::new(server::two_retries(), 64, stagger::rng::SeededRng::new(1))
                .unwrap(),
        );
        let layer = RetryLayer::new(policy)
            .unwrap()
            .budget(Arc::clone(&per_host));
        server::check_a_budget_per_host_is_kept(send(status_caller(layer.layer(client())))).await;
        assert_eq!(per_host.len(), 2, "one budget per host");
    })
    .await;
}

/// A boxed future of the status a call ended with (0 for an error without a response).
type Status = std::pin::Pin<Box<dyn std::future::Future<Output = u16> + Send>>;

/// A GET through `service`, whatever its type, as client `i`: the status it ends with.
fn status_caller<Svc>(service: Svc) -> Box<dyn Fn(String, u32) -> Status>
where
    Svc: Service<Request<TestBody>, Response = Response<Incoming>, Error = RetryError<ClientError>>
        + Clone
        + Send
        + 'static,
    Svc::Future: Send,
{
    Box::new(move |url: String, i: u32| {
        let mut service = service.clone();
        let request = Request::get(url)
            .header("x-client", i.to_string())
            .body(empty())
            .unwrap();
        Box::pin(async move {
            let response = send(&mut service, request).await;
            response.map_or(0, |r| r.status().as_u16())
        })
    })
}

#[tokio::test]
async fn a_gate_paces_each_host_and_port_on_its_own() {
    bounded(async {
        let gate = Arc::new(stagger::gate::Gate::new(16).unwrap());
        let layer = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_millis(300))
            .gate(gate);
        let call = status_caller(layer.layer(client()));
        server::a_gate_holds_one_host_and_not_another(|url: String| call(url, 1)).await;
    })
    .await;
}

#[tokio::test]
async fn two_calls_started_seconds_apart_are_paced_on_one_timeline() {
    bounded(async {
        let gate = Arc::new(stagger::gate::Gate::new(16).unwrap());
        let layer = RetryLayer::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(8))
            .gate(gate);
        let call = status_caller(layer.layer(client()));
        server::check_two_calls_apart_share_one_gate(|url: String| call(url, 1)).await;
    })
    .await;
}

/// A service whose ready instance holds a permit until it is called or dropped, as tower's
/// `ConcurrencyLimit` does: `held` counts the permits held now.
struct Permits {
    held: Arc<AtomicU32>,
    holding: bool,
}

impl Clone for Permits {
    fn clone(&self) -> Self {
        Self {
            held: Arc::clone(&self.held),
            holding: false,
        }
    }
}

impl Drop for Permits {
    fn drop(&mut self) {
        if self.holding {
            self.held.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Service<Request<RetryBody<TestBody>>> for Permits {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<Full<Bytes>>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if !self.holding {
            self.holding = true;
            self.held.fetch_add(1, Ordering::SeqCst);
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<RetryBody<TestBody>>) -> Self::Future {
        self.holding = false;
        self.held.fetch_sub(1, Ordering::SeqCst);
        std::future::ready(Ok(Response::new(Full::new(Bytes::new()))))
    }
}

/// An in-process service on tokio's clock: the first request to `/slow` is answered after a
/// minute with 429 and `Retry-After: 1`; every other request at once with 200. It logs when
/// each request reached it.
#[derive(Clone)]
struct SlowThrottle {
    start: Timestamp,
    log: Arc<Mutex<Vec<(String, Duration)>>>,
}

impl Service<Request<RetryBody<TestBody>>> for SlowThrottle {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<RetryBody<TestBody>>) -> Self::Future {
        let path = request.uri().path().to_owned();
        let at = stagger::clock::TokioClock::new()
            .now()
            .saturating_duration_since(self.start);
        let first = {
            let mut log = self.log.lock().unwrap();
            log.push((path.clone(), at));
            log.iter().filter(|(p, _)| *p == path).count() == 1
        };
        Box::pin(async move {
            let mut response = Response::new(Full::new(Bytes::new()));
            if path == "/slow" && first {
                tokio::time::sleep(Duration::from_secs(60)).await;
                *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
                response
                    .headers_mut()
                    .insert("retry-after", http::HeaderValue::from_static("1"));
            }
            Ok(response)
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_request_refused_after_a_minute_holds_a_later_one_for_the_wait_the_server_asked() {
    // The layer's default clock, one timeline for every request: the later request waits
    // for the second the server asked for, not until a second after a minute measured from
    // its own start (121 s), as when each request's clock started with it.
    let log = Arc::default();
    let inner = SlowThrottle {
        start: stagger::clock::TokioClock::new().now(),
        log: Arc::clone(&log),
    };
    let service = RetryLayer::new(Immediate::new().with_max_attempts(2))
        .unwrap()
        // At the server's time, not spread above it, so that every time below is exact.
        .settings(
            stagger::engine::Settings::new().with_dispersal(stagger::engine::Dispersal::Floor),
        )
        .gate(Arc::new(stagger::gate::Gate::new(16).unwrap()))
        .layer(inner);
    let call = |path: &str| {
        let mut service = service.clone();
        let request = Request::get(format!("http://api.example{path}"))
            .body(empty())
            .unwrap();
        async move {
            std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
            service.call(request).await.map(|r| r.status())
        }
    };
    let slow = tokio::spawn(call("/slow"));
    tokio::time::sleep(Duration::from_millis(60_001)).await;
    assert_eq!(call("/late").await.unwrap(), StatusCode::OK);
    assert_eq!(slow.await.unwrap().unwrap(), StatusCode::OK);
    let secs = Duration::from_secs_f64;
    assert_eq!(
        *log.lock().unwrap(),
        [
            ("/slow".to_owned(), secs(0.0)),
            ("/late".to_owned(), secs(61.0)),
            ("/slow".to_owned(), secs(61.225)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_waiting_for_its_slot_holds_no_permit_of_the_inner_service() {
    let gate = Arc::new(stagger::gate::Gate::new(16).unwrap());
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    // The destination was told to wait a second.
    gate.throttled("api.example:80", clock.now(), Duration::from_secs(1), true);
    let held = Arc::new(AtomicU32::new(0));
    let inner = Permits {
        held: Arc::clone(&held),
        holding: false,
    };
    let mut service = RetryLayer::new(Immediate::new())
        .unwrap()
        .clock(clock.clone())
        .gate(gate)
        .layer(inner);
    std::future::poll_fn(|cx| service.poll_ready(cx))
        .await
        .unwrap();
    assert_eq!(held.load(Ordering::SeqCst), 1, "made ready by the caller");
    let request = Request::get("http://api.example/").body(empty()).unwrap();
    let call = tokio::spawn(service.call(request));
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Half way through the wait for the slot: the permit is back.
    assert_eq!(
        held.load(Ordering::SeqCst),
        0,
        "no permit held while waiting"
    );
    let response = call.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        clock.now().since_origin(),
        Duration::from_secs(1),
        "sent in its slot"
    );
    assert_eq!(held.load(Ordering::SeqCst), 0);
}

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
