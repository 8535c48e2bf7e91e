//! One request as an operation of the async executor, and the future of its run.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::request::Parts;
use http::{Request, Response};
use http_body::Body;
use pin_project_lite::pin_project;
use stagger_core::budget::PerDestination;
use stagger_core::engine::Attempt;
use stagger_core::{Clock, PolicyConfig};
use tower_service::Service;

use super::body::{Buffer, RetryBody, Source};
use crate::classify::{Classifier, ClassifyOk};
use crate::future::RetryOutcomeFuture;
use crate::hedge::HedgedRetryOutcomeFuture;
use crate::hooks::{HookSet, PerRequest};
use crate::notify::Notify;
use crate::operation::{AsyncOperation, Operation};
use crate::overrides::RequestPolicy;
use crate::report;
use crate::retry_error::RetryError;
use crate::sleep::{MaybeSleeper, Sleeper};

/// The request each attempt is made from.
struct Template<B: Body> {
    parts: Parts,
    body: Source<B>,
}

/// The caller's body until the first attempt: to read into memory, being read, or ready.
enum Prepare<B: Body> {
    Body(B),
    Buffering(Buffer<B>),
    Ready,
}

/// One request, retried over clones of the inner service.
pub(crate) struct TowerOp<Svc, B: Body> {
    /// The service for the next attempt: the instance the caller made ready goes with the
    /// first; each later attempt takes a clone, made ready again before it begins, as tower
    /// requires. An instance whose readiness failed is dropped, never called.
    service: Option<Svc>,
    /// Whether `service` is ready to be called.
    ready: bool,
    parts: Option<Parts>,
    prepare: Prepare<B>,
    template: Option<Template<B>>,
    /// Buffer bodies up to this many bytes so that they can be replayed.
    buffer_limit: Option<usize>,
    /// The most attempts: the policy's, or 1 for a body that cannot be replayed.
    max_attempts: u32,
}

impl<Svc, B: Body> TowerOp<Svc, B> {
    pub(super) fn new(
        service: Svc,
        request: Request<B>,
        buffer_limit: Option<usize>,
        max_attempts: u32,
    ) -> Self {
        let (parts, body) = request.into_parts();
        Self {
            service: Some(service),
            ready: true,
            parts: Some(parts),
            prepare: Prepare::Body(body),
            template: None,
            buffer_limit,
            max_attempts,
        }
    }

    /// The request for attempt `number`: a copy if another attempt may follow, else the
    /// original.
    fn request(&mut self, number: u32) -> Option<Request<RetryBody<B>>> {
        if number < self.max_attempts
            && let Some(Template { parts, body }) = self.template.as_ref()
            && let Some(body) = body.copy()
        {
            return Some(Request::from_parts(parts.clone(), body));
        }
        let Template { parts, body } = self.template.take()?;
        Some(Request::from_parts(parts, body.into_body()))
    }
}

impl<Svc, B> Operation for TowerOp<Svc, B>
where
    Svc: Service<Request<RetryBody<B>>>,
    B: Body,
{
    type Value = Svc::Response;
    type Error = Svc::Error;
}

