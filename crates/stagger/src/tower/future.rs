//! The future of one request: a retry run driven over the inner service.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::request::Parts;
use http::{Request, Response};
use http_body::Body;
use pin_project_lite::pin_project;
use stagger_core::engine::{Budget, Run, RunOptions, StopReason, Stopped, Summary};
use stagger_core::{Clock, Failure, Policy, Timestamp};
use tower_service::Service;

use super::body::{Buffer, RetryBody, Source};
use super::classify::{ClassifyResponse, MakePolicy};
use super::{AttemptError, Idempotent, RequestTimeout, RetryReport, Settings};
use crate::classify::Classifier;
use crate::http::is_idempotent;
use crate::nesting;
use crate::notify::{self, Notify};
use crate::retry::Nested;
use crate::retry_error::RetryError;
use crate::sleep::Sleeper;
use crate::trace;

/// The policy of one request, built from the layer's configuration when the request first
/// fails, so that a request that succeeds at once builds nothing and reads no entropy.
pub(crate) enum PerRequest<P: MakePolicy> {
    /// Not built yet.
    Config { config: P, max_attempts: u32 },
    /// Built, with its own generator.
    Built {
        policy: P::Policy,
        max_attempts: u32,
    },
    /// One attempt only: the body cannot be replayed, or the run is nested.
    Single,
}

impl<P: MakePolicy> PerRequest<P> {
    fn new(config: P) -> Self {
        let max_attempts = config.max_attempts();
        Self::Config {
            config,
            max_attempts,
        }
    }
}

impl<P: MakePolicy> Policy for PerRequest<P> {
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if let Self::Config {
            config,
            max_attempts,
        } = self
        {
            let max_attempts = *max_attempts;
            // The configuration was validated when the layer was made, so this builds.
            *self = match config.make_policy() {
                Ok(policy) => Self::Built {
                    policy,
                    max_attempts,
                },
                Err(_) => Self::Single,
            };
        }
        match self {
            // The cap is enforced here too, whatever the policy does: the request for the last
            // allowed attempt is moved, not copied, so there must be no attempt after it.
            Self::Built {
                policy,
                max_attempts,
            } if attempt < *max_attempts => policy.next_delay(attempt, failure),
            _ => None,
        }
    }
}

/// The request each attempt is made from.
struct Template<B: Body> {
    parts: Parts,
    body: Source<B>,
}

