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
//!   cloned is sent twice, and only an idempotent one is in flight twice. See [`Hedging`].
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

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use ::reqwest::{Request, Response, ResponseBuilderExt};
use http::Extensions;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use reqwest_middleware::{Error, Middleware, Next, Result};
use stagger_core::budget::{PerDestination, Unlimited};
#[cfg(feature = "serde")]
use stagger_core::config::SpecPerDestination;
use stagger_core::engine::{Attempt, StopReason};
use stagger_core::sketch::LatencySketch;
use stagger_core::{AnyConfig, ConfigError, Failure, PolicyConfig, SeededRng};

use crate::classify::{Classifier, ClassifyOk};
use crate::clock::{Clock, TokioClock, WallClock};
use crate::future::RetryOutcomeFuture;
use crate::hedge::Hedges;
use crate::hooks::{HookSet, Hooks};
use crate::http::{HttpClassifier, is_idempotent};
use crate::notify::Notify;
use crate::operation::AsyncFn;
pub use crate::overrides::RetryOverrides;
pub use crate::report::RetryReport;
use crate::report::{self, Reported};
use crate::retry::Parts;
use crate::retry_error::{Last, RetryError};
use crate::setup::Setup;
use crate::sleep::{Sleeper, TokioSleeper};

impl Reported for Response {
    fn extensions_mut(&mut self) -> &mut Extensions {
        Response::extensions_mut(self)
    }
}

/// The reqwest middleware's error classifier: a client error by reqwest's own tests, as the
/// [module docs](self) list them. A connection that could not be made had no effect
/// ([`Failure::Rejected`]), a timed-out request is a [`Failure::Timeout`], a builder error or a
/// redirect loop is permanent, another middleware's error is not second-guessed (permanent),
/// and any other error is [`Failure::Retryable`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ByTransport;

impl Classifier<Error> for ByTransport {
    #[inline]
    fn classify(&self, error: &Error) -> Failure {
        match error {
            Error::Reqwest(e) if e.is_builder() || e.is_redirect() => Failure::Permanent,
            Error::Reqwest(e) if e.is_connect() => Failure::Rejected,
            Error::Reqwest(e) if e.is_timeout() => Failure::Timeout,
            Error::Reqwest(_) => Failure::Retryable,
            // Another middleware's error: not ours to second-guess.
            Error::Middleware(_) => Failure::Permanent,
        }
    }
}

/// The hooks of a [`RetryMiddleware`]: client errors by reqwest's tests ([`ByTransport`]),
/// responses by the HTTP rules on the operating system's wall clock ([`HttpClassifier`]),
/// tokio's sleep and clock, no budget, no hook.
pub type MiddlewareHooks = Hooks<ByTransport, HttpClassifier, TokioSleeper, TokioClock>;

/// The hooks of a middleware built from a configuration file: the defaults, with the file's
/// budget, if it names one.
#[cfg(feature = "serde")]
pub type SpecHooks =
    Hooks<ByTransport, HttpClassifier, TokioSleeper, TokioClock, SpecPerDestination>;

/// A reqwest-middleware [`Middleware`] that retries each request with the engine; see the
/// [module docs](self).
///
/// `P` is the policy configuration (any configuration of the catalog, an [`AnyConfig`], or your
/// own [`PolicyConfig`]), `H` the [`Hooks`]: the classifiers, the sleeper, the clock, the budget
/// and the retry hook. Its settings are every front end's (see the [list](crate::surface)).
#[derive(Clone, Debug)]
pub struct RetryMiddleware<P = AnyConfig, H = MiddlewareHooks> {
    policy: P,
    setup: Setup<H>,
}

/// A reqwest-middleware [`Middleware`] that hedges each request:
/// [`RetryMiddleware::hedge`].
#[derive(Clone, Debug)]
pub struct HedgedMiddleware<P = AnyConfig, H = MiddlewareHooks> {
    retry: RetryMiddleware<P, H>,
    hedges: Hedges,
}

/// The hooks a middleware starts with: [`MiddlewareHooks`].
const fn middleware_hooks() -> MiddlewareHooks {
    Hooks {
        classifier: ByTransport,
        ok: HttpClassifier::new(),
        sleeper: TokioSleeper,
        clock: TokioClock::new(),
        budget: Unlimited,
        notify: (),
    }
}

impl<P, H> RetryMiddleware<P, H> {
    /// A middleware of `policy` and `setup`.
    const fn with_parts(policy: P, setup: Setup<H>) -> Self {
        Self { policy, setup }
    }

