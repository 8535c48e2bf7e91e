//! A tower [`RetryLayer`] for HTTP clients, driving the retry engine.
//!
//! Wrap any tower service that takes an [`http::Request`] and answers an [`http::Response`]
//! (a hyper-util client, a `tower::ServiceBuilder` stack) and every request it is given runs
//! one retry [`Run`](stagger_core::engine::Run) with the same semantics as
//! [`stagger::retry`](crate::retry):
//!
//! - **One deadline per request** ([`timeout`](RetryLayer::timeout), or a request's own
//!   [`RequestTimeout`] extension), across its attempts and the waits between them. An attempt
//!   still in flight when it passes is cancelled, by dropping the inner service's future. A
//!   wait that would not fit is not started.
//! - **Responses are classified** with the [HTTP classifier](crate::http) by default: 408,
//!   429, 500, 502, 503 and 504 are retried; `Retry-After` (and its millisecond cousins) on a
//!   429 or 503 is a floor under the next delay, never undercut, and a wait longer than
//!   [`max_server_wait`](RetryLayer::max_server_wait) or the time left stops at once. Pass your
//!   own with [`classify_responses`](RetryLayer::classify_responses).
//! - **The inner service's errors are classified deliberately.** By default ([`ByIoCause`]) by
//!   the I/O error that caused them: a refused connection is retried, a reset connection is
//!   retried for idempotent requests, and an error with no I/O cause is not retried at all.
//!   Pass your own with [`classify_errors`](RetryLayer::classify_errors).
//! - **Idempotency** comes from the request: GET, HEAD, OPTIONS, TRACE, PUT and DELETE, and any
//!   request with an `Idempotency-Key` header ([`is_idempotent`]), or an [`Idempotent`]
//!   extension. Any other request (a POST) is retried only after a failure known to have had
//!   no effect: a refused connection, a 408 or a 429, never a 503 or a reset.
//! - **One policy per request.** The layer holds a policy configuration ([`MakePolicy`]) and
//!   builds a fresh policy with its own entropy-seeded generator for each request that fails,
//!   so requests never share a jitter sequence.
//! - **A shared budget** ([`budget`](RetryLayer::budget)), such as an `Arc<TokenBucket>`, is
//!   asked before every retry and told every outcome, across all the requests of the service.
//! - **Ownership of recovery.** A request whose future first runs inside another executor's
//!   attempt (a `stagger::retry` around this service, or another `RetryService` outside this
//!   one) makes one attempt and leaves recovery to the outer layer, as the executors do; see
//!   [`Nested`] and [`when_nested`](RetryLayer::when_nested).
//! - **A zero delay does not touch the timer**, and the future yields between such retries.
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
//! - When the deadline passes, or the last attempt failed with an error of the inner service:
//!   `Err(`[`RetryError`]`)`, with the reason, the summary, and the inner service's last error,
//!   if the last attempt ended in one. An error from the inner service's `poll_ready` is a
//!   `RetryError` too, with one attempt and
//!   [`StopReason::NotRetryable`](stagger_core::engine::StopReason::NotRetryable): tower
//!   treats a service whose readiness failed as unusable.
//!
//! Each attempt's request carries its [`Attempt`](stagger_core::engine::Attempt) as an
//! extension: its number and the time left before the deadline, to propagate downstream.
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

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use stagger_core::engine::{Budget, DEFAULT_MAX_SERVER_WAIT, Unlimited};
use stagger_core::{AnyConfig, Clock, ConfigError};
use tower_layer::Layer;
use tower_service::Service;

pub use body::RetryBody;
pub use classify::{ByIoCause, ClassifyResponse, MakePolicy, io_cause};
pub use future::ResponseFuture;

use crate::classify::Classifier;
use crate::clock::DefaultClock;
use crate::http::HttpClassifier;
#[cfg(doc)]
use crate::http::is_idempotent;
use crate::notify::Notify;
use crate::retry::Nested;
use crate::retry_error::RetryError;
use crate::sleep::{DefaultSleeper, Sleeper};

/// A request extension that overrides the idempotency read from the request's method and
/// headers: `Idempotent(true)` for a POST the server deduplicates by other means,
/// `Idempotent(false)` for a PUT with side effects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Idempotent(pub bool);

/// A request extension that gives this request its own end-to-end timeout, in place of the
/// layer's [`timeout`](RetryLayer::timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RequestTimeout(pub Duration);

pub use crate::report::RetryReport;

/// What an attempt failed with, as a hook given to [`notify`](RetryLayer::notify) sees it.
#[derive(Debug)]
#[non_exhaustive]
pub enum AttemptError<E> {
    /// A response the response classifier called a failure; the response itself is dropped
    /// before the retry.
    Status(http::StatusCode),
    /// An error of the inner service.
    Inner(E),
}

