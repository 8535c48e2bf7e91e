//! Hedged runs on the async executor: the [`HedgedRetry`] that [`Retry::hedge`] returns, a
//! future itself, and the future of its [`outcome`](HedgedRetry::outcome).
//!
//! [`Hedging`] (in the engine) says when each copy goes out; [`Retry::hedge`] says what holds
//! as for a retried run. A [`HedgedRetry`] yields the operation's result; its
//! [`outcome`](HedgedRetry::outcome) is a [`HedgedRetryOutcomeFuture`], yielding the
//! [`Outcome`] with the run's summary.

// The engine's `Hedger` decides when each attempt goes out and what an answer means; this
// driver keeps the attempts in flight, polls them side by side, cancels (drops) the losers and
// an attempt that outlives its own timeout, and wakes for the next hedge, the next expiry or
// the deadline, whichever comes first. Starting the run, classifying what an attempt returned,
// the hooks, the trace and the outcome are the retrying driver's own (`Driver`), and the timer
// is `timer`'s.
//
// Every front end hedges the same way: its one `hedge` setting (`hedge_setting!` below) makes a
// `Hedges`
// (the `Hedging` and the latencies it reads) and the front end's hedged form keeps it; each
// request's `HedgedRetry` is made of its run's parts and a `Hedges`. They differ only where
// their nature does: one run has no latencies of its own to read, so a delay at a quantile
// needs them given (`HedgedRetry::latencies`), while a layer or a middleware measures its
// requests into a sketch of its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use stagger_core::engine::{Answer, Hedge, HedgeDelay, Hedger, Hedging, StopReason};
use stagger_core::sketch::LatencySketch;
use stagger_core::{ConfigError, Failure, IntoPolicy, Timestamp};

use crate::classify::{Classifier, ClassifyOk};
use crate::driver::{Driver, Kept, OutcomeOf, ResultOf, give_up};
use crate::hooks::{HookSet, HooksFor, RunBudget};
use crate::nesting;
use crate::operation::AsyncOperation;
use crate::parts::Parts;
use crate::retry::Retry;
use crate::retry_error::{Last, Outcome};
use crate::sleep::{MaybeSleeper, Sleeper};
use crate::timer::{self, EarlyFires};
use crate::trace;
use stagger_core::Clock;

/// How a front end hedges: the hedged counterpart `Hedged` it becomes
/// ([`hedge`](crate::Retry::hedge)).
pub(crate) trait HedgedForm<Hedged>: Sized {
    /// This front end, hedging by `hedges`.
    fn hedged(self, hedges: Hedges) -> Hedged;

    /// Whether the front end runs many requests, and so measures their latencies into a sketch
    /// of its own for a delay at a quantile.
    const MANY_REQUESTS: bool;
}

/// Writes `hedge` for a front end that can hedge.
macro_rules! hedge_setting {
    (
        front: $front:ident<$($arg:ident),*>,
        hedged: $hedged:ty,
        generics: [$($g:tt)*],
        where: [$($bounds:tt)*],
    ) => {
        impl<$($g)* H> $front<$($arg,)* H>
        where
            $($bounds)*
        {
            /// Hedges instead of retrying: sends the first attempt at once and another each
            /// time `hedging`'s delay passes without an answer, up to its `max_attempts` in
            /// all, takes the first success and cancels the rest (gRPC's `hedgingPolicy`; see
            /// [`Hedging`](stagger_core::engine::Hedging) for the rules). The policy's delays
            /// are not used. It returns this front end's hedged form, used as this one is
            /// (awaited, layered, added to a client), which measures latencies with
            /// `.latencies(..)`.
            ///
            /// Everything else holds as for a retried run: the one deadline bounds every
            /// attempt, an attempt timeout cancels an attempt that outlives it, every hedge is
            /// a retry the budget may refuse, and an operation that is not idempotent is never
            /// in flight twice. In the HTTP layers, only a request whose body can be replayed
            /// is sent more than once. A delay at a latency quantile reads the latencies of the
            /// front end's attempts: the HTTP layers measure their requests into a sketch of
            /// their own, and a single run needs them given (`.latencies(..)`).
            ///
            /// The hook hears why the run gave up, if it does; its retry events are for
            /// retries, which a hedged run does not make. With the `tracing` feature each hedge
            /// sent and each attempt that fails while the run goes on is a `debug` event
            /// ("hedging", "hedged attempt failed").
            pub fn hedge(
                self,
                hedging: stagger_core::engine::Hedging,
            ) -> $hedged {
                let hedges = $crate::hedge::Hedges::new(
                    hedging,
                    <Self as $crate::hedge::HedgedForm<$hedged>>::MANY_REQUESTS,
                );
                $crate::hedge::HedgedForm::hedged(self, hedges)
            }
        }
    };
}

