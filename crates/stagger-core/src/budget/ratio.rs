#![doc = include_str!("ratio.md")]

use std::sync::Mutex;
use std::time::Duration;

use super::window::Window;
use super::{Budget, Spent};
use crate::clock::{Timeline, TimelineBinding, Timestamp};
use crate::error::ConfigError;
use crate::failure::Failure;

/// This budget's page, as `stagger explain` prints it.
pub(crate) const PAGE: &str = include_str!("ratio.md");

/// Slots in the window.
const SLOTS: usize = 10;

/// The configuration of a [`RatioBudget`] budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    ttl: Duration,
    min_per_sec: u32,
    percent: f64,
}

impl Ratio {
    /// Finagle's defaults: ttl 10 s, 10 retries per second, 20 % of requests.
    pub const FINAGLE: Self = Self {
        ttl: Duration::from_secs(10),
        min_per_sec: 10,
        percent: 0.2,
    };

    /// Sets how long deposits and withdrawals count (1 s to 60 s, as Finagle).
    #[must_use]
    pub const fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets the floor of retries per second.
    #[must_use]
    pub const fn with_min_per_sec(mut self, min_per_sec: u32) -> Self {
        self.min_per_sec = min_per_sec;
        self
    }

    /// Sets the fraction of requests that may be retried (0.2 is 20 %), from 0 to 1000.
    #[must_use]
    pub const fn with_percent(mut self, percent: f64) -> Self {
        self.percent = percent;
        self
    }

    /// The ttl.
    #[must_use]
    pub const fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The floor of retries per second.
    #[must_use]
    pub const fn min_per_sec(&self) -> u32 {
        self.min_per_sec
    }

    /// The fraction of requests that may be retried.
    #[must_use]
    pub const fn percent(&self) -> f64 {
        self.percent
    }

    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.percent.is_finite() {
            return Err(ConfigError::NotFinite {
                param: "percent",
                value: self.percent,
            });
        }
        if !(0.0..=crate::limits::MAX_RATIO_PERCENT).contains(&self.percent) {
            return Err(ConfigError::OutOfRange {
                param: "percent",
                value: self.percent,
                allowed: "between 0 and 1000",
            });
        }
        if self.ttl < crate::limits::MIN_RATIO_TTL || self.ttl > crate::limits::MAX_RATIO_TTL {
            return Err(ConfigError::OutOfRange {
                param: "ttl",
                value: self.ttl.as_secs_f64(),
                allowed: "between 1 s and 60 s, as Finagle requires",
            });
        }
        Ok(())
    }
}

impl Default for Ratio {
    fn default() -> Self {
        Self::FINAGLE
    }
}

/// Finagle's retry budget, shared and exact. See the [module page](self).
///
/// ```
/// use stagger_core::budget::{Budget, RatioBudget, Ratio};
/// use stagger_core::{Failure, Timestamp};
///
/// // No floor, 60 %: after 100 requests, exactly 60 retries.
/// let budget = RatioBudget::new(Ratio::FINAGLE.with_min_per_sec(0).with_percent(0.6))?;
/// let now = Timestamp::ZERO;
/// for _ in 0..100 {
///     budget.admit(now);
/// }
/// let granted = (0..100).filter(|_| budget.try_retry(now, &Failure::Retryable).is_some()).count();
/// assert_eq!(granted, 60);
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Debug)]
pub struct RatioBudget {
    config: Ratio,
    reserve: u64,
    percent_ppm: u64,
    window: Mutex<Window<2>>,
    /// The timeline of the window's times.
    timeline: TimelineBinding,
}

impl RatioBudget {
    /// An empty budget (only the floor is available).
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`].
    pub fn new(config: Ratio) -> Result<Self, ConfigError> {
        config.validate()?;
        let ttl_ms = u64::try_from(config.ttl.as_millis()).unwrap_or(u64::MAX);
        Ok(Self {
            config,
            reserve: u64::from(config.min_per_sec).saturating_mul(ttl_ms) / 1000,
            percent_ppm: (config.percent * 1e6).round() as u64,
            window: Mutex::new(Window::new(config.ttl / SLOTS as u32, SLOTS)),
            timeline: TimelineBinding::new(),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> Ratio {
        self.config
    }

    fn window(&self) -> std::sync::MutexGuard<'_, Window<2>> {
        self.window
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Budget for RatioBudget {
    #[inline]
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        self.timeline.bind(timeline)
    }
    #[inline]
    fn admit(&self, now: Timestamp) -> bool {
        self.window().add(now, 0, 1);
        true
    }

    #[inline]
    fn try_retry(&self, now: Timestamp, _failure: &Failure) -> Option<Spent> {
        let mut window = self.window();
        let [deposits, withdrawals] = window.sums(now);
        // In u64 while the product fits (a division by a constant there is a multiply), in
        // u128 beyond.
        let earned = match deposits.checked_mul(self.percent_ppm) {
            Some(product) => u128::from(product / 1_000_000),
            None => u128::from(deposits) * u128::from(self.percent_ppm) / 1_000_000,
        };
        let allowed = u128::from(self.reserve) + earned;
        if u128::from(withdrawals) < allowed {
            window.add_latest(1, 1);
            Some(Spent(1000))
        } else {
            None
        }
    }

    #[inline]
    fn retry_abandoned(&self, granted: Timestamp, _spent: Spent) {
        self.window().remove(granted, 1, 1);
    }
}