    /// The same middleware with the setup `f` makes of its own: every setting that changes
    /// the middleware's type is one call of this.
    #[inline]
    fn with_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> RetryMiddleware<P, H2> {
        RetryMiddleware {
            policy: self.policy,
            setup: f(self.setup),
        }
    }
}

impl<P: PolicyConfig> RetryMiddleware<P> {
    /// Retries under `policy`, with no deadline and no budget. Each request builds a policy of
    /// its own from it, with its own generator, when it first fails.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] naming the policy's first invalid parameter.
    pub fn new(policy: P) -> std::result::Result<Self, ConfigError> {
        policy.validate()?;
        Ok(Self::with_parts(policy, Setup::new(middleware_hooks())))
    }
}

#[cfg(feature = "serde")]
impl RetryMiddleware<AnyConfig, SpecHooks> {
    /// A middleware as a configuration file describes it, in one call: its policy, its
    /// [`Settings`](stagger_core::engine::Settings) and its budget (one budget, shared by every
    /// request of the client, or one per host and port with `budget_per_destination`), behind a
    /// gate per host and port if the file has a `gate`
    /// ([`RetrySpec::to_budgets`](stagger_core::config::RetrySpec::to_budgets)).
    ///
    /// ```
    /// use stagger::config::RetrySpec;
    /// use stagger::reqwest::RetryMiddleware;
    ///
    /// let spec: RetrySpec = serde_json::from_str(r#"{"preset": "aws-standard", "budget": "aws-standard"}"#)?;
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(RetryMiddleware::from_spec(&spec)?)
    ///     .build();
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field; a file with a `hedging` table
    /// is refused (build it with [`HedgedMiddleware::from_spec`]).
    pub fn from_spec(
        spec: &stagger_core::config::RetrySpec,
    ) -> std::result::Result<Self, ConfigError> {
        spec.refuse_hedging(
            "the file hedges: build the middleware with HedgedMiddleware::from_spec",
        )?;
        Self::from_spec_retrying(spec)
    }

    /// [`from_spec`](RetryMiddleware::from_spec) without the check for hedging.
    fn from_spec_retrying(
        spec: &stagger_core::config::RetrySpec,
    ) -> std::result::Result<Self, ConfigError> {
        let (policy, setup) = crate::setup::from_spec(spec, middleware_hooks())?;
        Ok(Self::with_parts(policy, setup))
    }
}

#[cfg(feature = "serde")]
impl HedgedMiddleware<AnyConfig, SpecHooks> {
    /// A hedging middleware as a configuration file with a `hedging` table describes it, in
    /// one call: [`RetryMiddleware::from_spec`], then [`hedge`](RetryMiddleware::hedge) by the
    /// table.
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field; a file without a `hedging`
    /// table is [`ConfigError::Unusable`] (use [`RetryMiddleware::from_spec`]).
    pub fn from_spec(
        spec: &stagger_core::config::RetrySpec,
    ) -> std::result::Result<Self, ConfigError> {
        let Some(hedging) = spec.to_hedging()? else {
            return Err(ConfigError::Unusable {
                param: "hedging",
                reason: "the file does not hedge: build the middleware with RetryMiddleware::from_spec",
            });
        };
        Ok(RetryMiddleware::from_spec_retrying(spec)?.hedge(hedging))
    }
}

impl<P, H> crate::surface::Fails<Error> for RetryMiddleware<P, H> {}

impl<P, H> crate::surface::Succeeds<Response> for RetryMiddleware<P, H> {}

crate::surface::surface! {
    front: RetryMiddleware<P>,
    generics: [P,],
    where: [],
    setup: |this| this.setup,
    map: with_setup,
    sleeper: [Sized],
    budget: [Sized],
    gate: [],
}

crate::surface::hedge_setting! {
    front: RetryMiddleware<P>,
    hedged: HedgedMiddleware<P, H>,
    generics: [P,],
    where: [],
}

impl<P, H> crate::surface::Hedge<HedgedMiddleware<P, H>> for RetryMiddleware<P, H> {
    const MANY_REQUESTS: bool = true;

    fn hedged(self, hedges: Hedges) -> HedgedMiddleware<P, H> {
        HedgedMiddleware {
            retry: self,
            hedges,
        }
    }
}

