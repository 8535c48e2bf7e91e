//! The async executor's retry, [`Retry`]: a future itself, with every front end's settings.
//!
//! [`retry`] returns a [`Retry`], which runs when polled (awaited, spawned, joined);
//! [`blocking::retry`](crate::blocking::retry) returns a
//! [`BlockingRetry`](crate::blocking::BlockingRetry) with the same settings, run with
//! [`call`](crate::blocking::BlockingRetry::call). Both drive the core's
//! [`Run`](stagger_core::engine::Run) through one driver, so their semantics cannot differ.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use stagger_core::IntoPolicy;
use stagger_core::engine::Attempt;

use crate::clock::DefaultClock;
use crate::driver::ResultOf;
use crate::future::RetryOutcomeFuture;
use crate::hooks::{HookSet, Hooks, HooksFor, RunBudget};
use crate::operation::{AsyncFn, AsyncOperation, Operation};
use crate::parts::Parts;
use crate::setup::Setup;
use crate::sleep::{DefaultSleeper, MaybeSleeper, Sleeper};
use crate::surface::{Fails, Succeeds, call_settings, surface};

pin_project! {
    /// An async retry: the operation, its policy, its [`Settings`](stagger_core::engine::Settings)
    /// and its [`Hooks`]. It is a [`Future`]: await it, spawn it, join it or race it, and it
    /// runs the retries and yields the operation's result; [`outcome`](Retry::outcome) yields
    /// the run's summary too.
    ///
    /// The policy is a configuration of the catalog (checked when the run starts: an invalid
    /// one ends the run with [`StopReason::InvalidConfig`](stagger_core::engine::StopReason)
    /// and its [`ConfigError`](stagger_core::ConfigError), never a panic; the policy is built
    /// for this run alone, with its own generator) or a policy already built, for this one run.
    ///
    /// A zero delay never touches the timer; the executor yields between such retries, so an
    /// operation that fails at once cannot hold its thread for all its attempts.
    ///
    /// The defaults: no deadline, idempotent, the error classifies itself
    /// ([`ByKind`](crate::classify::ByKind)), every `Ok` is a success, the longest
    /// server-directed wait honoured is 5 minutes, a nested executor makes a single attempt,
    /// no budget, no hook. The settings are the same on every front end: see the
    /// [list](crate::surface).
    #[must_use = "a retry does nothing until it is awaited"]
    pub struct Retry<O, P, H = Hooks>
    where
        O: AsyncOperation,
        P: IntoPolicy,
        H: HookSet<Budget: RunBudget>,
        H::Sleeper: MaybeSleeper,
    {
        #[pin]
        run: RetryOutcomeFuture<O, P, H>,
    }
}

impl<O, P, H> Retry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
    #[inline(always)]
    pub(crate) fn new(op: O, policy: P, hooks: H) -> Self {
        Self::of(Parts::new(op, policy, hooks))
    }

    /// The retry that runs `parts`.
    #[inline(always)]
    pub(crate) fn of(parts: Parts<O, P, H>) -> Self {
        Self {
            run: RetryOutcomeFuture::new(parts),
        }
    }

    /// The parts, before the run starts.
    #[inline(always)]
    pub(crate) fn into_parts(self) -> Parts<O, P, H> {
        self.run.into_parts()
    }

    /// The parts, before the run starts, to set in place.
    #[inline(always)]
    pub(crate) fn parts_mut(&mut self) -> &mut Parts<O, P, H> {
        self.run.parts_mut()
    }

    /// Runs the retries and yields the [`Outcome`](crate::Outcome): the result and the run's
    /// summary, which `.await` alone does not report.
    pub fn outcome(self) -> RetryOutcomeFuture<O, P, H> {
        self.run
    }

    /// The same retry with the setup `f` makes of its own: every setting is one call of this.
    #[inline(always)]
    fn map_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> Retry<O, P, H2>
    where
        H2: HookSet<Budget: RunBudget>,
        H2::Sleeper: MaybeSleeper,
    {
        Retry::of(self.into_parts().map_setup(f))
    }
}

call_settings! {
    front: Retry<O, P>,
    generics: [O, P,],
    where: [O: AsyncOperation, P: IntoPolicy, H: HookSet<Budget: RunBudget>, H::Sleeper: MaybeSleeper,],
    gated_where: [O: AsyncOperation, P: IntoPolicy, S: MaybeSleeper,],
    parts: |this| this.parts_mut(),
}

impl<O, P, H> crate::surface::sealed::Front for Retry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
}

impl<O: Operation, P, H> Fails<O::Error> for Retry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
}

impl<O: Operation, P, H> Succeeds<O::Value> for Retry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
}

