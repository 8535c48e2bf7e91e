//! # The model: clients, a network and a dependency as parts of one event loop
//!
//! A run is assembled from parts chosen each on its own ([`parts`](self#parts)): who calls
//! ([`Clients`]), the network ([`Network`]), and the dependency ([`Dependency`]: failures, an
//! outage [`Window`], a [`Limiter`], a slowing [`Service`], [`TwoHosts`] or a pool of
//! [`Replicas`]), with the retry stack of a [`Strategy`](crate::Strategy) and, inside it,
//! retry [`Layer`]s. [`Composed`] holds them; [`Composed::run`] runs them with
//! [`RunOptions`]. Every canonical workload ([`crate::workload`]) is such an assembly, so
//! their figures are this loop's.
//!
//! Why it is shaped so: the configuration of each part is a plain value ([`parts`](self#parts)),
//! and the state each keeps while a run goes lives in the part's own file (`source`, `stack`,
//! `limiter`, `outage`, `service`, `pool`, `hosts`, `fan`), behind the methods the one event
//! loop (`event_loop`) calls; the loop keeps only the queue, the request table and the parts. The engine's decisions are not modelled: every request runs the real sans-IO engine
//! of `stagger-core` on the simulated clock (`call`). The order in which generators are
//! forked, which makes a run reproducible to the byte, is fixed in one place (`streams`).
//!
//! # Parts
//!
//! See [`Clients`], [`Network`], [`Dependency`] and [`Composed`]'s fields.

mod call;
mod composed;
mod estimate;
mod event;
mod event_loop;
mod fan;
mod hosts;
mod independent;
mod limiter;
mod outage;
mod parts;
mod pool;
mod request;
mod run;
mod service;
mod slots;
mod source;
mod stack;
mod streams;
mod validate;

pub use crate::per_second::{Load, PerSecond, RampShape, SpikeShape};
pub(crate) use call::{Call, Next};
pub use composed::{Composed, Layer};
pub use hosts::HOSTS;
pub use limiter::RateLimiter;
pub use parts::{
    BudgetScope, Clients, ConcurrencyLimit, Dependency, Limiter, Network, RateLimit, Replicas,
    RetryAfterForm, Service, TwoHosts, Window,
};
pub use run::RunOptions;
pub(crate) use validate::{
    check_clients, check_duration, check_events, check_failure_rate, check_limiter_rate,
    check_window,
};

/// A second, in the model's nanoseconds.
pub(crate) const SECOND: crate::queue::Nanos = 1_000_000_000;