#[cfg(any(feature = "tower", feature = "reqwest"))]
pub(crate) use hedge_setting;

hedge_setting! {
    front: Retry<O, P>,
    hedged: crate::hedge::HedgedRetry<O, P, H>,
    generics: [O, P,],
    where: [
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Ok: crate::classify::ClassifyOk<O::Value>, Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    ],
}

/// How a front end hedges: the [`Hedging`], and the latencies a delay at a quantile reads and
/// every attempt is measured into. Every front end's hedged form keeps one, so that which
/// latencies a front end measures into, and how a hedged run is made of a retry, are written
/// once.
#[derive(Clone, Debug)]
pub(crate) struct Hedges {
    pub(crate) hedging: Hedging,
    pub(crate) latencies: Option<Arc<LatencySketch>>,
}

impl Hedges {
    /// For a front end that runs `many_requests`, a sketch of its own for a delay at a
    /// quantile, which all its requests measure into and read; for one run, latencies only
    /// when given ([`HedgedRetry::latencies`]): a run's own attempts alone could not tell its
    /// first hedge when to go.
    pub(crate) fn new(hedging: Hedging, many_requests: bool) -> Self {
        let latencies = (many_requests && matches!(hedging.delay(), HedgeDelay::Quantile(_)))
            .then(|| Arc::new(LatencySketch::new()));
        Self { hedging, latencies }
    }

    /// Measures into `latencies`, in place of any other.
    pub(crate) fn latencies(&mut self, latencies: Arc<LatencySketch>) {
        self.latencies = Some(latencies);
    }

    /// The hedged run of `parts`.
    #[inline]
    pub(crate) fn hedge<O, P, H>(self, parts: Parts<O, P, H>) -> HedgedRetry<O, P, H>
    where
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    {
        HedgedRetry {
            run: HedgedRetryOutcomeFuture {
                start: Some((parts, self)),
                run: None,
                span: trace::RunSpan::new(),
                timer: None,
            },
        }
    }
}

impl<O, P, H> HedgedForm<HedgedRetry<O, P, H>> for Retry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
    const MANY_REQUESTS: bool = false;

    fn hedged(self, hedges: Hedges) -> HedgedRetry<O, P, H> {
        hedges.hedge(self.into_parts())
    }
}

pin_project! {
    /// A [`Retry`] that hedges ([`Retry::hedge`]), itself a [`Future`]: await it for the
    /// operation's result, or call [`outcome`](HedgedRetry::outcome) for the summary too.
    #[must_use = "a hedged run does nothing unless awaited"]
    pub struct HedgedRetry<O, P, H>
    where
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    {
        #[pin]
        run: HedgedRetryOutcomeFuture<O, P, H>,
    }
}

impl<O, P, H> HedgedRetry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
    /// Runs the hedged attempts and yields the [`Outcome`]: the result and the run's summary.
    pub fn outcome(self) -> HedgedRetryOutcomeFuture<O, P, H> {
        self.run
    }
}

crate::surface::hedged_settings! {
    front: HedgedRetry<O, P, H>,
    generics: [O, P, H],
    where: [
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    ],
    hedges: |this| this.run.start.as_mut().map(|(_, hedges)| hedges),
}

// One `Future` impl, so that a bound it misses is what rustc reports, with its own message.
impl<O, P, H> Future for HedgedRetry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HooksFor<O>,
    H::Sleeper: Sleeper,
{
    type Output = ResultOf<O, H>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().run.poll(cx).map(|outcome| outcome.result)
    }
}

/// An attempt in flight.
struct Flying<F> {
    number: u32,
    attempt: Pin<Box<F>>,
    sent: Timestamp,
    /// When its own time is up (its timeout, or the deadline).
    expires: Option<Timestamp>,
}

/// A started hedged run.
struct Running<O, Pol, H>
where
    O: AsyncOperation,
    H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
{
    driver: Driver<O, Pol, H>,
    hedger: Hedger,
    latencies: Option<Arc<LatencySketch>>,
    flying: Vec<Flying<O::Attempt>>,
    /// What the last attempt to fail left, for the error if none succeeds.
    last: Last<O::Error, Kept<O, H::Ok>>,
    /// Whether the operation is ready for its first attempt.
    prepared: bool,
    /// When the timer is armed for.
    timer_at: Option<Timestamp>,
    /// When the engine last asked to be asked again.
    wait_until: Option<Timestamp>,
}

pin_project! {
    /// The future of a [`HedgedRetry`]'s [`outcome`](HedgedRetry::outcome).
    #[must_use = "futures do nothing unless polled"]
    pub struct HedgedRetryOutcomeFuture<O, P, H>
    where
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Ok: ClassifyOk<O::Value>, Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    {
        start: Option<(Parts<O, P, H>, Hedges)>,
        run: Option<Running<O, P::Policy, H>>,
        span: trace::RunSpan,
        // Wakes the run for the next hedge, the next attempt's expiry or the deadline.
        #[pin]
        timer: Option<<H::Sleeper as MaybeSleeper>::Sleep>,
    }
}

