//! A tower [`RetryLayer`] for HTTP clients, driven by the async executor.
//!
//! Wrap any tower service that takes an [`http::Request`] and answers an [`http::Response`]
//! (a hyper-util client, a `tower::ServiceBuilder` stack) and every request it is given runs
//! one retry [`Run`](stagger_core::engine::Run) on the same driver as
//! [`stagger::retry`](crate::retry), so the semantics are the executor's:
//!
//! - **One deadline per request** ([`timeout`](RetryLayer::timeout), or a request's own
//!   [`RetryOverrides`] extension), from the first poll of the request's future, across reading
//!   its body, its attempts and the waits between them. An attempt still in flight when it
//!   passes is cancelled, by dropping the inner service's future. A wait that would not fit is
//!   not started. The deadline ends when the response's head arrives: tower hands the body to
//!   the caller as a stream, and reading it is the caller's, outside the layer (bound it with
//!   the time left, [`RetryReport::summary`] tells how much was spent).
//! - **Responses are classified** with the [HTTP classifier](crate::http) by default: 408,
//!   429, 500, 502, 503 and 504 are retried; `Retry-After` (and its millisecond cousins) on a
//!   429 or 503 is a floor under the next delay, never undercut, and a wait longer than
//!   [`max_server_wait`](RetryLayer::max_server_wait) or the time left stops at once. Pass your
//!   own with [`classify_ok`](RetryLayer::classify_ok).
//! - **The inner service's errors are classified deliberately.** By default ([`ByIoCause`]) by
//!   the I/O error that caused them: a refused connection is retried, a reset connection is
//!   retried for idempotent requests, and an error with no I/O cause is not retried at all.
//!   Pass your own with [`classify`](RetryLayer::classify).
//! - **Idempotency** comes from the request: GET, HEAD, OPTIONS, TRACE, PUT and DELETE, and any
//!   request with an `Idempotency-Key` header ([`is_idempotent`]), unless the layer's settings
//!   or the request's [`RetryOverrides`] say otherwise. Any other request (a POST) is retried
//!   only after a failure known to have had no effect: a refused connection, a 408 or a 429,
//!   never a 503 or a reset.
//! - **One policy per request.** The layer holds a policy configuration and builds a fresh
//!   policy with its own entropy-seeded generator for each request that fails, so requests
//!   never share a jitter sequence. A request's [`RetryOverrides`] may bring its own.
//! - **A shared budget** ([`budget`](RetryLayer::budget)), such as an
//!   `Arc<TokenBucketBudget>`, is asked before every retry and told every outcome, across all
//!   the requests of the service. An `Arc<`[`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination)`>`
//!   keeps one per host and port instead, so that one host's outage spares the others' retries.
//! - **A gate per destination** ([`gate`](RetryLayer::gate)): once a server tells a request to
//!   wait, the other requests to the same host and port wait for paced slots of their own
//!   instead of each meeting the 429 for itself. See [`Gate`].
//! - **Ownership of recovery.** A request whose future first runs inside another executor's
//!   attempt (a `stagger::retry` around this service, or another `RetryService` outside this
//!   one) makes one attempt and leaves recovery to the outer layer, as the executors do; see
//!   [`Nested`] and [`when_nested`](RetryLayer::when_nested). A failed response still comes
//!   back as `Ok(response)`, its report saying
//!   [`OuterLayerOwnsRecovery`](StopReason::OuterLayerOwnsRecovery): the outer executor must
//!   count it as a failure to retry it, by turning it into an error or with
//!   `.classify_ok(|response| ...)` on an operation that returns responses.
//! - **Hedging instead of retrying** ([`hedge`](RetryLayer::hedge), a [`HedgeLayer`]): a copy
//!   of a request that has gone unanswered for a while, to cut the tail a slow server makes;
//!   the first accepted response wins and the others are dropped. Only a request whose body
//!   can be replayed is sent twice, and only an idempotent one is in flight twice. See
//!   [`Hedging`].
//! - **A zero delay does not touch the timer**, and the future yields between such retries.
//! - **A configuration file applies in one call**: [`RetryLayer::from_spec`].
//!
//! # Bodies
//!
//! tower hands a service a request by value, and an HTTP body is a stream that is consumed as
//! it is sent. A service cannot rewind it, and a generic body cannot be cloned, so a request
//! whose body is not known in full **is sent once**, whatever its failure, and the failure
//! goes back to the caller. An empty body (a GET) is known in full and always replayable.
//! [`buffer_bodies(max_bytes)`](RetryLayer::buffer_bodies) opts into reading each body into
//! memory first, up to `max_bytes`, so that it can be replayed; a one-chunk body such as
//! `Full<Bytes>` is kept without copying. A body found larger than that is sent once, the part
//! already read followed by the rest, and a body that fails while being read is sent once and
//! fails the same way.
//!
//! So the inner service receives a [`RetryBody<B>`]: a replayed copy or the caller's body.
//!
//! # What the caller gets
//!
//! - A response the classifier does not call a failure, or the last response when the run
//!   gives up for a reason other than the deadline (the 503 after the last attempt, a 404, a
//!   POST's 503): `Ok(response)`, as without the layer. Its extensions hold a
//!   [`RetryReport`]: attempts, time waited and elapsed, and why the run gave up, if it did.
//! - When the deadline passes, the last attempt failed with an error of the inner service, or
//!   a request's own policy is invalid: `Err(`[`RetryError`](crate::RetryError)`)`, with the reason, the summary,
//!   and the inner service's most recent error, if an attempt ended in one. An error from the
//!   inner service's `poll_ready`, before the request is handed over, is a `RetryError` with no
//!   attempt and [`StopReason::NotRetryable`]: tower treats a service whose readiness failed as
//!   unusable. The same holds for the clone each later attempt is made on: it is made ready
//!   after the wait, under the deadline, and if that fails, the instance is dropped without
//!   being called, the run ends with the readiness error and [`StopReason::NotRetryable`]
//!   (whatever the error classifier would say: a clone usually shares what failed), and the
//!   retry the budget granted goes back to it. A request dropped during a wait gives its
//!   retry back too.
//!
//! Each attempt's request carries its [`Attempt`](stagger_core::engine::Attempt) as an
//! extension: its number and the time left before the deadline, to propagate downstream. It
//! is stamped when the request is handed to the inner service, once that is ready, so a
//! service slow to get ready does not make the request claim time it no longer has.
//!
//! # Runtime
//!
//! With the `tokio` feature, the layer sleeps with tokio's timer and reads tokio's clock.
//! Without it, pass your runtime's sleep with [`sleeper`](RetryLayer::sleeper).
//!
//! # Example
//!
//! ```no_run
//! # #[cfg(feature = "tokio")]
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use stagger::policy::ExponentialFullJitter;
//! use stagger::tower::{RetryBody, RetryLayer};
//! use tower_layer::Layer;
//! use tower_service::Service;
//!
//! let client = Client::builder(TokioExecutor::new()).build_http::<RetryBody<Full<Bytes>>>();
//! let policy = ExponentialFullJitter::new()
//!     .with_base(Duration::from_millis(100))
//!     .with_max_attempts(4);
//! let mut service = RetryLayer::new(policy)?
//!     .timeout(Duration::from_secs(10))
//!     .buffer_bodies(64 * 1024)
//!     .layer(client);
//!
//! let request = http::Request::get("http://localhost:8080/").body(Full::default())?;
//! std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
//! let response = service.call(request).await?;
//! println!("{} after {:?}", response.status(), response.extensions().get::<stagger::tower::RetryReport>());
//! # Ok(())
//! # }
//! ```

mod body;
mod classify;
mod future;
mod hedge_layer;
mod retry_layer;
mod service;

pub use body::RetryBody;
pub use classify::{ByIoCause, io_cause};
pub use future::{HedgeResponseFuture, RetryResponseFuture};
pub use hedge_layer::HedgeLayer;
#[cfg(feature = "serde")]
pub use retry_layer::SpecHooks;
pub use retry_layer::{LayerHooks, RetryLayer};
pub use service::{HedgeService, Layered, RetryService, Serves};

#[cfg(doc)]
use crate::http::is_idempotent;
#[cfg(doc)]
use crate::notify::RetryEvent;
pub use crate::overrides::RetryOverrides;
pub use crate::report::RetryReport;
#[cfg(doc)]
use stagger_core::engine::{Hedging, Nested, StopReason};
#[cfg(doc)]
use stagger_core::gate::Gate;
