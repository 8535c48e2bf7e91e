//! The `breaker` budget: [`BreakerBudget`] and its configuration. The budget's page is the
//! documentation of [`BreakerBudget`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::window::Window;
use super::{Budget, Spent};
use crate::clock::{Timeline, TimelineBinding, Timestamp};
use crate::error::ConfigError;
use crate::failure::Failure;

/// The page, written once: the documentation of the budget's type, and [`PAGE`].
macro_rules! page {
    () => {
        r#"# Retry circuit breaker

No retries while the client's observed failure ratio is above a threshold (10 % by
default). The client counts the outcomes of its attempts; while failures are rare, every
retry the policy asks for goes ahead, and once they are common, which is when retries add
load without adding successes, it stops retrying altogether. First attempts are never
refused: this breaker cuts retries only, not traffic.

## What it bounds

Retries, to none at all while `failures / (successes + failures) > threshold`. Below the
threshold it allows every retry, so it bounds the *ratio* at which retries are made, not
their number: as long as at most 10 % of attempts fail, retries (at most one per failed
attempt) are at most 10 % of all attempts, about 11 % on top of the first attempts; above
it, they add none.

## When to use it

- Many clients of a service whose failures are either rare and independent (retries help)
  or widespread (retries only add load): the breaker retries in the first case and not in
  the second, with no parameter to tune but the threshold.
- Where a budget must cost next to nothing: the published, cumulative breaker is two atomic
  counters.

## When not to use it

- Small clients with short lives, when retries matter: a client's ratio is estimated from
  its own few calls, so one early failure trips it (see the steady state). A token bucket
  (`brooker`) keeps retrying at a bounded rate instead.
- Long-lived clients with the cumulative breaker, if it must react to today's outage: it
  never forgets (use the windowed variant).

## How it works

```text
on_success:        successes += 1
on_failure(any):   failures  += 1          (every kind, Permanent and Timeout included)
try_retry:         grant (Spent(0)) iff
                     failures * 1_000_000 <= threshold_ppm * (successes + failures)
                   (no observations at all: ratio 0, granted)
admit:             always true
```

The threshold is taken to the nearest millionth (`threshold_ppm`), and the comparison is
exact integer arithmetic, so a ratio exactly at the threshold (1 failure in 10 at 0.1)
allows the retry, and no rounding of a floating-point ratio decides the boundary. The
engine reports the failure that prompts a retry before asking for it, so that failure is
already in the ratio.

Every failure kind counts: the breaker measures what the client observes. A classifier
that wants some outcomes (a 404 that is an answer, say) out of the ratio should report
them as successes.

## Two variants

- **Cumulative** (`window: None`, the default): the published breaker. It counts since the
  breaker was created, in two `AtomicU64`s, lock-free: each report is one atomic add and
  each decision two loads. The two loads are separate, so a decision racing a report may
  judge counts one outcome apart; that never grants a retry the counts did not allow a
  moment before or after.
- **Windowed** (`window: Some(w)`): it counts over the last `w` only, in 60 slots of
  `w / 60`, so an outcome leaves the window between `59/60 × w` and `w` after it was
  reported. The counts sit behind a `Mutex` and keep running totals; each report adds to
  one slot and each decision reads the two totals.

Why one may want the windowed variant: the cumulative breaker never forgets. After a year
of health and a billion successes, a total outage needs over a hundred million failures
before it stops retrying; after a long outage, it needs nine successes for every failure
seen before it retries again. The windowed breaker trips and recovers within `w` whatever
happened before, and an empty window (no traffic for `w`) counts as ratio 0: retries are
allowed again.

## Steady state

- **Independent failures with probability `x`**: the observed ratio tends to `x`. Below the
  threshold, retries are allowed and each failed attempt is retried; above it, there are
  none, and the load is the first attempts alone.
- **It trips early.** The ratio starts from few observations, where it is far from `x`: a
  client whose first attempt fails has a ratio of 100 % and is refused its first retry,
  and one failure among the first ten calls is already at the threshold. So even at `x`
  below the threshold a young client often refuses retries, until enough successes have
  accumulated.
- **Many small clients tend to "no retries".** With each client's ratio estimated from its
  own handful of calls, most clients that have seen a failure are above 10 %, so a fleet of
  small clients retries far less than `x` would suggest, and at high `x` hardly at all.
  This is what Brooker's simulation (`retry_sim.py`, `mbrooker/simulator_example`) reports, and the opposite of a per-client
  token bucket, which tends to "N retries" in the same setting.

## Parameters

| parameter | default | allowed | meaning |
|---|---|---|---|
| `threshold` | 0.1 | finite, in [0, 1] | the failure ratio above which there are no retries |
| `window` | `None` | `None`, or above 0 | `None` counts since creation, `Some(w)` the last `w` |

A threshold of 0 refuses retries after any failure; 1 allows every retry.

## Source

Marc Brooker, "Fixing retries with token buckets and circuit breakers" (2022): the retry
circuit breaker that stops retrying once the client's failure ratio exceeds 10 %, and its
behaviour with many small clients. The windowed variant and the integer comparison are
this crate's.

## Example

```
use stagger_core::budget::{BreakerBudget, Breaker, Budget, Spent};
use stagger_core::{Failure, Timestamp};

let breaker = BreakerBudget::new(Breaker::DEFAULT)?;
let now = Timestamp::ZERO;

// 9 successes and 1 failure: exactly 10 %, retries allowed.
for _ in 0..9 {
    breaker.on_success(now, None);
}
breaker.on_failure(now, &Failure::Retryable);
assert_eq!(breaker.try_retry(now, &Failure::Retryable), Some(Spent(0)));

// A second failure: 2 in 11, above 10 %, no retries. First attempts still go ahead.
breaker.on_failure(now, &Failure::Timeout);
assert_eq!(breaker.try_retry(now, &Failure::Timeout), None);
assert!(breaker.admit(now));
assert_eq!(breaker.counts(now), (9, 2));
# Ok::<(), stagger_core::ConfigError>(())
```
"#
    };
}

