//! A [reqwest-middleware](reqwest_middleware) [`Middleware`] that retries with the engine's
//! semantics. Built for reqwest 0.13 and reqwest-middleware 0.5; not for wasm32.
//!
//! Add [`RetryMiddleware`] to a `ClientWithMiddleware` and every request runs one retry run,
//! driven by the async executor ([`stagger::retry`](crate::retry)):
//!
//! - **One deadline per request** ([`timeout`](RetryMiddleware::timeout)), across attempts and
//!   waits; an attempt still in flight when it passes is cancelled, and a wait that would not
//!   fit is not started.
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
//!   DELETE, or any method with an `Idempotency-Key`). A POST is retried only after a failure
//!   known to have had no effect (a refused connection, a 408 or a 429), never after a 503.
//! - **A shared budget** ([`budget`](RetryMiddleware::budget)) is asked before every retry.
//! - **Ownership of recovery:** a request sent inside another stagger executor's attempt makes
//!   one attempt ([`when_nested`](RetryMiddleware::when_nested)).
//! - **Per-request overrides** go through request extensions
//!   (`RequestBuilder::with_extension`): a [`RetryOverrides`] sets the policy, the timeout or
//!   the idempotency of one request.
//! - **Extensions:** each attempt runs the rest of the chain with a copy of the request's
//!   extensions holding its [`Attempt`] (its number and the time left, to propagate
//!   downstream); the extensions the last attempt left are handed back to the caller.
//!
//! A request whose body cannot be cloned (a stream) is sent once: its bytes are consumed by
//! the first attempt and there is nothing left to send again. It still runs as a run of one
//! attempt, so the deadline holds and the budget is told.
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
//!   stopped before any attempt: `Err(Error::Middleware(..))` holding a [`GaveUp`] with the
//!   reason, the summary and the last transport error, if any.
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
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ::reqwest::{Request, Response};
use http::Extensions;
use reqwest_middleware::{Error, Middleware, Next, Result};
use stagger_core::budget::{Budget, Unlimited};
use stagger_core::engine::{Attempt, StopReason, Summary};
use stagger_core::policy::NoRetry;
use stagger_core::{AnyConfig, ConfigError, Failure};

use crate::Nested;
use crate::clock::{SystemClock, WallClock};
use crate::http::{classify_status, is_idempotent};
use crate::notify::RetryEvent;
use crate::report::RetryReport;

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

/// Why a request ended in an error rather than a response: the deadline passed, or the run
/// stopped before its first attempt (a budget refused it, or the deadline was already spent).
#[derive(Debug)]
#[non_exhaustive]
pub struct GaveUp {
    /// Why the run stopped.
    pub reason: StopReason,
    /// Attempts, time waited and elapsed.
    pub summary: Summary,
    /// The client's error from the last attempt, if it ended in one; also the
    /// [`source`](StdError::source) of this error.
    pub last_error: Option<Error>,
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gave up ({}) after {}", self.reason, self.summary)
    }
}

impl StdError for GaveUp {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.last_error
            .as_ref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// How one attempt failed.
enum AttemptFailure {
    /// A response the rules call a failure, with its kind (the response itself is held
    /// aside, so that it can be dropped while the run waits).
    Response(Failure),
    /// The client's error, with its kind.
    Transport(Error, Failure),
    /// The request could not be sent again. Not reachable: a streaming request gets one
    /// attempt.
    Unsendable,
}

impl AttemptFailure {
    const fn kind(&self) -> Failure {
        match self {
            Self::Response(kind) | Self::Transport(_, kind) => *kind,
            Self::Unsendable => Failure::Permanent,
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
        // A body that cannot be cloned can be sent only once: a run of one attempt, which
        // still keeps the deadline and tells the budget.
        let replayable = request.body().is_none_or(|body| body.as_bytes().is_some());
        let config = if replayable {
            overrides.policy.unwrap_or(self.policy)
        } else {
            AnyConfig::from(NoRetry::new())
        };
        let policy = config.policy().map_err(Error::middleware)?;
        let idempotent = overrides
            .idempotent
            .unwrap_or_else(|| is_idempotent(request.method(), request.headers()));
        // The last failed response, kept only until a retry is decided: dropping it then
        // releases its connection during the wait. It is returned if the run gives up.
        let held: Mutex<Option<Response>> = Mutex::new(None);
        // The extensions as the last attempt left them, handed back to the caller.
        let last_extensions: Mutex<Option<Extensions>> = Mutex::new(None);
        let snapshot = extensions.clone();
        let mut original = Some(request);
        let op = |attempt: Attempt| {
            let request = if replayable {
                original.as_ref().and_then(Request::try_clone)
            } else {
                original.take()
            };
            let mut own = snapshot.clone();
            own.insert(attempt);
            let next = next.clone();
            let (held, last_extensions) = (&held, &last_extensions);
            async move {
                // Never `None`: a replayable request clones every time, and a streaming one
                // is asked for once.
                let Some(request) = request else {
                    return Err(AttemptFailure::Unsendable);
                };
                let result = next.run(request, &mut own).await;
                *lock(last_extensions) = Some(own);
                match result {
                    Ok(response) => {
                        match classify_status(
                            response.status(),
                            response.headers(),
                            self.wall.now(),
                        ) {
                            None => Ok(response),
                            Some(kind) => {
                                *lock(held) = Some(response);
                                Err(AttemptFailure::Response(kind))
                            }
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
            .budget(self.budget.clone())
            .notify(|_: &RetryEvent<'_, AttemptFailure>| drop(lock(&held).take()));
        if let Some(timeout) = overrides.timeout.or(self.timeout) {
            run = run.timeout(timeout);
        }
        if let Some(limit) = self.max_server_wait {
            run = run.max_server_wait(limit);
        }
        let outcome = run.outcome().await;
        if let Some(own) = lock(&last_extensions).take() {
            *extensions = own;
        }
        let report = |mut response: Response, gave_up| {
            response.extensions_mut().insert(RetryReport {
                summary: outcome.summary,
                gave_up,
            });
            response
        };
        let stopped = match outcome.result {
            Ok(response) => return Ok(report(response, None)),
            Err(stopped) => stopped,
        };
        let (reason, summary) = (stopped.reason(), stopped.summary());
        let gave_up = |last_error| {
            Error::middleware(GaveUp {
                reason,
                summary,
                last_error,
            })
        };
        match stopped.into_last_error() {
            Some(AttemptFailure::Response(_)) if reason != StopReason::Deadline => lock(&held)
                .take()
                .map_or_else(|| Err(gave_up(None)), |r| Ok(report(r, Some(reason)))),
            Some(AttemptFailure::Transport(error, _)) if reason != StopReason::Deadline => {
                Err(error)
            }
            Some(AttemptFailure::Transport(error, _)) => Err(gave_up(Some(error))),
            _ => Err(gave_up(None)),
        }
    }
}

/// Locks `mutex`, recovering the value if a panic elsewhere poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
