//! Every user-facing limit of the simulator, defined once.
//!
//! Each constant here is the one definition of a bound on a simulated run: the workloads'
//! `validate`, the composed model's (which scenario files drive), the `stagger` CLI's flags
//! (`stagger simulate`, `stagger check`) and its scenario reader all check against it. A value
//! past a size limit is refused with [`SimError::TooLarge`], any
//! other with [`SimError::Invalid`] naming the parameter. The
//! workloads' associated constants
//! ([`OpenLoop::MAX_RATE`](crate::workload::open_loop::OpenLoop::MAX_RATE),
//! [`Composed::MAX_EVENTS`](crate::model::Composed::MAX_EVENTS), ...) are aliases of these.
//!
//! Where the simulator bounds what the library bounds (the hedging a strategy may use, the
//! destinations a budget per host holds), it uses the library's limit, re-exported here from
//! [`stagger_core::limits`].
//!
//! Most limits bound the cost of a run before it starts: the events it processes and the
//! memory it holds. The CLI also estimates each run and refuses one past `--max-events` or
//! `--max-memory` (see `docs/simulator-limits.md`); these are the hard bounds under those.
//!
//! ```
//! use std::time::Duration;
//! use stagger_sim::limits;
//! use stagger_sim::workload::open_loop::OpenLoop;
//! use stagger_sim::Workload;
//!
//! let at_the_limit = OpenLoop {
//!     duration: limits::MAX_DURATION,
//!     rate: 0.001,
//!     ..OpenLoop::default()
//! };
//! assert!(at_the_limit.validate().is_ok());
//! let past = OpenLoop {
//!     duration: limits::MAX_DURATION + Duration::from_nanos(1),
//!     ..at_the_limit
//! };
//! assert_eq!(past.validate().unwrap_err().param(), Some("duration"));
//! ```

use std::time::Duration;

use crate::SimError;

pub use stagger_core::limits::{MAX_DESTINATIONS, MAX_HEDGE_DELAY, MAX_HEDGED_ATTEMPTS};

// ---------------------------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------------------------

/// The longest time span the simulator takes: a day.
///
/// It bounds a run's `duration`, a request's deadline (`timeout`) and attempt timeout, a
/// server's `Retry-After`, a concurrency limiter's service time, the drain after a run, a
/// replica's pause and its mean time between pauses, a ramp's `peak_at`, the 2015 clamped
/// decorrelated jitter's base and cap, and `stagger check`'s `--outage`. Simulated time is
/// integer nanoseconds; a day keeps every sum of such spans far inside 64 bits, and is longer
/// than any retry window worth simulating.
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);

/// What a span of at most [`MAX_DURATION`] may be, as errors state it.
pub(crate) const AT_MOST_A_DAY: &str = "at most a day";

/// The shortest attempt timeout: 1 ms (the composed model, the tail's `--attempt-timeout`, the
/// spike's and the ramp's client timeout).
///
/// The simulated networks and services take milliseconds; a shorter timeout cuts every
/// attempt, and within a day's deadline keeps the attempts a request can make to
/// `MAX_DURATION / 1 ms` (8.64e7).
pub const MIN_ATTEMPT_TIMEOUT: Duration = Duration::from_millis(1);

/// What an attempt timeout may be, as errors state it.
pub(crate) const ATTEMPT_TIMEOUT_ALLOWED: &str = "at least 1ms and at most a day";

/// The longest base or per-attempt time of a slowing service (`dependency.service`, the
/// spike's and the ramp's server): an hour. A service slower than that serves nothing within
/// the runs the model is for, and its work in progress would pile up for the whole day.
pub const MAX_SERVICE_TIME: Duration = Duration::from_secs(3_600);

// ---------------------------------------------------------------------------------------------
// Clients and rates
// ---------------------------------------------------------------------------------------------

/// The most fixed clients (the herd's `--clients`, a scenario's `clients.count`): 10 000 000.
///
/// Fixed clients that do not interact run one at a time, so memory does not grow with them;
/// ten million is a fleet larger than any the herd's claims are about, and a few seconds of a
/// release build.
pub const MAX_FIXED_CLIENTS: u64 = 10_000_000;

/// The most open sources or serial clients (the open-loop and serial workloads' `--clients`,
/// a scenario's `clients.sources`, `stagger check --clients`): 100 000.
///
/// Each holds its generators and its budget for the whole run.
pub const MAX_SOURCES: u64 = 100_000;