/// This budget's page, as `stagger explain` prints it.
pub(crate) const PAGE: &str = page!();

/// The number of slots in the windowed variant's window.
const SLOTS: u32 = 60;
/// The window's counter of successes.
const SUCCESSES: usize = 0;
/// The window's counter of failures.
const FAILURES: usize = 1;
/// Parts per million: the threshold's resolution.
const PPM: u64 = 1_000_000;

/// The configuration of a [`BreakerBudget`]. The budget's page is [`BreakerBudget`]'s documentation.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::budget::Breaker;
///
/// let config = Breaker::DEFAULT;
/// assert_eq!(config.threshold(), 0.1);
/// assert_eq!(config.window(), None); // cumulative, as published
///
/// let windowed = config.with_window(Some(Duration::from_secs(30)));
/// assert_eq!(windowed.window(), Some(Duration::from_secs(30)));
///
/// let err = config.with_threshold(1.5).validate().unwrap_err();
/// assert_eq!(err.to_string(), "threshold must be in [0, 1] (a failure ratio), got 1.5");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breaker {
    threshold: f64,
    window: Option<Duration>,
}

impl Breaker {
    /// Brooker's breaker: no retries above a 10 % failure ratio, counted since creation.
    pub const DEFAULT: Self = Self {
        threshold: 0.1,
        window: None,
    };

    /// The defaults, [`Breaker::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Sets the failure ratio above which there are no retries: finite, in `[0, 1]`, taken to
    /// the nearest millionth.
    #[must_use]
    pub const fn with_threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// Sets the span over which outcomes are counted: `None` since creation (the published
    /// breaker), `Some(w)` over the last `w` (greater than 0; it slides in steps of `w / 60`).
    #[must_use]
    pub const fn with_window(mut self, window: Option<Duration>) -> Self {
        self.window = window;
        self
    }

    /// The failure ratio above which there are no retries (default 0.1).
    #[must_use]
    pub const fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The span over which outcomes are counted; `None` (the default) since creation.
    #[must_use]
    pub const fn window(&self) -> Option<Duration> {
        self.window
    }

    /// Checks the parameters: `threshold` finite and in `[0, 1]`, `window` absent or greater
    /// than 0.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::ConfigError;
    /// use stagger_core::budget::Breaker;
    ///
    /// assert!(Breaker::DEFAULT.validate().is_ok());
    /// let nan = Breaker::DEFAULT.with_threshold(f64::NAN).validate().unwrap_err();
    /// assert!(matches!(nan, ConfigError::NotFinite { param: "threshold", .. }));
    /// let empty = Breaker::DEFAULT.with_window(Some(Duration::ZERO)).validate();
    /// assert_eq!(empty.unwrap_err().param(), Some("window"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::NotFinite`] for a NaN or infinite `threshold`,
    /// [`ConfigError::OutOfRange`] for a `threshold` outside `[0, 1]` or a zero `window`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.threshold.is_finite() {
            return Err(ConfigError::NotFinite {
                param: "threshold",
                value: self.threshold,
            });
        }
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(ConfigError::OutOfRange {
                param: "threshold",
                value: self.threshold,
                allowed: "in [0, 1] (a failure ratio)",
            });
        }
        if self.window.is_some_and(|w| w.is_zero()) {
            return Err(ConfigError::OutOfRange {
                param: "window",
                value: 0.0,
                allowed: "greater than 0 seconds (or none, to count since creation)",
            });
        }
        Ok(())
    }
}

