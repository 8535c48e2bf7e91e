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
use std::time::Duration;

use ::reqwest::{Request, Response, ResponseBuilderExt};
use http::Extensions;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use reqwest_middleware::{Error, Middleware, Next, Result};
use stagger_core::budget::{PerDestination, Unlimited};
#[cfg(feature = "serde")]
use stagger_core::config::SpecPerDestination;
use stagger_core::engine::{Attempt, Hedging, Nested, Settings, StopReason};
use stagger_core::gate::{Gate, GatedPerDestination};
use stagger_core::sketch::LatencySketch;
use stagger_core::{AnyConfig, ConfigError, Failure, PolicyConfig, SeededRng};

use crate::classify::{Classifier, ClassifyOk};
use crate::clock::{TokioClock, WallClock};
use crate::hedge::Hedges;
use crate::hooks::Hooks;
use crate::http::{HttpClassifier, is_idempotent};
use crate::notify::{Notify, RetryEvent};
use crate::operation::AsyncFn;
pub use crate::overrides::RetryOverrides;
pub use crate::report::RetryReport;
use crate::report::{self, Reported};
use crate::retry::Retry;
use crate::retry_error::{Last, RetryError};
use crate::setup::Setup;
use crate::sleep::TokioSleeper;

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
/// own [`PolicyConfig`]), `H` the [`Hooks`]: the budget, the retry hook, and the wall clock
/// HTTP-date `Retry-After` values are measured with (in its [`HttpClassifier`]), beside the
/// fixed classifier of client errors, tokio's sleep and tokio's clock.
#[derive(Clone, Debug)]
pub struct RetryMiddleware<P = AnyConfig, H = MiddlewareHooks> {
    policy: P,
    setup: Setup<H>,
    /// Hedging instead of retrying.
    hedging: Option<Hedging>,
    /// The latencies a delay at a quantile reads, and hedged attempts are measured into.
    latencies: Option<Arc<LatencySketch>>,
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
    /// A middleware of `policy` and `setup`, retrying.
    const fn with_parts(policy: P, setup: Setup<H>) -> Self {
        Self {
            policy,
            setup,
            hedging: None,
            latencies: None,
        }
    }

    /// The same middleware with the setup `f` makes of its own: every setter that changes the
    /// middleware's type is one call of this.
    #[inline]
    fn with_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> RetryMiddleware<P, H2> {
        RetryMiddleware {
            policy: self.policy,
            setup: f(self.setup),
            hedging: self.hedging,
            latencies: self.latencies,
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
    /// [`Settings`] and its budget (one budget, shared by every request of the client, or one
    /// per host and port with `budget_per_destination`), behind a gate per host and port if
    /// the file has a `gate`
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
    /// The first [`ConfigError`] of the file, naming the field.
    pub fn from_spec(
        spec: &stagger_core::config::RetrySpec,
    ) -> std::result::Result<Self, ConfigError> {
        let (policy, setup) = crate::setup::from_spec(spec, middleware_hooks())?;
        let middleware = Self::with_parts(policy, setup);
        Ok(match spec.to_hedging()? {
            Some(hedging) => middleware.hedge(hedging),
            None => middleware,
        })
    }
}

impl<P, C, V, S, K, B, N> RetryMiddleware<P, Hooks<C, V, S, K, B, N>> {
    /// Replaces every setting: the deadline, idempotency, the longest server wait and what to
    /// do when nested. Idempotency left unset is read from each request.
    #[must_use]
    pub const fn settings(mut self, settings: Settings) -> Self {
        self.setup.settings(settings);
        self
    }

    /// One end-to-end deadline per request, across its attempts and waits, until its body has
    /// been read.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.setup.timeout(timeout);
        self
    }

    /// A timeout for each attempt, within the deadline: an attempt still waiting for its
    /// response `timeout` after it started is cancelled and counts as a timeout, retried as any
    /// timeout is (only for an idempotent request), and its body must have been read by then.
    /// reqwest's own timeout, the request's or the client's, still applies to each attempt
    /// when it is shorter ([Timeouts](self#timeouts)).
    #[must_use]
    pub const fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.setup.attempt_timeout(timeout);
        self
    }

    /// The longest server-directed wait honoured; a longer one stops the run at once.
    #[must_use]
    pub const fn max_server_wait(mut self, limit: Duration) -> Self {
        self.setup.max_server_wait(limit);
        self
    }

    /// What a request sent inside another stagger executor's attempt does.
    #[must_use]
    pub const fn when_nested(mut self, nested: Nested) -> Self {
        self.setup.when_nested(nested);
        self
    }

    /// Asks `budget` before every retry and tells it every outcome, across all requests: any
    /// [`PerDestination`]. Pass an `Arc` of one budget to share it, or an
    /// `Arc<`[`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination)`>` to give each
    /// host and port a budget of its own, so that one host's outage cannot spend the retries of
    /// another.
    #[must_use]
    pub fn budget<B2>(self, budget: B2) -> RetryMiddleware<P, Hooks<C, V, S, K, B2, N>> {
        self.with_setup(|setup| setup.budget(budget))
    }

    /// Paces the requests to each host and port through `gate`: once a server tells any
    /// request to it to wait, every other request to it waits for a paced slot of its own,
    /// first attempts included, and gives up at once if that slot would come after its
    /// deadline. Set the budget first: it stays behind the gate, each request's a
    /// [`GatedBudget`](stagger_core::gate::GatedBudget) under its own key. See [`Gate`]. (An
    /// executor, which calls one destination, names its key: `Retry::gate_to(gate, key)`.)
    #[must_use]
    #[allow(clippy::type_complexity)] // The builder's type, one part wrapped.
    pub fn gate(
        self,
        gate: Arc<Gate>,
    ) -> RetryMiddleware<P, Hooks<C, V, S, K, GatedPerDestination<B>, N>> {
        self.with_setup(|setup| setup.gate_per_destination(gate))
    }