/// The most requests a throttle run may hold: its fixed clients, or its open source's
/// `rate x duration`: 100 000. Every one is in flight at once against the limiter, with a
/// deadline of up to a day, so it is bounded as the sources are, not as the herd's clients,
/// which run one at a time.
pub const MAX_THROTTLE_REQUESTS: u64 = 100_000;

/// The highest rate of one open source, in requests a second: 1e6 (the open-loop workload's
/// `--rate` per client, the outage's, the partition's and the throttle's `--rate`, a
/// scenario's `clients.rate_per_source`).
///
/// The requests a run offers are bounded by [`MAX_REQUESTS`] in any case; this keeps the gap
/// between arrivals a thousand nanoseconds or more.
pub const MAX_SOURCE_RATE: f64 = 1e6;

/// What a source's rate may be, as errors state it.
pub(crate) const SOURCE_RATE_ALLOWED: &str = "a number of requests per second in (0, 1e6]";

/// The highest rate of one serial client, in calls a second: 1e5. A serial client starts a
/// call at most this often when its calls are quick; it is bounded by its round trip in any
/// case, and the attempts serial clients may make by [`MAX_SERIAL_ATTEMPTS`].
pub const MAX_SERIAL_RATE: f64 = 1e5;

/// The most requests a run of open sources may offer (`sources x rate x duration`, for the
/// outage, open-loop, partition and tail workloads and a scenario's open clients): 1e7.
pub const MAX_REQUESTS: f64 = 1e7;

/// The most requests a run against a slowing service (the spike's, the ramp's, a scenario's
/// `dependency.service`) may be offered at its peak rate (`peak rate x duration`): 2e6.
///
/// Such a service collapses: every request then makes every attempt its policy allows, each
/// held through its timeout with its work in the server's queue, so a request costs several
/// times what it costs elsewhere.
pub const MAX_PEAK_REQUESTS: f64 = 2e6;

/// The most attempts serial clients may need if every request were retried at once
/// (`clients x duration / mean round trip`): 5e7.
pub const MAX_SERIAL_ATTEMPTS: f64 = 5e7;

/// The most attempts a run of independent clients (the herd's) may make before it is stopped
/// and refused: 1e8. A policy with no attempt limit never gives up against a dependency that
/// always fails.
pub const MAX_INDEPENDENT_ATTEMPTS: u64 = 100_000_000;

/// The most events a run may process: 2e8. A run that needs more (a policy with no attempt
/// limit against a dependency that always fails, say) stops with
/// [`SimError::TooLarge`]. The CLI's default `--max-events` is far
/// lower; this is the bound a library caller meets.
pub const MAX_EVENTS: u64 = 200_000_000;

/// The most sub-requests a request fans out to (the tail's `--fanout`, a scenario's
/// `clients.fanout`): 1000.
pub const MAX_FANOUT: u32 = 1_000;

/// What a fan-out may be, as errors state it.
pub(crate) const FANOUT_ALLOWED: &str = "between 1 and 1000";

/// The largest multiple of the base rate a spike or a ramp reaches (`clients.spike.factor`,
/// `clients.ramp.peak_factor`): 1000.
pub const MAX_LOAD_FACTOR: f64 = 1e3;

// ---------------------------------------------------------------------------------------------
// The dependency
// ---------------------------------------------------------------------------------------------

/// The most replicas in a pool (the tail's `--replicas`, a scenario's
/// `dependency.replicas.count`): 10 000.
pub const MAX_REPLICAS: u32 = 10_000;

/// The most attempts a replica serves at once (the tail's `--concurrency`, a scenario's
/// `dependency.replicas.concurrency`): 10 000.
pub const MAX_REPLICA_CONCURRENCY: u32 = 10_000;

/// What a pool's count or concurrency may be, as errors state it.
pub(crate) const POOL_SIZE_ALLOWED: &str = "between 1 and 10000";

/// The shortest mean service time of a replica: 1 µs.
pub const MIN_REPLICA_SERVICE: Duration = Duration::from_micros(1);

/// The longest mean service time of a replica: 1 s.
pub const MAX_REPLICA_SERVICE: Duration = Duration::from_secs(1);

/// The shortest mean time a replica runs between pauses: 1 ms.
pub const MIN_PAUSE_EVERY: Duration = Duration::from_millis(1);

/// The most pauses a pool of replicas may draw in a run
/// (`replicas x (duration + drain + deadline) / (pause_every + pause)`): 1e8. Each replica
/// draws its pauses up to the last time it is used, whatever the traffic.
pub const MAX_PAUSES: f64 = 1e8;

