//! The `sre-adaptive` budget: [`SreAdaptiveBudget`] and its configuration. The budget's page is the
//! documentation of [`SreAdaptiveBudget`].

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::window::Window;
use super::{Budget, Spent};
use crate::clock::{Timeline, TimelineBinding, Timestamp};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::{Rng, SeededRng};

/// The page, written once: the documentation of the budget's type, and [`PAGE`].
macro_rules! page {
    () => {
        r#"# SRE adaptive throttling

Google's client-side adaptive throttling: the client keeps count of the attempts it asks to
make and of the attempts the backend accepted, and once the first outgrow `k` times the
second, it refuses the excess *locally*, at random, before anything is sent. A backend
that is shedding load then sees about `k` attempts for each one it can take, instead of
every attempt of every client, and it spends far less of its capacity refusing work.

## What it bounds

Every attempt, **first attempts included**. The other budgets only refuse retries; this one
also answers `false` to `admit`, which the engine reports as its own outcome ("the budget
refused the first attempt"), distinct from a failed call. Granted retries cost nothing
(`Spent(0)`): the throttle is a probability, not a balance.

## When to use it

- A fleet of clients in front of a backend that sheds load with explicit refusals (HTTP
  429, gRPC `RESOURCE_EXHAUSTED`, a refused connection), when refusing is itself costly for
  the backend and the client should stop asking.
- Together with a per-request attempt limit, as Google does: the limit bounds each request,
  the throttle bounds the fleet.

## When not to use it

- When the backend's failures are not refusals. Only `Failure::Rejected` and
  `Failure::Throttled` count as "not accepted": a 500, a timeout or a permanent error
  means the backend took the attempt and processed it (or may have), and counts as an
  accept. A backend that fails by timing out is therefore never throttled here; bound its
  retries with `aws-standard`, `finagle` or `breaker`.
- When a first attempt must never be refused by the client itself.

## How it works

```text
over a sliding window (2 minutes by default):
  requests = attempts the client asked to make  (every admit and try_retry, allowed or not)
  accepts  = attempts the backend processed     (on_success; on_failure unless the failure
                                                 is Rejected or Throttled)

admit / try_retry:  p = max(0, (requests - k * accepts) / (requests + 1))  (counts before it)
                    requests += 1
                    if p > 0: draw u from [0, 1) with the injected Rng, refuse if u < p
on_success:         accepts += 1
on_failure(f):      accepts += 1 unless f is Rejected or Throttled
```

The probability is computed from the counts *before* the attempt being decided, and the
attempt is counted as a request whether or not it is refused: a locally refused request is
still a request, which is what drives the probability towards 1 when nothing is accepted.
While `p` is 0 nothing is drawn, so a healthy client leaves its generator untouched.

The window is 120 slots of `window / 120` each (1 s at the default 2 minutes), so it slides
in steps of one slot: a count leaves it between `119/120 × window` and `window` after it was
made. The counts, the window and the generator sit behind one `Mutex`: a decision reads
the sums, counts the request and draws in one critical section, so concurrent callers never
lose a count and a fixed seed replays the same decisions for the same sequence of calls.

## Steady state

Let `R` be the requests and `A` the accepts in one window. While `R > k × A`, the expected
number of attempts the client lets through is `R × (1 - p) = R × (1 + k × A) / (R + 1)`,
which is about `k × A` once `R` is large. So:

- **A backend with a capacity** (it accepts `A` attempts per second and refuses the rest
  with `Throttled`): the client converges to sending about `k × A` per second, whatever it
  is asked for. With `k = 2` the backend refuses as many attempts as it accepts, and the
  client refuses everything beyond that locally, at no cost to the backend.
- **A backend that accepts a fraction `a` of whatever it is sent** (refusing the rest at
  random): accepts are `a × sent`, so the client allows `sent ≈ k × a × sent`. If
  `a > 1/k` (50 % at `k = 2`), `R - k × A` is below 0 and nothing is refused locally once
  the window holds more than a few attempts. If `a < 1/k`, the feedback runs away: each
  refusal lowers the accepts, which raises the refusals, and the client's traffic decays
  window after window towards about `1 / (1 - k × a)` attempts per window (5 per 2 minutes
  at `a = 40 %`), kept alive by the `+ 1` in the denominator. From a busy start the descent
  takes tens of minutes. For such a backend the throttle is a cliff, not a proportional
  cut: it is designed for backends that refuse what exceeds their capacity.
- **A healthy backend** (everything accepted): requests exceed accepts only by the
  attempts still in flight, so at `k = 2` `p` stays 0 unless more attempts are in flight
  than the whole window accepted (at `k = 1`, attempts in flight make it slightly positive).
  The throttle then costs a lock and two counts per attempt.
- **A backend refusing everything**: `A = 0` and `p = R / (R + 1)`, so almost every attempt
  is refused locally; about one per window still goes out, and discovers the recovery.

## Why `k = 2`

`k` trades backend work for reaction time. At `k = 1` the client sends only what was
accepted, so a backend that recovers sees no more traffic than before and the recovery
propagates slowly; large `k` lets more doomed attempts through. The SRE book settles on 2:
the backend wastes some capacity refusing, but when it stops refusing, every client notices
quickly. Lower `k` (down to 1) is more aggressive, higher `k` more permissive.

## Parameters

| parameter | default | allowed | meaning |
|---|---|---|---|
| `k` | 2.0 | finite, at least 1 | the multiplier on accepts the client may send |
| `window` | 120 s | greater than 0 | the span over which requests and accepts are counted |

## Complexity

Each call takes one `Mutex` lock. The window keeps running totals, so deciding an attempt
reads two sums (expiring, at most once each, the slots time has left behind) and draws at most
one number; reporting an outcome adds to one slot. The state is a fixed 120-slot array allocated at construction; nothing allocates
afterwards.

## Source

Google, *Site Reliability Engineering* (2016), chapter 21 "Handling Overload", section
"Client-side throttling": the formula, the two-minute history and the multiplier `K = 2`.
Implemented from that description; the slot granularity and the treatment of each
`Failure` kind are this crate's.

## Example

```
use stagger_core::budget::{Budget, SreAdaptiveBudget, SreAdaptive};
use stagger_core::{Failure, SeededRng, Timestamp};

let budget = SreAdaptiveBudget::new(SreAdaptive::DEFAULT, SeededRng::new(7))?;
let now = Timestamp::ZERO;

// Nine attempts, all refused by the backend.
for _ in 0..9 {
    if budget.admit(now) {
        budget.on_failure(now, &Failure::Throttled(None));
    }
}
// The next attempt is refused locally with probability (9 - 2 * 0) / (9 + 1).
assert_eq!(budget.rejection_probability(now), 0.9);

// Three accepts later, (10 - 2 * 3) / 11 of the next one.
let _ = budget.admit(now);
for _ in 0..3 {
    budget.on_success(now, None);
}
assert_eq!(budget.counts(now), (10, 3));
assert_eq!(budget.rejection_probability(now), 4.0 / 11.0);
# Ok::<(), stagger_core::ConfigError>(())
```
"#
    };
}

/// This budget's page, as `stagger explain` prints it.
pub(crate) const PAGE: &str = page!();

/// The number of slots in the sliding window.
const SLOTS: u32 = 120;
/// The window's counter of requests.
const REQUESTS: usize = 0;
/// The window's counter of accepts.
const ACCEPTS: usize = 1;

/// The configuration of an [`SreAdaptiveBudget`] throttle. The budget's page is [`SreAdaptiveBudget`]'s
/// documentation.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::budget::SreAdaptive;
///
/// let config = SreAdaptive::DEFAULT;
/// assert_eq!(config.k(), 2.0);
/// assert_eq!(config.window(), Duration::from_secs(120));
///
/// let err = config.with_k(0.5).validate().unwrap_err();
/// assert_eq!(err.to_string(), "k must be at least 1 (1 sends only what was accepted), got 0.5");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SreAdaptive {
    k: f64,
    window: Duration,
}

