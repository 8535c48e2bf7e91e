//! The reqwest-middleware `RetryMiddleware` against real parts: the scripted hyper server of
//! the tower tests on loopback, called by a real reqwest client.
//!
//! The server logs every attempt it sees, in order, so the assertions are about what reached
//! the wire. Two tests wait for real (a server-directed wait of 1 s); the rest take
//! milliseconds. Every test is bounded by a timeout.

#![cfg(feature = "reqwest")]

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Error};
use stagger::budget::Spent;
use stagger::budget::{Budget, BudgetPerDestination, TokenBucket, TokenBucketBudget};
use stagger::clock::{MonotonicClock, Timestamp};
use stagger::engine::{Attempt, StopReason};
use stagger::policy::{ExponentialFullJitter, Immediate, PolicyConfig};
use stagger::reqwest::{RetryMiddleware, RetryOverrides, RetryReport};
use stagger::{Failure, RetryError};

#[path = "support/server.rs"]
mod server;
use server::start_server;

/// Every test ends within this, whatever happens.
const BOUND: Duration = Duration::from_secs(10);

/// Full jitter with a 1 ms base and a 10 ms cap, four attempts: fast retries.
fn quick() -> ExponentialFullJitter {
    ExponentialFullJitter::new()
        .with_base(Duration::from_millis(1))
        .with_cap(Duration::from_millis(10))
        .with_max_attempts(4)
}

fn client(middleware: impl reqwest_middleware::Middleware) -> ClientWithMiddleware {
    ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build()
}

async fn bounded<F: Future<Output = ()>>(test: F) {
    tokio::time::timeout(BOUND, test)
        .await
        .expect("the test ends in time");
}

fn elapsed(clock: &Stopwatch<MonotonicClock>) -> Duration {
    clock.elapsed()
}

fn report(response: &reqwest::Response) -> RetryReport {
    *response
        .extensions()
        .get::<RetryReport>()
        .expect("the middleware reports on every response")
}

/// The middleware's own error: why it gave up without a response.
fn gave_up(error: &Error) -> &RetryError<Error> {
    match error {
        Error::Middleware(e) => e.downcast_ref::<RetryError<Error>>().expect("a RetryError"),
        Error::Reqwest(e) => panic!("expected the middleware's RetryError, got {e}"),
    }
}

#[tokio::test]
async fn a_503_with_retry_after_is_retried_no_sooner_than_asked() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = client.get(server.url("/busy")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let report = report(&response);
        assert_eq!((report.summary.attempts, report.gave_up), (2, None));
        assert!(report.summary.waited >= Duration::from_secs(1));
        assert_eq!(server.log(), ["GET /busy", "GET /busy"]);
        // The policy alone would wait at most 1 ms; the server asked for a second.
        assert!(
            elapsed(&clock) >= Duration::from_secs(1),
            "{:?}",
            elapsed(&clock)
        );
    })
    .await;
}

#[tokio::test]
async fn a_429_with_an_http_date_retries_even_a_post() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = client
            .post(server.url("/throttled"))
            .body("order")
            .send()
            .await
            .unwrap();
        // A 429 was refused before it was processed: safe to repeat even for a POST. Its
        // Retry-After is a date one second after the response's own Date: a 1 s floor.
        assert_eq!(response.status(), 200);
        assert!(
            elapsed(&clock) >= Duration::from_secs(1),
            "{:?}",
            elapsed(&clock)
        );
        assert_eq!(
            server.log(),
            ["POST /throttled order", "POST /throttled order"]
        );
    })
    .await;
}

#[tokio::test]
async fn the_deadline_cancels_the_attempt_in_flight_and_stops_everything() {
    bounded(async {
        let server = start_server().await;
        let client = client(
            RetryMiddleware::new(quick())
                .unwrap()
                .timeout(Duration::from_secs(5)),
        );
        let clock = Stopwatch::start(MonotonicClock::new());
        // The request's own timeout overrides the middleware's.
        let error = client
            .get(server.url("/slow"))
            .with_extension(RetryOverrides::new().timeout(Duration::from_millis(500)))
            .send()
            .await
            .unwrap_err();
        let took = elapsed(&clock);
        let gave_up = gave_up(&error);
        assert_eq!(gave_up.reason(), StopReason::Deadline);
        assert_eq!(gave_up.summary().attempts, 2);
        assert!(
            Duration::from_millis(450) <= took && took < Duration::from_secs(2),
            "stopped after {took:?}"
        );
        server.expect_cancelled_slow_attempt().await;
    })
    .await;
}