/// The highest rate of a rate limiter, in requests a second (the throttle's `--limit-rate`, a
/// scenario's `dependency.rate_limit.rate`): 1e9, one a nanosecond, the simulator's clock's
/// resolution.
pub const MAX_LIMITER_RATE: f64 = 1e9;

/// What a limiter's rate may be, as errors state it.
pub(crate) const LIMITER_RATE_ALLOWED: &str = "more than 0 and at most 1e9 requests per second";

/// The most tokens of a rate limiter (the throttle's `--limit-burst`, a scenario's
/// `dependency.rate_limit.burst`): 1e6.
pub const MAX_LIMITER_BURST: u32 = 1_000_000;

/// What a limiter's burst may be, as errors state it.
pub(crate) const LIMITER_BURST_ALLOWED: &str = "between 1 and 1e6 tokens";

// ---------------------------------------------------------------------------------------------
// Contention
// ---------------------------------------------------------------------------------------------

/// The most clients of the contention workload (its `--clients`, a scenario's contention
/// `clients.count`): 10 000.
pub const MAX_CONTENTION_CLIENTS: u64 = 10_000;

/// The most rounds of the contention workload (its `--rounds`): 10 000.
pub const MAX_CONTENTION_ROUNDS: u32 = 10_000;

/// What the contention's clients or rounds may be, as errors state it.
pub(crate) const CONTENTION_ALLOWED: &str = "from 1 to 10000";

/// The most `clients² × rounds` of the contention workload: 2e8. A round makes at most
/// `clients²` writes (a commit fails each other client at most once), and without backoff
/// about a sixth of that at 10 000 clients (1.6e7 writes, 1.8 s and 300 MB here), so this
/// bounds a run's time and memory. It allows the published sweep (190 clients, 100 rounds)
/// many times over, and 10 000 clients for 2 rounds.
pub const MAX_CONTENTION_WORK: u64 = 200_000_000;

// ---------------------------------------------------------------------------------------------
// Retry stacks
// ---------------------------------------------------------------------------------------------

/// The most retry layers a request passes through, the outermost included (a scenario's
/// `[[retry]]` tables, `stagger check --layers`, the composed model's inner layers plus one):
/// 16. Layers that each retry multiply their attempts; sixteen is deeper than any service
/// graph the check is for.
pub const MAX_LAYERS: u32 = 16;

/// Checks that a retry stack of `layers` layers, the outermost included, has at most
/// [`MAX_LAYERS`]: the composed model's check of its inner layers, and the scenario reader's of
/// a file's `[[retry]]` tables.
///
/// # Errors
///
/// [`SimError::TooLarge`] naming the retry layers.
///
/// ```
/// use stagger_sim::limits::{MAX_LAYERS, check_layers};
///
/// assert!(check_layers(MAX_LAYERS as usize).is_ok());
/// assert_eq!(
///     check_layers(MAX_LAYERS as usize + 1).unwrap_err().to_string(),
///     "retry layers (the outermost included) exceeds the limit of 16"
/// );
/// ```
pub fn check_layers(layers: usize) -> Result<(), SimError> {
    if layers > MAX_LAYERS as usize {
        return Err(SimError::TooLarge {
            what: "retry layers (the outermost included)",
            limit: MAX_LAYERS.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text that states a limit names its value.
    #[test]
    fn the_texts_state_the_values() {
        let e = |x: f64| format!("{x:e}");
        assert_eq!(MAX_DURATION, Duration::from_secs(24 * 3_600));
        assert!(SOURCE_RATE_ALLOWED.contains(&format!("{}]", e(MAX_SOURCE_RATE))));
        assert!(FANOUT_ALLOWED.ends_with(&format!("and {MAX_FANOUT}")));
        assert!(POOL_SIZE_ALLOWED.ends_with(&format!("and {MAX_REPLICAS}")));
        assert_eq!(MAX_REPLICAS, MAX_REPLICA_CONCURRENCY);
        assert!(LIMITER_RATE_ALLOWED.contains(&e(MAX_LIMITER_RATE)));
        assert!(LIMITER_BURST_ALLOWED.contains(&e(f64::from(MAX_LIMITER_BURST))));
        assert!(CONTENTION_ALLOWED.ends_with(&format!("to {MAX_CONTENTION_CLIENTS}")));
        assert_eq!(MAX_CONTENTION_CLIENTS, u64::from(MAX_CONTENTION_ROUNDS));
        assert!(ATTEMPT_TIMEOUT_ALLOWED.starts_with("at least 1ms"));
        assert_eq!(MIN_ATTEMPT_TIMEOUT, Duration::from_millis(1));
    }
}
