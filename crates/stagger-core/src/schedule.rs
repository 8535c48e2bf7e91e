//! Schedules as data.
//!
//! A [`Schedule`] is every retry a policy would make against a failure that never clears: the
//! concrete delay for a given generator, the band each delay can fall in, the time elapsed since
//! the first failure, and the total retry window. A sender, a dashboard and the CLI that read it
//! quote the same numbers.
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::{Preset, Schedule, SeededRng};
//!
//! let schedule = Schedule::new(Preset::DELIVERY.config(), SeededRng::new(0))?;
//! let secs: Vec<u64> = schedule.delays().map(|d| d.as_secs()).collect();
//! assert_eq!(secs, [1, 2, 4, 8, 16, 32, 64]);
//! assert_eq!(schedule.total_window(), Duration::from_secs(127));
//! assert!(schedule.is_exact());
//! # Ok::<(), stagger_core::ConfigError>(())
//! ```

use std::time::Duration;

use crate::error::ConfigError;
use crate::failure::Failure;
use crate::policy::{AnyConfig, Bounds, Policy, PolicyConfig, PolicyKind};
use crate::rng::Rng;

pub use crate::limits::MAX_SCHEDULE_RETRIES;

/// One retry of a [`Schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScheduledRetry {
    /// The retry's number, 1 for the first retry (the second attempt).
    pub retry: u32,
    /// The delay before it, as drawn.
    pub delay: Duration,
    /// The time from the first failure to this retry, as drawn, ignoring execution time.
    pub elapsed: Duration,
    /// The band the delay can fall in, whatever the draw.
    pub bounds: Bounds,
    /// The band the elapsed time can fall in, whatever the draws.
    pub elapsed_bounds: Bounds,
}

/// Every retry a policy makes against a failure that never clears.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    kind: PolicyKind,
    max_attempts: u32,
    retries: Vec<ScheduledRetry>,
    window_bounds: Bounds,
}

impl Schedule {
    /// Runs `config` with `rng` against retryable failures until it gives up, and records the
    /// delays alongside their bounds.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`], or [`ConfigError::ScheduleTooLong`] when it would
    /// list more than [`MAX_SCHEDULE_RETRIES`] retries.
    pub fn new<R: Rng>(config: impl Into<AnyConfig>, rng: R) -> Result<Self, ConfigError> {
        let config = config.into();
        let mut policy = config.build(rng)?;
        let retries = config.max_attempts().saturating_sub(1);
        if retries > MAX_SCHEDULE_RETRIES {
            return Err(ConfigError::ScheduleTooLong {
                retries,
                limit: MAX_SCHEDULE_RETRIES,
            });
        }
        let mut rows = Vec::with_capacity(retries as usize);
        let mut elapsed = Duration::ZERO;
        let mut elapsed_bounds = Bounds::exact(Duration::ZERO);
        for attempt in 1..=retries {
            let Some(delay) = policy.next_delay(attempt, &Failure::Retryable) else {
                break;
            };
            let bounds = config.bounds(attempt);
            elapsed = elapsed.saturating_add(delay);
            elapsed_bounds = elapsed_bounds.saturating_add(bounds);
            if let Some(tighter) = config.window_bounds(attempt) {
                elapsed_bounds = elapsed_bounds.intersect(tighter);
            }
            rows.push(ScheduledRetry {
                retry: attempt,
                delay,
                elapsed,
                bounds,
                elapsed_bounds,
            });
        }
        Ok(Self {
            kind: config.kind(),
            max_attempts: config.max_attempts(),
            window_bounds: elapsed_bounds,
            retries: rows,
        })
    }

    /// The policy that made the schedule.
    #[must_use]
    pub fn kind(&self) -> PolicyKind {
        self.kind
    }

    /// The most attempts, counting the first: one more than the number of retries.
    #[must_use]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Every retry, in order.
    #[must_use]
    pub fn retries(&self) -> &[ScheduledRetry] {
        &self.retries
    }

    /// The delays, one per retry: what a published delivery schedule lists as `retrySchedule()`.
    pub fn delays(&self) -> impl ExactSizeIterator<Item = Duration> + '_ {
        self.retries.iter().map(|r| r.delay)
    }

    /// The time from the first failure to the last retry, as drawn: a published delivery
    /// schedule's `total_retry_window()`.
    #[must_use]
    pub fn total_window(&self) -> Duration {
        self.retries.last().map_or(Duration::ZERO, |r| r.elapsed)
    }

    /// The band the total window falls in, whatever the draws.
    #[must_use]
    pub fn total_window_bounds(&self) -> Bounds {
        self.window_bounds
    }

    /// Whether every delay is fixed, so that the schedule is the same for every generator.
    #[must_use]
    pub fn is_exact(&self) -> bool {
        self.retries.iter().all(|r| r.bounds.is_exact())
    }
}

#[cfg(feature = "serde")]
mod serialize {
    use serde::ser::{Serialize, SerializeStruct, SerializeTuple, Serializer};

    use super::{Bounds, Duration, Schedule};
    use crate::duration::millis;

    /// Milliseconds: an integer when whole, a fraction with nanosecond precision otherwise.
    struct Millis(Duration);

    impl Serialize for Millis {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let whole = self.0.subsec_nanos().is_multiple_of(1_000_000);
            match u64::try_from(self.0.as_millis()) {
                Ok(ms) if whole => s.serialize_u64(ms),
                _ => s.serialize_f64(millis(self.0)),
            }
        }
    }

    struct Band(Bounds);

    impl Serialize for Band {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut pair = s.serialize_tuple(2)?;
            pair.serialize_element(&Millis(self.0.min))?;
            pair.serialize_element(&Millis(self.0.max))?;
            pair.end()
        }
    }

    /// The schedule as data, with millisecond values: `policy`, `max_attempts`, `delays_ms`,
    /// `elapsed_ms`, `bounds_ms`, `elapsed_bounds_ms`, `total_window_ms`,
    /// `total_window_bounds_ms` and `exact`.
    impl Serialize for Schedule {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let rows = &self.retries;
            let ms = |f: fn(&super::ScheduledRetry) -> Duration| -> Vec<Millis> {
                rows.iter().map(|r| Millis(f(r))).collect()
            };
            let bands = |f: fn(&super::ScheduledRetry) -> Bounds| -> Vec<Band> {
                rows.iter().map(|r| Band(f(r))).collect()
            };
            let mut out = s.serialize_struct("Schedule", 9)?;
            out.serialize_field("policy", self.kind.name())?;
            out.serialize_field("max_attempts", &self.max_attempts)?;
            out.serialize_field("delays_ms", &ms(|r| r.delay))?;
            out.serialize_field("elapsed_ms", &ms(|r| r.elapsed))?;
            out.serialize_field("bounds_ms", &bands(|r| r.bounds))?;
            out.serialize_field("elapsed_bounds_ms", &bands(|r| r.elapsed_bounds))?;
            out.serialize_field("total_window_ms", &Millis(self.total_window()))?;
            out.serialize_field("total_window_bounds_ms", &Band(self.window_bounds))?;
            out.serialize_field("exact", &self.is_exact())?;
            out.end()
        }
    }
}