#[tokio::test]
async fn a_connection_reset_is_retried_for_a_get_but_not_for_a_post() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let response = client.get(server.url("/reset-get")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(server.log(), ["GET /reset-get reset", "GET /reset-get"]);

        // The POST may have taken effect before the reset: it goes back to the caller. (A new
        // client, so that the POST opens a new connection for the server to reset.)
        let client = self::client(RetryMiddleware::new(quick()).unwrap());
        let error = client
            .post(server.url("/reset-post"))
            .body("order")
            .send()
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Reqwest(_)), "{error}");
        assert_eq!(server.count("/reset-post"), 1);
    })
    .await;
}

#[tokio::test]
async fn a_post_is_not_retried_after_a_503_unless_it_is_declared_idempotent() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        // A 503 may have been processed: a plain POST gets it back after one attempt.
        let response = client
            .post(server.url("/orders"))
            .body("a")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(server.count("/orders"), 1);

        // With an Idempotency-Key the server deduplicates repeats, so it is retried.
        let response = client
            .post(server.url("/orders-keyed"))
            .header("idempotency-key", "k-1")
            .body("b")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        assert_eq!(server.count("/orders-keyed"), 2);

        // Or declared idempotent for this request alone.
        let response = client
            .post(server.url("/orders-declared"))
            .with_extension(RetryOverrides::new().idempotent(true))
            .body("c")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        assert_eq!(server.count("/orders-declared"), 2);
    })
    .await;
}

#[tokio::test]
async fn a_streaming_body_is_sent_once_whatever_the_failure() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let chunks: Vec<Result<&'static str, std::io::Error>> = vec![Ok("str"), Ok("eam")];
        let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
        // Idempotent by its key, so a clonable body would be retried after the 503; a stream
        // is consumed by the first attempt and cannot be.
        let response = client
            .post(server.url("/orders-streamed"))
            .header("idempotency-key", "k-2")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(server.log(), ["POST /orders-streamed stream"]);
    })
    .await;
}

#[tokio::test]
async fn a_streaming_body_still_keeps_the_deadline() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let chunks: Vec<Result<&'static str, std::io::Error>> = vec![Ok("stream")];
        let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
        let clock = Stopwatch::start(MonotonicClock::new());
        let error = client
            .post(server.url("/stall"))
            .with_extension(RetryOverrides::new().timeout(Duration::from_millis(300)))
            .body(body)
            .send()
            .await
            .unwrap_err();
        let took = elapsed(&clock);
        let gave_up = gave_up(&error);
        assert_eq!(gave_up.reason(), StopReason::Deadline);
        assert_eq!(gave_up.summary().attempts, 1);
        assert!(took < Duration::from_secs(2), "stopped after {took:?}");
    })
    .await;
}

#[tokio::test]
async fn inside_another_executors_attempt_a_request_makes_one_attempt() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let outer = Immediate::new().with_max_attempts(2).policy().unwrap();
        let result = stagger::retry(outer, |_| async {
            let response = client.get(server.url("/always503")).send().await;
            match response {
                Ok(r) if r.status().is_success() => Ok(()),
                _ => Err(()),
            }
        })
        .classify(|_: &()| Failure::Retryable)
        .await;
        assert!(result.is_err());
        // Two outer attempts of one inner attempt each, not 2 x 4.
        assert_eq!(server.count("/always503"), 2);
    })
    .await;
}

/// Marks the extensions with the number of the attempt it saw.
#[derive(Clone, Debug, PartialEq)]
struct SawAttempt(Option<u32>);

fn recorder<'a>(
    request: reqwest::Request,
    extensions: &'a mut http::Extensions,
    next: reqwest_middleware::Next<'a>,
) -> std::pin::Pin<
    Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a>,
