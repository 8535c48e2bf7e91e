//! The reqwest middleware and reqwest's own timeouts: a deadline or an attempt timeout on the
//! middleware must not lengthen the timeout the client was built with
//! (`reqwest::ClientBuilder::timeout`) or the request's own (`RequestBuilder::timeout`), and the
//! body is still read under the deadline.
//!
//! Against the scripted loopback server, whose stalls last 5 s and whose `/trickle` body takes
//! 3 s: every bound is far from the times compared, and what matters is counted at the server,
//! so that the tests hold on a loaded machine.

#![cfg(feature = "reqwest")]

use std::time::Duration;

use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Error};
use stagger::clock::{Clock, MonotonicClock, Timestamp};
use stagger::policy::ExponentialFullJitter;
use stagger::reqwest::{RetryMiddleware, RetryReport};

#[allow(dead_code)] // Not every helper of the shared server is used here.
#[path = "support/server.rs"]
mod server;
use server::{Server, start_server};

/// Every test ends within this, whatever happens.
const BOUND: Duration = Duration::from_secs(20);

/// The client's own timeout, far below the server's 5 s stall.
const CLIENT_TIMEOUT: Duration = Duration::from_millis(200);

/// The middleware's deadline, far above the client's timeout.
const DEADLINE: Duration = Duration::from_secs(10);

/// Well before the server's 5 s stall, and before the end of `/trickle`'s 3 s body, with room
/// for a loaded machine.
const WELL_BEFORE_THE_STALL: Duration = Duration::from_secs(3);

/// Full jitter with a 1 ms base and a 10 ms cap, four attempts: fast retries.
fn quick() -> ExponentialFullJitter {
    ExponentialFullJitter::new()
        .with_base(Duration::from_millis(1))
        .with_cap(Duration::from_millis(10))
        .with_max_attempts(4)
}

/// The setup of the bug report: a reqwest client built with a 200 ms timeout, and a retry
/// middleware with a 10 s deadline added to it the ordinary way.
fn client_with_its_own_timeout() -> ClientWithMiddleware {
    let client = reqwest::Client::builder()
        .timeout(CLIENT_TIMEOUT)
        .build()
        .unwrap();
    ClientBuilder::new(client)
        .with(RetryMiddleware::new(quick()).unwrap().timeout(DEADLINE))
        .build()
}

/// Measures a call on the monotonic clock, from its start.
struct Timer {
    clock: MonotonicClock,
    start: Timestamp,
}

impl Timer {
    fn start() -> Self {
        let clock = MonotonicClock::new();
        let start = clock.now();
        Self { clock, start }
    }

    fn elapsed(&self) -> Duration {
        self.clock.now().saturating_duration_since(self.start)
    }
}

async fn bounded<F: Future<Output = ()>>(test: F) {
    tokio::time::timeout(BOUND, test)
        .await
        .expect("the test ends in time");
}

/// Waits (up to 2 s) until the server has logged `entry`.
async fn wait_for_log(server: &Server, entry: &str) {
    let seen = async {
        while !server.log().iter().any(|e| e == entry) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(2), seen)
        .await
        .unwrap_or_else(|_| panic!("the server logged {entry:?}: {:?}", server.log()));
}

/// The first GET to `/hang-once-get` stalls for 5 s: the client's 200 ms timeout cuts it (the
/// server sees it dropped), although the middleware's deadline is 10 s, and the retry is
/// served.
#[tokio::test]
async fn the_clients_timeout_cuts_a_get_under_a_longer_deadline_and_it_is_retried() {
    bounded(async {
        let server = start_server().await;
        let client = client_with_its_own_timeout();
        let timer = Timer::start();
        let response = client
            .get(server.url("/hang-once-get"))
            .send()
            .await
            .unwrap();
        let took = timer.elapsed();
        assert_eq!(response.status(), 200);
        assert_eq!(response.text().await.unwrap(), "body");
        assert_eq!(
            server.count("/hang-once-get"),
            2,
            "cut once, then served: {:?}",
            server.log()
        );
        assert!(
            took < WELL_BEFORE_THE_STALL,
            "the first attempt was cut at the client's timeout, not at the stall's end: {took:?}"
        );
        wait_for_log(&server, "GET /hang-once-get dropped").await;
    })
    .await;
}