    /// Calls `hook` before every retry that will happen, with the attempt, what it returned
    /// (the refused response, or the client's error), the delay and the time left; its
    /// argument is inferred. It is cloned for each request.
    #[must_use]
    pub fn notify<N2>(self, hook: N2) -> RetryMiddleware<P, Hooks<C, V, S, K, B, N2>>
    where
        N2: FnMut(&RetryEvent<'_, Response, Error>) + Clone + Send + Sync + 'static,
    {
        self.notifier(hook)
    }

    /// Tells `notifier`, a [`Notify`] of any type, of every retry and of every give-up.
    #[must_use]
    pub fn notifier<N2>(self, notifier: N2) -> RetryMiddleware<P, Hooks<C, V, S, K, B, N2>>
    where
        N2: Notify<Response, Error> + Clone + Send + Sync + 'static,
    {
        self.with_setup(|setup| setup.notify(notifier))
    }

    /// Hedges each request instead of retrying it
    /// ([`Retry::hedge`](crate::Retry::hedge)): sends a copy of the request when it has gone
    /// unanswered for `hedging`'s delay, takes the first response the classifier accepts, and
    /// drops the others, which cancels them. Every hedge is a retry to the budget; a request
    /// whose body cannot be cloned is sent once, and one that is not idempotent is never in
    /// flight twice. A delay at a latency quantile reads one [`LatencySketch`] per middleware
    /// (give your own with [`latencies`](RetryMiddleware::latencies)).
    #[must_use]
    pub fn hedge(self, hedging: Hedging) -> Self {
        let Hedges { hedging, latencies } = Hedges::for_requests(hedging, self.latencies);
        Self {
            hedging: Some(hedging),
            latencies,
            ..self
        }
    }

    /// Measures the hedged attempts' latencies into `latencies` (shared with other clients or
    /// executors, say), and takes a delay at a quantile from it, whether given before or after
    /// [`hedge`](RetryMiddleware::hedge). A middleware that retries does not use it.
    #[must_use]
    pub fn latencies(mut self, latencies: Arc<LatencySketch>) -> Self {
        self.latencies = Some(latencies);
        self
    }

    /// Reads the wall clock, for HTTP-date `Retry-After` values, from `clock`.
    #[must_use]
    #[allow(clippy::type_complexity)] // The builder's type, one part replaced.
    pub fn wall_clock<W2>(
        self,
        clock: W2,
    ) -> RetryMiddleware<P, Hooks<C, HttpClassifier<W2>, S, K, B, N>> {
        self.with_setup(|setup| setup.ok(HttpClassifier::with_clock(clock)))
    }
}

#[async_trait::async_trait]
impl<P, W, B, N> Middleware
    for RetryMiddleware<P, Hooks<ByTransport, HttpClassifier<W>, TokioSleeper, TokioClock, B, N>>
where
    P: PolicyConfig + Send + Sync + 'static,
    P::Policy<SeededRng>: Send,
    B: PerDestination + Send + Sync + 'static,
    B::Budget: Send,
    N: Notify<Response, Error> + Clone + Send + Sync + 'static,
    W: WallClock + Send + Sync + 'static,
{
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let Setup { settings, hooks } = &self.setup;
        let (policy, settings) = RetryOverrides::apply(
            extensions.get::<RetryOverrides>(),
            self.policy,
            *settings,
            || is_idempotent(request.method(), request.headers()),
        );
        // A body that cannot be cloned can be sent only once: a run of one attempt, which
        // still keeps the deadline and tells the budget.
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
                // The request's reqwest timeout is left alone: reqwest applies the request's
                // own, or else the client's, which a middleware cannot read. The driver cuts
                // the wait for the response at the time the attempt has; the body is read
                // under the same limit, from the attempt's start, on tokio's clock.
                let limit = attempt.remaining.map(tokio::time::sleep);
                let result = next.run(request, &mut own).await;
                *lock(last_extensions) = Some(own);
                match limit {
                    Some(limit) => result.map(|response| read_under(response, limit)),
                    None => result,
                }
            }
        };
        // The request's hooks: the middleware's, its budget for the request's destination, and
        // its wall clock borrowed.
        let hooks = Hooks {
            classifier: hooks.classifier,
            ok: StatusRules(&hooks.ok),
            sleeper: hooks.sleeper,
            clock: hooks.clock,
            budget,
            notify: hooks.notify.clone(),
        };
        let retry = Retry::new(AsyncFn(op), policy, hooks)
            .settings(settings)
            .attempt_limit(if replayable { u32::MAX } else { 1 });
        let outcome = match self.hedging {
            None => retry.outcome().await,
            Some(hedging) => {
                let latencies = self.latencies.clone();
                Hedges { hedging, latencies }.hedge(retry).outcome().await
            }
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
}

/// A request's responses by the HTTP rules, at the time the middleware's wall clock reads.
struct StatusRules<'a, W>(&'a HttpClassifier<W>);

impl<W: WallClock> ClassifyOk<Response> for StatusRules<'_, W> {
    type Kept = Response;

    #[inline]
    fn classify_ok(&self, response: &Response) -> Option<Failure> {
        self.0
            .classify_answer(response.status(), response.headers())
    }

    #[inline]
    fn keep(response: Response) -> Option<Response> {
        Some(response)
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