impl<Svc, B> AsyncOperation for TowerOp<Svc, B>
where
    Svc: Service<Request<RetryBody<B>>> + Clone,
    B: Body,
{
    type Attempt = Svc::Future;

    fn poll_prepare(&mut self, cx: &mut Context<'_>, retries_possible: bool) -> Poll<u32> {
        loop {
            let source = match std::mem::replace(&mut self.prepare, Prepare::Ready) {
                Prepare::Body(body) if body.is_end_stream() => {
                    // Nothing to send: replayable as it is.
                    Source::Replay {
                        data: None,
                        trailers: None,
                    }
                }
                Prepare::Body(body) => match self.buffer_limit {
                    Some(limit)
                        if retries_possible
                            && self.max_attempts > 1
                            && body.size_hint().lower() <= limit as u64 =>
                    {
                        self.prepare = Prepare::Buffering(Buffer::new(body, limit));
                        continue;
                    }
                    // Too large, or not to be buffered: sent once.
                    _ => Source::Once(RetryBody::new(body)),
                },
                Prepare::Buffering(mut buffer) => match buffer.poll(cx) {
                    Poll::Ready(source) => source,
                    Poll::Pending => {
                        self.prepare = Prepare::Buffering(buffer);
                        return Poll::Pending;
                    }
                },
                Prepare::Ready => return Poll::Ready(self.max_attempts),
            };
            if !source.replayable() {
                self.max_attempts = 1;
            }
            self.template = self.parts.take().map(|parts| Template {
                parts,
                body: source,
            });
        }
    }

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Svc::Error>> {
        if self.ready {
            return Poll::Ready(Ok(()));
        }
        let Some(service) = self.service.as_mut() else {
            // No attempt follows the last, for which the service was moved.
            return Poll::Ready(Ok(()));
        };
        match ready!(service.poll_ready(cx)) {
            Ok(()) => {
                self.ready = true;
                Poll::Ready(Ok(()))
            }
            Err(error) => {
                // tower's contract: a service whose readiness failed is not to be used again.
                self.service = None;
                Poll::Ready(Err(error))
            }
        }
    }

    fn unready(&mut self) {
        // The instance the caller made ready holds its readiness (a permit, a slot in a
        // buffer) for as long as it lives: a fresh clone waits instead, made ready after.
        if self.ready
            && let Some(service) = self.service.as_ref()
        {
            self.service = Some(service.clone());
            self.ready = false;
        }
    }

    fn attempt(&mut self, attempt: Attempt) -> Svc::Future {
        // The run allows no attempt after the last, for which the request and the service were
        // moved rather than copied (`Run::limit_attempts`), and the driver begins an attempt
        // only once `poll_ready` has made the service ready.
        const MOVED: &str = "an attempt after the request's last";
        let last = attempt.number >= self.max_attempts;
        let mut request = self.request(attempt.number).expect(MOVED);
        request.extensions_mut().insert(attempt);
        let mut service = if last {
            self.service.take().expect(MOVED)
        } else {
            // The ready instance goes with this attempt; its clone, not ready, waits for the
            // next.
            let ready = self.service.as_ref().expect(MOVED);
            let clone = ready.clone();
            self.service.replace(clone).expect(MOVED)
        };
        debug_assert!(self.ready, "an attempt on a service that is not ready");
        self.ready = false;
        service.call(request)
    }
}

/// Writes the future of one kind of call, `$name`: the run `$run` of the request, its outcome
/// settled into the response or why the layer gave up. The retrying and the hedging service
/// differ only in the run.
macro_rules! response_future {
    ($(#[$doc:meta])* $name:ident($run:ident)) => {
        pin_project! {
            $(#[$doc])*
            #[must_use = "futures do nothing unless polled"]
            pub struct $name<Svc, ReqBody, P, H>
            where
                Svc: Service<Request<RetryBody<ReqBody>>>,
                Svc: Clone,
                ReqBody: Body,
                P: PolicyConfig,
                H: HookSet,
                H::Ok: ClassifyOk<Svc::Response>,
                H::Sleeper: MaybeSleeper,
                H::Budget: PerDestination,
            {
                #[pin]
                run: $run<TowerOp<Svc, ReqBody>, RequestPolicy<P>, PerRequest<H>>,
            }
        }

        impl<Svc, ReqBody, P, H> $name<Svc, ReqBody, P, H>
        where
            Svc: Service<Request<RetryBody<ReqBody>>> + Clone,
            ReqBody: Body,
            P: PolicyConfig,
            H: HookSet,
            H::Ok: ClassifyOk<Svc::Response>,
            H::Sleeper: MaybeSleeper,
            H::Budget: PerDestination,
        {
            pub(super) fn new(run: $run<TowerOp<Svc, ReqBody>, RequestPolicy<P>, PerRequest<H>>) -> Self {
                Self { run }
            }
        }

        impl<Svc, ReqBody, ResBody, P, H> Future for $name<Svc, ReqBody, P, H>
        where
            Svc: Service<Request<RetryBody<ReqBody>>, Response = Response<ResBody>> + Clone,
            ReqBody: Body,
            P: PolicyConfig,
            H: HookSet,
            H::Classifier: Classifier<Svc::Error>,
            H::Ok: ClassifyOk<Response<ResBody>, Kept = Response<ResBody>>,
            H::Sleeper: Sleeper,
            H::Clock: Clock,
            H::Budget: PerDestination,
            H::Notify: Notify<Response<ResBody>, Svc::Error>,
        {
            type Output = Result<Response<ResBody>, RetryError<Svc::Error>>;

            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
                self.project().run.poll(cx).map(report::settle)
            }
        }
    };
}

response_future! {
    /// The future of a [`RetryService`](super::RetryService) call: the response, or why the
    /// layer gave up. It is `Send` when the inner service, its future and error, the bodies and
    /// the layer's parts are.
    RetryResponseFuture(RetryOutcomeFuture)
}

response_future! {
    /// The future of a [`HedgeService`](super::HedgeService) call: the first response the
    /// classifier accepts, or why the layer gave up.
    HedgeResponseFuture(HedgedRetryOutcomeFuture)
}