pin_project! {
    #[project = StateProj]
    enum State<F, Sl, B: Body> {
        // Not polled yet.
        Start,
        // Reading the body into memory.
        Buffering { buffer: Buffer<B> },
        // The next attempt starts on this poll.
        Idle,
        // An attempt has begun; the inner service is getting ready for it.
        Ready,
        // An attempt is in flight.
        Calling { #[pin] future: F },
        // Waiting before the next attempt.
        Sleeping { #[pin] wait: Sl },
        // The output was delivered.
        Done,
    }
}

pin_project! {
    /// The future of a [`RetryService`](super::RetryService) call: the response, or why the
    /// layer gave up. It is `Send` when the inner service, its future and error, the bodies and
    /// the layer's parts are.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<Svc, ReqBody, P, R, C, S, K, B, N>
    where
        Svc: Service<Request<RetryBody<ReqBody>>>,
        ReqBody: Body,
        P: MakePolicy,
        S: Sleeper,
    {
        settings: Arc<Settings<P, R, C, S, K, B, N>>,
        // The service, made ready by the caller for the first attempt.
        service: Svc,
        ready: bool,
        // The caller's request, until the first poll.
        request: Option<Request<ReqBody>>,
        template: Option<Template<ReqBody>>,
        // An attempt's request, while the service gets ready for it.
        pending: Option<Request<RetryBody<ReqBody>>>,
        run: Option<Run<PerRequest<P>, B>>,
        options: RunOptions,
        started: Timestamp,
        deadline: Option<Timestamp>,
        // No attempt after the first: the body cannot be replayed, or the run is nested.
        single: bool,
        notify: N,
        last_error: Option<Svc::Error>,
        span: trace::RunSpan,
        // The deadline's timer, armed once per request, when an attempt first has to wait.
        #[pin]
        timer: Option<S::Sleep>,
        #[pin]
        state: State<Svc::Future, S::Sleep, ReqBody>,
    }
}

impl<Svc, ReqBody, P, R, C, S, K, B, N> ResponseFuture<Svc, ReqBody, P, R, C, S, K, B, N>
where
    Svc: Service<Request<RetryBody<ReqBody>>>,
    ReqBody: Body,
    P: MakePolicy,
    S: Sleeper,
    N: Clone,
{
    pub(super) fn new(
        settings: Arc<Settings<P, R, C, S, K, B, N>>,
        service: Svc,
        request: Request<ReqBody>,
    ) -> Self {
        let notify = settings.notify.clone();
        Self {
            settings,
            service,
            ready: true,
            request: Some(request),
            template: None,
            pending: None,
            run: None,
            options: RunOptions::new(),
            started: Timestamp::ZERO,
            deadline: None,
            single: true,
            notify,
            last_error: None,
            span: trace::RunSpan::new(),
            timer: None,
            state: State::Start,
        }
    }
}

/// What follows a failed attempt.
enum Step<T> {
    /// Wait this long, then make the next attempt.
    Retry(Duration),
    /// Deliver this.
    Finish(T),
}

type Output<ResBody, E> = Result<Response<ResBody>, RetryError<E>>;

impl<Svc, ReqBody, ResBody, P, R, C, S, K, B, N> Future
    for ResponseFuture<Svc, ReqBody, P, R, C, S, K, B, N>
where
    Svc: Service<Request<RetryBody<ReqBody>>, Response = Response<ResBody>>,
    ReqBody: Body,
    P: MakePolicy + Clone,
    R: ClassifyResponse<ResBody>,
    C: Classifier<Svc::Error>,
    S: Sleeper,
    K: Clock,
    B: Budget + Clone,
    N: Notify<AttemptError<Svc::Error>>,
{
    type Output = Output<ResBody, Svc::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _span = this.span.enter();
        let settings = &**this.settings;
        // Times the deadline's timer fired before the deadline in this poll.
        let mut early_fires = 0u32;
        loop {
            let step = match this.state.as_mut().project() {
                StateProj::Start => {
                    let Some(request) = this.request.take() else {
                        panic!("ResponseFuture polled after it completed");
                    };
                    let (parts, body) = request.into_parts();
                    // Nesting is decided where the executors decide it: when the run starts,
                    // in the task that runs it.
                    let nested =
                        settings.nested == Nested::SingleAttempt && nesting::inside_an_attempt();
                    let idempotent = parts
                        .extensions
                        .get::<Idempotent>()
                        .map_or_else(|| is_idempotent(&parts.method, &parts.headers), |i| i.0);
                    let mut options = RunOptions::new()
                        .with_max_server_wait(settings.max_server_wait)
                        .with_idempotent(idempotent)
                        .with_nested(nested);
                    let timeout = parts
                        .extensions
                        .get::<RequestTimeout>()
                        .map(|t| t.0)
                        .or(settings.timeout);
                    if let Some(timeout) = timeout {
                        options = options.with_timeout(timeout);
                    }
                    let now = settings.clock.now();
                    *this.options = options;
                    *this.started = now;
                    *this.deadline = timeout.map(|t| now.saturating_add(t));
                    let may_retry = !nested && settings.policy.max_attempts() > 1;
                    let body = if body.is_end_stream() {
                        // Nothing to send: replayable as it is.
                        Source::Replay {
                            data: None,
                            trailers: None,
                        }
                    } else {
                        match settings.buffer_limit {
                            Some(limit)
                                if may_retry && body.size_hint().lower() <= limit as u64 =>
                            {
                                *this.template = Some(Template {
                                    parts,
                                    body: Source::Once(RetryBody::default()),
                                });
                                let buffer = Buffer::new(body, limit);
                                this.state.set(State::Buffering { buffer });
                                continue;
                            }
                            // Too large, or not to be buffered: sent once.
                            _ => Source::Once(RetryBody::new(body)),
                        }
                    };
                    start_run(
                        this.run,
                        this.single,
                        settings,
                        &body,
                        may_retry,
                        *this.options,
                        now,
                    );
                    *this.template = Some(Template { parts, body });
                    this.state.set(State::Idle);
                    continue;
                }
                StateProj::Buffering { buffer } => match buffer.poll(cx) {
                    Poll::Ready(body) => {
                        let may_retry = !this.options.nested();
                        start_run(
                            this.run,
                            this.single,
                            settings,
                            &body,
                            may_retry,
                            *this.options,
                            *this.started,
                        );
                        if let Some(template) = this.template.as_mut() {
                            template.body = body;
                        }
                        this.state.set(State::Idle);
                        continue;
                    }
                    Poll::Pending => {
                        let Some(at) = *this.deadline else {
                            return Poll::Pending;
                        };
                        let now = ready!(poll_deadline(
                            this.timer.as_mut(),
                            at,
                            settings,
                            &mut early_fires,
                            cx
                        ));
                        // The deadline passed while the body was read: no attempt is made.
                        let mut run = Run::with_budget(
                            PerRequest::<P>::Single,
                            settings.budget.clone(),
                            *this.options,
                            *this.started,
                        );
                        let stopped = match run.begin(now) {
                            Err(stopped) => stopped,
                            Ok(_) => unreachable!("an attempt begun after its deadline"),
                        };
                        *this.template = None;
                        Step::Finish(Err(give_up(this.notify, stopped, this.last_error.take())))
                    }
                },
                StateProj::Idle => {
                    let run = this.run.as_mut().expect("a run starts before its attempts");
                    let now = settings.clock.now();
                    if let Some(rest) = run.too_early(now) {
                        // The sleeper woke before the server's wait was over: wait again, and
                        // yield, so that a sleeper that keeps waking early cannot spin here.
                        let wait = settings.sleeper.sleep(rest);
                        this.state.set(State::Sleeping { wait });
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    let attempt = match run.begin(now) {
                        Ok(attempt) => attempt,
                        Err(stopped) => {
                            this.state.set(State::Done);
                            *this.template = None;
                            return Poll::Ready(Err(give_up(
                                this.notify,
                                stopped,
                                this.last_error.take(),
                            )));
                        }
                    };
                    let keep = !*this.single && attempt.number < settings.policy.max_attempts();
                    let mut request = next_request(this.template, keep);
                    request.extensions_mut().insert(attempt);
                    if std::mem::take(this.ready) {
                        let future = {
                            let _inside = nesting::enter();
                            this.service.call(request)
                        };
                        this.state.set(State::Calling { future });
                    } else {
                        *this.pending = Some(request);
                        this.state.set(State::Ready);
                    }
                    continue;
                }
                StateProj::Ready => {
                    let polled = {
                        let _inside = nesting::enter();
                        this.service.poll_ready(cx)
                    };
                    match polled {
                        Poll::Ready(Ok(())) => {
                            let request = this.pending.take().expect("a request to send");
                            let future = {
                                let _inside = nesting::enter();
                                this.service.call(request)
                            };
                            this.state.set(State::Calling { future });
                            continue;
                        }
                        Poll::Ready(Err(error)) => {
                            *this.pending = None;
                            let run = this.run.as_mut().expect("a run");
                            let now = settings.clock.now();
                            failed_with_error(
                                run,
                                this.notify,
                                this.last_error,
                                settings,
                                error,
                                now,
                            )
                        }
                        Poll::Pending => {
                            let Some(at) = *this.deadline else {
                                return Poll::Pending;
                            };
                            let now = ready!(poll_deadline(
                                this.timer.as_mut(),
                                at,
                                settings,
                                &mut early_fires,
                                cx
                            ));
                            *this.pending = None;
                            let run = this.run.as_mut().expect("a run");
                            timed_out(run, this.notify, this.last_error, now)
                        }
                    }
                }
                StateProj::Calling { future } => {
                    let polled = {
                        let _inside = nesting::enter();
                        future.poll(cx)
                    };
                    let run = this.run.as_mut().expect("a run");
                    match polled {
                        Poll::Ready(Ok(response)) => {
                            let now = settings.clock.now();
                            let failure = settings.responses.classify_response(&response);
                            after_response(
                                run,
                                this.notify,
                                this.last_error,
                                response,
                                failure,
                                now,
                            )
                        }
                        Poll::Ready(Err(error)) => {
                            let now = settings.clock.now();
                            failed_with_error(
                                run,
                                this.notify,
                                this.last_error,
                                settings,
                                error,
                                now,
                            )
                        }
                        Poll::Pending => {
                            let Some(at) = *this.deadline else {
                                return Poll::Pending;
                            };
                            let now = ready!(poll_deadline(
                                this.timer.as_mut(),
                                at,
                                settings,
                                &mut early_fires,
                                cx
                            ));
                            // The deadline passed mid-attempt: the attempt's future is dropped
                            // below, which cancels it, and it counts as a timeout.
                            timed_out(run, this.notify, this.last_error, now)
                        }
                    }
                }
                StateProj::Sleeping { wait } => {
                    ready!(wait.poll(cx));
                    this.state.set(State::Idle);
                    continue;
                }
                StateProj::Done => panic!("ResponseFuture polled after it completed"),
            };
            match step {
                Step::Retry(delay) if delay.is_zero() => {
                    // A zero delay does not touch the timer, but it yields: an inner service
                    // that fails at once must not hold the thread for all the attempts.
                    this.state.set(State::Idle);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Step::Retry(delay) => {
                    let wait = settings.sleeper.sleep(delay);
                    this.state.set(State::Sleeping { wait });
                }
                Step::Finish(output) => {
                    this.state.set(State::Done);
                    *this.template = None;
                    return Poll::Ready(output);
                }
            }
        }
    }
}

/// Starts the run, with a policy only if attempts after the first can happen.
#[allow(clippy::too_many_arguments)]
fn start_run<P, R, C, S, K, B, N, ReqBody>(
    run: &mut Option<Run<PerRequest<P>, B>>,
    single: &mut bool,
    settings: &Settings<P, R, C, S, K, B, N>,
    body: &Source<ReqBody>,
    may_retry: bool,
    options: RunOptions,
    started: Timestamp,
) where
    P: MakePolicy + Clone,
    B: Budget + Clone,
    ReqBody: Body,
{
    *single = !(may_retry && body.replayable());
    let policy = if *single {
        PerRequest::Single
    } else {
        PerRequest::new(settings.policy.clone())
    };
    *run = Some(Run::with_budget(
        policy,
        settings.budget.clone(),
        options,
        started,
    ));
}

/// The request for the next attempt: a copy if another attempt may follow, else the original.
fn next_request<B: Body>(template: &mut Option<Template<B>>, keep: bool) -> Request<RetryBody<B>> {
    if keep {
        if let Some(Template { parts, body }) = template.as_ref() {
            if let Some(body) = body.copy() {
                return Request::from_parts(parts.clone(), body);
            }
        }
    }
    // A request that cannot be replayed runs under a single-attempt policy, so it is taken
    // once only.
    let Template { parts, body } = template.take().expect("a request for the attempt");
    Request::from_parts(parts, body.into_body())
}

/// Polls the deadline's timer, arming it on first use: ready with the time once the deadline
/// has passed on the clock. A timer that fires early is re-armed for the rest; one that keeps
/// firing at once makes the task yield rather than spin.
fn poll_deadline<P, R, C, S: Sleeper, K: Clock, B, N>(
    mut timer: Pin<&mut Option<S::Sleep>>,
    at: Timestamp,
    settings: &Settings<P, R, C, S, K, B, N>,
    early_fires: &mut u32,
    cx: &mut Context<'_>,
) -> Poll<Timestamp> {
    loop {
        let fired = match timer.as_mut().as_pin_mut() {
            Some(sleep) => {
                ready!(sleep.poll(cx));
                true
            }
            None => false,
        };
        let now = settings.clock.now();
        if now >= at {
            return Poll::Ready(now);
        }
        timer.set(Some(
            settings.sleeper.sleep(at.saturating_duration_since(now)),
        ));
        if fired {
            *early_fires += 1;
            if *early_fires > 3 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }
}

/// After a response: success, a retry, or the end of the run.
fn after_response<P, B, ResBody, E, N>(
    run: &mut Run<PerRequest<P>, B>,
    notify: &mut N,
    last_error: &mut Option<E>,
    response: Response<ResBody>,
    failure: Option<Failure>,
    now: Timestamp,
) -> Step<Output<ResBody, E>>
where
    P: MakePolicy,
    B: Budget,
    N: Notify<AttemptError<E>>,
{
    let Some(failure) = failure else {
        return Step::Finish(match run.succeeded(now) {
            Ok(summary) => {
                trace::succeeded(&summary);
                Ok(report(response, summary, None))
            }
            // It came too late: the caller's time is spent.
            Err(stopped) => Err(give_up(notify, stopped, last_error.take())),
        });
    };
    *last_error = None;
    let status = AttemptError::Status(response.status());
    match run.failed(now, failure) {
        Ok(retry) => {
            notify::retrying(notify, &retry, &status, failure);
            Step::Retry(retry.delay)
        }
        Err(stopped) if stopped.reason == StopReason::Deadline => {
            Step::Finish(Err(give_up(notify, stopped, None)))
        }
        Err(stopped) => {
            notify.gave_up(&stopped, Some(&status));
            trace::gave_up(&stopped);
            Step::Finish(Ok(report(response, stopped.summary, Some(stopped.reason))))
        }
    }
}

/// After the inner service failed: a retry, or the end of the run with its error.
fn failed_with_error<P, R, C, S, K, B, N, E, ResBody>(
    run: &mut Run<PerRequest<P>, B>,
    notify: &mut N,
    last_error: &mut Option<E>,
    settings: &Settings<P, R, C, S, K, B, N>,
    error: E,
    now: Timestamp,
) -> Step<Output<ResBody, E>>
where
    P: MakePolicy,
    B: Budget,
    C: Classifier<E>,
    N: Notify<AttemptError<E>>,
{
    let failure = settings.errors.classify(&error);
    let error = AttemptError::Inner(error);
    match run.failed(now, failure) {
        Ok(retry) => {
            notify::retrying(notify, &retry, &error, failure);
            *last_error = error.into_inner();
            Step::Retry(retry.delay)
        }
        Err(stopped) => {
            notify.gave_up(&stopped, Some(&error));
            trace::gave_up(&stopped);
            Step::Finish(Err(RetryError::new(stopped, error.into_inner())))
        }
    }
}

/// After the deadline passed during an attempt.
fn timed_out<P, B, N, E, ResBody>(
    run: &mut Run<PerRequest<P>, B>,
    notify: &mut N,
    last_error: &mut Option<E>,
    now: Timestamp,
) -> Step<Output<ResBody, E>>
where
    P: MakePolicy,
    B: Budget,
    N: Notify<AttemptError<E>>,
{
    match run.failed(now, Failure::Timeout) {
        // Past the deadline the engine always stops; a retry would only follow a clock that
        // went back.
        Ok(retry) => Step::Retry(retry.delay),
        Err(stopped) => Step::Finish(Err(give_up(notify, stopped, last_error.take()))),
    }
}

/// The error of a run that gave up without a response to return.
fn give_up<E, N: Notify<AttemptError<E>>>(
    notify: &mut N,
    stopped: Stopped,
    last_error: Option<E>,
) -> RetryError<E> {
    let last_error = last_error.map(AttemptError::Inner);
    notify.gave_up(&stopped, last_error.as_ref());
    trace::gave_up(&stopped);
    RetryError::new(stopped, last_error.and_then(AttemptError::into_inner))
}

/// `response` with its [`RetryReport`].
fn report<ResBody>(
    mut response: Response<ResBody>,
    summary: Summary,
    gave_up: Option<StopReason>,
) -> Response<ResBody> {
    response
        .extensions_mut()
        .insert(RetryReport { summary, gave_up });
    response
}

/// The error of a service whose `poll_ready` failed: one attempt, not retryable. tower treats
/// such a service as unusable, so no request is retried on it.
pub(super) fn unusable<E>(error: E) -> RetryError<E> {
    struct Never;
    impl Policy for Never {
        fn next_delay(&mut self, _: u32, _: &Failure) -> Option<Duration> {
            None
        }
    }
    let now = Timestamp::ZERO;
    let mut run = Run::new(Never, RunOptions::new(), now);
    let stopped = run
        .begin(now)
        .and_then(|_| run.failed(now, Failure::Permanent))
        .map_or_else(
            |stopped| stopped,
            |_| unreachable!("a permanent failure is retried"),
        );
    RetryError::new(stopped, Some(error))
}

impl<E> AttemptError<E> {
    fn into_inner(self) -> Option<E> {
        match self {
            Self::Inner(error) => Some(error),
            Self::Status(_) => None,
        }
    }
}
