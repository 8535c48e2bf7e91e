//! A deterministic discrete-event simulator for retry policies and budgets.
//!
//! It drives the same engine ([`stagger_core::engine::Run`]), policies and budgets as the
//! executors, on a simulated clock, so its figures are figures of the code users run. Time is
//! integer nanoseconds; the event queue is ordered by `(time, sequence)`, so ties are first in,
//! first out; one world generator per run derives every client's and the network's generator;
//! nothing iterates over a hash map; transcendental functions come from the pure-Rust `libm`,
//! not the platform's C library. The same seed gives the same bytes out on every platform, and
//! a different seed different ones.
//!
//! Each canonical workload lives in its own module under [`workload`], whose documentation
//! states its model and its source. Four reproduce published simulations, labelled as the
//! scoreboard labels them:
//!
//! - **W1**, [`workload::contention`]: the AWS Architecture Blog's 2015 contention simulation
//!   ("Exponential Backoff And Jitter", github.com/aws-samples/aws-arch-backoff-simulator);
//! - **W2** and **W3**, [`workload::open_loop`] and [`workload::serial`]: Marc Brooker's 2022
//!   retry simulations ("What is Backoff For?" and its `retry_sim.py`);
//! - **W4**, [`workload::spike`]: Brooker's 2023 simple collapse simulation
//!   (github.com/mbrooker/simulator_example, `simple_collapse_sim/sim.py`).
//!
//! Nine of the workloads (open-loop, serial, outage, throttle, herd, spike, ramp, partition
//! and tail) are compositions of the parts of [`model`]: clients, a load over time, a
//! network and a dependency (with a second host behind its name, or a pool of replicas, if
//! asked) chosen each on its own and run in one event loop, which scenario files also drive
//! with any mix of those parts. Contention, whose clients all race for one row, keeps its
//! winner tree: a loop of its own, many times faster than the event queue for that race.
//!
//! [`scoreboard::Claim`] lists each published claim, how the board reads its words and its
//! check; a *world seed* is the one number every generator of a run derives from.
//!
//! Before a run, [`Workload::estimate`] works out what it will cost, the events it will process
//! and the memory it will hold at its peak, from the same parameters the run allocates for (see
//! [`estimate`]); [`Workload::run_within`] stops a run that processes more events than a
//! caller allows. Memory follows what a run must hold at once, not its length: requests are
//! freed when they end, the peak retry share is counted as the retries come where they come in
//! time order, and the herd, whose clients do not interact, runs one client at a time.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod dist;
pub mod error;
pub mod estimate;
pub mod limits;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod per_second;
pub mod queue;
pub mod scoreboard;
pub mod strategy;
pub mod workload;

pub use error::SimError;
pub use estimate::Estimate;
pub use metrics::{HostFigures, Metrics, ResultRow};
pub use strategy::{SimPolicy, Strategy};
pub use workload::{Overrides, Workload, WorkloadKind};