/// The settings a layer hands to each of its services.
#[derive(Clone)]
pub(crate) struct Settings<P, R, C, S, K, B, N> {
    pub(crate) policy: P,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_server_wait: Duration,
    pub(crate) nested: Nested,
    pub(crate) buffer_limit: Option<usize>,
    pub(crate) responses: R,
    pub(crate) errors: C,
    pub(crate) sleeper: S,
    pub(crate) clock: K,
    pub(crate) budget: B,
    pub(crate) notify: N,
}

/// A tower [`Layer`] that retries HTTP requests; see the [module docs](self).
///
/// Its type parameters are the policy configuration `P`, the response classifier `R`, the
/// error classifier `C`, the sleeper `S`, the clock `K`, the budget `B` and the hook `N`. The
/// defaults: no deadline, the HTTP classifier, [`ByIoCause`], a 5-minute longest server wait,
/// one attempt when nested, no buffering, no budget, no hook.
#[derive(Clone)]
#[must_use = "a layer does nothing until it wraps a service"]
pub struct RetryLayer<
    P = AnyConfig,
    R = HttpClassifier,
    C = ByIoCause,
    S = DefaultSleeper,
    K = DefaultClock,
    B = Unlimited,
    N = (),
> {
    settings: Settings<P, R, C, S, K, B, N>,
}

impl<P: MakePolicy> RetryLayer<P> {
    /// A layer that retries under `policy`: any configuration in the catalog, an
    /// [`AnyConfig`], or your own [`MakePolicy`].
    ///
    /// # Errors
    ///
    /// The policy's [`ConfigError`], if it is invalid: checked once, here.
    pub fn new(policy: P) -> Result<Self, ConfigError> {
        policy.validate()?;
        Ok(Self {
            settings: Settings {
                policy,
                timeout: None,
                max_server_wait: DEFAULT_MAX_SERVER_WAIT,
                nested: Nested::SingleAttempt,
                buffer_limit: None,
                responses: HttpClassifier::new(),
                errors: ByIoCause,
                sleeper: DefaultSleeper::default(),
                clock: DefaultClock::default(),
                budget: Unlimited,
                notify: (),
            },
        })
    }
}

impl<P, R, C, S, K, B, N> RetryLayer<P, R, C, S, K, B, N> {
    /// One end-to-end deadline per request, `timeout` after the request's future is first
    /// polled: it covers buffering the body, every attempt and every wait. An attempt in flight
    /// at the deadline is cancelled.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = Some(timeout);
        self
    }

    /// The longest server-directed wait honoured (default 5 minutes). A server asking for more
    /// stops the run, and the caller gets its response.
    pub fn max_server_wait(mut self, limit: Duration) -> Self {
        self.settings.max_server_wait = limit;
        self
    }

    /// What a request does when its future runs inside another executor's attempt (default
    /// [`Nested::SingleAttempt`]: one attempt, recovery left to the outer layer).
    pub fn when_nested(mut self, nested: Nested) -> Self {
        self.settings.nested = nested;
        self
    }

    /// Reads each request body into memory, up to `max_bytes`, so that it can be sent again.
    /// A larger body is sent once. Without this, only empty bodies are replayed.
    pub fn buffer_bodies(mut self, max_bytes: usize) -> Self {
        self.settings.buffer_limit = Some(max_bytes);
        self
    }

    /// Classifies responses with `classifier`: a [`ClassifyResponse`], such as any
    /// `Fn(&Response<B>) -> Option<Failure>`, or an [`HttpClassifier`] with another wall clock.
    pub fn classify_responses<R2>(self, classifier: R2) -> RetryLayer<P, R2, C, S, K, B, N> {
        self.replace(|_, c, s, k, b, n| (classifier, c, s, k, b, n))
    }

    /// Classifies the inner service's errors with `classifier`: any `Fn(&E) -> Failure`.
    /// [`retry_any`](crate::classify::retry_any) retries them all, if you mean it.
    pub fn classify_errors<C2>(self, classifier: C2) -> RetryLayer<P, R, C2, S, K, B, N> {
        self.replace(|r, _, s, k, b, n| (r, classifier, s, k, b, n))
    }

    /// Waits with `sleeper`: any `Fn(Duration) -> impl Future`.
    pub fn sleeper<S2>(self, sleeper: S2) -> RetryLayer<P, R, C, S2, K, B, N> {
        self.replace(|r, c, _, k, b, n| (r, c, sleeper, k, b, n))
    }

    /// Reads time from `clock`, for deadlines, server waits and summaries.
    pub fn clock<K2>(self, clock: K2) -> RetryLayer<P, R, C, S, K2, B, N> {
        self.replace(|r, c, s, _, b, n| (r, c, s, clock, b, n))
    }

    /// Retries only as far as `budget` allows. It is cloned into each request, so share one
    /// budget through an `Arc` (`Arc<TokenBucket>`, `Arc<dyn Budget + Send + Sync>`).
    pub fn budget<B2>(self, budget: B2) -> RetryLayer<P, R, C, S, K, B2, N> {
        self.replace(|r, c, s, k, _, n| (r, c, s, k, budget, n))
    }

    /// Calls `hook` before every retry that will happen; its error is an [`AttemptError`]. It
    /// is cloned into each request.
    pub fn notify<N2>(self, hook: N2) -> RetryLayer<P, R, C, S, K, B, N2> {
        self.replace(|r, c, s, k, b, _| (r, c, s, k, b, hook))
    }

    /// The same layer with some of its parts replaced.
    #[allow(clippy::type_complexity)]
    fn replace<R2, C2, S2, K2, B2, N2>(
        self,
        f: impl FnOnce(R, C, S, K, B, N) -> (R2, C2, S2, K2, B2, N2),
    ) -> RetryLayer<P, R2, C2, S2, K2, B2, N2> {
        let Settings {
            policy,
            timeout,
            max_server_wait,
            nested,
            buffer_limit,
            responses,
            errors,
            sleeper,
            clock,
            budget,
            notify,
        } = self.settings;
        let (responses, errors, sleeper, clock, budget, notify) =
            f(responses, errors, sleeper, clock, budget, notify);
        RetryLayer {
            settings: Settings {
                policy,
                timeout,
                max_server_wait,
                nested,
                buffer_limit,
                responses,
                errors,
                sleeper,
                clock,
                budget,
                notify,
            },
        }
    }
}

