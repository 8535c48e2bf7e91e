//! The tower `RetryLayer` against servers that throttle: a real rate limiter's 429 storm, one
//! host's outage beside another's budget, a gate per host and port, calls started seconds apart
//! on one timeline, and permits of the inner service while a request waits.

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
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Error as ClientError;
use stagger::RetryError;
use stagger::budget::{BudgetPerDestination, TokenBucketBudget};
use stagger::clock::{Clock, Timestamp};
use stagger::policy::Immediate;
use stagger::tower::{RetryBody, RetryLayer};
use tower_layer::Layer;
use tower_service::Service;

#[path = "support/server.rs"]
#[allow(dead_code)] // Not every helper of the shared server is used here.
mod server;

#[path = "support/tower_client.rs"]
#[allow(dead_code)] // Each file uses the helpers its tests need.
mod client;
use client::*;

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
