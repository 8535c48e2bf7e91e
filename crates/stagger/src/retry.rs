//! The retry builder, shared by the async and the blocking executor.
//!
//! [`retry`] (async) and [`blocking::retry`](crate::blocking::retry) return the same builder,
//! [`Retry`], with the same settings. An async retry runs when awaited; a blocking one runs
//! with [`call`](Retry::call). Both drive the core's [`Run`](stagger_core::engine::Run), through
//! one driver, so their semantics cannot differ.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use stagger_core::engine::{Attempt, Nested, Settings};
use stagger_core::gate::{Gate, GatedBudget};

use stagger_core::{Failure, IntoPolicy, SeededRng, Timestamp};

use crate::classify::{Classifier, ClassifyOk};
use crate::clock::DefaultClock;
use crate::hooks::Hooks;
use crate::notify::{Notify, RetryEvent};
use crate::operation::{AsyncFn, Operation};
use crate::setup::Setup;
use crate::sleep::DefaultSleeper;

/// A retried operation, its policy, its [`Settings`] and its [`Hooks`]. Run it by awaiting it
/// (async) or with [`call`](Retry::call) (blocking).
///
/// The policy is a configuration of the catalog (checked when the run starts: an invalid one
/// ends the run with [`StopReason::InvalidConfig`](stagger_core::engine::StopReason) and its
/// [`ConfigError`](stagger_core::ConfigError), never a panic; the policy is built for this run
/// alone, with its own generator) or a policy already built, for this one run.
///
/// A zero delay never touches the timer; the async executor yields between such retries, so an
/// operation that fails at once cannot hold its thread for all its attempts.
///
/// The defaults: no deadline, idempotent, the error classifies itself
/// ([`ByKind`](crate::classify::ByKind)), every `Ok` is a success, the longest server-directed
/// wait honoured is 5 minutes, a nested executor makes a single attempt, no budget, no hook.
#[must_use = "a retry does nothing until it is awaited or called"]
pub struct Retry<O, P, H = Hooks> {
    pub(crate) op: O,
    pub(crate) policy: P,
    pub(crate) setup: Setup<H>,
    /// The most attempts the operation can make, whatever the policy says.
    pub(crate) attempt_limit: u32,
    /// The generator of the spread above a server's wait, if the caller gave one.
    pub(crate) spread_rng: Option<SeededRng>,
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

impl<O, P, H> Retry<O, P, H> {
    pub(crate) const fn new(op: O, policy: P, hooks: H) -> Self {
        Self {
            op,
            policy,
            setup: Setup::new(hooks),
            attempt_limit: u32::MAX,
            spread_rng: None,
        }
    }

    /// Draws the spread above a server-directed wait ([`Dispersal`](stagger_core::engine::Dispersal))
    /// from `rng` rather than from a generator seeded from process entropy: with a seeded
    /// policy and a manual clock, a run's every delay is then reproducible, `Retry-After`
    /// included. Give each run its own generator ([`SeededRng::fork`]), so that runs do not
    /// draw in step.
    pub fn spread_rng(mut self, rng: SeededRng) -> Self {
        self.spread_rng = Some(rng);
        self
    }

    /// Replaces every setting: the deadline, idempotency, the longest server wait and what to
    /// do when nested, as a configuration file's `RetrySpec::to_settings` gives them.
    pub fn settings(mut self, settings: Settings) -> Self {
        self.setup.settings(settings);
        self
    }

    /// One end-to-end deadline, `timeout` after the run starts (its first poll, or its call).
    /// It covers every attempt and every wait; each attempt is told the time left. An async
    /// attempt still running at the deadline is cancelled (its future dropped) and counts as a
    /// timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.setup.timeout(timeout);
        self
    }

