//! One configuration file drives the executor, the tower layer and the reqwest middleware, in
//! one call each, against the scripted loopback server of the tower and reqwest tests.

#![cfg(all(feature = "serde", feature = "tower", feature = "reqwest"))]

use std::time::Duration;

use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use stagger::Failure;
use stagger::clock::{SystemClock, WallClock};
use stagger::config::RetrySpec;
use stagger::engine::StopReason;
use stagger::http::classify_status;
use stagger::reqwest::RetryMiddleware;
use stagger::rng::SeededRng;
use stagger::tower::{RetryBody, RetryLayer, RetryReport};
use tower_layer::Layer;
use tower_service::Service;

#[path = "support/server.rs"]
#[allow(dead_code)] // Each test file uses its own subset.
mod server;
use server::start_server;

/// Four attempts at once, a 3 s deadline, no server wait beyond 500 ms, and a bucket of ten
/// tokens at five per retry: two retries for all the requests of the layer or client.
const SPEC: &str = r#"
policy = "immediate"
max_attempts = 4
timeout = "3s"
max_server_wait = "500ms"

[budget]
budget = "aws-standard"
capacity = 10
"#;

fn spec() -> RetrySpec {
    toml::from_str(SPEC).expect("the spec parses")
}

async fn bounded<F: Future<Output = ()>>(test: F) {
    tokio::time::timeout(Duration::from_secs(10), test)
        .await
        .expect("the test ends in time");
}

fn report<B>(response: &Response<B>) -> RetryReport {
    *response
        .extensions()
        .get::<RetryReport>()
        .expect("a report")
}

#[tokio::test]
async fn the_tower_layer_from_a_spec_in_one_call() {
    bounded(async {
        let server = start_server().await;
        let client =
            Client::builder(TokioExecutor::new()).build_http::<RetryBody<Empty<bytes::Bytes>>>();
        let mut service = RetryLayer::from_spec(&spec()).unwrap().layer(client);
        let mut send = async |path: &str| -> Response<Incoming> {
            std::future::poll_fn(|cx| service.poll_ready(cx))
                .await
                .unwrap();
            let request = Request::get(server.url(path)).body(Empty::new()).unwrap();
            service.call(request).await.unwrap()
        };

        // The shared bucket allows two retries: three attempts, then one, not four and four.
        let first = send("/always503").await;
        assert_eq!(report(&first).summary.attempts, 3);
        assert_eq!(report(&first).gave_up, Some(StopReason::BudgetExhausted));
        let second = send("/always503").await;
        assert_eq!(report(&second).summary.attempts, 1);
        assert_eq!(server.count("/always503"), 4);

        // Retry-After: 1 is longer than the 500 ms the file honours.
        let busy = send("/busy").await;
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(matches!(
            report(&busy).gave_up,
            Some(StopReason::ServerWaitTooLong { .. })
        ));
        let _ = busy.into_body().collect().await;
    })
    .await;
}

#[tokio::test]
async fn the_reqwest_middleware_from_a_spec_in_one_call() {
    bounded(async {
        let server = start_server().await;
        let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(RetryMiddleware::from_spec(&spec()).unwrap())
            .build();
        let first = client.get(server.url("/always503")).send().await.unwrap();
        let first = *first.extensions().get::<RetryReport>().unwrap();
        assert_eq!(
            (first.summary.attempts, first.gave_up),
            (3, Some(StopReason::BudgetExhausted))
        );
        let second = client.get(server.url("/always503")).send().await.unwrap();
        assert_eq!(
            second
                .extensions()
                .get::<RetryReport>()
                .unwrap()
                .summary
                .attempts,
            1
        );
        assert_eq!(server.count("/always503"), 4);

        let busy = client.get(server.url("/busy")).send().await.unwrap();
        assert!(matches!(
            busy.extensions().get::<RetryReport>().unwrap().gave_up,
            Some(StopReason::ServerWaitTooLong { .. })
        ));
    })
    .await;
}

#[tokio::test]
async fn the_executor_from_a_spec_in_one_call() {
    bounded(async {
        let server = start_server().await;
        let spec = spec();
        let client = reqwest::Client::new();
        // A retry budget is shared state: built once, from the file, for every run.
        let budget = std::sync::Arc::new(spec.to_budget(SeededRng::new(1)).unwrap());
        let get = |path: &'static str| {
            let (url, client) = (server.url(path), &client);
            stagger::retry(spec.to_config().unwrap(), move |_| client.get(&url).send())
                .settings(spec.to_settings().unwrap())
                .budget(budget.clone())
                .classify(|_| Failure::Retryable)
                .classify_ok(|r| classify_status(r.status(), r.headers(), SystemClock.now()))
                .outcome()
        };

        let first = get("/always503").await;
        assert_eq!(first.summary.attempts, 3);
        let error = first.result.unwrap_err();
        assert_eq!(error.reason(), StopReason::BudgetExhausted);
        // The refused response comes back with the reason, as the HTTP layers return it.
        assert_eq!(error.last_value().map(|r| r.status().as_u16()), Some(503));
        assert_eq!(get("/always503").await.summary.attempts, 1);
        assert_eq!(server.count("/always503"), 4);

        let busy = get("/busy").await.result.unwrap_err();
        assert!(matches!(
            busy.reason(),
            StopReason::ServerWaitTooLong { .. }
        ));
        assert_eq!(server.count("/busy"), 1);
    })
    .await;
}

/// A file that asks for hedging builds a hedging layer and a hedging middleware; the retrying
/// layer and the retrying middleware refuse it by name, rather than run it as if it retried.
#[test]
fn a_hedging_table_builds_hedging_integrations_and_the_retrying_layer_refuses_it() {
    let hedged: RetrySpec = toml::from_str(&format!(
        "{SPEC}\n[hedging]\nmax_attempts = 2\ndelay = \"p95\"\n"
    ))
    .unwrap();
    let Err(layer) = RetryLayer::from_spec(&hedged) else {
        panic!("refused");
    };
    assert_eq!(layer.param(), Some("hedging"));
    assert!(
        layer.to_string().contains("HedgeLayer::from_spec"),
        "{layer}"
    );
    assert!(stagger::tower::HedgeLayer::from_spec(&hedged).is_ok());
    let Err(middleware) = RetryMiddleware::from_spec(&hedged) else {
        panic!("refused");
    };
    assert_eq!(middleware.param(), Some("hedging"));
    assert!(stagger::reqwest::HedgedMiddleware::from_spec(&hedged).is_ok());
    // And the other way round: a hedging layer needs the table.
    let Err(plain) = stagger::tower::HedgeLayer::from_spec(&spec()) else {
        panic!("refused");
    };
    assert_eq!(plain.param(), Some("hedging"));
}