impl SreAdaptive {
    /// The SRE book's settings: `k = 2` over a two-minute window.
    pub const DEFAULT: Self = Self {
        k: 2.0,
        window: Duration::from_secs(120),
    };

    /// The defaults, [`SreAdaptive::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Sets the multiplier on accepts: the client may send about `k` attempts per accepted
    /// one. Finite and at least 1.
    #[must_use]
    pub const fn with_k(mut self, k: f64) -> Self {
        self.k = k;
        self
    }

    /// Sets the span over which requests and accepts are counted. Greater than 0; it slides
    /// in steps of `window / 120`.
    #[must_use]
    pub const fn with_window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// The multiplier on accepts (default 2).
    #[must_use]
    pub const fn k(&self) -> f64 {
        self.k
    }

    /// The span over which requests and accepts are counted (default 120 s).
    #[must_use]
    pub const fn window(&self) -> Duration {
        self.window
    }

    /// Checks the parameters: `k` finite and at least 1, `window` greater than 0.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::ConfigError;
    /// use stagger_core::budget::SreAdaptive;
    ///
    /// assert!(SreAdaptive::DEFAULT.validate().is_ok());
    /// let nan = SreAdaptive::DEFAULT.with_k(f64::NAN).validate().unwrap_err();
    /// assert!(matches!(nan, ConfigError::NotFinite { param: "k", .. }));
    /// let empty = SreAdaptive::DEFAULT.with_window(Duration::ZERO).validate().unwrap_err();
    /// assert_eq!(empty.param(), Some("window"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::NotFinite`] for a NaN or infinite `k`, [`ConfigError::OutOfRange`] for
    /// a `k` below 1 or a zero `window`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.k.is_finite() {
            return Err(ConfigError::NotFinite {
                param: "k",
                value: self.k,
            });
        }
        if self.k < 1.0 {
            return Err(ConfigError::OutOfRange {
                param: "k",
                value: self.k,
                allowed: "at least 1 (1 sends only what was accepted)",
            });
        }
        if self.window.is_zero() {
            return Err(ConfigError::OutOfRange {
                param: "window",
                value: 0.0,
                allowed: "greater than 0 seconds",
            });
        }
        Ok(())
    }
}

