//! Every user-facing limit of the library, defined once.
//!
//! Each constant here is the one definition of a bound that a user can meet: a configuration
//! file, a builder's setter or `validate`, the `stagger` CLI's flags and the simulator's
//! scenario files all check against it, and refuse a value past it with the same
//! [`ConfigError`](crate::ConfigError) (or, where the text is read by
//! [`FromStr`](std::str::FromStr), a parse error stating the same bound). The older names
//! ([`HedgeDelay::MAX_FIXED`](crate::engine::HedgeDelay::MAX_FIXED),
//! [`Gate::MAX_CAPACITY`](crate::gate::Gate::MAX_CAPACITY),
//! [`LatencySketch::MAX_WINDOW`](crate::sketch::LatencySketch::MAX_WINDOW), ...) are aliases of
//! these. The simulator's own limits (`stagger_sim::limits`) refer to these where they bound
//! the same thing.
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::engine::Hedging;
//! use stagger_core::limits::{MAX_HEDGE_DELAY, MAX_HEDGED_ATTEMPTS};
//!
//! assert_eq!(MAX_HEDGE_DELAY, Duration::from_secs(86_400));
//! assert!(Hedging::fixed(MAX_HEDGE_DELAY, MAX_HEDGED_ATTEMPTS).validate().is_ok());
//! let late = Hedging::fixed(MAX_HEDGE_DELAY + Duration::from_secs(3_600), 2);
//! assert_eq!(
//!     late.validate().unwrap_err().to_string(),
//!     "hedge_delay must be at most 86400 seconds (a day), got 90000"
//! );
//! ```

use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Hedging
// ---------------------------------------------------------------------------------------------

/// The longest fixed hedging delay: a day.
///
/// A hedge is sent when an attempt has gone unanswered for the delay; it cuts the latency of
/// the slowest calls, and a call that has waited a day for an answer is not one whose latency
/// a copy of it cuts. It is also the longest time span the simulator takes
/// (`stagger_sim::limits::MAX_DURATION`), so every hedging a configuration accepts can be
/// simulated. Checked by [`Hedging::validate`](crate::engine::Hedging::validate) (the
/// builders, a configuration file's `[hedging] delay`, a scenario's), by
/// [`HedgeDelay`](crate::engine::HedgeDelay)'s `FromStr` (the CLI's `--hedge`) and by the gRPC
/// import's `hedgingDelay`.
pub const MAX_HEDGE_DELAY: Duration = Duration::from_secs(86_400);

/// What a fixed hedging delay may be, as errors state it.
pub(crate) const MAX_HEDGE_DELAY_ALLOWED: &str = "at most 86400 seconds (a day)";

/// The most attempts a hedged run may make, the first included: 10.
///
/// gRPC clamps a service config's `maxAttempts` to 5 unless the client raises it
/// ([`GRPC_MAX_ATTEMPTS`]); more than a handful of copies of one request is load, not latency.
/// A run tracks its attempts in flight in one machine word, far above this. Checked by
/// [`Hedging::validate`](crate::engine::Hedging::validate); the CLI's `--hedge` hedges up to
/// `min(--max-attempts, 10)`, and the gRPC import treats a larger `maxAttempts` as 10.
pub const MAX_HEDGED_ATTEMPTS: u32 = 10;

/// What a hedging's `max_attempts` may be, as errors state it.
pub(crate) const MAX_HEDGED_ATTEMPTS_ALLOWED: &str = "from 1 to 10";

/// The client-side limit on a gRPC service config's `maxAttempts` that gRFC A6 sets by
/// default: 5. A larger value is treated as 5, as A6 has clients do, unless the caller passes
/// its own limit (gRPC's channel argument); a hedging policy's is then still at most
/// [`MAX_HEDGED_ATTEMPTS`].
pub const GRPC_MAX_ATTEMPTS: u32 = 5;

// ---------------------------------------------------------------------------------------------
// Destinations, schedules, latencies
// ---------------------------------------------------------------------------------------------

/// The most destinations a [`Gate`](crate::gate::Gate) or a set of budgets per destination
/// ([`BudgetPerDestination`](crate::budget::BudgetPerDestination)) may hold: 65 536.
///
/// Making room for a new destination scans the table under its lock, so the table is kept to what a
/// scan costs little; a client with more destinations than this keeps the busiest. Checked by
/// [`Gate::new`](crate::gate::Gate::new), `BudgetPerDestination::new` and a configuration file's
/// `gate` and `budget_per_destination`.
pub const MAX_DESTINATIONS: usize = 1 << 16;

