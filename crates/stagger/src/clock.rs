//! Clocks for the executors, beyond the core's.

pub use stagger_core::clock::{Clock, ManualClock, MonotonicClock, Timestamp};

/// tokio's clock, which follows `tokio::time::pause` and `advance` in tests. Its origin is the
/// moment it was made.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

#[cfg(feature = "tokio")]
impl TokioClock {
    /// A clock whose origin is now.
    #[must_use]
    pub fn new() -> Self {
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of tokio's clock.
        let origin = tokio::time::Instant::now();
        Self { origin }
    }
}

#[cfg(feature = "tokio")]
impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_duration(self.origin.elapsed())
    }
}

/// The async executor's default clock: [`TokioClock`] with the `tokio` feature.
#[cfg(feature = "tokio")]
pub type DefaultClock = TokioClock;

/// The async executor's default clock: [`MonotonicClock`] without the `tokio` feature.
#[cfg(not(feature = "tokio"))]
pub type DefaultClock = MonotonicClock;
