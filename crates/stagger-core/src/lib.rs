//! The runtime-free core of stagger: retry policies, schedules as data, and the time and
//! randomness they are given.
//!
//! Nothing here sleeps, spawns or reads a clock on its own. A [`Policy`] answers
//! `next_delay(attempt, failure)`; its random generator is supplied when it is built, so a seed
//! or a key (such as a delivery id) reproduces its schedule on every platform. A [`Schedule`]
//! publishes what a policy will do as data. Executors and the simulator drive these same
//! policies.
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::{Failure, Policy, PolicyConfig, SeededRng};
//! use stagger_core::policy::ExponentialFullJitter;
//!
//! let mut policy = ExponentialFullJitter::new()
//!     .with_base(Duration::from_millis(100))
//!     .with_cap(Duration::from_secs(5))
//!     .with_max_attempts(4)
//!     .build(SeededRng::from_key("request-42"))?;
//!
//! let first = policy.next_delay(1, &Failure::Retryable).unwrap();
//! assert!(first < Duration::from_millis(100)); // a draw from [0, 100 ms)
//! assert_eq!(policy.next_delay(4, &Failure::Retryable), None); // four attempts made
//! # Ok::<(), stagger_core::ConfigError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The names of every value of `$all`, an array of values with a `const fn name`, as an array
/// computed at compile time: the lists an unknown name's error shows, written once for the
/// catalog, the presets and the budgets.
macro_rules! names_of {
    ($all:expr) => {{
        let mut names = [""; $all.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = $all[i].name();
            i += 1;
        }
        names
    }};
}

pub mod budget;
pub mod clock;
#[cfg(feature = "serde")]
pub mod config;
pub mod duration;
pub mod engine;
pub mod error;
pub mod failure;
pub mod gate;
mod keyed;
pub mod limits;
pub mod policy;
pub mod preset;
pub mod retry_after;
pub mod rng;
pub mod schedule;
pub mod sketch;
mod timeline;

pub use clock::{Clock, ManualClock, MonotonicClock, Timeline, Timestamp};
pub use error::ConfigError;
pub use failure::Failure;
pub use policy::{
    AnyConfig, AnyPolicy, Bounds, IntoPolicy, Param, Policy, PolicyConfig, PolicyKind,
};
pub use preset::Preset;
pub use rng::{Rng, SeededRng};
pub use schedule::{Schedule, ScheduledRetry};

/// The hedging page ([`engine::Hedging::PAGE`]), whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("engine/hedging.md")]
mod hedging_page {}

/// The server waits page ([`engine::Dispersal::PAGE`]), whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("engine/server_waits.md")]
mod server_waits_page {}
