//! Retry inside tower: a hyper-util client behind stagger's `RetryLayer`, with a deadline,
//! Retry-After, idempotency and a shared budget.
//!
//! The example starts a small local server whose `/busy` endpoint answers 503 with
//! `Retry-After: 1` once, then 200, and whose `/orders` endpoint answers 503 once, then 201.
//!
//! ```text
//! cargo run -p stagger --example tower_retry --features tower,tokio
//! ```
#![allow(clippy::print_stdout)] // An example prints what it does.

#[cfg(all(feature = "tower", feature = "tokio"))]
#[path = "support/local_server.rs"]
mod local_server;

#[cfg(all(feature = "tower", feature = "tokio"))]
mod example {
    use std::sync::Arc;
    use std::time::Duration;

    use bytes::Bytes;
    use http::{Request, Response};
    use http_body_util::Full;
    use hyper::body::Incoming;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use stagger::budget::{BudgetConfig, TokenBucket};
    use stagger::policy::ExponentialFullJitter;
    use stagger::tower::{RetryBody, RetryLayer, RetryReport};
    use stagger::{Failure, RetryError};
    use tower_layer::Layer;
    use tower_service::Service;

    pub(crate) async fn main() -> Result<(), Box<dyn std::error::Error>> {
        let addr = crate::local_server::serve().await?;

        // The inner service: a real HTTP client, built for the bodies the layer sends.
        let client = Client::builder(TokioExecutor::new()).build_http::<RetryBody<Full<Bytes>>>();

        // One budget for every request of the service: retries stay a small share of traffic.
        let budget = Arc::new(TokenBucket::AWS_STANDARD.budget()?);
        let policy = ExponentialFullJitter::new()
            .with_base(Duration::from_millis(50))
            .with_max_attempts(4);
        let mut service = RetryLayer::new(policy)?
            // One deadline per request, across attempts and waits.
            .timeout(Duration::from_secs(5))
            // Keep bodies up to 64 KiB so that they can be sent again.
            .buffer_bodies(64 * 1024)
            .budget(budget)
            // Classify the client's errors deliberately: hyper-util marks the ones raised
            // before the request was sent, which had no effect.
            .classify(|e: &hyper_util::client::legacy::Error| {
                if e.is_connect() {
                    Failure::Rejected
                } else {
                    stagger::tower::io_cause(e)
                }
            })
            .layer(client);

        // A GET that meets a 503 with Retry-After: 1 is retried, no sooner than a second later.
        let request = Request::get(format!("http://{addr}/busy")).body(Full::default())?;
        show("GET /busy", send(&mut service, request).await);

        // A POST that meets a 503 is not retried: the server may have acted on it.
        let request = Request::post(format!("http://{addr}/orders")).body(Full::from("order-1"))?;
        show("POST /orders", send(&mut service, request).await);

        // With an Idempotency-Key, the server deduplicates repeats, so it is retried.
        let request = Request::post(format!("http://{addr}/orders"))
            .header("idempotency-key", "order-2")
            .body(Full::from("order-2"))?;
        show(
            "POST /orders + Idempotency-Key",
            send(&mut service, request).await,
        );
        Ok(())
    }

    type Outcome = Result<Response<Incoming>, RetryError<hyper_util::client::legacy::Error>>;

    async fn send<S>(service: &mut S, request: Request<Full<Bytes>>) -> Outcome
    where
        S: Service<
                Request<Full<Bytes>>,
                Response = Response<Incoming>,
                Error = RetryError<hyper_util::client::legacy::Error>,
            >,
    {
        std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
        service.call(request).await
    }

    fn show(what: &str, outcome: Outcome) {
        match outcome {
            Ok(response) => {
                let report = response.extensions().get::<RetryReport>();
                let (summary, gave_up) =
                    report.map_or((None, None), |r| (Some(r.summary), r.gave_up));
                match (summary, gave_up) {
                    (Some(summary), None) => {
                        println!("{what}: {} after {summary}", response.status())
                    }
                    (Some(summary), Some(reason)) => {
                        println!(
                            "{what}: {} after {summary}; gave up: {reason}",
                            response.status()
                        );
                    }
                    _ => println!("{what}: {}", response.status()),
                }
            }
            Err(error) => println!("{what}: {error}"),
        }
    }
}

#[cfg(all(feature = "tower", feature = "tokio"))]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    example::main().await
}

#[cfg(not(all(feature = "tower", feature = "tokio")))]
fn main() {
    eprintln!("run with `--features tower,tokio`");
}