/// What a poll of the attempts in flight found.
enum Polled<T> {
    /// The run is over.
    Done(T),
    /// Nothing decisive.
    Going,
}

impl<O, P, H> Future for HedgedRetryOutcomeFuture<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HooksFor<O>,
    H::Sleeper: Sleeper,
{
    type Output = OutcomeOf<O, H>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _span = this.span.enter();
        if let Some((parts, hedges)) = this.start.take() {
            match start(parts, hedges) {
                Ok(run) => *this.run = Some(run),
                Err(outcome) => return Poll::Ready(outcome),
            }
        }
        let Some(run) = this.run.as_mut() else {
            panic!("HedgedRetryOutcomeFuture polled after it completed");
        };
        let mut early_fires = EarlyFires::new();
        loop {
            if let Polled::Done(outcome) = run.step(cx) {
                *this.run = None;
                return Poll::Ready(outcome);
            }
            // Nothing decisive: wait for an attempt, or for the time the run next acts at.
            let Some(at) = run.wake_at() else {
                return Poll::Pending;
            };
            if run.timer_at != Some(at) {
                let now = run.driver.clock.now();
                timer::arm(this.timer.as_mut(), &run.driver.sleeper, now, at);
                run.timer_at = Some(at);
            }
            let Some(timer) = this.timer.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            if timer.poll(cx).is_pending() {
                return Poll::Pending;
            }
            run.timer_at = None;
            this.timer.set(None);
            if run.driver.clock.now() < at {
                // A timer that fired early: step again and arm it again, and yield rather than
                // spin if it keeps doing so.
                ready!(early_fires.fired_early(cx));
            }
        }
    }
}

/// Starts the run of `hedged`: the driver's start, then the hedging checked.
fn start<O, P, H>(
    parts: Parts<O, P, H>,
    Hedges { hedging, latencies }: Hedges,
) -> Result<Running<O, P::Policy, H>, OutcomeOf<O, H>>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HooksFor<O>,
{
    let mut driver = Driver::start(parts)?;
    let invalid = match (hedging.validate(), hedging.delay(), &latencies) {
        (Err(error), ..) => Some(error),
        (Ok(()), HedgeDelay::Quantile(_), None) => Some(ConfigError::Unusable {
            param: "hedge_quantile",
            reason: "a delay at a latency quantile needs the latencies measured across runs \
                     (HedgedRetry::latencies)",
        }),
        _ => None,
    };
    if let Some(error) = invalid {
        let now = driver.clock.now();
        let stopped = driver.run.stop(now, StopReason::InvalidConfig);
        return Err(give_up(
            &mut driver.notify,
            stopped,
            Last::Invalid(Box::new(error)),
        ));
    }
    let measured = match (hedging.delay(), &latencies) {
        (HedgeDelay::Quantile(q), Some(sketch)) => sketch.quantile(q),
        _ => None,
    };
    let hedger = Hedger::new(&driver.run, hedging, measured);
    Ok(Running {
        driver,
        hedger,
        latencies,
        flying: Vec::new(),
        last: Last::Nothing,
        prepared: false,
        timer_at: None,
        wait_until: None,
    })
}