/// A POST cut by the client's timeout may have taken effect: it is not sent again, and the
/// caller gets the client's timeout error.
#[tokio::test]
async fn the_clients_timeout_cuts_a_post_under_a_longer_deadline_and_it_is_not_repeated() {
    bounded(async {
        let server = start_server().await;
        let client = client_with_its_own_timeout();
        let timer = Timer::start();
        let result = client
            .post(server.url("/hang-once-post"))
            .body("order")
            .send()
            .await;
        let took = timer.elapsed();
        let error = result.expect_err("the client's timeout, not the stalled response");
        assert!(
            matches!(&error, Error::Reqwest(e) if e.is_timeout()),
            "the client's own timeout: {error}"
        );
        assert_eq!(
            server.count("/hang-once-post"),
            1,
            "a POST is not repeated: {:?}",
            server.log()
        );
        assert!(took < WELL_BEFORE_THE_STALL, "{took:?}");
        wait_for_log(&server, "POST /hang-once-post dropped").await;
    })
    .await;
}

/// A request's own timeout replaces the client's, as in reqwest without the middleware: a POST
/// given 1 s waits 1 s, not the client's 200 ms, nor the middleware's 10 s, and is not sent
/// again.
#[tokio::test]
async fn a_requests_own_timeout_still_applies() {
    bounded(async {
        let server = start_server().await;
        let client = client_with_its_own_timeout();
        let timer = Timer::start();
        let error = client
            .post(server.url("/stall-post"))
            .timeout(Duration::from_secs(1))
            .body("order")
            .send()
            .await
            .unwrap_err();
        let took = timer.elapsed();
        assert!(
            matches!(&error, Error::Reqwest(e) if e.is_timeout()),
            "the request's own timeout: {error}"
        );
        assert_eq!(server.count("/stall-post"), 1);
        // A timer never fires early: 1 s at least (the client's 200 ms did not apply), and
        // well before the stall's end.
        assert!(
            Duration::from_millis(900) <= took && took < WELL_BEFORE_THE_STALL,
            "{took:?}"
        );
    })
    .await;
}

/// `/trickle` sends its head at once and its body over 3 s. Whichever limit is the shortest
/// (the middleware's deadline, its attempt timeout, or the client's own timeout under a longer
/// deadline), reading the body fails with a timeout at it, not when the body ends.
#[tokio::test]
async fn a_body_still_arriving_at_the_shortest_limit_fails_with_a_timeout() {
    bounded(async {
        let server = start_server().await;
        let limit = Duration::from_secs(1);
        let cases: [(&str, reqwest::ClientBuilder, RetryMiddleware<_>); 3] = [
            (
                "the deadline",
                reqwest::Client::builder(),
                RetryMiddleware::new(quick()).unwrap().timeout(limit),
            ),
            (
                "the attempt timeout",
                reqwest::Client::builder(),
                RetryMiddleware::new(quick())
                    .unwrap()
                    .attempt_timeout(limit),
            ),
            (
                "the client's timeout",
                reqwest::Client::builder().timeout(limit),
                RetryMiddleware::new(quick()).unwrap().timeout(DEADLINE),
            ),
        ];
        for (which, builder, middleware) in cases {
            let client = ClientBuilder::new(builder.build().unwrap())
                .with(middleware)
                .build();
            let timer = Timer::start();
            let response = client.get(server.url("/trickle")).send().await.unwrap();
            assert_eq!(response.status(), 200, "{which}");
            let error = response.bytes().await.unwrap_err();
            let took = timer.elapsed();
            assert!(error.is_timeout(), "{which}: {error}");
            assert!(
                Duration::from_millis(900) <= took && took < WELL_BEFORE_THE_STALL,
                "{which}: the body failed after {took:?}, not at 1 s"
            );
        }
        assert_eq!(server.count("/trickle"), 3, "one attempt each");
    })
    .await;
}

/// The body read under the deadline is the response's own: its URL is the request's, and the
/// middleware's report is in its extensions.
#[tokio::test]
async fn a_response_read_under_the_deadline_keeps_its_url_and_report() {
    bounded(async {
        let server = start_server().await;
        let client = client_with_its_own_timeout();
        let url = server.url("/hello?x=1");
        let response = client.get(&url).send().await.unwrap();
        assert_eq!(response.url().as_str(), url);
        let report = *response
            .extensions()
            .get::<RetryReport>()
            .expect("the middleware's report");
        assert_eq!(report.summary.attempts, 1);
        assert_eq!(response.text().await.unwrap(), "body");

        // Without a deadline or an attempt timeout, too.
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::new(quick()).unwrap())
            .build();
        let response = client.get(&url).send().await.unwrap();
        assert_eq!(response.url().as_str(), url);
        assert!(response.extensions().get::<RetryReport>().is_some());
        assert_eq!(response.text().await.unwrap(), "body");
    })
    .await;
}