    /// A timeout for each attempt, within the deadline: each attempt is told
    /// `min(timeout, time left)`, and an async attempt still running then is cancelled and
    /// counts as a timeout, retried as any timeout is (not for an operation that is not
    /// idempotent). A blocking attempt cannot be cancelled: it is told the time, to honour.
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.setup.attempt_timeout(timeout);
        self
    }

    /// One end-to-end deadline at `deadline` on the executor's clock's timeline. The default
    /// clocks share the process timeline, so a deadline read from any of them (say
    /// `MonotonicClock::new().now() + 5 s`, computed when a request arrived) holds for every
    /// run; with a [`ManualClock`](stagger_core::ManualClock), compute it from that clock.
    /// For a time from now, use [`timeout`](Retry::timeout).
    pub fn deadline(mut self, deadline: Timestamp) -> Self {
        self.setup.deadline(deadline);
        self
    }

    /// Whether the operation may be repeated safely (default `true`). A non-idempotent one is
    /// retried only after a failure known to have had no effect, such as a refused connection
    /// or a 429: never after a timeout or a 5xx whose effect is uncertain.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.setup.idempotent(idempotent);
        self
    }

    /// The longest server-directed wait honoured (default 5 minutes). A server asking for more
    /// stops the run; a shorter request is a floor under the next delay, never undercut.
    pub fn max_server_wait(mut self, limit: Duration) -> Self {
        self.setup.max_server_wait(limit);
        self
    }

    /// What to do when running inside another executor's attempt (default
    /// [`Nested::SingleAttempt`]).
    ///
    /// The mark is held only while an attempt's own code runs (its synchronous call, or a poll
    /// of its future). Detection covers an executor started while another's attempt runs on
    /// the same thread, or is polled in the same async task, on any runtime; work spawned onto
    /// another task or thread is not nested. One exception: an executor that runs other tasks
    /// *inside* an attempt (a `block_on` within a blocking operation, say) runs them under the
    /// mark, and their retries count as nested.
    pub fn when_nested(mut self, nested: Nested) -> Self {
        self.setup.when_nested(nested);
        self
    }

    /// The same retry with the setup `f` makes of its own: every setter is one call of this.
    #[inline]
    fn with_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> Retry<O, P, H2> {
        Retry {
            op: self.op,
            policy: self.policy,
            setup: f(self.setup),
            attempt_limit: self.attempt_limit,
            spread_rng: self.spread_rng,
        }
    }

    /// Allows at most `max` attempts, whatever the policy says: an operation that cannot be
    /// repeated.
    #[cfg(feature = "reqwest")]
    pub(crate) fn attempt_limit(mut self, max: u32) -> Self {
        self.attempt_limit = self.attempt_limit.min(max);
        self
    }
}

impl<O: Operation, P, C, V, S, K, B, N> Retry<O, P, Hooks<C, V, S, K, B, N>> {
    /// Decides which errors are worth retrying, and how: any `Fn(&E) -> Failure`, whose
    /// argument is inferred. [`retry_any`](crate::classify::retry_any) retries everything, if
    /// you mean it.
    pub fn classify<C2>(self, classifier: C2) -> Retry<O, P, Hooks<C2, V, S, K, B, N>>
    where
        C2: Fn(&O::Error) -> Failure,
    {
        self.classifier(classifier)
    }

    /// Decides which errors are worth retrying with a [`Classifier`] of any type, such as the
    /// HTTP classifier (`stagger::http::HttpClassifier`, with the `http` feature) for an
    /// operation whose error is an HTTP response.
    pub fn classifier<C2>(self, classifier: C2) -> Retry<O, P, Hooks<C2, V, S, K, B, N>>
    where
        C2: Classifier<O::Error>,
    {
        self.with_setup(|setup| setup.classifier(classifier))
    }

    /// Looks at every successful value too: `None` accepts it, a [`Failure`] retries it like an
    /// error (a 200 whose body says "try later", an empty page). When the run gives up on such
    /// a value, the [`RetryError`](crate::RetryError) hands it back
    /// ([`last_value`](crate::RetryError::last_value)) with the reason.
    ///
    /// ```
    /// use stagger::policy::Immediate;
    /// use stagger::Failure;
    ///
    /// let pages = ["", "", "page"];
    /// let page = stagger::blocking::retry(Immediate::new(), |attempt| {
    ///     Ok::<_, std::io::Error>(pages[attempt.number as usize - 1])
    /// })
    /// .classify_ok(|page| page.is_empty().then_some(Failure::Retryable))
    /// .call();
    /// assert_eq!(page.unwrap(), "page");
    ///
    /// let error = stagger::blocking::retry(Immediate::new().with_max_attempts(2), |_| {
    ///     Ok::<_, std::io::Error>("")
    /// })
    /// .classify_ok(|page| page.is_empty().then_some(Failure::Retryable))
    /// .call()
    /// .unwrap_err();
    /// assert_eq!(error.last_value(), Some(&"")); // the last page, with why the run gave up
    /// assert_eq!(error.summary().attempts, 2);
    /// ```
    pub fn classify_ok<V2>(self, classifier: V2) -> Retry<O, P, Hooks<C, V2, S, K, B, N>>
    where
        V2: Fn(&O::Value) -> Option<Failure>,
    {
        self.ok_classifier(classifier)
    }

