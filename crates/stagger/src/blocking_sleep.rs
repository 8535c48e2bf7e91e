//! Waiting, for the blocking executor.

use std::time::Duration;

/// Waits by blocking the calling thread.
///
/// Implemented for every `Fn(Duration)`, so a test can record waits instead of taking them.
pub trait BlockingSleeper {
    /// Blocks for `duration`.
    fn sleep(&self, duration: Duration);
}

impl<F: Fn(Duration)> BlockingSleeper for F {
    fn sleep(&self, duration: Duration) {
        self(duration);
    }
}

/// The operating system's sleep: the one place this crate blocks a thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadSleeper;

impl BlockingSleeper for ThreadSleeper {
    fn sleep(&self, duration: Duration) {
        #[allow(clippy::disallowed_methods)] // This type is the single wrapper of thread::sleep.
        std::thread::sleep(duration);
    }
}