impl<O, Pol, H> Running<O, Pol, H>
where
    O: AsyncOperation,
    Pol: stagger_core::Policy,
    H: HooksFor<O>,
{
    /// Polls what is in flight and sends what is due, until nothing more happens at once.
    fn step(&mut self, cx: &mut Context<'_>) -> Polled<OutcomeOf<O, H>> {
        if !self.prepared {
            let retries_possible = !self.driver.run.is_nested();
            match self.driver.op.poll_prepare(cx, retries_possible) {
                Poll::Ready(max) => {
                    self.driver.run.limit_attempts(max);
                    self.prepared = true;
                }
                Poll::Pending => {
                    let now = self.driver.clock.now();
                    if self.driver.run.deadline().is_some_and(|d| now >= d) {
                        return Polled::Done(self.driver.deadline_before_the_first_attempt(now));
                    }
                    return Polled::Going;
                }
            }
        }
        loop {
            if let Polled::Done(outcome) = self.poll_flying(cx) {
                return Polled::Done(outcome);
            }
            let now = self.driver.clock.now();
            if self.hedger.sends_at(&self.driver.run, now) {
                match self.driver.op.poll_ready(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(error)) => {
                        if self.flying.is_empty() {
                            let stopped = self.hedger.abandon(
                                &mut self.driver.run,
                                now,
                                StopReason::NotRetryable,
                            );
                            return Polled::Done(give_up(
                                &mut self.driver.notify,
                                stopped,
                                Last::Error(error),
                            ));
                        }
                        // No more hedges; those in flight go on.
                        self.last = Last::Error(error);
                        self.hedger.stop_sending(StopReason::NotRetryable);
                        continue;
                    }
                    // The service wakes the task when it is ready.
                    Poll::Pending => return Polled::Going,
                }
            }
            match self.hedger.next(&mut self.driver.run, now) {
                Hedge::Send(attempt) => {
                    let expires = attempt.remaining.map(|r| now.saturating_add(r));
                    let number = attempt.number;
                    trace::hedging(number, attempt.elapsed);
                    let future = {
                        let _inside = nesting::enter();
                        self.driver.op.attempt(attempt)
                    };
                    self.flying.push(Flying {
                        number,
                        attempt: Box::pin(future),
                        sent: now,
                        expires,
                    });
                    // Polled at once, so that it can wake the task.
                }
                Hedge::Wait(rest) => {
                    // Ready, but not sending: hold nothing while waiting.
                    self.wait_until = Some(now.saturating_add(rest));
                    self.driver.op.unready();
                    return Polled::Going;
                }
                Hedge::Idle => {
                    self.wait_until = None;
                    self.driver.op.unready();
                    return Polled::Going;
                }
                Hedge::Stop(stopped) => {
                    self.cancel_all(now);
                    let last = std::mem::replace(&mut self.last, Last::Nothing);
                    return Polled::Done(give_up(&mut self.driver.notify, stopped, last));
                }
            }
        }
    }

    /// Polls every attempt in flight, and cuts those whose time is up.
    fn poll_flying(&mut self, cx: &mut Context<'_>) -> Polled<OutcomeOf<O, H>> {
        let mut i = 0;
        while i < self.flying.len() {
            let polled = {
                let _inside = nesting::enter();
                self.flying[i].attempt.as_mut().poll(cx)
            };
            let now = self.driver.clock.now();
            let result = match polled {
                Poll::Ready(result) => Some(result),
                Poll::Pending if self.flying[i].expires.is_some_and(|at| now >= at) => None,
                Poll::Pending => {
                    i += 1;
                    continue;
                }
            };
            // Answered, or cut at its own time (dropped here, which cancels it).
            let flying = self.flying.swap_remove(i);
            self.measure(flying.sent, now);
            let number = flying.number;
            drop(flying);
            let answered = match result {
                None => Err(Failure::Timeout),
                Some(Ok(value)) => match self.driver.ok.classify_ok(&value) {
                    None => {
                        match self
                            .hedger
                            .answered(&mut self.driver.run, number, now, Ok(()))
                        {
                            Answer::Won(summary) => {
                                self.cancel_all(now);
                                trace::succeeded(&summary);
                                return Polled::Done(Outcome {
                                    result: Ok(value),
                                    summary,
                                });
                            }
                            // It came too late: the caller's time is spent, and the value
                            // with it.
                            Answer::Stop(stopped) => {
                                self.cancel_all(now);
                                let last = std::mem::replace(&mut self.last, Last::Nothing);
                                return Polled::Done(give_up(
                                    &mut self.driver.notify,
                                    stopped,
                                    last,
                                ));
                            }
                            Answer::Lost => continue,
                        }
                    }
                    Some(failure) => {
                        self.last = H::Ok::keep(value).map_or(Last::Nothing, Last::Value);
                        Err(failure)
                    }
                },
                Some(Err(error)) => {
                    let failure = self.driver.classifier.classify(&error);
                    self.last = Last::Error(error);
                    Err(failure)
                }
            };
            let failure = answered.err();
            match self
                .hedger
                .answered(&mut self.driver.run, number, now, answered)
            {
                Answer::Lost => {
                    if let Some(failure) = failure {
                        trace::hedge_lost(number, &failure);
                    }
                }
                Answer::Won(_) => unreachable!("a failure never wins"),
                Answer::Stop(stopped) => {
                    self.cancel_all(now);
                    let last = std::mem::replace(&mut self.last, Last::Nothing);
                    return Polled::Done(give_up(&mut self.driver.notify, stopped, last));
                }
            }
        }
        Polled::Going
    }

    /// The next time the run acts without an attempt answering: the next hedge, an attempt's
    /// expiry, or the deadline.
    fn wake_at(&self) -> Option<Timestamp> {
        let expiry = self.flying.iter().filter_map(|f| f.expires).min();
        [self.wait_until, expiry, self.driver.run.deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Cancels every attempt still in flight at `now`, measuring each for as long as it ran.
    fn cancel_all(&mut self, now: Timestamp) {
        for flying in std::mem::take(&mut self.flying) {
            self.measure(flying.sent, now);
        }
    }

    fn measure(&self, sent: Timestamp, now: Timestamp) {
        if let Some(sketch) = &self.latencies {
            sketch.record(now.saturating_duration_since(sent));
        }
    }
}
