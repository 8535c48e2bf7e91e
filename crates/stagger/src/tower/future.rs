//! One request as an operation of the async executor, and the future of its run.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::request::Parts;
use http::{Request, Response};
use http_body::Body;
use pin_project_lite::pin_project;
use stagger_core::engine::{Attempt, Budget};
use stagger_core::{Clock, PolicyConfig};
use tower_service::Service;

use super::body::{Buffer, RetryBody, Source};
use crate::classify::{Classifier, ClassifyOk};
use crate::future::RetryFuture;
use crate::hooks::HookSet;
use crate::notify::Notify;
use crate::operation::{AsyncOperation, Operation};
use crate::overrides::RequestPolicy;
use crate::report;
use crate::retry_error::RetryError;
use crate::sleep::Sleeper;

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
    /// first; later attempts each take a clone, which is made ready again, as tower requires.
    service: Option<Svc>,
    first: bool,
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
            first: true,
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
    type Attempt = TowerAttempt<Svc, B>;

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

    fn attempt(&mut self, attempt: Attempt) -> TowerAttempt<Svc, B> {
        let last = attempt.number >= self.max_attempts;
        let request = self.request(attempt.number).map(|mut request| {
            request.extensions_mut().insert(attempt);
            request
        });
        let ready = std::mem::take(&mut self.first);
        let service = if last {
            self.service.take()
        } else if ready {
            let clone = self.service.clone();
            std::mem::replace(&mut self.service, clone)
        } else {
            self.service.clone()
        };
        TowerAttempt::Ready {
            call: service.zip(request),
            ready,
        }
    }
}

pin_project! {
    /// One attempt: the service made ready (but for the first, which the caller made ready),
    /// then called.
    #[project = AttemptProj]
    pub(crate) enum TowerAttempt<Svc: Service<Request<RetryBody<B>>>, B: Body> {
        Ready { call: Option<(Svc, Request<RetryBody<B>>)>, ready: bool },
        Calling { #[pin] future: Svc::Future },
    }
}

impl<Svc, B> Future for TowerAttempt<Svc, B>
where
    Svc: Service<Request<RetryBody<B>>>,
    B: Body,
{
    type Output = Result<Svc::Response, Svc::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                AttemptProj::Ready { call, ready } => {
                    // The run allows no attempt after the last, for which the request and the
                    // service were moved rather than copied (`Run::limit_attempts`).
                    const MOVED: &str = "an attempt after the request's last";
                    if !*ready {
                        let (service, _) = call.as_mut().expect(MOVED);
                        ready!(service.poll_ready(cx))?;
                    }
                    let (mut service, request) = call.take().expect(MOVED);
                    let future = service.call(request);
                    self.set(Self::Calling { future });
                }
                AttemptProj::Calling { future } => return future.poll(cx),
            }
        }
    }
}

pin_project! {
    /// The future of a [`RetryService`](super::RetryService) call: the response, or why the
    /// layer gave up. It is `Send` when the inner service, its future and error, the bodies and
    /// the layer's parts are.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<Svc, ReqBody, P, H>
    where
        Svc: Service<Request<RetryBody<ReqBody>>>,
        Svc: Clone,
        ReqBody: Body,
        P: PolicyConfig,
        H: HookSet,
        H::Sleeper: Sleeper,
    {
        #[pin]
        run: RetryFuture<TowerOp<Svc, ReqBody>, RequestPolicy<P>, H>,
    }
}

impl<Svc, ReqBody, P, H> ResponseFuture<Svc, ReqBody, P, H>
where
    Svc: Service<Request<RetryBody<ReqBody>>> + Clone,
    ReqBody: Body,
    P: PolicyConfig,
    H: HookSet,
    H::Sleeper: Sleeper,
{
    pub(super) fn new(run: RetryFuture<TowerOp<Svc, ReqBody>, RequestPolicy<P>, H>) -> Self {
        Self { run }
    }
}

impl<Svc, ReqBody, ResBody, P, H> Future for ResponseFuture<Svc, ReqBody, P, H>
where
    Svc: Service<Request<RetryBody<ReqBody>>, Response = Response<ResBody>> + Clone,
    ReqBody: Body,
    P: PolicyConfig,
    H: HookSet,
    H::Classifier: Classifier<Svc::Error>,
    H::Ok: ClassifyOk<Response<ResBody>, Kept = Response<ResBody>>,
    H::Sleeper: Sleeper,
    H::Clock: Clock,
    H::Budget: Budget,
    H::Notify: Notify<Response<ResBody>, Svc::Error>,
{
    type Output = Result<Response<ResBody>, RetryError<Svc::Error>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().run.poll(cx).map(report::settle)
    }
}
