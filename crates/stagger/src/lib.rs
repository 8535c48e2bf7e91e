#![doc = include_str!("../../../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use stagger_core::*;

mod blocking_retry;
pub mod blocking_sleep;
pub mod classify;
pub mod clock;
#[cfg(feature = "http")]
pub mod http;
mod nesting;
pub mod notify;
#[cfg(any(feature = "tower", feature = "reqwest"))]
mod report;
#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
pub mod reqwest;
mod retry;
mod retry_error;
pub mod sleep;
#[cfg(feature = "tower")]
pub mod tower;
mod trace;

pub use classify::{Classifier, Classify};
#[cfg(any(feature = "tower", feature = "reqwest"))]
pub use report::RetryReport;
pub use retry::{Nested, Outcome, ResultFuture, Retry, RetryFuture, Retryable, retry};
pub use retry_error::RetryError;

/// The blocking executor: [`blocking::retry`] and [`blocking::Retryable`], with the same
/// builder as the async one, run with [`Retry::call`].
pub mod blocking {
    pub use crate::blocking_retry::{Retryable, retry};
    pub use crate::blocking_sleep::{BlockingSleeper, ThreadSleeper};
}
