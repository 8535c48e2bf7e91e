//! [`Settings`]: how a run behaves beyond its policy, as one value every executor accepts.

use std::time::Duration;

#[cfg(doc)]
use super::outcome::StopReason;
use crate::clock::Timestamp;

/// The longest server-directed wait a run honours unless told otherwise: 5 minutes.
///
/// Envoy discards `Retry-After` values above 300 s; urllib3 caps them at 6 hours; AWS clamps
/// theirs. A run never retries earlier than the server asked, so a longer request means giving
/// up now ([`StopReason::ServerWaitTooLong`]) rather than waiting for minutes on end. Raise it
/// with [`Settings::with_max_server_wait`] for work that can wait, such as webhook delivery.
pub const DEFAULT_MAX_SERVER_WAIT: Duration = Duration::from_secs(300);

/// What a run does when it starts inside another retrying layer's attempt.
///
/// Retrying layers multiply: three layers of three attempts call a failing leaf 27 times. AWS
/// and Google SRE advise retrying at a single point in the stack, so by default a nested run
/// makes one attempt and stops with [`StopReason::OuterLayerOwnsRecovery`], leaving recovery to
/// the outermost layer. Whether a run is nested is for its driver to tell
/// ([`Run::mark_nested`](super::Run::mark_nested)): the executors of the `stagger` crate detect
/// a run started while another's attempt runs on the same thread, or is polled in the same
/// async task.
///
/// In a configuration file it is `nested = "single-attempt"` or `nested = "retry"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
#[non_exhaustive]
pub enum Nested {
    /// `single-attempt`: make one attempt and leave recovery to the outer layer (the default).
    #[default]
    SingleAttempt,
    /// `retry`: retry as if alone. Each layer's attempts multiply the others'.
    Retry,
}

/// How a run disperses its retry above a server-directed wait (a `Retry-After`, say).
///
/// A retry never starts earlier than the server asked: that wait is a floor. What a run adds
/// above the floor decides whether a fleet that was told the same time comes back in step. A
/// rate limiter that answers every client "1 second" makes all of them retry at the same
/// instant under [`Floor`](Dispersal::Floor), and each such wave wins one slot. Whatever is
/// added must fit the deadline with the floor: if the floor fits and the dispersal does not, the
/// dispersal is drawn inside the time left instead (under [`Floor`](Dispersal::Floor), kept as
/// most libraries have it, a `max(delay, asked)` that does not fit gives up).
///
/// The random dispersal draws from the run's generator
/// ([`Run::with_rng`](super::Run::with_rng)); the executors give each run one, seeded from
/// process entropy, at its first server-directed wait. A run that has none adds the policy's
/// delay instead, as [`PolicyAbove`](Dispersal::PolicyAbove) does, and fits it to the time left
/// by a remainder rather than a draw.
///
/// In a configuration file it is `server_wait_dispersal = "floor"`, `"policy-above"` or
/// `"uniform-asked"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
#[non_exhaustive]
pub enum Dispersal {
    /// `floor`: the larger of the policy's delay and the server's wait, `max(delay, asked)`.
    /// Every client told the same time retries at that time.
    Floor,
    /// `policy-above`: the server's wait plus the policy's delay, `asked + delay`: the policy's
    /// own jitter, above the floor.
    PolicyAbove,
    /// `uniform-asked`: the server's wait plus a uniform draw of up to as long again, or the
    /// policy's delay if that is longer, `max(delay, asked + U(0, asked))`: a fleet told
    /// "1 second" is dispersed over the second that follows.
    #[default]
    UniformAsked,
}

impl Dispersal {
    /// The page on server-directed waits, as `stagger explain server-waits` prints it and
    /// `stagger bench` writes it to `docs/server-waits.md` with its measured figures.
    pub const PAGE: &'static str = include_str!("server_waits.md");

    /// Every candidate, in the order of the measured table.
    pub const ALL: [Self; 3] = [Self::Floor, Self::PolicyAbove, Self::UniformAsked];

    /// The name a configuration file and the CLI use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Floor => "floor",
            Self::PolicyAbove => "policy-above",
            Self::UniformAsked => "uniform-asked",
        }
    }
}

