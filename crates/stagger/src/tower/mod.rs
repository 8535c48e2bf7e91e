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
//!   a request's own policy is invalid: `Err(`[`RetryError`]`)`, with the reason, the summary,
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

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body::Body;
use stagger_core::budget::PerDestination;
#[cfg(feature = "serde")]
use stagger_core::config::SpecPerDestination;
use stagger_core::engine::{Settings, StopReason};
use stagger_core::policy::NoRetryPolicy;
use stagger_core::sketch::LatencySketch;
use stagger_core::{AnyConfig, Clock, ConfigError, PolicyConfig, Timestamp};
use tower_layer::Layer;
use tower_service::Service;

pub use body::RetryBody;
pub use classify::{ByIoCause, io_cause};
pub use future::{HedgeResponseFuture, RetryResponseFuture};

use crate::classify::{Classifier, ClassifyOk};
use crate::clock::DefaultClock;
use crate::hedge::Hedges;
use crate::hooks::{HookSet, Hooks, per_request};
#[cfg(doc)]
use crate::http::is_idempotent;
use crate::http::{HttpClassifier, request_is_idempotent};
use crate::notify::Notify;
#[cfg(doc)]
use crate::notify::RetryEvent;
pub use crate::overrides::RetryOverrides;
pub use crate::report::RetryReport;
use crate::retry::Parts;
use crate::retry_error::{Last, RetryError};
use crate::setup::Setup;
use crate::sleep::{DefaultSleeper, Sleeper};

/// The hooks of a [`RetryLayer`] by default: errors by their I/O cause, responses by the HTTP
/// classifier, the async default sleeper and clock, no budget, no hook.
pub type LayerHooks = Hooks<ByIoCause, HttpClassifier>;

/// The hooks of a layer built from a configuration file: the defaults, with the file's budget,
/// if it names one.
#[cfg(feature = "serde")]
pub type SpecHooks =
    Hooks<ByIoCause, HttpClassifier, DefaultSleeper, DefaultClock, SpecPerDestination>;

/// A tower [`Layer`] that retries HTTP requests; see the [module docs](self).
///
/// `P` is the policy configuration, `H` the [`Hooks`]: how errors and responses are
/// classified, the sleeper, the clock, the budget and the retry hook. The defaults: no
/// deadline, idempotency by the request's method, a 5-minute longest server wait, one attempt
/// when nested, no buffering, [`LayerHooks`].
#[derive(Clone)]
#[must_use = "a layer does nothing until it wraps a service"]
pub struct RetryLayer<P = AnyConfig, H = LayerHooks> {
    policy: P,
    setup: Setup<H>,
    buffer_limit: Option<usize>,
}

impl<P: PolicyConfig> RetryLayer<P> {
    /// A layer that retries under `policy`: any configuration in the catalog, an
    /// [`AnyConfig`], or your own [`PolicyConfig`].
    ///
    /// # Errors
    ///
    /// The policy's [`ConfigError`], if it is invalid: checked once, here.
    pub fn new(policy: P) -> Result<Self, ConfigError> {
        policy.validate()?;
        Ok(Self::with_parts(policy, Setup::new(layer_hooks())))
    }
}

/// The hooks a layer starts with: [`LayerHooks`].
fn layer_hooks() -> LayerHooks {
    Hooks::with_time(DefaultSleeper::default(), DefaultClock::default())
        .classifier(ByIoCause)
        .ok(HttpClassifier::new())
}

#[cfg(feature = "serde")]
impl RetryLayer<AnyConfig, SpecHooks> {
    /// A layer as a configuration file describes it, in one call: its policy, its
    /// [`Settings`] and its budget (one budget, shared by every request of the layer's
    /// services, or one per host and port with `budget_per_destination`), behind a gate per
    /// host and port if the file has a `gate` ([`RetrySpec::to_budgets`](stagger_core::config::RetrySpec::to_budgets)).
    ///
    /// ```
    /// # #[cfg(feature = "tokio")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use stagger::config::RetrySpec;
    /// use stagger::tower::RetryLayer;
    ///
    /// let spec: RetrySpec = serde_json::from_str(
    ///     r#"{"policy": "exponential-full-jitter", "max_attempts": 3, "timeout": "2s", "budget": "aws-standard"}"#,
    /// )?;
    /// let layer = RetryLayer::from_spec(&spec)?;
    /// # let _ = layer;
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "tokio"))]
    /// # fn main() {}
    /// ```
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field.
    pub fn from_spec(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        spec.refuse_hedging("the file hedges: build the layer with HedgeLayer::from_spec")?;
        Self::from_spec_retrying(spec)
    }

    /// [`from_spec`](RetryLayer::from_spec) without the check for hedging.
    fn from_spec_retrying(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        let (policy, setup) = crate::setup::from_spec(spec, layer_hooks())?;
        Ok(Self::with_parts(policy, setup))
    }
}