surface! {
    front: Retry<O, P>,
    generics: [O, P,],
    where: [O: AsyncOperation, P: IntoPolicy, S: MaybeSleeper, B: RunBudget,],
    setup: |this| this.parts_mut().setup,
    map: map_setup,
    sleeper: [MaybeSleeper],
    budget: [RunBudget],
    gate: [B: stagger_core::budget::Budget],
}

/// Retries the async operation `op` under `policy`: a configuration of the catalog, or a policy
/// already built. `op` receives each [`Attempt`]: its number and the time left before the
/// deadline, to propagate downstream.
///
/// ```
/// # #[cfg(feature = "tokio")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use stagger::policy::ExponentialFullJitter;
/// use stagger::Failure;
///
/// let mut calls = 0;
/// let value = stagger::retry(ExponentialFullJitter::new().with_base(Duration::from_millis(1)), |attempt| {
///     calls += 1;
///     async move { if attempt.number < 3 { Err("busy") } else { Ok(attempt.number) } }
/// })
/// .timeout(Duration::from_secs(2))
/// .classify(|_| Failure::Retryable)
/// .await
/// .map_err(|e| e.to_string())?;
/// assert_eq!((value, calls), (3, 3));
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "tokio"))]
/// # fn main() {}
/// ```
pub fn retry<P, F, Fut, T, E>(policy: P, op: F) -> Retry<AsyncFn<F>, P>
where
    P: IntoPolicy,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    Retry::new(
        AsyncFn(op),
        policy,
        Hooks::with_time(DefaultSleeper::default(), DefaultClock::default()),
    )
}

/// `.retry(policy)` on any async operation that takes no arguments, as backon's users expect.
///
/// The one-line use, run against a loopback server that answers the first request with a 503
/// and the second with "ok":
///
/// ```
/// # #[cfg(all(feature = "reqwest", feature = "tracing"))]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let url = format!("http://{}/status", listener.local_addr().unwrap());
/// # let server = tokio::spawn(async move {
/// #     for (status, body) in [("503 Service Unavailable", "busy"), ("200 OK", "ok")] {
/// #         let (mut socket, _) = listener.accept().await.unwrap();
/// #         let (mut head, mut buf) = (Vec::new(), [0u8; 1024]);
/// #         while !head.windows(4).any(|w| w == b"\r\n\r\n") {
/// #             let n = socket.read(&mut buf).await.unwrap();
/// #             if n == 0 { break; }
/// #             head.extend_from_slice(&buf[..n]);
/// #         }
/// #         let reply = format!(
/// #             "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
/// #             body.len()
/// #         );
/// #         socket.write_all(reply.as_bytes()).await.unwrap();
/// #     }
/// # });
/// use std::time::Duration;
/// use stagger::policy::ExponentialFullJitter;
/// use stagger::{Failure, Retryable};
///
/// let fetch = || async { reqwest::get(&url).await?.error_for_status()?.text().await };
///
/// let reply = (|| async { fetch().await })
///     .retry(ExponentialFullJitter::new().with_max_attempts(4))
///     .timeout(Duration::from_secs(2))
///     .classify(|e| if e.is_timeout() { Failure::Timeout } else { Failure::Retryable })
///     .notify(|event| tracing::warn!(?event, "retrying"))
///     .await;
/// assert_eq!(reply.unwrap(), "ok"); // the 503 was retried
/// # server.await.unwrap(); // and the server saw exactly two requests
/// # }
/// # #[cfg(not(all(feature = "reqwest", feature = "tracing")))]
/// # fn main() {}
/// ```
pub trait Retryable<T, E, Fut>: Sized
where
    Fut: Future<Output = Result<T, E>>,
{
    /// Retries this operation under `policy`; see [`retry`].
    fn retry<P: IntoPolicy>(self, policy: P) -> Retry<AsyncFn<impl FnMut(Attempt) -> Fut>, P>;
}

impl<F, Fut, T, E> Retryable<T, E, Fut> for F
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    fn retry<P: IntoPolicy>(mut self, policy: P) -> Retry<AsyncFn<impl FnMut(Attempt) -> Fut>, P> {
        retry(policy, move |_: Attempt| self())
    }
}

// One `Future` impl for a retry, so that a bound it misses is what rustc reports, with that
// bound's own message naming the fix: `.classify(..)` for errors that do not classify
// themselves (`Classifier`), `.sleeper(..)` without the `tokio` feature (`Sleeper`), `.call()`
// for a blocking retry awaited (`AsyncOperation`).
impl<O, P, H> Future for Retry<O, P, H>
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

impl<O, P, H> std::fmt::Debug for Retry<O, P, H>
where
    O: AsyncOperation,
    P: IntoPolicy,
    H: HookSet<Budget: RunBudget>,
    H::Sleeper: MaybeSleeper,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retry").finish_non_exhaustive()
    }
}