impl<P, H> HedgedMiddleware<P, H> {
    /// Measures the hedged attempts' latencies into `latencies` (shared with other clients or
    /// executors, say), and takes a delay at a quantile from it.
    #[must_use]
    pub fn latencies(mut self, latencies: Arc<LatencySketch>) -> Self {
        self.hedges.latencies(latencies);
        self
    }
}

/// The classifier a middleware's response rules are, by default: the HTTP rules, at the time
/// the classifier's wall clock reads.
impl<W: WallClock> ClassifyOk<Response> for HttpClassifier<W> {
    type Kept = Response;

    #[inline]
    fn classify_ok(&self, response: &Response) -> Option<Failure> {
        self.classify_answer(response.status(), response.headers())
    }

    #[inline]
    fn keep(response: Response) -> Option<Response> {
        Some(response)
    }
}

#[async_trait::async_trait]
impl<P, H> Middleware for RetryMiddleware<P, H>
where
    P: PolicyConfig + Send + Sync + 'static,
    P::Policy<SeededRng>: Send,
    H: RequestHooks,
{
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        handle(self, None, request, extensions, next).await
    }
}

#[async_trait::async_trait]
impl<P, H> Middleware for HedgedMiddleware<P, H>
where
    P: PolicyConfig + Send + Sync + 'static,
    P::Policy<SeededRng>: Send,
    H: RequestHooks,
{
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        handle(&self.retry, Some(&self.hedges), request, extensions, next).await
    }
}

/// Hooks a middleware can run each request with: each part shared by the client's requests
/// (`Send + Sync + 'static`), and fit for reqwest's responses and reqwest-middleware's errors.
/// Every [`Hooks`] whose parts fit is one.
#[diagnostic::on_unimplemented(
    message = "the middleware's hooks do not fit reqwest's responses and errors, or are not `Clone + Send + Sync + 'static`",
    note = "classifiers take `&reqwest_middleware::Error` and `&reqwest::Response`: `.classify(|e| ...)`, `.classify_ok(|response| ...)`"
)]
pub trait RequestHooks:
    HookSet<
        Classifier: Classifier<Error> + Clone + Send + Sync + 'static,
        Ok: ClassifyOk<Response, Kept = Response> + Send + Sync + 'static,
        Sleeper: Sleeper<Sleep: Send> + Clone + Send + Sync + 'static,
        Clock: Clock + Clone + Send + Sync + 'static,
        Budget: PerDestination<Budget: Send> + Send + Sync + 'static,
        Notify: Notify<Response, Error> + Clone + Send + Sync + 'static,
    >
    + Send
    + Sync
    + 'static
    + sealed::Sealed
{
}

impl<C, V, S, K, B, N> RequestHooks for Hooks<C, V, S, K, B, N>
where
    C: Classifier<Error> + Clone + Send + Sync + 'static,
    V: ClassifyOk<Response, Kept = Response> + Send + Sync + 'static,
    S: Sleeper + Clone + Send + Sync + 'static,
    S::Sleep: Send,
    K: Clock + Clone + Send + Sync + 'static,
    B: PerDestination + Send + Sync + 'static,
    B::Budget: Send,
    N: Notify<Response, Error> + Clone + Send + Sync + 'static,
{
}

mod sealed {
    /// Keeps [`RequestHooks`](super::RequestHooks) implemented by [`Hooks`](super::Hooks)
    /// alone.
    pub trait Sealed {}

    impl<C, V, S, K, B, N> Sealed for super::Hooks<C, V, S, K, B, N> {}
}