impl<P, H> RetryLayer<P, H> {
    /// Reads each request body into memory, up to `max_bytes`, so that it can be sent again:
    /// a setting of a body. A larger body is sent once. Without this, only empty bodies are
    /// replayed.
    pub fn buffer_bodies(mut self, max_bytes: usize) -> Self {
        self.buffer_limit = Some(max_bytes);
        self
    }
}

impl<P, H, E> crate::surface::Fails<E> for RetryLayer<P, H> {}

impl<P, H, T> crate::surface::Succeeds<T> for RetryLayer<P, H> {}

crate::surface::surface! {
    front: RetryLayer<P>,
    generics: [P,],
    where: [],
    setup: |this| this.setup,
    map: with_setup,
    sleeper: [Sized],
    budget: [Sized],
    gate: [],
}

crate::surface::hedge_setting! {
    front: RetryLayer<P>,
    hedged: HedgeLayer<P, H>,
    generics: [P,],
    where: [],
}

impl<P, H> crate::surface::Hedge<HedgeLayer<P, H>> for RetryLayer<P, H> {
    const MANY_REQUESTS: bool = true;

    fn hedged(self, hedges: Hedges) -> HedgeLayer<P, H> {
        HedgeLayer {
            retry: self,
            hedges,
        }
    }
}

impl<P, H> RetryLayer<P, H> {
    /// A layer of `policy` and `setup`, without buffering.
    const fn with_parts(policy: P, setup: Setup<H>) -> Self {
        Self {
            policy,
            setup,
            buffer_limit: None,
        }
    }

    /// The same layer with the setup `f` makes of its own: every setter is one call of this.
    #[inline]
    fn with_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> RetryLayer<P, H2> {
        RetryLayer {
            policy: self.policy,
            setup: f(self.setup),
            buffer_limit: self.buffer_limit,
        }
    }
}

impl<Svc, P: Clone, H: Clone> Layer<Svc> for RetryLayer<P, H> {
    type Service = RetryService<Svc, P, H>;

    fn layer(&self, inner: Svc) -> Self::Service {
        Layered::new(inner, self)
    }
}

impl<P, H> fmt::Debug for RetryLayer<P, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryLayer")
            .field("settings", &self.setup.settings)
            .field("buffer_limit", &self.buffer_limit)
            .finish_non_exhaustive()
    }
}

/// The service of a [`RetryLayer`]: retries each request it is given; see the
/// [module docs](self).
pub type RetryService<Svc, P = AnyConfig, H = LayerHooks> = Layered<Svc, RetryLayer<P, H>>;

/// The service of a [`HedgeLayer`]: hedges each request it is given.
pub type HedgeService<Svc, P = AnyConfig, H = LayerHooks> = Layered<Svc, HedgeLayer<P, H>>;

/// A service wrapped by a layer of this module, `L` ([`RetryService`], [`HedgeService`]): the
/// inner service, and the layer's configuration shared by every clone.
pub struct Layered<Svc, L> {
    inner: Svc,
    layer: Arc<L>,
}

impl<Svc, L> Layered<Svc, L> {
    fn new(inner: Svc, layer: &L) -> Self
    where
        L: Clone,
    {
        Self {
            inner,
            layer: Arc::new(layer.clone()),
        }
    }

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

impl<Svc: Clone, L> Clone for Layered<Svc, L> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            layer: Arc::clone(&self.layer),
        }
    }
}

impl<Svc: fmt::Debug, L: fmt::Debug> fmt::Debug for Layered<Svc, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layered")
            .field("inner", &self.inner)
            .field("layer", &self.layer)
            .finish()
    }
}

/// Every service of this module's layers is a [`Service`] of the requests it [`Serves`].
impl<Svc, L, ReqBody> Service<Request<ReqBody>> for Layered<Svc, L>
where
    Self: Serves<ReqBody>,
{
    type Response = <Self as Serves<ReqBody>>::Response;
    type Error = <Self as Serves<ReqBody>>::Error;
    type Future = <Self as Serves<ReqBody>>::Future;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.serve_ready(cx)
    }

    #[inline]
    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        self.serve(request)
    }
}