impl Default for Breaker {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Brooker's retry circuit breaker, shared by every request of a client.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::budget::{BreakerBudget, Breaker, Budget};
/// use stagger_core::{Failure, Timestamp};
///
/// let config = Breaker::DEFAULT.with_window(Some(Duration::from_secs(60)));
/// let breaker = BreakerBudget::new(config)?;
/// breaker.on_failure(Timestamp::ZERO, &Failure::Retryable);
/// assert!(breaker.is_tripped(Timestamp::ZERO));
/// // A minute later the failure has left the window: retries are allowed again.
/// let later = Timestamp::from_duration(Duration::from_secs(60));
/// assert!(!breaker.is_tripped(later));
/// assert!(breaker.try_retry(later, &Failure::Retryable).is_some());
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
///
#[doc = page!()]
#[derive(Debug)]
pub struct BreakerBudget {
    config: Breaker,
    threshold_ppm: u64,
    counts: Counts,
    /// The timeline of the window's times.
    timeline: TimelineBinding,
}

/// Where the outcomes are counted.
#[derive(Debug)]
enum Counts {
    /// Since creation, lock-free.
    Cumulative {
        successes: AtomicU64,
        failures: AtomicU64,
    },
    /// Over a sliding window.
    Windowed(Mutex<Window<2>>),
}

/// Whether `failures / (successes + failures) <= threshold_ppm / 1e6`, exactly; no
/// observations count as ratio 0.
#[inline]
fn within(successes: u64, failures: u64, threshold_ppm: u64) -> bool {
    let total = u128::from(successes) + u128::from(failures);
    u128::from(failures) * u128::from(PPM) <= u128::from(threshold_ppm) * total
}

impl BreakerBudget {
    /// A breaker with no observations: it allows retries until failures are reported.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`] (see [`Breaker::validate`]).
    pub fn new(config: Breaker) -> Result<Self, ConfigError> {
        config.validate()?;
        // In [0, 1e6] after validation, so the conversion is exact and cannot saturate.
        let threshold_ppm = (config.threshold * PPM as f64).round() as u64;
        let counts = match config.window {
            None => Counts::Cumulative {
                successes: AtomicU64::new(0),
                failures: AtomicU64::new(0),
            },
            Some(w) => Counts::Windowed(Mutex::new(Window::new(w / SLOTS, SLOTS as usize))),
        };
        Ok(Self {
            config,
            threshold_ppm,
            counts,
            timeline: TimelineBinding::new(),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> Breaker {
        self.config
    }

    /// The successes and the failures counted at `now` (since creation, or over the window
    /// ending at `now`), in that order.
    #[must_use]
    pub fn counts(&self, now: Timestamp) -> (u64, u64) {
        match &self.counts {
            Counts::Cumulative {
                successes,
                failures,
            } => (
                successes.load(Ordering::Relaxed),
                failures.load(Ordering::Relaxed),
            ),
            Counts::Windowed(window) => {
                let [successes, failures] = lock(window).sums(now);
                (successes, failures)
            }
        }
    }

    /// Whether the breaker refuses retries at `now`: the failure ratio is above the threshold.
    #[must_use]
    pub fn is_tripped(&self, now: Timestamp) -> bool {
        let (successes, failures) = self.counts(now);
        !within(successes, failures, self.threshold_ppm)
    }

    fn record(&self, now: Timestamp, index: usize) {
        match &self.counts {
            Counts::Cumulative {
                successes,
                failures,
            } => {
                let counter = if index == SUCCESSES {
                    successes
                } else {
                    failures
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
            Counts::Windowed(window) => lock(window).add(now, index, 1),
        }
    }
}

/// Locks the window, recovering from a poisoned lock: every update is a single saturating
/// add, so the counts are consistent whatever panicked while holding it.
fn lock(window: &Mutex<Window<2>>) -> MutexGuard<'_, Window<2>> {
    window.lock().unwrap_or_else(|e| e.into_inner())
}

impl Budget for BreakerBudget {
    #[inline]
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        // Counts since creation keep no time; a window does.
        match self.counts {
            Counts::Cumulative { .. } => Ok(()),
            Counts::Windowed(_) => self.timeline.bind(timeline),
        }
    }
    #[inline]
    fn try_retry(&self, now: Timestamp, _failure: &Failure) -> Option<Spent> {
        (!self.is_tripped(now)).then_some(Spent(0))
    }

    #[inline]
    fn on_success(&self, now: Timestamp, _last_retry: Option<Spent>) {
        self.record(now, SUCCESSES);
    }

    #[inline]
    fn on_failure(&self, now: Timestamp, _failure: &Failure) {
        self.record(now, FAILURES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_compared_exactly() {
        assert!(within(0, 0, 100_000));
        assert!(within(9, 1, 100_000));
        assert!(!within(8, 1, 100_000));
        assert!(within(0, 5, PPM));
        assert!(!within(1_000_000, 1, 0));
        assert!(within(u64::MAX, u64::MAX, 500_000));
    }

    #[test]
    fn the_threshold_is_taken_to_the_nearest_millionth() {
        let breaker = BreakerBudget::new(Breaker::DEFAULT).unwrap();
        assert_eq!(breaker.threshold_ppm, 100_000);
        let third = BreakerBudget::new(Breaker::DEFAULT.with_threshold(1.0 / 3.0)).unwrap();
        assert_eq!(third.threshold_ppm, 333_333);
    }
}
