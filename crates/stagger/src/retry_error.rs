//! The error of a retried operation that did not succeed.

use std::fmt;

use stagger_core::engine::{StopReason, Stopped, Summary};

/// Why the executor gave up, what it did, and the last error the operation returned.
///
/// The reason and the summary are boxed, so that `Result<T, RetryError<E>>` stays small on the
/// success path.
#[derive(Debug)]
pub struct RetryError<E> {
    stopped: Box<Stopped>,
    last_error: Option<E>,
}

impl<E> RetryError<E> {
    pub(crate) fn new(stopped: Stopped, last_error: Option<E>) -> Self {
        Self {
            stopped: Box::new(stopped),
            last_error,
        }
    }

    /// Why the executor gave up.
    pub fn reason(&self) -> StopReason {
        self.stopped.reason
    }

    /// What the executor did: attempts, time waited, time elapsed.
    pub fn summary(&self) -> Summary {
        self.stopped.summary
    }

    /// The last error the operation returned. `None` if no attempt returned one: the deadline
    /// passed before the first attempt, or cut the only attempt short.
    pub fn last_error(&self) -> Option<&E> {
        self.last_error.as_ref()
    }

    /// The last error the operation returned, by value.
    pub fn into_last_error(self) -> Option<E> {
        self.last_error
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stopped)?;
        match &self.last_error {
            Some(e) => write!(f, "; last error: {e}"),
            None => Ok(()),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.last_error.as_ref().map(|e| e as _)
    }
}