/// Every setting of a run that a configuration file and a front end's setter set alike, one
/// row each: the setter's name, the file's field ([`RetrySpec`](crate::config::RetrySpec)), the
/// value's type and the [`Settings`] method that sets it, with what the setting means on every
/// front end. `RetrySpec::to_settings` reads a file by this table and the facade writes each
/// front end's setter from it, so a setting is listed once. The macro named in brackets is
/// called with the braces' tokens, then the rows.
#[doc(hidden)]
#[macro_export]
macro_rules! each_setting {
    ([$($callback:tt)+] { $($args:tt)* }) => {
        $($callback)+! {
            { $($args)* }
            /// One end-to-end deadline, `timeout` after the run starts (an executor's first
            /// poll or call; a request's first poll in the HTTP layers). It covers every
            /// attempt and every wait, and each attempt is told the time left. An async
            /// attempt still running at the deadline is cancelled (its future dropped) and
            /// counts as a timeout; a wait that would end past it is not started.
            timeout(timeout: ::core::time::Duration) with_timeout,
            /// A timeout for each attempt, within the deadline: each attempt is told
            /// `min(timeout, time left)`, and an async attempt still running then is cancelled
            /// and counts as a timeout, retried as any timeout is (not for an operation that is
            /// not idempotent). A blocking attempt cannot be cancelled: it is told the time, to
            /// honour.
            attempt_timeout(attempt_timeout: ::core::time::Duration) with_attempt_timeout,
            /// Whether the operation may be repeated safely (default: `true` for the
            /// executors; read from each request's method and `Idempotency-Key` in the HTTP
            /// layers). A non-idempotent one is retried only after a failure known to have had
            /// no effect, such as a refused connection or a 429: never after a timeout or a
            /// 5xx whose effect is uncertain.
            idempotent(idempotent: bool) with_idempotent,
            /// The longest server-directed wait honoured (default 5 minutes). A server asking
            /// for more stops the run; a shorter request is a floor under the next delay, never
            /// undercut.
            max_server_wait(max_server_wait: ::core::time::Duration) with_max_server_wait,
            /// How a retry is dispersed above a server-directed wait (default
            /// [`Dispersal::UniformAsked`](stagger_core::engine::Dispersal): uniformly over the
            /// wait that follows the floor, so that clients told the same time do not come back
            /// together).
            server_wait_dispersal(server_wait_dispersal: $crate::engine::Dispersal) with_dispersal,
            /// What to do when running inside another executor's attempt (default
            /// [`Nested::SingleAttempt`](stagger_core::engine::Nested): one attempt, recovery
            /// left to the outer executor).
            ///
            /// The mark is held only while an attempt's own code runs (its synchronous call, or
            /// a poll of its future). Detection covers an executor started while another's
            /// attempt runs on the same thread, or is polled in the same async task, on any
            /// runtime; work spawned onto another task or thread is not nested. One exception:
            /// an executor that runs other tasks *inside* an attempt (a `block_on` within a
            /// blocking operation, say) runs them under the mark, and their retries count as
            /// nested.
            when_nested(nested: $crate::engine::Nested) with_nested,
        }
    };
}

/// When the run must end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// This long after the run starts.
    Timeout(Duration),
    /// At this instant on the run's clock.
    At(Timestamp),
}

/// How a run behaves beyond its policy: its deadline, whether the operation is idempotent, the
/// longest server-directed wait it honours, and what it does when nested in another retrying
/// layer.
///
/// One value for every executor: the async and blocking builders take it with `.settings(..)`,
/// the tower layer and the reqwest middleware with their own `.settings(..)`, and a
/// configuration file's `RetrySpec` produces it. A small `Copy` value with `const` setters, so
/// settings can be `const`.
///
/// The defaults: no deadline; idempotency left to the operation (an executor assumes an
/// idempotent operation, an HTTP layer reads it from the request's method); a 5-minute longest
/// server wait ([`DEFAULT_MAX_SERVER_WAIT`]), with a uniform dispersal above it
/// ([`Dispersal::UniformAsked`]); a single attempt when nested.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::engine::{Nested, Settings};
///
/// const CHECKOUT: Settings = Settings::new()
///     .with_timeout(Duration::from_secs(2))
///     .with_idempotent(false);
/// assert_eq!(CHECKOUT.timeout(), Some(Duration::from_secs(2)));
/// assert_eq!(CHECKOUT.idempotent(), Some(false));
/// assert_eq!(CHECKOUT.nested(), Nested::SingleAttempt);
/// assert_eq!(Settings::new().idempotent(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    limit: Option<Limit>,
    idempotent: Option<bool>,
    max_server_wait: Duration,
    nested: Nested,
    dispersal: Dispersal,
    attempt_timeout: Option<Duration>,
}

impl Default for Settings {
    fn default() -> Self {
        Self::new()
    }
}

impl Settings {
    /// The defaults.
    #[inline]
    #[must_use]
    pub const fn new() -> Self {
        Self {
            limit: None,
            idempotent: None,
            max_server_wait: DEFAULT_MAX_SERVER_WAIT,
            nested: Nested::SingleAttempt,
            dispersal: Dispersal::UniformAsked,
            attempt_timeout: None,
        }
    }

