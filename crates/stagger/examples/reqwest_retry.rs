//! Retry a reqwest client: stagger's `RetryMiddleware` in a reqwest-middleware chain, with a
//! deadline, Retry-After, idempotency, a shared budget and a per-request override.
//!
//! The example starts the same local server as `tower_retry`: `/busy` answers 503 with
//! `Retry-After: 1` once, then 200; `/orders` answers 503 once per distinct body, then 201.
//!
//! ```text
//! cargo run -p stagger --example reqwest_retry --features reqwest
//! ```
#![allow(clippy::print_stdout)] // An example prints what it does.

#[cfg(feature = "reqwest")]
#[path = "support/local_server.rs"]
mod local_server;

#[cfg(feature = "reqwest")]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    use std::sync::Arc;
    use std::time::Duration;

    use stagger::budget::{BudgetConfig, TokenBucket};
    use stagger::policy::ExponentialFullJitter;
    use stagger::reqwest::{RetryMiddleware, RetryOverrides, RetryReport};

    let addr = local_server::serve().await?;
    let policy = ExponentialFullJitter::new()
        .with_base(Duration::from_millis(50))
        .with_max_attempts(4);
    let retry = RetryMiddleware::new(policy)?
        // One deadline per request, across attempts and waits.
        .timeout(Duration::from_secs(5))
        // One budget for every request of the client.
        .budget(Arc::new(TokenBucket::AWS_STANDARD.budget()?));
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(retry)
        .build();

    // A GET that meets a 503 with Retry-After: 1 is retried, no sooner than a second later.
    let response = client.get(format!("http://{addr}/busy")).send().await?;
    // Every response says what the middleware did for it.
    if let Some(report) = response.extensions().get::<RetryReport>() {
        println!("GET /busy: {} after {}", response.status(), report.summary);
    }

    // A POST that meets a 503 is not retried: the server may have acted on it.
    let response = client
        .post(format!("http://{addr}/orders"))
        .body("order-1")
        .send()
        .await?;
    println!("POST /orders: {}", response.status());

    // With an Idempotency-Key the server deduplicates repeats, so it is retried; this request
    // also brings its own, shorter deadline.
    let response = client
        .post(format!("http://{addr}/orders"))
        .header("idempotency-key", "order-2")
        .with_extension(RetryOverrides::new().timeout(Duration::from_secs(2)))
        .body("order-2")
        .send()
        .await?;
    println!("POST /orders + Idempotency-Key: {}", response.status());
    Ok(())
}

#[cfg(not(feature = "reqwest"))]
fn main() {
    eprintln!("run with `--features reqwest`");
}