/// What a number of destinations may be, as errors state it.
pub(crate) const MAX_DESTINATIONS_ALLOWED: &str = "between 1 and 65536 destinations";

/// The most retries a [`Schedule`](crate::Schedule) lists: 10 000.
///
/// A schedule is for reading (a table, a dashboard); a longer one is refused with
/// [`ConfigError::ScheduleTooLong`](crate::ConfigError::ScheduleTooLong) rather than
/// allocated. Checked by [`Schedule::new`](crate::Schedule::new), which the CLI's
/// `stagger schedule` uses.
pub const MAX_SCHEDULE_RETRIES: u32 = 10_000;

/// The largest window of a [`LatencySketch`](crate::sketch::LatencySketch): 10 000 000
/// samples.
///
/// The sketch reads the last `window` to `2 × window - 1` latencies; ten million is minutes
/// of traffic at a high rate, beyond which a quantile no longer follows the service's
/// latency. Checked by
/// [`LatencySketch::with_window`](crate::sketch::LatencySketch::with_window).
pub const MAX_SKETCH_WINDOW: u32 = 10_000_000;

/// What a sketch's window may be, as errors state it.
pub(crate) const MAX_SKETCH_WINDOW_ALLOWED: &str = "between 1 and 10000000 samples";

// ---------------------------------------------------------------------------------------------
// Budgets
// ---------------------------------------------------------------------------------------------

/// The smallest non-zero amount of tokens a budget counts: 0.001.
///
/// Token buckets and gRPC's throttle count in thousandths of a token, so a smaller non-zero
/// amount would round to zero (and, for a cost, make retries free). Checked by
/// [`TokenBucket::validate`](crate::budget::TokenBucket::validate) and
/// [`GrpcThrottle::validate`](crate::budget::GrpcThrottle::validate).
pub const TOKEN_RESOLUTION: f64 = 0.001;

/// The most tokens of any amount of a [`TokenBucket`](crate::budget::TokenBucket) (its
/// capacity, cost, refill, reward, deposit and reserve), and the largest `tokenRatio` of a
/// [`GrpcThrottle`](crate::budget::GrpcThrottle): 1e9.
///
/// Amounts are held in thousandths in 64 bits; a billion tokens is far above any published
/// bucket (the AWS SDKs' holds 500) and far below where the arithmetic would overflow.
pub const MAX_TOKENS: f64 = 1e9;

/// The largest `maxTokens` of a [`GrpcThrottle`](crate::budget::GrpcThrottle): 1000, as gRFC
/// A6 requires.
pub const GRPC_MAX_TOKENS: f64 = 1000.0;

/// The largest share of requests a [`Ratio`](crate::budget::Ratio) budget may retry, in the
/// fraction its `percent` is written in (0.2 is 20 %): 1000. Finagle takes any non-negative
/// number; above a thousand retries a request the budget no longer bounds anything a policy's
/// attempt limit does not.
pub const MAX_RATIO_PERCENT: f64 = 1000.0;

/// The shortest `ttl` of a [`Ratio`](crate::budget::Ratio) budget: 1 s, as Finagle requires.
pub const MIN_RATIO_TTL: Duration = Duration::from_secs(1);

/// The longest `ttl` of a [`Ratio`](crate::budget::Ratio) budget: 60 s, as Finagle requires.
pub const MAX_RATIO_TTL: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text that states a limit names its value.
    #[test]
    fn the_texts_state_the_values() {
        assert!(MAX_HEDGE_DELAY_ALLOWED.contains(&MAX_HEDGE_DELAY.as_secs().to_string()));
        assert!(MAX_HEDGED_ATTEMPTS_ALLOWED.ends_with(&format!("to {MAX_HEDGED_ATTEMPTS}")));
        assert!(MAX_DESTINATIONS_ALLOWED.contains(&format!("and {MAX_DESTINATIONS} ")));
        assert!(MAX_SKETCH_WINDOW_ALLOWED.contains(&format!("and {MAX_SKETCH_WINDOW} ")));
        assert_eq!(MAX_HEDGE_DELAY, Duration::from_secs(24 * 3_600));
    }
}
