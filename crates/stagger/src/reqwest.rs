//! A [reqwest-middleware](reqwest_middleware) [`Middleware`] that retries with the engine's
//! semantics.
//!
//! Add [`RetryMiddleware`] to a `ClientWithMiddleware` and every request runs one retry run,
//! driven by the async executor ([`stagger::retry`](crate::retry)), so it behaves exactly as
//! that executor and as the [tower layer](crate::tower):
//!
//! - **One deadline per request** ([`timeout`](RetryMiddleware::timeout)), across attempts and
//!   waits; an attempt still in flight when it passes is cancelled, and a wait that would not
//!   fit is not started.
//! - **Responses are classified** with the [HTTP rules](crate::http::classify_status): 408,
//!   429, 500, 502, 503 and 504 are retried, and `Retry-After` on a 429 or 503 (seconds or an
//!   HTTP date) is a floor under the next delay, never undercut by jitter. A wait longer than
//!   [`max_server_wait`](RetryMiddleware::max_server_wait) or the time left stops at once.
//! - **Transport errors are classified deliberately:** a failed connection had no effect
//!   ([`Failure::Rejected`]), a timed-out request is a [`Failure::Timeout`], a builder error
//!   or a redirect loop is permanent, and any other error (a reset after sending) is
//!   [`Failure::Retryable`]: the request may have taken effect.
//! - **Idempotency** comes from the request ([`is_idempotent`]: GET, HEAD, OPTIONS, TRACE, PUT,
//!   DELETE, or any method with an `Idempotency-Key`). A POST is retried only after a failure
//!   known to have had no effect (a refused connection, a 408 or a 429), never after a 503.
//! - **A shared budget** ([`budget`](RetryMiddleware::budget)) is asked before every retry.
//! - **Ownership of recovery:** a request sent inside another stagger executor's attempt makes
//!   one attempt ([`when_nested`](RetryMiddleware::when_nested)).
//! - **Per-request overrides** go through request extensions
//!   (`RequestBuilder::with_extension`): a [`RetryOverrides`] sets the policy, the timeout or
//!   the idempotency of one request.
//!
//! A request whose body cannot be cloned (a stream) is sent once, as it is: its bytes are
//! consumed by the first attempt and there is nothing left to send again.
//!
//! # What the caller gets
//!
//! A response the rules do not call a failure, or the last response when the run gives up
//! for any reason but the deadline (the 503 after the last attempt, a POST's 503, a 404):
//! `Ok(response)`, as without the middleware. The last transport error, when the last
//! attempt ended in one: `Err(Error::Reqwest(..))`. When the deadline passes, or the run
//! stopped before any attempt: `Err(Error::Middleware(..))` holding a [`GaveUp`] with the
//! reason and the summary.
//!
//! # Example
//!
//! ```no_run
//! use std::time::Duration;
//! use stagger::policy::ExponentialFullJitter;
//! use stagger::reqwest::{RetryMiddleware, RetryOverrides};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let retry = RetryMiddleware::new(ExponentialFullJitter::new().with_max_attempts(4))?
//!     .timeout(Duration::from_secs(10));
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
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

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use ::reqwest::{Request, Response};
use http::Extensions;
use reqwest_middleware::{Error, Middleware, Next, Result};
use stagger_core::budget::{Budget, Unlimited};
use stagger_core::engine::{StopReason, Summary};
use stagger_core::{AnyConfig, ConfigError, Failure};

use crate::Nested;
use crate::clock::{SystemClock, WallClock};
use crate::http::{classify_status, is_idempotent};

/// Per-request settings, set as a request extension; what is `None` keeps the middleware's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct RetryOverrides {
    /// The policy for this request.
    pub policy: Option<AnyConfig>,
    /// The end-to-end timeout for this request.
    pub timeout: Option<Duration>,
    /// Whether this request may be repeated safely, whatever its method and headers say.
    pub idempotent: Option<bool>,
}

impl RetryOverrides {
    /// No override.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            policy: None,
            timeout: None,
            idempotent: None,
        }
    }

    /// Uses `policy` for this request.
    #[must_use]
    pub fn policy(mut self, policy: impl Into<AnyConfig>) -> Self {
        self.policy = Some(policy.into());
        self
    }

    /// Gives this request its own end-to-end timeout.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Declares this request idempotent, or not.
    #[must_use]
    pub const fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }
}

/// Why a request ended in an error without a response or transport error to return: the
/// deadline passed, or the run stopped before its first attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct GaveUp {
    /// Why the run stopped.
    pub reason: StopReason,
    /// Attempts, time waited and elapsed.
    pub summary: Summary,
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gave up ({}) after {}", self.reason, self.summary)
    }
}

impl StdError for GaveUp {}

/// How one attempt failed.
enum AttemptFailure {
    /// A response the rules call a failure, with its kind.
    Response(Response, Failure),
    /// The client's error, with its kind.
    Transport(Error, Failure),
}

impl AttemptFailure {
    const fn kind(&self) -> Failure {
        match self {
            Self::Response(_, kind) | Self::Transport(_, kind) => *kind,
        }
    }
}