> {
    let number = extensions.get::<Attempt>().map(|a| a.number);
    extensions.insert(SawAttempt(number));
    next.run(request, extensions)
}

#[tokio::test]
async fn each_attempt_sees_its_number_and_the_caller_gets_the_last_extensions() {
    bounded(async {
        let server = start_server().await;
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()).unwrap())
            .with(recorder)
            .build();
        let request = client.get(server.url("/always503")).build().unwrap();
        let mut extensions = http::Extensions::new();
        let response = client
            .execute_with_extensions(request, &mut extensions)
            .await
            .unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(extensions.get::<SawAttempt>(), Some(&SawAttempt(Some(4))));
    })
    .await;
}

#[tokio::test]
async fn a_request_may_bring_its_own_policy_and_the_last_response_comes_back() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let response = client.get(server.url("/always503")).send().await.unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(server.count("/always503"), 4);
        let report = report(&response);
        assert_eq!(report.summary.attempts, 4);
        assert_eq!(report.gave_up, Some(StopReason::AttemptLimit));

        let two = Immediate::new().with_max_attempts(2);
        let response = client
            .get(server.url("/always503"))
            .with_extension(RetryOverrides::new().policy(two))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(server.count("/always503"), 4 + 2);
    })
    .await;
}

#[tokio::test]
async fn one_budget_is_shared_by_every_request() {
    bounded(async {
        let server = start_server().await;
        // Ten tokens, five per retry: two retries in all, whatever the number of requests.
        let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap();
        let client = client(
            RetryMiddleware::new(Immediate::new().with_max_attempts(3))
                .unwrap()
                .budget(Arc::new(bucket)),
        );
        for _ in 0..3 {
            let response = client.get(server.url("/always503")).send().await.unwrap();
            assert_eq!(response.status(), 503);
        }
        assert_eq!(server.count("/always503"), 3 + 2);
    })
    .await;
}

/// A budget that grants every retry and counts what it is told.
#[derive(Default)]
struct Counting {
    failures: AtomicU32,
    retries: AtomicU32,
}

impl Budget for Counting {
    fn try_retry(&self, _now: Timestamp, _failure: &Failure) -> Option<Spent> {
        self.retries.fetch_add(1, Ordering::Relaxed);
        Some(Spent::default())
    }

