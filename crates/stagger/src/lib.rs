// The README's first example calls reqwest and logs with tracing: with those features (as
// docs.rs and CI build), the README is the crate's page and every example in it is tested.
#![cfg_attr(
    all(feature = "tokio", feature = "reqwest", feature = "tracing", feature = "serde"),
    doc = include_str!("../../../README.md")
)]
#![cfg_attr(
    not(all(
        feature = "tokio",
        feature = "reqwest",
        feature = "tracing",
        feature = "serde"
    )),
    doc = "Retry failed work correctly, and prove it: see the README (built into these docs with \
           the `tokio`, `reqwest`, `tracing` and `serde` features)."
)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use stagger_core::*;

mod blocking_retry;
pub mod blocking_sleep;
pub mod classify;
pub mod clock;
mod driver;
mod future;
mod hedge;
pub mod hooks;
#[cfg(feature = "http")]
pub mod http;
mod nesting;
pub mod notify;
pub mod operation;
#[cfg(any(feature = "tower", feature = "reqwest"))]
mod overrides;
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

pub use classify::{Classifier, Classify, ClassifyOk};
pub use future::{ResultFuture, Results, RetryFuture};
pub use hedge::{HedgeFuture, HedgeResultFuture, Hedged};
pub use hooks::Hooks;
#[cfg(any(feature = "tower", feature = "reqwest"))]
pub use overrides::RetryOverrides;
#[cfg(any(feature = "tower", feature = "reqwest"))]
pub use report::RetryReport;
pub use retry::{Retry, Retryable, retry};
pub use retry_error::{Outcome, RetryError};
pub use stagger_core::engine::{Nested, Settings};

/// The blocking executor: [`blocking::retry`] and [`blocking::Retryable`], with the same
/// builder as the async one, run with [`Retry::call`].
pub mod blocking {
    pub use crate::blocking_retry::{BlockingHooks, Retryable, retry};
    pub use crate::blocking_sleep::{BlockingSleeper, ThreadSleeper};
}

/// The cookbook (`docs/cookbook.md`), whose code runs as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/cookbook.md")]
pub mod cookbook {}