/// The kind of a client error.
fn transport_failure(error: &Error) -> Failure {
    match error {
        Error::Reqwest(e) if e.is_builder() || e.is_redirect() => Failure::Permanent,
        Error::Reqwest(e) if e.is_connect() => Failure::Rejected,
        Error::Reqwest(e) if e.is_timeout() => Failure::Timeout,
        Error::Reqwest(_) => Failure::Retryable,
        // Another middleware's error: not ours to second-guess.
        Error::Middleware(_) => Failure::Permanent,
    }
}

/// A reqwest-middleware [`Middleware`] that retries each request with the engine; see the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct RetryMiddleware<B = Unlimited, W = SystemClock> {
    policy: AnyConfig,
    timeout: Option<Duration>,
    max_server_wait: Option<Duration>,
    nested: Nested,
    budget: B,
    wall: W,
}

impl RetryMiddleware {
    /// Retries under `policy` (any catalog configuration), with no deadline and no budget.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] naming the policy's first invalid parameter.
    pub fn new(policy: impl Into<AnyConfig>) -> std::result::Result<Self, ConfigError> {
        let policy = policy.into();
        policy.validate()?;
        Ok(Self {
            policy,
            timeout: None,
            max_server_wait: None,
            nested: Nested::default(),
            budget: Unlimited,
            wall: SystemClock,
        })
    }
}

impl<B, W> RetryMiddleware<B, W> {
    /// One end-to-end deadline per request, across its attempts and waits.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The longest server-directed wait honoured; a longer one stops the run at once.
    #[must_use]
    pub const fn max_server_wait(mut self, limit: Duration) -> Self {
        self.max_server_wait = Some(limit);
        self
    }

    /// What a request sent inside another stagger executor's attempt does.
    #[must_use]
    pub const fn when_nested(mut self, nested: Nested) -> Self {
        self.nested = nested;
        self
    }

    /// Asks `budget` before every retry and tells it every outcome, across all requests: pass
    /// an `Arc` of one budget to share it.
    #[must_use]
    pub fn budget<B2>(self, budget: B2) -> RetryMiddleware<B2, W> {
        RetryMiddleware {
            policy: self.policy,
            timeout: self.timeout,
            max_server_wait: self.max_server_wait,
            nested: self.nested,
            budget,
            wall: self.wall,
        }
    }

    /// Reads the wall clock, for HTTP-date `Retry-After` values, from `clock`.
    #[must_use]
    pub fn wall_clock<W2>(self, clock: W2) -> RetryMiddleware<B, W2> {
        RetryMiddleware {
            policy: self.policy,
            timeout: self.timeout,
            max_server_wait: self.max_server_wait,
            nested: self.nested,
            budget: self.budget,
            wall: clock,
        }
    }
}

#[async_trait::async_trait]
impl<B, W> Middleware for RetryMiddleware<B, W>
where
    B: Budget + Clone + Send + Sync + 'static,
    W: WallClock + Send + Sync + 'static,
{
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let overrides = extensions
            .get::<RetryOverrides>()
            .copied()
            .unwrap_or_default();
        // A body that cannot be cloned can be sent only once.
        if request.try_clone().is_none() {
            return next.run(request, extensions).await;
        }
        let policy = overrides
            .policy
            .unwrap_or(self.policy)
            .policy()
            .map_err(Error::middleware)?;
        let idempotent = overrides
            .idempotent
            .unwrap_or_else(|| is_idempotent(request.method(), request.headers()));
        let shared: &Extensions = extensions;
        let op = |_attempt| {
            // Cloned above once already, so every clone succeeds; the fallback is never taken.
            let attempt = request.try_clone();
            let mut own = shared.clone();
            let next = next.clone();
            async move {
                let Some(attempt) = attempt else {
                    return Err(AttemptFailure::Transport(
                        Error::middleware(GaveUp {
                            reason: StopReason::NotRetryable,
                            summary: Summary::default(),
                        }),
                        Failure::Permanent,
                    ));
                };
                match next.run(attempt, &mut own).await {
                    Ok(response) => {
                        match classify_status(
                            response.status(),
                            response.headers(),
                            self.wall.now(),
                        ) {
                            None => Ok(response),
                            Some(kind) => Err(AttemptFailure::Response(response, kind)),
                        }
                    }
                    Err(error) => {
                        let kind = transport_failure(&error);
                        Err(AttemptFailure::Transport(error, kind))
                    }
                }
            }
        };
        let mut run = crate::retry(policy, op)
            .classify(AttemptFailure::kind)
            .idempotent(idempotent)
            .when_nested(self.nested)
            .budget(self.budget.clone());
        if let Some(timeout) = overrides.timeout.or(self.timeout) {
            run = run.timeout(timeout);
        }
        if let Some(limit) = self.max_server_wait {
            run = run.max_server_wait(limit);
        }
        match run.await {
            Ok(response) => Ok(response),
            Err(stopped) => {
                let reason = stopped.reason();
                let summary = stopped.summary();
                match stopped.into_last_error() {
                    Some(AttemptFailure::Response(response, _))
                        if reason != StopReason::Deadline =>
                    {
                        Ok(response)
                    }
                    Some(AttemptFailure::Transport(error, _)) if reason != StopReason::Deadline => {
                        Err(error)
                    }
                    _ => Err(Error::middleware(GaveUp { reason, summary })),
                }
            }
        }
    }
}