/// The requests with a body `B` that a [`RetryService`] or a [`HedgeService`] serves: the
/// [`Service`] implementation of each, under the bounds its implementation lists. The inner
/// service takes each attempt as a `Request<`[`RetryBody<B>`](RetryBody)`>` and answers an
/// [`http::Response`]; its errors and responses fit the layer's classifiers and hook.
///
/// The bounds are here rather than on the `Service` implementation so that a service that does
/// not meet them fails to compile with one message that names the fix, not with a list of every
/// bound it misses. Implemented by this module's services alone.
#[diagnostic::on_unimplemented(
    message = "a retry layer's inner service must take `Request<RetryBody<B>>`, `B` being the request's body, and fit the layer's classifiers",
    label = "its inner service takes another body, or its errors or responses do not fit the layer's classifiers",
    note = "the layer may send a request more than once, so it hands the inner service each attempt as a `Request<RetryBody<B>>`: implement `Service<Request<RetryBody<B>>>`, or build a hyper client for that body: `build_http::<RetryBody<Full<Bytes>>>()`",
    note = "the inner service answers an `http::Response`; the layer classifies its errors by their I/O cause, which needs a `std::error::Error` (pass `.classify(|e: &E| ...)` for another error type, such as tower's `BoxError`), and its responses by status (`.classify_ok(...)`)"
)]
pub trait Serves<B>: sealed::Sealed {
    /// The response.
    type Response;
    /// The error.
    type Error;
    /// The future of a call.
    type Future: std::future::Future<Output = Result<Self::Response, Self::Error>>;

    /// [`Service::poll_ready`].
    #[doc(hidden)]
    fn serve_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>>;

    /// [`Service::call`].
    #[doc(hidden)]
    fn serve(&mut self, request: Request<B>) -> Self::Future;
}

mod sealed {
    /// Keeps [`Serves`](super::Serves) implemented by this module's services alone.
    pub trait Sealed {}

    impl<Svc, P, H> Sealed for super::RetryService<Svc, P, H> {}
    impl<Svc, P, H> Sealed for super::HedgeService<Svc, P, H> {}
}

impl<Svc, ReqBody, ResBody, P, H> Serves<ReqBody> for Layered<Svc, RetryLayer<P, H>>
where
    Svc: Service<Request<RetryBody<ReqBody>>, Response = Response<ResBody>> + Clone,
    ReqBody: Body,
    P: PolicyConfig,
    H: HookSet + Clone,
    H::Classifier: Classifier<Svc::Error>,
    H::Ok: ClassifyOk<Response<ResBody>, Kept = Response<ResBody>>,
    H::Sleeper: Sleeper,
    H::Clock: Clock,
    H::Budget: PerDestination,
    H::Notify: Notify<Response<ResBody>, Svc::Error>,
{
    type Response = Response<ResBody>;
    type Error = RetryError<Svc::Error>;
    type Future = RetryResponseFuture<Svc, ReqBody, P, H>;

    fn serve_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(unusable)
    }

    fn serve(&mut self, request: Request<ReqBody>) -> Self::Future {
        let ready = take_ready(&mut self.inner);
        let parts = self.layer.run(ready, request, None);
        RetryResponseFuture::new(crate::future::RetryOutcomeFuture::new(parts))
    }
}