/// One request through `middleware`, hedged by `hedges` if given: a run on the async driver.
async fn handle<P, H>(
    middleware: &RetryMiddleware<P, H>,
    hedges: Option<&Hedges>,
    request: Request,
    extensions: &mut Extensions,
    next: Next<'_>,
) -> Result<Response>
where
    P: PolicyConfig + Send + Sync + 'static,
    P::Policy<SeededRng>: Send,
    H: RequestHooks,
{
    let Setup { settings, hooks } = &middleware.setup;
    let hooks = hooks.parts();
    let (policy, settings) = RetryOverrides::apply(
        extensions.get::<RetryOverrides>(),
        middleware.policy,
        *settings,
        || is_idempotent(request.method(), request.headers()),
    );
    // A body that cannot be cloned can be sent only once: a run of one attempt, which still
    // keeps the deadline and tells the budget.
    let replayable = request.body().is_none_or(|body| body.as_bytes().is_some());
    let budget = hooks
        .budget
        .for_destination(|| url_destination(request.url()));
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
        let last_extensions = &last_extensions;
        async move {
            // Never `None`: a replayable request clones every time, and a streaming one is
            // asked for once.
            let Some(request) = request else {
                return Err(Error::middleware(io::Error::other(
                    "the request's body cannot be sent again",
                )));
            };
            // The request's reqwest timeout is left alone: reqwest applies the request's own,
            // or else the client's, which a middleware cannot read. The driver cuts the wait
            // for the response at the time the attempt has; the body is read under the same
            // limit, from the attempt's start, on tokio's clock.
            let limit = attempt.remaining.map(tokio::time::sleep);
            let result = next.run(request, &mut own).await;
            *lock(last_extensions) = Some(own);
            match limit {
                Some(limit) => result.map(|response| read_under(response, limit)),
                None => result,
            }
        }
    };
    // The request's hooks: the middleware's, its budget for the request's destination, and its
    // response classifier borrowed.
    let hooks = Hooks {
        classifier: hooks.classifier.clone(),
        ok: Borrowed(hooks.ok),
        sleeper: hooks.sleeper.clone(),
        clock: hooks.clock.clone(),
        budget,
        notify: hooks.notify.clone(),
    };
    let mut parts =
        Parts::new(AsyncFn(op), policy, hooks).attempt_limit(if replayable { u32::MAX } else { 1 });
    parts.setup.settings = settings;
    let outcome = match hedges {
        None => RetryOutcomeFuture::new(parts).await,
        Some(hedges) => hedges.clone().hedge(parts).outcome().await,
    };
    if let Some(own) = lock(&last_extensions).take() {
        *extensions = own;
    }
    let error = match report::settle(outcome) {
        Ok(response) => return Ok(response),
        Err(error) => error,
    };
    let (stopped, last) = error.into_parts();
    Err(match last {
        // As without the middleware: the client's own error.
        Last::Error(error) if stopped.reason != StopReason::Deadline => error,
        Last::Invalid(error) => Error::middleware(*error),
        last => Error::middleware(RetryError::new(stopped, last)),
    })
}

/// A request's response classifier: the middleware's, borrowed.
struct Borrowed<'a, V>(&'a V);

impl<V: ClassifyOk<Response>> ClassifyOk<Response> for Borrowed<'_, V> {
    type Kept = V::Kept;

    #[inline]
    fn classify_ok(&self, response: &Response) -> Option<Failure> {
        self.0.classify_ok(response)
    }

    #[inline]
    fn keep(response: Response) -> Option<V::Kept> {
        V::keep(response)
    }
}

/// `response`, its body read under `limit`: the time its attempt had, from the attempt's start.
/// Everything else is the response reqwest returned: its status, headers, extensions and URL.
fn read_under(response: Response, limit: tokio::time::Sleep) -> Response {
    let url = response.url().clone();
    let (mut parts, body) = http::Response::<::reqwest::Body>::from(response).into_parts();
    // The conversion back takes the URL from an extension that only `ResponseBuilderExt::url`
    // can set.
    if let Some(carrier) = http::response::Builder::new().url(url).extensions_mut() {
        parts.extensions.extend(std::mem::take(carrier));
    }
    let body = ::reqwest::Body::wrap(UnderLimit { body, limit });
    Response::from(http::Response::from_parts(parts, body))
}

pin_project! {
    /// A response body that fails with a timeout once `limit` has passed before it ended.
    struct UnderLimit<B> {
        #[pin]
        body: B,
        #[pin]
        limit: tokio::time::Sleep,
    }
}

impl<B> Body for UnderLimit<B>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        // As reqwest's own timeout: once the time is up, the body fails, read or not. An I/O
        // error of kind `TimedOut` makes the caller's `reqwest::Error::is_timeout` true.
        if this.limit.poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(io::Error::new(
                io::ErrorKind::TimedOut,
                "the response body did not end within the retry deadline or attempt timeout",
            )))));
        }
        this.body.poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The destination of a request to `url`, as [`destination`](crate::http::destination) keys
/// one: its host in lower case and its port.
fn url_destination(url: &::reqwest::Url) -> Arc<str> {
    let port = url
        .port()
        .or_else(|| crate::http::default_port(url.scheme()));
    crate::http::destination_key(url.host_str().unwrap_or(""), port)
}

/// Locks `mutex`, recovering the value if a panic elsewhere poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
