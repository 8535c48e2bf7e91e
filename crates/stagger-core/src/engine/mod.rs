//! The retry engine: one sans-IO state machine that decides, and drivers that act.
//!
//! A correct retry loop is mostly bookkeeping, and every executor that re-implements it drifts
//! (backon's Retry-After hook exists only on its async path). So the decisions live here, once:
//! [`Run`] is told the time and what happened, and answers what to do next. It never reads a
//! clock, never sleeps and does no I/O. The async executor, the blocking executor and the
//! simulator are thin drivers around it, so none can differ from another.
//!
//! # The contract
//!
//! - `max_attempts` counts the first call: three attempts are one call and at most two retries.
//! - **One end-to-end deadline** covers execution, waiting and later attempts. Each attempt is
//!   told the time left ([`Attempt::remaining`]) so it can propagate it downstream. A deadline
//!   already spent before the first attempt means zero attempts.
//! - After an attempt the checks run in this order: the deadline has passed; success; the failure
//!   is not retryable; the operation is not idempotent and the failure may have taken effect;
//!   the run is nested; the attempt limit; then the delay. A delay that does not fit in the time
//!   left means giving up now ([`StopReason::WaitExceedsDeadline`]), never a shortened wait.
//! - **A server-directed wait is a floor.** The delay is at least what the server asked
//!   ([`Failure::retry_after`](crate::Failure::retry_after)), whatever the jitter drew. If that
//!   wait is longer than the largest wait the caller agreed to honour, or does not fit the
//!   deadline, the engine gives up now and says why. Above the floor the retry is dispersed
//!   ([`Dispersal`]), so that clients told the same time do not come back together.
//! - **Idempotency.** An operation declared non-idempotent is retried only after a failure known
//!   to have had no effect ([`Failure::had_no_effect`](crate::Failure::had_no_effect)): a
//!   rejection, never a timeout or a 5xx whose effect is uncertain
//!   ([`StopReason::NotIdempotent`]).
//! - **Ownership of recovery.** A run marked nested ([`Run::mark_nested`]: an executor running
//!   inside another executor's attempt) makes a single attempt by default and leaves recovery to
//!   the outermost layer: three layers of three attempts then call a failing leaf 3 times, not
//!   27 ([`Nested`]).
//! - **Retry budgets.** Before each retry the engine asks a shared
//!   [`Budget`](crate::budget::Budget); it reports every attempt's outcome to it. A retry is
//!   paid for when it is sent: one the budget granted that never begins (the run dropped
//!   mid-wait, the deadline passed first, the driver abandoned it) is handed back
//!   ([`Budget::retry_abandoned`](crate::budget::Budget::retry_abandoned)).
//!
//! These are the rules of the review "what a correct retry loop does" that the project's
//! specification follows; its Python checks are reproduced as tests of this engine.
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::engine::{Run, Settings, Verdict};
//! use stagger_core::policy::Constant;
//! use stagger_core::{Failure, PolicyConfig, SeededRng, Timestamp};
//!
//! let policy = Constant::new().with_max_attempts(3).build(SeededRng::new(0))?;
//! let settings = Settings::new().with_timeout(Duration::from_secs(5));
//! // The generator disperses retries above a server's wait.
//! let mut run = Run::new(policy, settings, Timestamp::ZERO).with_rng(SeededRng::new(1));
//!
//! let attempt = run.begin(Timestamp::ZERO).unwrap();
//! assert_eq!(attempt.number, 1);
//! assert_eq!(attempt.remaining, Some(Duration::from_secs(5)));
//!
//! let t = Timestamp::from_nanos(250_000_000);
//! let Verdict::Retry(retry) = run.end(t, Err(Failure::RetryAfter(Duration::from_secs(1)))) else {
//!     panic!("a retry");
//! };
//! // Never before the server's time, dispersed over the second after it (1 s + U(0, 1 s)).
//! assert!(retry.delay >= Duration::from_secs(1) && retry.delay < Duration::from_secs(2));
//! # Ok::<(), stagger_core::ConfigError>(())
//! ```

mod hedge;
mod outcome;
mod run;
mod settings;

#[cfg(feature = "serde")]
pub(crate) use hedge::percentile as hedge_percentile;
pub use hedge::{
    Answer, HEDGE_REASON, Hedge, HedgeDelay, HedgedRun, Hedger, Hedging, MAX_HEDGED_ATTEMPTS,
    ParseHedgeDelayError,
};
pub use outcome::{Attempt, PlannedRetry, StopReason, Stopped, Summary, Verdict};
pub use run::{Ready, Run};
pub use settings::{DEFAULT_MAX_SERVER_WAIT, Dispersal, Nested, Settings};