impl Default for SreAdaptive {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Google SRE client-side adaptive throttling, shared by every request of a client.
///
/// ```
/// use stagger_core::budget::{Budget, SreAdaptiveBudget, SreAdaptive};
/// use stagger_core::{Failure, SeededRng, Timestamp};
///
/// let budget = SreAdaptiveBudget::new(SreAdaptive::DEFAULT, SeededRng::new(1))?;
/// let now = Timestamp::ZERO;
/// // Everything accepted: nothing is ever refused, retries included.
/// for _ in 0..1000 {
///     assert!(budget.admit(now));
///     budget.on_success(now, None);
/// }
/// assert_eq!(budget.try_retry(now, &Failure::Retryable), Some(stagger_core::budget::Spent(0)));
/// assert_eq!(budget.rejection_probability(now), 0.0);
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
///
#[doc = page!()]
#[derive(Debug)]
pub struct SreAdaptiveBudget {
    config: SreAdaptive,
    state: Mutex<State>,
    /// The timeline of the window's times.
    timeline: TimelineBinding,
}

/// What the lock guards: the counts and the generator, so that a decision is one critical
/// section.
#[derive(Debug)]
struct State {
    window: Window<2>,
    rng: SeededRng,
}

/// `max(0, (requests - k * accepts) / (requests + 1))`.
#[inline]
fn probability(k: f64, requests: u64, accepts: u64) -> f64 {
    let requests = requests as f64;
    let excess = requests - k * accepts as f64;
    if excess > 0.0 {
        excess / (requests + 1.0)
    } else {
        0.0
    }
}

impl SreAdaptiveBudget {
    /// A throttle with empty counts, drawing its refusals from `rng`.
    ///
    /// Give every client its own generator ([`SeededRng::fork`] from a world generator in a
    /// simulation, [`SeededRng::from_entropy`] in production), so that a fleet does not refuse
    /// in step.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`] (see [`SreAdaptive::validate`]).
    pub fn new(config: SreAdaptive, rng: SeededRng) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            config,
            state: Mutex::new(State {
                window: Window::new(config.window / SLOTS, SLOTS as usize),
                rng,
            }),
            timeline: TimelineBinding::new(),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> SreAdaptive {
        self.config
    }

    /// The requests and the accepts counted in the window ending at `now`, in that order.
    #[must_use]
    pub fn counts(&self, now: Timestamp) -> (u64, u64) {
        let [requests, accepts] = self.lock().window.sums(now);
        (requests, accepts)
    }

    /// The probability that an attempt asked for at `now` is refused locally:
    /// `max(0, (requests - k * accepts) / (requests + 1))` over the window ending at `now`.
    /// Always in `[0, 1)`.
    #[must_use]
    pub fn rejection_probability(&self, now: Timestamp) -> f64 {
        let (requests, accepts) = self.counts(now);
        probability(self.config.k, requests, accepts)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent after any panic in a critical section (each step is one
        // saturating add or one draw), so a poisoned lock is safe to reuse.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Decides one attempt at `now`: counts it as a request and draws against the probability
    /// computed from the counts before it. `true` lets it through.
    fn allow(&self, now: Timestamp) -> bool {
        let mut state = self.lock();
        let [requests, accepts] = state.window.sums(now);
        let p = probability(self.config.k, requests, accepts);
        state.window.add(now, REQUESTS, 1);
        p <= 0.0 || state.rng.next_f64() >= p
    }
}

impl Budget for SreAdaptiveBudget {
    #[inline]
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        self.timeline.bind(timeline)
    }
    #[inline]
    fn admit(&self, now: Timestamp) -> bool {
        self.allow(now)
    }

    #[inline]
    fn try_retry(&self, now: Timestamp, _failure: &Failure) -> Option<Spent> {
        self.allow(now).then_some(Spent(0))
    }

    #[inline]
    fn retry_abandoned(&self, granted: Timestamp, _spent: Spent) {
        // The granted retry was counted as a request; it was never made.
        self.lock().window.remove(granted, REQUESTS, 1);
    }

    #[inline]
    fn on_success(&self, now: Timestamp, _last_retry: Option<Spent>) {
        self.lock().window.add(now, ACCEPTS, 1);
    }

    #[inline]
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        if !failure.had_no_effect() {
            self.lock().window.add(now, ACCEPTS, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probability_is_zero_until_requests_exceed_k_accepts() {
        assert_eq!(probability(2.0, 0, 0), 0.0);
        assert_eq!(probability(2.0, 10, 5), 0.0);
        assert_eq!(probability(2.0, 11, 5), 1.0 / 12.0);
        assert_eq!(probability(1.0, 3, 0), 0.75);
    }

    #[test]
    fn a_tiny_window_does_not_panic() {
        let config = SreAdaptive::DEFAULT.with_window(Duration::from_nanos(1));
        let budget = SreAdaptiveBudget::new(config, SeededRng::new(3)).unwrap();
        assert!(budget.admit(Timestamp::MAX));
        assert_eq!(budget.counts(Timestamp::MAX), (1, 0));
    }
}