    /// One end-to-end deadline, `timeout` after the run starts: it covers every attempt and
    /// every wait. `Duration::ZERO` allows no attempt at all.
    #[inline]
    #[must_use]
    pub const fn with_timeout(mut self, timeout: Duration) -> Self {
        self.limit = Some(Limit::Timeout(timeout));
        self
    }

    /// One end-to-end deadline at `deadline` on the run's clock, for a caller that received a
    /// deadline rather than a timeout.
    #[inline]
    #[must_use]
    pub const fn with_deadline(mut self, deadline: Timestamp) -> Self {
        self.limit = Some(Limit::At(deadline));
        self
    }

    /// Whether the operation may be repeated without changing the outcome. A non-idempotent
    /// operation is retried only after a failure known to have had no effect
    /// ([`Failure::had_no_effect`](crate::Failure::had_no_effect)); otherwise the run stops
    /// with [`StopReason::NotIdempotent`].
    #[inline]
    #[must_use]
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// The longest server-directed wait the run honours (default
    /// [`DEFAULT_MAX_SERVER_WAIT`]). A longer request stops the run.
    #[inline]
    #[must_use]
    pub const fn with_max_server_wait(mut self, limit: Duration) -> Self {
        self.max_server_wait = limit;
        self
    }

    /// What the run does when it starts inside another retrying layer's attempt (default
    /// [`Nested::SingleAttempt`]).
    #[inline]
    #[must_use]
    pub const fn with_nested(mut self, nested: Nested) -> Self {
        self.nested = nested;
        self
    }

    /// How the run disperses a retry above a server-directed wait (default
    /// [`Dispersal::UniformAsked`]).
    #[inline]
    #[must_use]
    pub const fn with_dispersal(mut self, dispersal: Dispersal) -> Self {
        self.dispersal = dispersal;
        self
    }

    /// How the run disperses a retry above a server-directed wait.
    #[inline]
    #[must_use]
    pub const fn dispersal(&self) -> Dispersal {
        self.dispersal
    }

    /// A timeout for each attempt, besides the run's one deadline: each attempt gets
    /// `min(timeout, time left)` ([`Attempt::remaining`](super::Attempt::remaining), which the
    /// HTTP integrations pass downstream as the request's timeout), and the async executor
    /// cancels an attempt that outlives it. The attempt then fails with
    /// [`Failure::Timeout`](crate::Failure::Timeout), retried as any timeout is: not for an
    /// operation that is not idempotent, since it may have taken effect. The blocking executor
    /// cannot cancel an attempt; it passes the time on, for the operation to honour.
    /// `Duration::ZERO` gives each attempt no time at all.
    #[inline]
    #[must_use]
    pub const fn with_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// The timeout of each attempt, if there is one ([`Settings::with_attempt_timeout`]).
    #[inline]
    #[must_use]
    pub const fn attempt_timeout(&self) -> Option<Duration> {
        self.attempt_timeout
    }

    /// Whether the operation was declared idempotent; `None` leaves it to the operation (an
    /// executor then assumes it is, an HTTP layer reads the request's method).
    #[inline]
    #[must_use]
    pub const fn idempotent(&self) -> Option<bool> {
        self.idempotent
    }

    /// What the run does when nested.
    #[inline]
    #[must_use]
    pub const fn nested(&self) -> Nested {
        self.nested
    }

    /// The longest server-directed wait honoured.
    #[inline]
    #[must_use]
    pub const fn max_server_wait(&self) -> Duration {
        self.max_server_wait
    }

    /// The end-to-end timeout, if the deadline was given as one ([`Settings::with_timeout`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::engine::Settings;
    /// let settings = Settings::new().with_timeout(Duration::from_secs(3));
    /// assert_eq!(settings.timeout(), Some(Duration::from_secs(3)));
    /// assert_eq!(Settings::new().timeout(), None);
    /// ```
    #[inline]
    #[must_use]
    pub const fn timeout(&self) -> Option<Duration> {
        match self.limit {
            Some(Limit::Timeout(timeout)) => Some(timeout),
            _ => None,
        }
    }

    /// The absolute deadline, if it was given as one ([`Settings::with_deadline`]).
    #[inline]
    #[must_use]
    pub const fn deadline(&self) -> Option<Timestamp> {
        match self.limit {
            Some(Limit::At(at)) => Some(at),
            _ => None,
        }
    }

    /// The deadline of a run that starts at `now`, if it has one.
    #[inline]
    #[must_use]
    pub const fn deadline_from(&self, now: Timestamp) -> Option<Timestamp> {
        match self.limit {
            Some(Limit::Timeout(timeout)) => Some(now.saturating_add(timeout)),
            Some(Limit::At(at)) => Some(at),
            None => None,
        }
    }
}
