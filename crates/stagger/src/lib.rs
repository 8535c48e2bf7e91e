//! Retries that keep their promises: one deadline for every attempt and wait, a server's
//! `Retry-After` never undercut, jitter that spreads a fleet of clients, and budgets that cap the
//! load retries add.
//!
//! # Start here
//!
//! [`retry`] retries an async operation under a policy. The operation gets each attempt's
//! number and the time left before the deadline; the builder it returns takes the settings,
//! and awaiting it runs the retries:
//!
//! ```
//! # #[cfg(feature = "tokio")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use std::time::Duration;
//! use stagger::Failure;
//! use stagger::policy::ExponentialFullJitter;
//!
//! // Throttled once, with a server's wait of 50 ms, then an answer.
//! let outcome = stagger::retry(ExponentialFullJitter::new(), |attempt| async move {
//!     match attempt.number {
//!         1 => Err(Failure::Throttled(Some(Duration::from_millis(50)))),
//!         _ => Ok("done"),
//!     }
//! })
//! .timeout(Duration::from_secs(2)) // one deadline for the attempts and the waits
//! .classify(|failure| *failure) // which errors are worth another attempt, and how
//! .outcome()
//! .await;
//! assert_eq!(outcome.result.unwrap(), "done");
//! assert_eq!(outcome.summary.attempts, 2);
//! assert!(outcome.summary.waited >= Duration::from_millis(50)); // never sooner than asked
//! # }
//! # #[cfg(not(feature = "tokio"))]
//! # fn main() {}
//! ```
//!
//! The README's first example does the same with reqwest against a real server, the response
//! classified by `stagger::http::classify_status` (feature `http`), so that a `Retry-After`
//! is kept.
//!
//! # Which entry point
//!
//! Every entry point runs the same engine, so their semantics cannot differ:
//!
//! - [`retry`]: async code. Start here.
//! - [`Retryable`]: the same builder as a method, `(|| call()).retry(policy)`, on a closure
//!   that takes no arguments.
//! - [`blocking::retry`]: blocking code, the same settings run with [`BlockingRetry::call`](blocking::BlockingRetry::call); it waits
//!   on the thread and needs no feature.
//! - `tower::RetryLayer` (feature `tower`): a tower `Service` of `http` requests, such as a
//!   hyper client.
//! - `reqwest::RetryMiddleware` (feature `reqwest`): every request of a reqwest client, without
//!   wrapping each call.
//! - `config::RetrySpec` (feature `serde`): the policy, the deadline and the budget from a
//!   configuration file, or a gRPC service config, for any of the above.
//! - [`Schedule`]: a schedule as data, to show users or to persist "next attempt at" across
//!   restarts (webhook deliveries).
//!
//! [`Retry`] lists the settings: the deadline, a timeout per attempt, classification of errors
//! and of successful values, idempotency, a retry budget ([`budget`]), a gate per destination
//! ([`gate`]), hedging, and a hook before each retry ([`notify`]).
//!
//! # Which policy
//!
//! [`policy::ExponentialFullJitter`] for anything that many clients call. The [`policy`]
//! module lists the catalog; each policy's page says when to use it and when not, and the
//! README's table "Which policy, which budget, which layer" gives the simulator's figures
//! behind each choice.
//!
//! # Where the rest is
//!
//! The crate root holds the names a first program uses: [`retry`], [`Retryable`] and the
//! builder [`Retry`]; [`Failure`] and [`Classify`] to classify errors; [`RetryError`] and
//! [`Outcome`] for what a run returns; [`ConfigError`], the error of every invalid setting;
//! and [`Schedule`]. Everything else is in its module: policies in [`policy`], budgets in
//! [`budget`], gates in [`gate`], clocks in [`clock`], stop reasons, settings and hedging in
//! [`engine`], seeded generators in [`rng`], configuration files in `config` (feature
//! `serde`), and the futures a retry becomes in [`future`] (a hedged run's in [`hedge`]).
//!
//! # Features
//!
//! | feature | what it adds | default |
//! |---|---|---|
//! | `tokio` | tokio's timer and clock for the async executor | yes |
//! | `http` | `http::classify_status` and the HTTP rules: statuses, `Retry-After`, idempotent methods | yes |
//! | `tracing` | an event for every retry and give-up | no |
//! | `serde` | configuration files and serializable schedules | no |
//! | `tower` | `tower::RetryLayer` | no |
//! | `reqwest` | `reqwest::RetryMiddleware` (turns on `http` and `tokio`) | no |
//! | `quanta` | `clock::QuantaClock`, a cheaper clock | no |
//!
//! With `default-features = false` nothing depends on a runtime: the blocking executor, every
//! policy and every budget still work, and the async executor takes a sleep function with
//! [`Retry::sleeper`].
//!
//! # More
//!
//! The [README](https://github.com/stagger-rs/stagger#readme), the
//! [cookbook](https://github.com/stagger-rs/stagger/blob/main/docs/cookbook.md) (a recipe per
//! integration) and the [glossary](https://github.com/stagger-rs/stagger/blob/main/docs/glossary.md)
//! (every term these docs use).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod blocking_retry;
mod blocking_sleep;
pub mod classify;
pub mod clock;
mod driver;
pub mod future;
pub mod hedge;
pub mod hooks;
#[cfg(feature = "http")]
pub mod http;
mod nesting;
pub mod notify;
pub mod operation;
#[cfg(any(feature = "tower", feature = "reqwest"))]
mod overrides;
mod parts;
#[cfg(any(feature = "tower", feature = "reqwest"))]
mod report;
#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
pub mod reqwest;
mod retry;
mod retry_error;
mod setup;
pub mod sleep;
pub mod surface;
mod timer;
#[cfg(feature = "tower")]
pub mod tower;
mod trace;

// The names a user imports in the first hour, at the root; everything else in its module.
pub use classify::Classify;
pub use retry::{Retry, Retryable, retry};
pub use retry_error::{Outcome, RetryError};
pub use stagger_core::{ConfigError, Failure, Schedule};

// The core's modules, as the facade's (the facade's own `clock` holds the core's clocks too).
#[cfg(feature = "serde")]
pub use stagger_core::config;
pub use stagger_core::{
    budget, duration, engine, error, failure, gate, limits, policy, preset, retry_after, rng,
    schedule, sketch,
};

/// The blocking executor: [`blocking::retry`] and [`blocking::BlockingRetryable`], with the
/// same settings as the async one, run with [`BlockingRetry::call`](crate::blocking::BlockingRetry::call).
pub mod blocking {
    pub use crate::blocking_retry::{BlockingHooks, BlockingRetry, BlockingRetryable, retry};
    pub use crate::blocking_sleep::{BlockingSleeper, ThreadSleeper};
}

/// The cookbook (`docs/cookbook.md`), whose code runs as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/cookbook.md")]
pub mod cookbook {}