impl<Svc, P, R, C, S, K, B, N> Layer<Svc> for RetryLayer<P, R, C, S, K, B, N>
where
    P: Clone,
    R: Clone,
    C: Clone,
    S: Clone,
    K: Clone,
    B: Clone,
    N: Clone,
{
    type Service = RetryService<Svc, P, R, C, S, K, B, N>;

    fn layer(&self, inner: Svc) -> Self::Service {
        RetryService {
            inner,
            settings: Arc::new(self.settings.clone()),
        }
    }
}

impl<P, R, C, S, K, B, N> fmt::Debug for RetryLayer<P, R, C, S, K, B, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_settings(f.debug_struct("RetryLayer"), &self.settings)
    }
}

fn debug_settings<P, R, C, S, K, B, N>(
    mut f: fmt::DebugStruct<'_, '_>,
    settings: &Settings<P, R, C, S, K, B, N>,
) -> fmt::Result {
    f.field("timeout", &settings.timeout)
        .field("max_server_wait", &settings.max_server_wait)
        .field("nested", &settings.nested)
        .field("buffer_limit", &settings.buffer_limit)
        .finish_non_exhaustive()
}

/// The service of a [`RetryLayer`]: retries each request it is given; see the
/// [module docs](self).
pub struct RetryService<
    Svc,
    P = AnyConfig,
    R = HttpClassifier,
    C = ByIoCause,
    S = DefaultSleeper,
    K = DefaultClock,
    B = Unlimited,
    N = (),
> {
    inner: Svc,
    settings: Arc<Settings<P, R, C, S, K, B, N>>,
}

impl<Svc, P, R, C, S, K, B, N> RetryService<Svc, P, R, C, S, K, B, N> {
    /// The inner service.
    pub fn get_ref(&self) -> &Svc {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut Svc {
        &mut self.inner
    }

    /// The inner service, by value.
    pub fn into_inner(self) -> Svc {
        self.inner
    }
}

impl<Svc: Clone, P, R, C, S, K, B, N> Clone for RetryService<Svc, P, R, C, S, K, B, N> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            settings: Arc::clone(&self.settings),
        }
    }
}

impl<Svc: fmt::Debug, P, R, C, S, K, B, N> fmt::Debug for RetryService<Svc, P, R, C, S, K, B, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("RetryService");
        s.field("inner", &self.inner);
        debug_settings(s, &self.settings)
    }
}

impl<Svc, ReqBody, ResBody, P, R, C, S, K, B, N> Service<Request<ReqBody>>
    for RetryService<Svc, P, R, C, S, K, B, N>
where
    Svc: Service<Request<RetryBody<ReqBody>>, Response = Response<ResBody>> + Clone,
    ReqBody: Body,
    P: MakePolicy + Clone,
    R: ClassifyResponse<ResBody>,
    C: Classifier<Svc::Error>,
    S: Sleeper,
    K: Clock,
    B: Budget + Clone,
    N: Notify<AttemptError<Svc::Error>> + Clone,
{
    type Response = Response<ResBody>;
    type Error = RetryError<Svc::Error>;
    type Future = ResponseFuture<Svc, ReqBody, P, R, C, S, K, B, N>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(future::unusable)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        // The instance made ready by `poll_ready` goes with this request; the clone left behind
        // must be made ready again before the next call, as tower requires.
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        ResponseFuture::new(Arc::clone(&self.settings), ready, request)
    }
}
