//! When a delivery's next attempt is due: a pure function of what the database stores.
//!
//! This module does no I/O and reads no clock, so the test includes the very same file
//! (`#[path = "../examples/delivery_scheduler/schedule.rs"]`) and checks the numbers the
//! example writes.
//!
//! # Why a restart finds the same times
//!
//! The schedule is the `delivery` preset, a published webhook delivery schedule (1 s doubling to a 1 h cap, 8 attempts) with
//! subtractive jitter 0.2. Its random generator is seeded by the delivery id
//! (`SeededRng::from_key(id)`), so the same delivery always draws the same delays and two
//! deliveries draw different ones. A jittered policy draws once per call to `next_delay`, so
//! `next_attempt_at` builds a fresh policy from the id every time and asks about attempts
//! `1..=n` in order. Its answer therefore depends only on `(id, attempts, first failure)`, the
//! three columns the database keeps, and a restarted process that recomputes it gets the stored
//! value to the millisecond.
//!
//! # Why it is anchored at the first failure
//!
//! Retry `n` is due at *first failure + elapsed(n)*, not at *last attempt + delay(n)*. A slow
//! poll, a long POST or a process that was down for a while does not push the later retries
//! back, and the final retry stays within the published window (127 s), the figure dead-letter
//! alerting is sized on. Jitter only subtracts, so no retry is ever later than the published
//! schedule (1, 3, 7, 15, 31, 63 and 127 s after the first failure).

use std::time::Duration;

use stagger::policy::{AnyConfig, Param, Policy, PolicyConfig};
use stagger::preset::Preset;
use stagger::rng::SeededRng;
use stagger::{Failure, Schedule};

/// The fraction of each delay that jitter may remove: each delay falls in 80-100 % of the
/// published one.
pub(crate) const JITTER: f64 = 0.2;

/// The `delivery` preset with jitter switched on.
pub(crate) fn config() -> AnyConfig {
    Preset::DELIVERY
        .config()
        .set(Param::Jitter(JITTER))
        .expect("the delivery preset has a jitter parameter")
}

/// The published retry window in milliseconds: the un-jittered preset's total, 127 000 ms
/// from the first failure to the last retry.
pub(crate) fn retry_window_ms() -> u64 {
    let published = Schedule::new(Preset::DELIVERY.config(), SeededRng::new(0))
        .expect("the delivery preset is valid");
    millis(published.total_window())
}

/// The unix-millisecond time at which delivery `id` is next due, after `attempts` (at least 1)
/// failed attempts, the first of which failed at `first_failure_ms`; `None` once the schedule
/// has no retry left.
///
/// This is the one computation of "next attempt at": the scheduler stores its answer, and the
/// `verify` command and the test recompute it from the stored columns.
pub(crate) fn next_attempt_at(id: &str, attempts: u32, first_failure_ms: u64) -> Option<u64> {
    let mut policy = config()
        .build(SeededRng::from_key(id))
        .expect("the delivery preset with jitter 0.2 is valid");
    let mut elapsed = Duration::ZERO;
    // Replay every retry in order: each call draws once from the generator.
    for attempt in 1..=attempts {
        elapsed = elapsed.saturating_add(policy.next_delay(attempt, &Failure::Retryable)?);
    }
    // Whole milliseconds, rounded down: never later than the published schedule.
    Some(first_failure_ms.saturating_add(millis(elapsed)))
}

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Try again at this unix-millisecond time.
    RetryAt(u64),
    /// Stop retrying, for this reason.
    GiveUp(&'static str),
}

/// The decision after attempt number `attempts` failed at `now_ms`, the first failure having
/// been at `first_failure_ms`.
///
/// It gives up after the eighth attempt, or when the failure comes after the published window
/// has closed (the process was down, say): the schedule's give-up time holds either way.
pub(crate) fn after_failure(
    id: &str,
    attempts: u32,
    first_failure_ms: u64,
    now_ms: u64,
) -> Decision {
    match next_attempt_at(id, attempts, first_failure_ms) {
        None => Decision::GiveUp("attempt limit reached"),
        Some(_) if now_ms > first_failure_ms.saturating_add(retry_window_ms()) => {
            Decision::GiveUp("retry window closed")
        }
        Some(at) => Decision::RetryAt(at),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