    /// Looks at every successful value with a [`ClassifyOk`] of any type, such as the HTTP
    /// classifier (`stagger::http::HttpClassifier`, with the `http` feature) for an operation
    /// that returns every response as `Ok`; see [`classify_ok`](Retry::classify_ok).
    pub fn ok_classifier<V2>(self, classifier: V2) -> Retry<O, P, Hooks<C, V2, S, K, B, N>>
    where
        V2: ClassifyOk<O::Value>,
    {
        self.with_setup(|setup| setup.ok(classifier))
    }

    /// Waits with `sleeper`: any `Fn(Duration) -> impl Future` for async, any `Fn(Duration)`
    /// for blocking.
    pub fn sleeper<S2>(self, sleeper: S2) -> Retry<O, P, Hooks<C, V, S2, K, B, N>> {
        self.with_setup(|setup| setup.sleeper(sleeper))
    }

    /// Reads time from `clock`, for the deadline and the summary.
    pub fn clock<K2>(self, clock: K2) -> Retry<O, P, Hooks<C, V, S, K2, B, N>> {
        self.with_setup(|setup| setup.clock(clock))
    }

    /// Retries only as far as `budget` allows; share one budget (through an `Arc`) across a
    /// service to bound the extra load retries add.
    pub fn budget<B2>(self, budget: B2) -> Retry<O, P, Hooks<C, V, S, K, B2, N>> {
        self.with_setup(|setup| setup.budget(budget))
    }

    /// Paces the calls to one destination, named by `key`, through `gate`, shared (an `Arc`)
    /// by every call to it: once a server tells any of them to wait, every other call to it,
    /// first attempts included, waits for a paced slot of its own, and gives up at once if that
    /// slot would come after its deadline. The budget set so far stays behind the gate (a
    /// [`GatedBudget`]); set it before this. See [`Gate`](stagger_core::gate::Gate).
    ///
    /// `gate_to`, not `gate`: a run goes to the one destination its caller names. The tower
    /// layer's and the reqwest middleware's `gate(gate)` take no key, and key each request by
    /// its own host and port.
    #[allow(clippy::type_complexity)] // The builder's type, one part wrapped.
    pub fn gate_to(
        self,
        gate: Arc<Gate>,
        key: impl Into<Arc<str>>,
    ) -> Retry<O, P, Hooks<C, V, S, K, GatedBudget<B>, N>> {
        self.with_setup(|setup| setup.gate_to(gate, key.into()))
    }

    /// Calls `hook` before every retry that will actually happen, with the attempt number,
    /// what it returned, the delay, the elapsed time and the time left; its argument is
    /// inferred. (If the wait then overruns the deadline, because the sleeper overslept, the
    /// next attempt does not start after all.)
    pub fn notify<N2>(self, hook: N2) -> Retry<O, P, Hooks<C, V, S, K, B, N2>>
    where
        N2: FnMut(&RetryEvent<'_, O::Value, O::Error>),
    {
        self.notifier(hook)
    }

    /// Tells `notifier`, a [`Notify`] of any type, of every retry and of the give-up.
    pub fn notifier<N2>(self, notifier: N2) -> Retry<O, P, Hooks<C, V, S, K, B, N2>>
    where
        N2: Notify<O::Value, O::Error>,
    {
        self.with_setup(|setup| setup.notify(notifier))
    }
}

impl<O, P, H> std::fmt::Debug for Retry<O, P, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retry")
            .field("settings", &self.setup.settings)
            .finish_non_exhaustive()
    }
}