/// The instance made ready by `poll_ready`, which goes with the request; the clone left behind
/// must be made ready again before the next call, as tower requires.
fn take_ready<Svc: Clone>(inner: &mut Svc) -> Svc {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

/// The run of one request, as a layer makes it.
type RequestRun<Svc, B, P, H> =
    Parts<future::TowerOp<Svc, B>, crate::overrides::RequestPolicy<P>, crate::hooks::PerRequest<H>>;

impl<P: PolicyConfig, H: HookSet + Clone> RetryLayer<P, H>
where
    H::Budget: PerDestination,
{
    /// The run of `request` on the `ready` service: the request's policy and settings (its
    /// overrides, its idempotency), its hooks keyed by its destination. `max_attempts` is the
    /// most attempts the run will make, if not the policy's (a hedged run's).
    fn run<Svc, B: Body>(
        &self,
        ready: Svc,
        request: Request<B>,
        max_attempts: Option<u32>,
    ) -> RequestRun<Svc, B, P, H> {
        let overrides = request.extensions().get::<RetryOverrides>();
        let (policy, settings) =
            RetryOverrides::apply(overrides, self.policy, self.setup.settings, || {
                request_is_idempotent(&request)
            });
        let hooks = per_request(&self.setup.hooks, || crate::http::destination(&request));
        let max_attempts = max_attempts.unwrap_or_else(|| policy.max_attempts());
        let op = future::TowerOp::new(ready, request, self.buffer_limit, max_attempts);
        let mut parts = Parts::new(op, policy, hooks);
        parts.setup.settings = settings;
        parts
    }
}

#[cfg(feature = "serde")]
impl HedgeLayer<AnyConfig, SpecHooks> {
    /// A hedging layer as a configuration file with a `hedging` table describes it, in one
    /// call: [`RetryLayer::from_spec`], then [`hedge`](RetryLayer::hedge) by the table.
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field; a file without a `hedging`
    /// table is [`ConfigError::Unusable`] (use [`RetryLayer::from_spec`]).
    pub fn from_spec(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        let Some(hedging) = spec.to_hedging()? else {
            return Err(ConfigError::Unusable {
                param: "hedging",
                reason: "the file does not hedge: build the layer with RetryLayer::from_spec",
            });
        };
        Ok(RetryLayer::from_spec_retrying(spec)?.hedge(hedging))
    }
}

/// A tower [`Layer`] that hedges HTTP requests: [`RetryLayer::hedge`].
#[derive(Clone)]
#[must_use = "a layer does nothing until it wraps a service"]
pub struct HedgeLayer<P = AnyConfig, H = LayerHooks> {
    retry: RetryLayer<P, H>,
    hedges: Hedges,
}

impl<P, H> HedgeLayer<P, H> {
    /// Measures the attempts' latencies into `latencies` (shared with other layers or
    /// executors, say), and takes a delay at a quantile from it.
    pub fn latencies(mut self, latencies: Arc<LatencySketch>) -> Self {
        self.hedges.latencies(latencies);
        self
    }
}

impl<P, H> fmt::Debug for HedgeLayer<P, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HedgeLayer")
            .field("retry", &self.retry)
            .field("hedging", &self.hedges.hedging)
            .finish_non_exhaustive()
    }
}

impl<Svc, P: Clone, H: Clone> Layer<Svc> for HedgeLayer<P, H> {
    type Service = HedgeService<Svc, P, H>;

    fn layer(&self, inner: Svc) -> Self::Service {
        Layered::new(inner, self)
    }
}

impl<Svc, ReqBody, ResBody, P, H> Serves<ReqBody> for Layered<Svc, HedgeLayer<P, H>>
where
    Svc: Service<Request<RetryBody<ReqBody>>, Response = Response<ResBody>> + Clone,
    ReqBody: Body,
    P: PolicyConfig,
    H: HookSet + Clone,
    H::Classifier: Classifier<Svc::Error>,
    H::Ok: ClassifyOk<Response<ResBody>, Kept = Response<ResBody>>,
    H::Sleeper: Sleeper,
    H::Clock: Clock,
    H::Budget: PerDestination,
    H::Notify: Notify<Response<ResBody>, Svc::Error>,
{
    type Response = Response<ResBody>;
    type Error = RetryError<Svc::Error>;
    type Future = HedgeResponseFuture<Svc, ReqBody, P, H>;

    fn serve_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(unusable)
    }

    fn serve(&mut self, request: Request<ReqBody>) -> Self::Future {
        let ready = take_ready(&mut self.inner);
        let HedgeLayer { retry, hedges } = &*self.layer;
        let run = retry.run(ready, request, Some(hedges.hedging.max_attempts()));
        HedgeResponseFuture::new(hedges.clone().hedge(run).outcome())
    }
}

/// The error of a service whose `poll_ready` failed, before any request was handed over: no
/// attempt, not retryable. tower treats such a service as unusable, so no request is retried
/// on it.
fn unusable<E>(error: E) -> RetryError<E> {
    let run = stagger_core::engine::Run::new(NoRetryPolicy, Settings::new(), Timestamp::ZERO);
    RetryError::new(
        run.stop(Timestamp::ZERO, StopReason::NotRetryable),
        Last::Error(error),
    )
}
