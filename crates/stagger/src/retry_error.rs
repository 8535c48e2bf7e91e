//! The error of a retried operation that did not succeed, and the outcome of a run.

use std::convert::Infallible;
use std::fmt;

use stagger_core::ConfigError;
use stagger_core::engine::{StopReason, Stopped, Summary};

/// Why the executor gave up, what it did, and what the attempts left.
///
/// That is the value the last attempt returned, if the value classifier refused it (`T`,
/// [`last_value`](RetryError::last_value); `T` is [`Infallible`] unless the run has a value
/// classifier), or else the most recent error of the operation (`E`,
/// [`last_error`](RetryError::last_error)). A run refused before its first attempt because its configuration
/// is invalid carries the [`ConfigError`] instead, with
/// [`StopReason::InvalidConfig`].
///
/// Its [`Display`](fmt::Display) is the one sentence every executor and integration writes for
/// a give-up: `gave up after 3 attempts in 1.2 s (1.1 s waiting): no attempts left; last error:
/// ...`.
///
/// The reason and the summary are boxed, so that `Result<T, RetryError<E>>` stays small on the
/// success path.
pub struct RetryError<E, T = Infallible> {
    stopped: Box<Stopped>,
    last: Last<E, T>,
}

/// What the last attempt left.
pub(crate) enum Last<E, T> {
    /// No attempt returned anything: the deadline passed before the first, or cut the last.
    Nothing,
    /// The last attempt's error.
    Error(E),
    /// The value the last attempt returned, refused by the value classifier.
    Value(T),
    /// The configuration, refused before any attempt.
    Invalid(Box<ConfigError>),
}

impl<E, T> RetryError<E, T> {
    pub(crate) fn new(stopped: Stopped, last: Last<E, T>) -> Self {
        Self {
            stopped: Box::new(stopped),
            last,
        }
    }

    /// The reason and what the last attempt left, apart.
    #[cfg(any(feature = "tower", feature = "reqwest"))]
    pub(crate) fn into_parts(self) -> (Stopped, Last<E, T>) {
        (*self.stopped, self.last)
    }

    /// Why the executor gave up.
    pub fn reason(&self) -> StopReason {
        self.stopped.reason
    }

    /// What the executor did: attempts, time waited, time elapsed.
    pub fn summary(&self) -> Summary {
        self.stopped.summary
    }

    /// Why the executor gave up and what it did, with whether the operation may be repeated
    /// ([`Stopped::may_repeat`]).
    pub fn stopped(&self) -> &Stopped {
        &self.stopped
    }

    /// The most recent error the operation returned: that of the last attempt, or of an earlier
    /// one if the deadline cut the last short (or a success came too late). `None` if the run
    /// ended on a refused value, or if no attempt returned an error: the deadline passed before
    /// the first attempt, or cut every attempt short.
    pub fn last_error(&self) -> Option<&E> {
        match &self.last {
            Last::Error(error) => Some(error),
            _ => None,
        }
    }

    /// The most recent error the operation returned, by value.
    pub fn into_last_error(self) -> Option<E> {
        match self.last {
            Last::Error(error) => Some(error),
            _ => None,
        }
    }

    /// The value the last attempt returned, which the value classifier refused (a page that
    /// said "try later"), if that is how the run ended.
    pub fn last_value(&self) -> Option<&T> {
        match &self.last {
            Last::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The refused value, by value.
    pub fn into_last_value(self) -> Option<T> {
        match self.last {
            Last::Value(value) => Some(value),
            _ => None,
        }
    }

    /// What the attempts left: the refused value, or the most recent error.
    pub fn into_last(self) -> Option<Result<T, E>> {
        match self.last {
            Last::Error(error) => Some(Err(error)),
            Last::Value(value) => Some(Ok(value)),
            _ => None,
        }
    }

    /// The configuration error, if the run was refused before its first attempt
    /// ([`StopReason::InvalidConfig`]).
    pub fn config_error(&self) -> Option<&ConfigError> {
        match &self.last {
            Last::Invalid(error) => Some(error),
            _ => None,
        }
    }
}

impl<E: fmt::Debug, T> fmt::Debug for RetryError<E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("RetryError");
        s.field("reason", &self.stopped.reason)
            .field("summary", &self.stopped.summary);
        match &self.last {
            Last::Nothing => {}
            Last::Error(error) => {
                s.field("last_error", error);
            }
            Last::Value(_) => {
                s.field("last_value", &std::any::type_name::<T>());
            }
            Last::Invalid(error) => {
                s.field("config_error", error);
            }
        }
        s.finish()
    }
}

impl<E: fmt::Display, T> fmt::Display for RetryError<E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stopped)?;
        match &self.last {
            Last::Error(e) => write!(f, "; last error: {e}"),
            Last::Invalid(e) => write!(f, "; {e}"),
            Last::Value(_) | Last::Nothing => Ok(()),
        }
    }
}

impl<E: std::error::Error + 'static, T> std::error::Error for RetryError<E, T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.last {
            Last::Error(e) => Some(e),
            Last::Invalid(e) => Some(&**e),
            Last::Value(_) | Last::Nothing => None,
        }
    }
}

/// The result of a retried operation together with what the executor did, on success too.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome<T, E, K = Infallible> {
    /// The operation's value, or why the executor gave up.
    pub result: Result<T, RetryError<E, K>>,
    /// Attempts made, time waited, time elapsed.
    pub summary: Summary,
}
