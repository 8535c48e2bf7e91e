//! One request through a middleware: a run on the async driver, the extensions it hands back,
//! and how it reports.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ::reqwest::{Request, Response};
use http::Extensions;
use reqwest_middleware::{Error, Middleware, Next, Result};
use stagger_core::budget::PerDestination;
use stagger_core::engine::{Attempt, StopReason};
use stagger_core::{PolicyConfig, SeededRng};

use super::body::read_under;
use super::classify::Borrowed;
use super::hedged::HedgedMiddleware;
use super::middleware::{RequestHooks, RetryMiddleware};
use crate::future::RetryOutcomeFuture;
use crate::hedge::Hedges;
use crate::hooks::Hooks;
use crate::http::is_idempotent;
use crate::operation::AsyncFn;
use crate::overrides::RetryOverrides;
use crate::parts::Parts;
use crate::report::{self, Reported};
use crate::retry_error::{Last, RetryError};
use crate::setup::Setup;

impl Reported for Response {
    fn extensions_mut(&mut self) -> &mut Extensions {
        Response::extensions_mut(self)
    }
}

/// Writes the [`Middleware`] of one front end, `$front`: each request is [`handle`]d with the
/// retrying middleware and the hedging that `$parts` gives of it.
macro_rules! middleware {
    ($front:ident, |$this:ident| $parts:expr) => {
        #[async_trait::async_trait]
        impl<P, H> Middleware for $front<P, H>
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
                let $this = self;
                let (retry, hedges) = $parts;
                handle(retry, hedges, request, extensions, next).await
            }
        }
    };
}

middleware!(RetryMiddleware, |this| (this, None));
middleware!(HedgedMiddleware, |this| (&this.retry, Some(&this.hedges)));

/// One request through `middleware`, hedged by `hedges` if given: a run on the async driver.
pub(super) async fn handle<P, H>(
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
