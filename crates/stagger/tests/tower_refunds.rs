//! The tower `RetryLayer` loses nothing: a retry the budget granted and that was never sent goes
//! back to it, and a service whose readiness failed is never called (a hyper server on
//! loopback, see `tower.rs`).

#![cfg(all(feature = "tower", feature = "tokio"))]

#[path = "support/stopwatch.rs"]
mod stopwatch;

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::client::legacy::Error as ClientError;
use stagger::Failure;
use stagger::clock::{Clock, MonotonicClock, Timestamp};
use stagger::engine::StopReason;
use stagger::policy::{Constant, Immediate};
use stagger::tower::{RetryBody, RetryLayer};
use tower_layer::Layer;
use tower_service::Service;

#[path = "support/server.rs"]
#[allow(dead_code)] // Not every helper of the shared server is used here.
mod server;
use server::start_server;

#[path = "support/tower_client.rs"]
#[allow(dead_code)] // Each file uses the helpers its tests need.
mod client;
use client::*;

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
            .classify(|_: &GateError| Failure::Retryable)
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
            .classify(|_: &GateError| Failure::Retryable)
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
