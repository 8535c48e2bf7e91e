//! The services the layers make: [`Layered`], the [`Service`] of each through [`Serves`].

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body::Body;
use stagger_core::budget::PerDestination;
use stagger_core::engine::{Settings, StopReason};
use stagger_core::policy::NoRetryPolicy;
use stagger_core::{AnyConfig, Clock, PolicyConfig, Timestamp};
use tower_layer::Layer;
use tower_service::Service;

use super::body::RetryBody;
use super::future::{HedgeResponseFuture, RetryResponseFuture};
use super::hedge_layer::HedgeLayer;
use super::retry_layer::{LayerHooks, RetryLayer};
use crate::classify::{Classifier, ClassifyOk};
use crate::future::RetryOutcomeFuture;
use crate::hooks::HookSet;
use crate::notify::Notify;
use crate::retry_error::{Last, RetryError};
use crate::sleep::Sleeper;

impl<Svc, P: Clone, H: Clone> Layer<Svc> for RetryLayer<P, H> {
    type Service = RetryService<Svc, P, H>;

    fn layer(&self, inner: Svc) -> Self::Service {
        Layered::new(inner, self)
    }
}

impl<Svc, P: Clone, H: Clone> Layer<Svc> for HedgeLayer<P, H> {
    type Service = HedgeService<Svc, P, H>;

    fn layer(&self, inner: Svc) -> Self::Service {
        Layered::new(inner, self)
    }
}

/// The service of a [`RetryLayer`]: retries each request it is given; see the
/// [module docs](super).
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

/// The instance made ready by `poll_ready`, which goes with the request; the clone left behind
/// must be made ready again before the next call, as tower requires.
fn take_ready<Svc: Clone>(inner: &mut Svc) -> Svc {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

/// Writes the [`Serves`] of the service of one layer, `$layer`, whose calls are `$future`s that
/// `$call` makes of the layer, the ready service and the request: the retrying and the hedging
/// layer differ only there.
macro_rules! serves {
    ($layer:ident => $future:ident, |$this:ident, $ready:ident, $request:ident| $call:expr) => {
        impl<Svc, ReqBody, ResBody, P, H> Serves<ReqBody> for Layered<Svc, $layer<P, H>>
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
            type Future = $future<Svc, ReqBody, P, H>;

            fn serve_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
                self.inner.poll_ready(cx).map_err(unusable)
            }

            fn serve(&mut self, request: Request<ReqBody>) -> Self::Future {
                let ($this, $ready, $request) =
                    (&*self.layer, take_ready(&mut self.inner), request);
                $future::new($call)
            }
        }
    };
}

serves!(RetryLayer => RetryResponseFuture, |layer, ready, request| {
    RetryOutcomeFuture::new(layer.run(ready, request, None))
});

serves!(HedgeLayer => HedgeResponseFuture, |layer, ready, request| {
    let max_attempts = layer.hedges.hedging.max_attempts();
    let run = layer.retry.run(ready, request, Some(max_attempts));
    layer.hedges.clone().hedge(run).outcome()
});

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
