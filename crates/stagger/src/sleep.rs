//! Waiting, for the async executor: a one-method trait, so any runtime can drive it.

use std::future::Future;
use std::time::Duration;

/// Waits asynchronously.
///
/// With the `tokio` feature (on by default, and on if anything in the dependency graph turns it
/// on), the async executor's default sleeper is tokio's timer, which needs a tokio runtime:
/// under another runtime, pass that runtime's sleep with `.sleeper(...)`.
///
/// Implemented for every `Fn(Duration) -> impl Future<Output = ()>`, so a runtime's sleep
/// function is a sleeper; `TokioSleeper` comes with the `tokio` feature.
#[diagnostic::on_unimplemented(
    message = "no sleeper: pass `.sleeper(...)` (your runtime's sleep function) or enable the `tokio` feature; `{Self}` cannot sleep for the async executor",
    note = "pass a sleeper with `.sleeper(...)`, such as your runtime's sleep function, or enable the `tokio` feature"
)]
pub trait Sleeper {
    /// The future of one wait.
    type Sleep: Future<Output = ()>;

    /// A future that completes after `duration`.
    fn sleep(&self, duration: Duration) -> Self::Sleep;
}

// Not recommended, so that a type that is no sleeper is reported as one (`.sleeper(..)`), not as
// a closure of the wrong shape.
#[diagnostic::do_not_recommend]
impl<F, Fut> Sleeper for F
where
    F: Fn(Duration) -> Fut,
    Fut: Future<Output = ()>,
{
    type Sleep = Fut;

    fn sleep(&self, duration: Duration) -> Fut {
        self(duration)
    }
}

/// tokio's timer. Waits longer than 30 years are shortened to 30 years, which tokio can
/// represent, instead of overflowing its clock (tokio-retry panicked on `Duration::MAX`).
///
/// # Panics
///
/// When a wait starts outside a tokio runtime, with a message that says how to fix it: run the
/// retry inside a runtime, pass another runtime's sleep with `.sleeper(..)`, or use
/// [`blocking`](crate::blocking). A retry that never waits (its first attempt succeeds, or it
/// gives up at once) runs under any executor.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

/// What a wait outside a tokio runtime panics with: the fixes, instead of tokio's own "there is
/// no reactor running".
#[cfg(feature = "tokio")]
const OUTSIDE_TOKIO: &str = "stagger: this retry waits with tokio's timer (the async \
    executor's default sleeper) but was polled outside a tokio runtime. Run it inside one \
    (#[tokio::main], #[tokio::test] or Runtime::block_on), pass your runtime's sleep with \
    .sleeper(..), or use stagger::blocking for a blocking retry";

#[cfg(feature = "tokio")]
impl Sleeper for TokioSleeper {
    type Sleep = tokio::time::Sleep;

    fn sleep(&self, duration: Duration) -> tokio::time::Sleep {
        const THIRTY_YEARS: Duration = Duration::from_secs(30 * 365 * 86_400);
        if tokio::runtime::Handle::try_current().is_err() {
            panic!("{OUTSIDE_TOKIO}");
        }
        tokio::time::sleep(duration.min(THIRTY_YEARS))
    }
}

/// What a retry's type needs of its sleeper before it runs: the type of one wait. Every
/// [`Sleeper`] is one, and so is [`NoSleeper`], so that a retry without a sleeper can be built
/// and given one with `.sleeper(...)`; only a [`Sleeper`] runs. Implemented by those alone.
pub trait MaybeSleeper: sealed::Sealed {
    /// The future of one wait.
    type Sleep: Future<Output = ()>;
}

impl<S: Sleeper> MaybeSleeper for S {
    type Sleep = S::Sleep;
}

impl MaybeSleeper for NoSleeper {
    type Sleep = std::future::Pending<()>;
}

mod sealed {
    /// Keeps [`MaybeSleeper`](super::MaybeSleeper) implemented by the sleepers and
    /// [`NoSleeper`](super::NoSleeper) alone.
    pub trait Sealed {}

    impl<S: super::Sleeper> Sealed for S {}
    impl Sealed for super::NoSleeper {}
}

/// A placeholder for "no sleeper chosen". It does not implement [`Sleeper`], so a retry that
/// keeps it does not compile: without the `tokio` feature, pass a sleeper with
/// `.sleeper(...)`, such as your runtime's sleep function.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSleeper;

/// The async executor's default sleeper: [`TokioSleeper`] with the `tokio` feature, otherwise
/// [`NoSleeper`], which does not sleep and so must be replaced.
#[cfg(feature = "tokio")]
pub type DefaultSleeper = TokioSleeper;

/// The async executor's default sleeper: [`NoSleeper`] without the `tokio` feature, which must be
/// replaced with `.sleeper(...)`.
#[cfg(not(feature = "tokio"))]
pub type DefaultSleeper = NoSleeper;
