//! A [reqwest-middleware](reqwest_middleware) [`Middleware`] that retries with the engine's
//! semantics. Built for reqwest 0.13 and reqwest-middleware 0.5; not for wasm32.
//!
//! Add [`RetryMiddleware`] to a `ClientWithMiddleware` and every request runs one retry run on
//! the async executor's driver ([`stagger::retry`](crate::retry)):
//!
//! - **One deadline per request** ([`timeout`](RetryMiddleware::timeout)), across attempts and
//!   waits, **and the whole response**, body included; reqwest's own timeouts still apply to
//!   each attempt ([below](#timeouts)). An attempt still in flight when the deadline passes is
//!   cancelled, and a wait that would not fit is not started.
//! - **Responses are classified** with the [HTTP rules](crate::http::classify_status): 408,
//!   429, 500, 502, 503 and 504 are retried, and `Retry-After` on a 429 or 503 (seconds or an
//!   HTTP date) is a floor under the next delay, never undercut by jitter. A wait longer than
//!   [`max_server_wait`](RetryMiddleware::max_server_wait) (5 minutes by default) or the time
//!   left stops at once. A failed response is dropped as soon as a retry is decided, so its
//!   connection is not held through the wait.
//! - **Transport errors are classified by reqwest's own tests:** a connection that could not
//!   be made had no effect ([`Failure::Rejected`]; reqwest counts DNS and TLS handshake
//!   failures here too, so those are retried up to the attempt limit, even for a POST), a
//!   timed-out request is a [`Failure::Timeout`], a builder error or a redirect loop is
//!   permanent, and any other error (a reset after sending, a malformed response) is
//!   [`Failure::Retryable`]: the request may have taken effect. The tower layer's default
//!   classifier is stricter and retries only errors with an I/O cause.
//! - **Idempotency** comes from the request ([`is_idempotent`]: GET, HEAD, OPTIONS, TRACE, PUT,
//!   DELETE, or any method with an `Idempotency-Key`), unless the middleware's settings or the
//!   request's [`RetryOverrides`] say otherwise. A POST is retried only after a failure known
//!   to have had no effect (a refused connection, a 408 or a 429), never after a 503.
//! - **A shared budget** ([`budget`](RetryMiddleware::budget)) is asked before every retry, or
//!   one budget per host and port
//!   (`Arc<`[`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination)`>`).
//! - **A gate per destination** ([`gate`](RetryMiddleware::gate)): once a server tells a request
//!   to wait, the other requests to the same host and port wait for paced slots of their own.
//! - **Ownership of recovery:** a request sent inside another stagger executor's attempt makes
//!   one attempt ([`when_nested`](RetryMiddleware::when_nested)). Its failed response still
//!   comes back as `Ok(response)`, reporting
//!   [`OuterLayerOwnsRecovery`](StopReason::OuterLayerOwnsRecovery): the outer executor must
//!   count it as a failure (turn it into an error, or classify it with `.classify_ok`) to
//!   retry it.
//! - **Per-request overrides** go through request extensions
//!   (`RequestBuilder::with_extension`): a [`RetryOverrides`], the same as the tower layer's,
//!   sets the policy, the timeout or the idempotency of one request.
//! - **Hedging instead of retrying** ([`hedge`](RetryMiddleware::hedge)): a copy of a request
//!   that has gone unanswered for a while, to cut the tail a slow server makes; the first
//!   accepted response wins and the others are dropped. Only a request whose body can be
//!   cloned is sent twice, and only an idempotent one is in flight twice. See [`Hedging`](stagger_core::engine::Hedging).
//! - **A hook** ([`notify`](RetryMiddleware::notify)) hears every retry before its wait.
//! - **Extensions:** each attempt runs the rest of the chain with a copy of the request's
//!   extensions holding its [`Attempt`] (its number and the time left, to propagate
//!   downstream); the extensions the last attempt left are handed back to the caller.
//! - **A configuration file applies in one call**: [`RetryMiddleware::from_spec`].
//!
//! A request whose body cannot be cloned (a stream) is sent once: its bytes are consumed by
//! the first attempt and there is nothing left to send again. It still runs as a run of one
//! attempt, so the deadline holds and the budget is told.
//!
//! # Timeouts
//!
//! The middleware never sets or changes a request's reqwest timeout. Each attempt gets:
//!
//! - **reqwest's own timeout, as without the middleware:** the request's
//!   (`RequestBuilder::timeout`), or else the client's (`reqwest::ClientBuilder::timeout`),
//!   over the headers and the body. A client built with a 200 ms timeout cuts each attempt at
//!   200 ms under a 10 s deadline, and the attempt is retried as any timeout is: a GET is, a
//!   POST is not. The caller gets reqwest's timeout error when the run ends on it.
//! - **at most the time it has** ([`Attempt::remaining`]): the time left before the deadline,
//!   or the [`attempt_timeout`](RetryMiddleware::attempt_timeout) if that is shorter. An
//!   attempt whose response has not come by then is cancelled, and counts as a timeout.
//! - **its body under the same limit:** with a deadline or an attempt timeout, the response is
//!   handed back with its body read under the time the attempt had when it started (on
//!   tokio's clock). A body still arriving then fails: reading it (`text`, `bytes`, `chunk`)
//!   returns an error for which `reqwest::Error::is_timeout` is true. The response is
//!   otherwise the one reqwest returned, its URL, headers and extensions included. Without a
//!   deadline or an attempt timeout the response is handed back untouched.
//!
//! # What the caller gets
//!
//! - A response the rules do not call a failure: `Ok(response)`, as without the middleware.
//! - The last response when the run gives up for any reason but the deadline (the 503 after
//!   the last attempt, a POST's 503, a `Retry-After` too long to honour): `Ok(response)`.
//! - Either response carries a [`RetryReport`] in its extensions: attempts, time waited and
//!   elapsed, and why the run gave up, if it did.
//! - The last transport error, when the last attempt ended in one: `Err(Error::Reqwest(..))`.
//! - When the deadline passes (a response that arrives at or after it included), or the run
//!   stopped before any attempt: `Err(Error::Middleware(..))` holding a
//!   [`RetryError<reqwest_middleware::Error>`](RetryError) with the reason, the summary and the
//!   most recent transport error, if any.
//! - An invalid per-request policy: `Err(Error::Middleware(..))` holding its
//!   [`ConfigError`], before any attempt.
//!
//! # Example
//!
//! ```no_run
//! use std::time::Duration;
//! use stagger::policy::ExponentialFullJitter;
//! use stagger::reqwest::{RetryMiddleware, RetryOverrides};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! // The client's own timeout still cuts each attempt, here at 1 s.
//! let inner = reqwest::Client::builder()
//!     .timeout(Duration::from_secs(1))
//!     .build()?;
//! let retry = RetryMiddleware::new(ExponentialFullJitter::new().with_max_attempts(4))?
//!     // One deadline per request, across its attempts and waits, body included.
//!     .timeout(Duration::from_secs(10))
//!     .notify(|event| eprintln!("retrying after {:?}", event.failure));
//! let client = reqwest_middleware::ClientBuilder::new(inner)
//!     .with(retry)
//!     .build();
//! let response = client
//!     .get("http://localhost:8080/status")
//!     .with_extension(RetryOverrides::new().timeout(Duration::from_secs(2)))
//!     .send()
//!     .await?;
//! # let _ = response;
//! # Ok(())
//! # }
//! ```

mod body;
mod classify;
mod hedged;
mod middleware;
mod request;

pub use classify::ByTransport;
pub use hedged::HedgedMiddleware;
#[cfg(feature = "serde")]
pub use middleware::SpecHooks;
pub use middleware::{MiddlewareHooks, RequestHooks, RetryMiddleware};

pub use crate::overrides::RetryOverrides;
pub use crate::report::RetryReport;
#[cfg(doc)]
use crate::{RetryError, http::is_idempotent};
#[cfg(doc)]
use reqwest_middleware::{Error, Middleware};
#[cfg(doc)]
use stagger_core::{
    ConfigError, Failure,
    engine::{Attempt, StopReason},
};