    fn on_failure(&self, _now: Timestamp, _failure: &Failure) {
        self.failures.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test]
async fn a_refused_connection_is_retried_until_the_attempts_run_out() {
    bounded(async {
        // Bind a port, then close it: connecting to it is refused.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let counting = Arc::new(Counting::default());
        let shared: Arc<dyn Budget + Send + Sync> = counting.clone();
        let client = client(RetryMiddleware::new(quick()).unwrap().budget(shared));
        // Even a POST: a refused connection sent nothing.
        let error = client
            .post(format!("http://{addr}/"))
            .body("x")
            .send()
            .await
            .unwrap_err();
        match error {
            Error::Reqwest(e) => assert!(e.is_connect(), "{e}"),
            Error::Middleware(e) => panic!("expected the client's error, got {e}"),
        }
        // Four attempts: four failures heard, three retries granted.
        assert_eq!(counting.failures.load(Ordering::Relaxed), 4);
        assert_eq!(counting.retries.load(Ordering::Relaxed), 3);
    })
    .await;
}

#[test]
fn an_invalid_policy_is_refused_by_name() {
    let err = RetryMiddleware::new(quick().with_max_attempts(0)).unwrap_err();
    assert_eq!(err.param(), Some("max_attempts"));
}

#[tokio::test]
async fn a_spent_deadline_sends_nothing_and_a_bad_override_is_a_typed_error() {
    bounded(async {
        let server = start_server().await;
        let client = client(RetryMiddleware::new(quick()).unwrap());
        let error = client
            .get(server.url("/never"))
            .with_extension(RetryOverrides::new().timeout(Duration::ZERO))
            .send()
            .await
            .unwrap_err();
        let gave_up = gave_up(&error);
        assert_eq!(gave_up.reason(), StopReason::Deadline);
        assert_eq!(gave_up.summary().attempts, 0);
        assert!(gave_up.last_error().is_none());

        let error = client
            .get(server.url("/never"))
            .with_extension(RetryOverrides::new().policy(quick().with_max_attempts(0)))
            .send()
            .await
            .unwrap_err();
        match &error {
            Error::Middleware(e) => {
                let config = e
                    .downcast_ref::<stagger::ConfigError>()
                    .expect("a ConfigError");
                assert_eq!(config.param(), Some("max_attempts"));
            }
            Error::Reqwest(e) => panic!("expected a ConfigError, got {e}"),
        }
        assert_eq!(server.count("/never"), 0);
    })
    .await;
}

#[tokio::test]
async fn a_server_wait_beyond_the_limit_returns_the_response_at_once() {
    bounded(async {
        let server = start_server().await;
        let client = client(
            RetryMiddleware::new(quick())
                .unwrap()
                .max_server_wait(Duration::from_millis(500)),
        );
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = client.get(server.url("/busy")).send().await.unwrap();
        // The server asked for 1 s, more than this client honours: no wait, no retry.
        assert_eq!(response.status(), 503);
        assert!(elapsed(&clock) < Duration::from_millis(500));
        assert_eq!(server.count("/busy"), 1);
        assert!(matches!(
            report(&response).gave_up,
            Some(StopReason::ServerWaitTooLong { .. })
        ));
    })
    .await;
}

#[tokio::test]
async fn a_client_timeout_is_retried_for_a_get_but_not_for_a_post() {
    bounded(async {
        let server = start_server().await;
        let timing_out = reqwest::Client::builder()
            .timeout(Duration::from_millis(100))
            .build()
            .unwrap();
        let client = ClientBuilder::new(timing_out)
            .with(RetryMiddleware::new(quick()).unwrap())
            .build();
        let error = client.get(server.url("/stall")).send().await.unwrap_err();
        match &error {
            Error::Reqwest(e) => assert!(e.is_timeout(), "{e}"),
            Error::Middleware(e) => panic!("expected the client's timeout, got {e}"),
        }
        assert_eq!(server.count("/stall"), 4);

        // A timed-out POST may have been processed: it is not sent again.
        let error = client
            .post(server.url("/stall-post"))
            .body("x")
            .send()
            .await
            .unwrap_err();
        assert!(
            matches!(&error, Error::Reqwest(e) if e.is_timeout()),
            "{error}"
        );
        assert_eq!(server.count("/stall-post"), 1);
    })
    .await;
}

#[tokio::test]
async fn a_body_slower_than_the_deadline_fails_at_the_deadline() {
    bounded(async {
        let server = start_server().await;
        // `/trickle` sends its head at once and its body over 3 s: the 500 ms deadline covers
        // the body too, which the middleware reads under the time the attempt had.
        let client = client(
            RetryMiddleware::new(quick())
                .unwrap()
                .timeout(Duration::from_millis(500)),
        );
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = client.get(server.url("/trickle")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(
            elapsed(&clock) < Duration::from_millis(300),
            "the head came at once"
        );
        let error = response.bytes().await.unwrap_err();
        let took = elapsed(&clock);
        assert!(error.is_timeout(), "{error}");
        // Not before the deadline, and long before the 3 s the whole body takes (the upper
        // bound leaves room for a loaded machine).
        assert!(
            Duration::from_millis(450) <= took && took <= Duration::from_millis(2_000),
            "the body failed after {took:?}, not at the 500 ms deadline"
        );
        assert_eq!(server.count("/trickle"), 1);

        // A request's own, shorter reqwest timeout still wins: the smaller of the two.
        let clock = Stopwatch::start(MonotonicClock::new());
        let response = client
            .get(server.url("/trickle"))
            .timeout(Duration::from_millis(200))
            .send()
            .await
            .unwrap();
        let error = response.bytes().await.unwrap_err();
        let took = elapsed(&clock);
        assert!(error.is_timeout(), "{error}");
        // At its own 200 ms, before the 500 ms deadline.
        assert!(
            Duration::from_millis(150) <= took && took < Duration::from_millis(450),
            "{took:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn the_hook_hears_each_retry_with_the_refused_response() {
    bounded(async {
        let server = start_server().await;
        let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = heard.clone();
        let client = client(
            RetryMiddleware::new(Immediate::new().with_max_attempts(3))
                .unwrap()
                .notify(move |event| {
                    let status = event.result.map(|r| r.status().as_u16()).ok();
                    log.lock()
                        .unwrap()
                        .push((event.attempt, status, event.failure));
                }),
        );
        let response = client.get(server.url("/always503")).send().await.unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(
            *heard.lock().unwrap(),
            [
                (1, Some(503), Failure::Retryable),
                (2, Some(503), Failure::Retryable)
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn a_request_dropped_during_its_wait_gives_its_retry_back_to_the_budget() {
    bounded(async {
        let server = start_server().await;
        let bucket = Arc::new(
            TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap(),
        );
        let policy = stagger::policy::Constant::new()
            .with_base(Duration::from_secs(1))
            .with_max_attempts(3);
        let planned = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&planned);
        let client = client(
            RetryMiddleware::new(policy)
                .unwrap()
                .budget(Arc::clone(&bucket))
                .notify(move |_| {
                    counted.fetch_add(1, Ordering::Relaxed);
                }),
        );
        for _ in 0..3 {
            // The caller gives up during the first one-second wait.
            let request = client.get(server.url("/always503")).send();
            let cut = tokio::time::timeout(Duration::from_millis(300), request).await;
            assert!(cut.is_err());
        }
        server::assert_unsent_retries_refunded(&server, &planned, &bucket);
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
        let middleware = RetryMiddleware::new(policy).unwrap().settings(settings);
        let client = match gate {
            Some(gate) => client(middleware.gate(gate)),
            None => client(middleware),
        };
        move |url: String, i: u32| {
            let request = client.get(url).header("x-client", i.to_string()).send();
            async move { request.await.is_ok_and(|r| r.status() == 200) }
        }
    }))
    .await;
}

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
        let send = |client: ClientWithMiddleware| {
            move |url: String| {
                let request = client.get(url).send();
                async move { request.await.map_or(0, |r| r.status().as_u16()) }
            }
        };
        // One bucket for both hosts: the outage spends it.
        let shared = Arc::new(TokenBucketBudget::new(server::two_retries()).unwrap());
        let client_shared = client(RetryMiddleware::new(policy).unwrap().budget(shared));
        server::check_a_shared_budget_is_spent(send(client_shared)).await;
        // A bucket per host and port: the healthy host's request is retried, and served.
        let per_host = Arc::new(
            BudgetPerDestination::new(server::two_retries(), 64, stagger::rng::SeededRng::new(1))
                .unwrap(),
        );
        let middleware = RetryMiddleware::new(policy)
            .unwrap()
            .budget(Arc::clone(&per_host));
        server::check_a_budget_per_host_is_kept(send(client(middleware))).await;
        assert_eq!(per_host.len(), 2, "one budget per host");
    })
    .await;
}

#[cfg(feature = "serde")]
#[tokio::test]
async fn a_configuration_file_keeps_a_budget_per_host_too() {
    bounded(async {
        let file = |per_host: &str| {
            let text = format!(
                r#"{{"policy": "exponential-full-jitter", "base": "1ms", "cap": "10ms",
                    "max_attempts": 2, "budget": {{"budget": "aws-standard", "capacity": 10}}{per_host}}}"#
            );
            let spec: stagger::config::RetrySpec = serde_json::from_str(&text).unwrap();
            let client = client(RetryMiddleware::from_spec(&spec).unwrap());
            move |url: String| {
                let request = client.get(url).send();
                async move { request.await.map_or(0, |r| r.status().as_u16()) }
            }
        };
        server::check_a_shared_budget_is_spent(file("")).await;
        server::check_a_budget_per_host_is_kept(file(r#", "budget_per_destination": 64"#)).await;
    })
    .await;
}

#[tokio::test]
async fn a_gate_paces_each_host_and_port_on_its_own() {
    bounded(async {
        let gate = Arc::new(stagger::gate::Gate::new(16).unwrap());
        let middleware = RetryMiddleware::new(quick())
            .unwrap()
            .timeout(Duration::from_millis(300))
            .gate(gate);
        let client = client(middleware);
        server::a_gate_holds_one_host_and_not_another(|url: String| {
            let request = client.get(url).header("x-client", "1").send();
            async move { request.await.map_or(0, |r| r.status().as_u16()) }
        })
        .await;
    })
    .await;
}

#[tokio::test]
async fn two_calls_started_seconds_apart_are_paced_on_one_timeline() {
    bounded(async {
        let gate = Arc::new(stagger::gate::Gate::new(16).unwrap());
        let middleware = RetryMiddleware::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(8))
            .gate(gate);
        let client = client(middleware);
        server::check_two_calls_apart_share_one_gate(|url: String| {
            let request = client.get(url).send();
            async move { request.await.map_or(0, |r| r.status().as_u16()) }
        })
        .await;
    })
    .await;
}

#[tokio::test]
async fn an_attempt_that_hangs_is_cut_at_its_timeout_and_retried() {
    bounded(async {
        let middleware = RetryMiddleware::new(quick())
            .unwrap()
            .timeout(Duration::from_secs(2))
            .attempt_timeout(Duration::from_millis(200));
        let client = client(middleware);
        server::check_an_attempt_timeout(|url: String, method: &'static str| {
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let request = client.request(method, url).send();
            async move { request.await.map_or(0, |r| r.status().as_u16()) }
        })
        .await;
    })
    .await;
}

/// The hedging middleware: a copy of a slow GET after 100 ms is served, the slow one dropped
/// (the server sees it), and a POST is never hedged.
#[tokio::test]
async fn a_hedging_middleware_sends_a_copy_and_drops_the_loser() {
    bounded(async {
        let middleware = RetryMiddleware::new(stagger::policy::NoRetry::new())
            .unwrap()
            .timeout(Duration::from_secs(1))
            .hedge(stagger::engine::Hedging::fixed(
                Duration::from_millis(100),
                2,
            ));
        let client = client(middleware);
        server::check_a_hedge(|url: String, method: &'static str| {
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let request = client.request(method, url).send();
            async move { request.await.map_or(0, |r| r.status().as_u16()) }
        })
        .await;
    })
    .await;
}

/// A sketch given to the hedging middleware is the one the hedged attempts are measured into.
#[tokio::test]
async fn a_hedging_middleware_measures_into_the_sketch_it_is_given() {
    bounded(async {
        let server = start_server().await;
        let sketch = Arc::new(stagger::sketch::LatencySketch::new());
        let hedging = stagger::engine::Hedging::quantile(9500, 2);
        let middleware = RetryMiddleware::new(stagger::policy::NoRetry::new())
            .unwrap()
            .hedge(hedging)
            .latencies(sketch.clone());
        let client = client(middleware);
        for _ in 0..3 {
            let response = client.get(server.url("/")).send().await.unwrap();
            assert_eq!(response.status(), 200);
        }
        assert_eq!(sketch.count(), 3);
    })
    .await;
}

/// The middleware waits with the sleeper it is given and reads the clock it is given: with a
/// manual clock that the sleeper moves, a 503 asking for a second is retried after a wait of at
/// least a second on that clock, and the report counts the time on it.
#[tokio::test]
async fn the_middleware_sleeps_and_reads_time_with_the_parts_it_is_given() {
    bounded(async {
        let server = start_server().await;
        let clock = stagger::clock::ManualClock::new();
        let waits = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sleeper = {
            let (clock, waits) = (clock.clone(), Arc::clone(&waits));
            move |wait: Duration| {
                waits.lock().unwrap().push(wait);
                clock.advance(wait);
                std::future::ready(())
            }
        };
        let middleware = RetryMiddleware::new(quick())
            .unwrap()
            .clock(clock.clone())
            .sleeper(sleeper);
        let response = client(middleware)
            .get(server.url("/busy"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let report = report(&response);
        let waits = waits.lock().unwrap().clone();
        assert_eq!(waits.len(), 1, "{waits:?}");
        assert!(waits[0] >= Duration::from_secs(1), "{waits:?}");
        assert_eq!(report.summary.waited, waits[0]);
        assert_eq!(
            report.summary.elapsed,
            stagger::clock::Clock::now(&clock).saturating_duration_since(Timestamp::ZERO)
        );
    })
    .await;
}
